"""The house (issue 32): the embedded host's three jobs keep their layers, and the package has no
import circles.

- ``eels_gz.gzapi`` (the gz-sim API imitation) sits below ``eels_gz.ros`` and the plugins' compat
  module: it imports neither the engine nor the adapter, orchestration, scenarios, commands or ROS;
- ``eels_gz.dart`` (the DART adapter) is the only package that imports dartpy, and nothing above it
  (orchestration, scenarios, commands); it is also the only one that calls DART: no code outside it
  (``eels_gz``, ``plugins_py``, ``launch``) names a dartpy method (issue 46), so ``gzapi`` reaches the
  engine only through its protocols (``eels_gz/gzapi/engine.py``) and ``run`` through the
  simulation's named reads;
- ``eels_gz.ros`` imports neither the adapter nor orchestration nor the commands;
- no two modules import each other, directly or through others (an import inside a function counts:
  it is still a dependency). A package's ``__init__`` that re-exports its submodules is not a circle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "eels_gz"


def _modules() -> dict[str, Path]:
    out = {}
    for f in PACKAGE.rglob("*.py"):
        rel = f.relative_to(ROOT).with_suffix("")
        parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
        out[".".join(parts)] = f
    return out


MODULES = _modules()


def _imports(path: Path) -> set[str]:
    """Every module (ours or not) ``path`` imports, at any depth of its code."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names if f"{node.module}.{a.name}" in MODULES)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


IMPORTS = {name: _imports(path) for name, path in MODULES.items()}


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_only_the_dart_adapter_imports_the_engine():
    engine = sorted(m for m, imp in IMPORTS.items() if any(i == "dartpy" or i.startswith("dartpy.") for i in imp))
    assert engine and all(_layer(m) == "dart" for m in engine), engine
    plugins = sorted(p.name for p in (ROOT / "plugins_py").glob("*.py")
                     if any(i == "dartpy" or i.startswith("dartpy.") for i in _imports(p)))
    assert plugins == []


def _dart_api_names() -> set[str]:
    """The camelCase method names of dartpy's classes (getWorldTransform, getBodyNode, setCommand, ...)."""
    import inspect
    import re

    dartpy = pytest.importorskip("dartpy")
    names, seen = set(), set()

    def walk(module) -> None:
        if id(module) in seen:
            return
        seen.add(id(module))
        for name in dir(module):
            obj = getattr(module, name, None)
            if inspect.ismodule(obj) and obj.__name__.startswith("dartpy"):
                walk(obj)
            elif inspect.isclass(obj):
                names.update(a for a in dir(obj) if re.fullmatch(r"[a-z]+[A-Z]\w*", a))

    walk(dartpy)
    return names


def _gz_api_names() -> set[str]:
    """Every function and method name of the gz-sim 8 Python API the host imitates (test/conformance's manifest)."""
    import json

    manifest = json.loads((ROOT / "test" / "conformance" / "gz_api_manifest.json").read_text())
    names = set()
    for classes in manifest["modules"].values():
        for name, entry in classes.items():
            names.add(name)
            if isinstance(entry, dict):
                names.update(entry.get("methods", {}))
    return names


def _dart_calls(path: Path, dart_names: set[str]) -> list[str]:
    return [f"{path.relative_to(ROOT)}:{node.lineno} .{node.attr}" for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.Attribute) and node.attr in dart_names]


def test_the_call_rule_has_teeth_and_no_false_positives():
    """The rule knows DART's API (a few names the host once called outside dart/) and none of gz-sim's."""
    dart_names = _dart_api_names()
    assert {"getWorldTransform", "getBodyNode", "setCommand", "getSkeleton", "addExtForce"} <= dart_names
    gz_names = _gz_api_names()
    assert {"world_pose", "add_world_wrench", "set_force", "link_by_name"} <= gz_names
    assert dart_names.isdisjoint(gz_names), sorted(dart_names & gz_names)


def test_only_the_dart_adapter_calls_the_engine():
    dart_names = _dart_api_names()
    files = [f for f in PACKAGE.rglob("*.py") if f.relative_to(PACKAGE).parts[0] != "dart"]
    files += sorted((ROOT / "plugins_py").glob("*.py")) + sorted((ROOT / "launch").glob("*.py"))
    calls = [c for f in files for c in _dart_calls(f, dart_names)]
    assert calls == []


@pytest.mark.parametrize("layer, forbidden", [
    ("gzapi", {"dart", "run", "scenarios", "cli", "ros", "sweep"}),
    ("dart", {"run", "scenarios", "cli", "sweep"}),
    ("ros", {"dart", "run", "cli", "sweep"}),
])
def test_lower_layers_import_nothing_above_them(layer, forbidden):
    upward = sorted((m, i) for m, imp in IMPORTS.items() if _layer(m) == layer
                    for i in imp if i.startswith("eels_gz.") and _layer(i) in forbidden)
    assert upward == []


def test_no_import_circles():
    ours = {m: {i for i in imp if i in MODULES and i != m} for m, imp in IMPORTS.items()}
    # a package __init__ importing its own submodules (re-exports) and a submodule importing a sibling
    # through the package (`from eels_gz.terrain import _kernels`) is the package's structure, not a circle
    for m in ours:
        ours[m] = {i for i in ours[m] if not (MODULES[i].name == "__init__.py" and m.startswith(i + "."))}
    index, low, stack, on, circles, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in ours[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                circles.append(sorted(comp))

    for v in sorted(ours):
        if v not in index:
            visit(v)
    assert circles == []
