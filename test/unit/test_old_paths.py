"""Modules that moved (issue 46) and stay importable at their old paths because plugins installed from
earlier releases, or SDF written by them, name those paths: each old path is a thin re-export of the
module that now holds the code. Its names are the new module's own objects, and it defines nothing."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MOVED = {
    "eels_gz.snake.placement": "eels_gz.snake.settling",
    "eels_gz.contact.kernel": "eels_gz.contact.screw_wrenches",
    "eels_gz.dart.sdf_world": "eels_gz.sdf_reader",
}
# modules that keep their own code and re-export, at their old path, what moved out of them
KEPT = {"eels_gz.terrain.writers": ("eels_gz.terrain.world_terrain", ("find_terrain_field", "terrain_records",
                                                                     "world_soil", "FIELD_FILE"))}


@pytest.mark.parametrize("old, new", sorted(MOVED.items()))
def test_an_old_path_re_exports_the_module_that_holds_the_code(old, new):
    before, after = importlib.import_module(old), importlib.import_module(new)
    names = [n for n in vars(before) if not n.startswith("_") and n != "annotations"]
    assert names, f"{old} exports nothing"
    for name in names:
        assert getattr(before, name) is getattr(after, name), f"{old}.{name} is not {new}.{name}"
    tree = ast.parse(Path(before.__file__).read_text())
    own = [type(node).__name__ for node in tree.body
           if not isinstance(node, (ast.Import, ast.ImportFrom))
           and not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))]
    assert own == [], f"{old} defines {own}: it should only re-export {new}"


@pytest.mark.parametrize("old, new, names", [(k, *v) for k, v in sorted(KEPT.items())])
def test_a_module_that_lost_code_still_exports_it(old, new, names):
    before, after = importlib.import_module(old), importlib.import_module(new)
    for name in names:
        assert getattr(before, name) is getattr(after, name), f"{old}.{name} is not {new}.{name}"
