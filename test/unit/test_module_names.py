"""Names that say what they hold (issue 46): no two modules of one name do different things.

A module name may stand in several packages only where it names the same role in each (the package's
parameter sets, its command and that command's implementation, ...), listed here with that role; a
module named like a gz-sim system of plugins_py/ is that system's pure part in eels_gz/scenarios/ (or
the model the system drives, listed too); and a module kept at an old path only re-exports the one that
holds the code (test/unit/test_old_paths.py)."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# name -> the one role it has in every package that has a module of that name
SHARED_ROLES = {
    "params": "the package's parameter sets read from config/ and checked",
    "implicit": "the package's contact wrench integrated implicitly at velocity level",
    "identify": "the package's parameters identified from measured behaviour",
    "common": "what the package's modules share (cli: the commands, server: the server and its clients)",
    "plots": "the figures the package writes",
    "export": "`eels-gz export`: the command (cli/) and its implementation (run/)",
    "tethers": "tethers: the model (snake/) and the gz-sim system that applies it (plugins_py/)",
}


def _only_re_exports(path: Path) -> bool:
    body = ast.parse(path.read_text()).body
    return all(isinstance(n, (ast.Import, ast.ImportFrom)) or (isinstance(n, ast.Expr) and isinstance(
        n.value, ast.Constant)) for n in body)


def modules_by_name() -> dict[str, list[str]]:
    found = defaultdict(list)
    for path in sorted([*(ROOT / "eels_gz").rglob("*.py"), *(ROOT / "plugins_py").glob("*.py")]):
        rel = path.relative_to(ROOT).as_posix()
        if path.name == "__init__.py" or _only_re_exports(path):
            continue
        if rel.startswith("eels_gz/scenarios/") and (ROOT / "plugins_py" / path.name).is_file():
            continue  # a scenario system's pure part
        found[path.stem].append(rel)
    return found


def test_no_two_modules_of_one_name_do_different_things():
    repeated = {name: where for name, where in modules_by_name().items() if len(where) > 1}
    unexplained = {name: where for name, where in repeated.items() if name not in SHARED_ROLES}
    assert unexplained == {}, ("modules of one name in several packages: name each for what it holds, or "
                               "list the one role they share in SHARED_ROLES")
    assert set(SHARED_ROLES) <= set(repeated), f"stale entries: {set(SHARED_ROLES) - set(repeated)}"
