"""The scenario layers stay engine-free (issue 32 Deliver 7): no file under ``plugins_py/`` or
``eels_gz/scenarios/`` imports dartpy, the DART adapter (``eels_gz.dart``), run orchestration
(``eels_gz.run``) or the gz-sim API imitation (``eels_gz.gzapi``); a scenario system reads and
commands the robot through the gz-sim API only (``gz_compat``), as it does under Gazebo.

The compat layer's binding modules (``plugins_py/gz_binding.py`` and ``gz_middleware.py``, re-exported by
``gz_compat``) are the one exception, for ``eels_gz.gzapi`` only: they are what binds a plugin to the
embedded host's API (or to Gazebo's). The scan is of the source (``ast``), every
``import``/``from ... import`` anywhere in a file (inside functions too)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FORBIDDEN = ("dartpy", "eels_gz.dart", "eels_gz.run", "eels_gz.gzapi")
ALLOWED = {"plugins_py/gz_binding.py": {"eels_gz.gzapi"}, "plugins_py/gz_middleware.py": {"eels_gz.gzapi"}}


def forbidden_imports(path: Path, allowed: set[str] = frozenset()) -> list[str]:
    """``module (line N)`` of each import in ``path`` of a FORBIDDEN module or one of its submodules, in
    line order."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            # "from eels_gz import dart" imports the module eels_gz.dart
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        else:
            continue
        for name in names:
            hit = next((f for f in FORBIDDEN if name == f or name.startswith(f + ".")), None)
            if hit is not None and hit not in allowed:
                found.append((node.lineno, f"{name} (line {node.lineno})"))
                break  # one report per statement
    return [text for _, text in sorted(found)]


def files() -> list[str]:
    out = sorted(p.relative_to(ROOT).as_posix() for d in ("plugins_py", "eels_gz/scenarios")
                 for p in (ROOT / d).rglob("*.py"))
    assert len(out) > 10, out  # the scan found the packages
    return out


@pytest.mark.parametrize("rel", files())
def test_no_engine_import(rel):
    bad = forbidden_imports(ROOT / rel, ALLOWED.get(rel, set()))
    assert not bad, f"{rel} imports {', '.join(bad)}: scenario code reaches the robot through gz_compat only"


def test_the_scan_finds_every_form_of_import(tmp_path):
    """The scanner itself: each form of a forbidden import is found, look-alikes are not."""
    f = tmp_path / "m.py"
    f.write_text("import numpy\nimport eels_gz.dartboard\nfrom eels_gz import snake\n"
                 "def g():\n    import dartpy as dart\n"
                 "from eels_gz import dart\nfrom eels_gz.run.runner import run\nimport eels_gz.gzapi.gzsim\n")
    assert forbidden_imports(f) == ["dartpy (line 5)", "eels_gz.dart (line 6)", "eels_gz.run.runner (line 7)",
                                    "eels_gz.gzapi.gzsim (line 8)"]
