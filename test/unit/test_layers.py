"""The house (issue 32): the embedded host's three jobs keep their layers, and the package has no
import circles.

- ``eels_gz.gzapi`` (the gz-sim API imitation) sits below ``eels_gz.ros`` and the plugins' compat
  module: it imports neither the engine nor the adapter, orchestration, scenarios, commands or ROS;
- ``eels_gz.dart`` (the DART adapter) is the only package that imports dartpy, and nothing above it
  (orchestration, scenarios, commands);
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
