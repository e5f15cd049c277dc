"""Every third-party module the Gazebo path imports has a rosdep key in package.xml.

The plugins are imported as gz-sim 8's PythonSystemLoader imports them (its
``gz.sim8`` first; here stand-in ``gz.sim8``, ``gz.math7``, ``gz.transport13``,
``gz.msgs10`` and ``sdformat14`` modules, since Gazebo cannot be installed),
and so are the eels_gz modules launch/sim.launch.py imports. Every import
statement of every first-party module that got loaded (a lazy import inside a
function included: the plugin may reach it) is resolved to its top-level
module; a module that is neither the standard library nor ours must map to a
key (tools/rosdep_keys.py ``MODULES``) that package.xml declares and that
ros/rosdistro has (test/ros/rosdep_keys.json, recorded from a rosdistro commit).

A lazy import that the Gazebo path cannot reach is listed in ``OFF_PATH`` with
the function it sits in and why; any other lazy import counts as needed.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from xml.etree import ElementTree

REPO = Path(__file__).resolve().parents[2]
PLUGINS = REPO / "plugins_py"
LAUNCH = REPO / "launch" / "sim.launch.py"
RECORD = json.loads((Path(__file__).with_name("rosdep_keys.json")).read_text())
# (module, file, function) -> why the plugins and the launch never call it
OFF_PATH = {
    ("PIL", "eels_gz/terrain/dem.py", "read_png"): "reads a PNG DEM for `eels-gz world`; the plugins load the "
                                                   "terrain's distance field (.npz)",
    ("tifffile", "eels_gz/terrain/dem.py", "read_geotiff"): "reads a GeoTIFF DEM for `eels-gz world`",
    ("PIL", "eels_gz/terrain/writers.py", "write_model"): "writes a terrain model's heightmap PNG (`eels-gz world`)",
}
STAND_INS = ("gz/sim8", "gz/math7", "gz/transport13", "gz/msgs10", "sdformat14")


def _declared() -> set[str]:
    root = ElementTree.parse(REPO / "package.xml").getroot()
    return {el.text.strip() for el in root if el.tag in ("depend", "exec_depend")}


def _loaded_first_party(tmp_path: Path, imports: list[str]) -> list[Path]:
    """Files of the repository's modules loaded by importing ``imports`` after the stand-in gz.sim8."""
    for rel in ("gz",) + STAND_INS:
        (tmp_path / rel).mkdir(parents=True, exist_ok=True)
        (tmp_path / rel / "__init__.py").write_text("")
    code = textwrap.dedent(f"""
        import importlib, json, sys
        import gz.sim8, sdformat14  # what the loader imports before the plugin
        for name in {imports!r}:
            importlib.import_module(name)
        print(json.dumps([getattr(m, "__file__", None) for m in list(sys.modules.values())]))
    """)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), str(PLUGINS), str(REPO)])
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    files = {Path(f).resolve() for f in json.loads(out.stdout.splitlines()[-1]) if f}
    # ours: the package and the plugins (not a .venv or anything else inside the checkout)
    ours = (REPO / "eels_gz", PLUGINS)
    return sorted(f for f in files if f.suffix == ".py" and any(f.is_relative_to(d) for d in ours))


def _third_party(files: list[Path]) -> dict[str, set[str]]:
    """Top-level third-party module -> the files importing it."""
    ours = {"eels_gz"} | {p.stem for p in PLUGINS.glob("*.py")}
    found: dict[str, set[str]] = {}
    for path in files:
        rel = str(path.relative_to(REPO))
        tree = ast.parse(path.read_text(), str(path))
        where = {}  # import node -> the innermost function holding it
        for fn in ast.walk(tree):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for node in ast.walk(fn):
                    where[node] = fn.name
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top in sys.stdlib_module_names or top in ours or top == "__future__":
                    continue
                if (top, rel, where.get(node)) not in OFF_PATH:
                    found.setdefault(top, set()).add(rel)
    return found


def _check(found: dict[str, set[str]]) -> list[str]:
    declared, problems = _declared(), []
    for module, where in sorted(found.items()):
        key = RECORD["modules"].get(module)
        if key is None:
            problems.append(f"{module} (imported by {sorted(where)}) has no rosdep key in tools/rosdep_keys.py")
        elif key not in declared:
            problems.append(f"{module}: package.xml does not declare its key {key} (imported by {sorted(where)})")
        elif RECORD["keys"].get(key) is None:
            problems.append(f"{module}: key {key} is not in ros/rosdistro {RECORD['rosdistro']['commit']}")
    return problems


def test_every_plugin_import_has_a_declared_rosdep_key(tmp_path):
    plugins = sorted(p.stem for p in PLUGINS.glob("*.py"))
    files = _loaded_first_party(tmp_path, plugins)
    assert {f.stem for f in files} >= set(plugins)
    found = _third_party(files)
    assert {"numpy", "numba", "scipy"} <= set(found)  # the contact kernel's imports are seen
    assert _check(found) == []


def test_every_launch_import_has_a_declared_rosdep_key(tmp_path):
    tree = ast.parse(LAUNCH.read_text())
    ours = sorted({n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module
                   and n.module.split(".")[0] == "eels_gz"})
    assert ours, "the launch file imports no eels_gz module"
    found = _third_party(_loaded_first_party(tmp_path, ours) + [LAUNCH])
    assert {"launch", "launch_ros"} <= set(found)
    assert _check(found) == []


def test_every_declared_key_exists_in_rosdistro():
    """package.xml's keys against the record; the record's commit is one of ros/rosdistro's."""
    assert len(RECORD["rosdistro"]["commit"]) == 40
    assert sorted(k for k in _declared() if RECORD["keys"].get(k) is None) == []
    assert _declared() <= set(RECORD["keys"])
