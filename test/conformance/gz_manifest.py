"""The real gz-sim 8 Python API (test/conformance/gz_api_manifest.json,
written by tools/gz_api_manifest.py from gz-sim's, sdformat's, gz-math's,
gz-transport's and gz-msgs' sources) and what the conformance tests ask of it:

- ``CLASSES``: class name -> its manifest entry (methods with overloads,
  attributes, constructors), across gz.sim8, sdformat14, gz.math7 and
  gz.transport13;
- ``accepts(overloads, n_positional, keywords)``: whether a call form fits one
  of a method's overloads, as pybind11 resolves them (positional arguments
  first; keywords only for parameters named with ``py::arg``; parameters
  without a default must be given);
- ``MESSAGES``: gz.msgs10 message -> fields.
"""

from __future__ import annotations

import json
from pathlib import Path

MANIFEST_FILE = Path(__file__).resolve().parent / "gz_api_manifest.json"
MANIFEST = json.loads(MANIFEST_FILE.read_text())

CLASSES: dict[str, dict] = {}
MODULE_OF: dict[str, str] = {}
for _module, _classes in MANIFEST["modules"].items():
    for _name, _entry in _classes.items():
        CLASSES[_name] = _entry
        MODULE_OF[_name] = _module
MESSAGES: dict[str, dict] = MANIFEST["gz.msgs10"]


def accepts(overloads: list[dict], n_positional: int, keywords: set[str]) -> bool:
    """True when some overload takes ``n_positional`` positional arguments and these keyword names."""
    for ov in overloads:
        params = ov["params"]
        if n_positional > len(params):
            continue
        rest = params[n_positional:]
        named = {p["name"]: p for p in rest if p["name"]}
        if not keywords <= set(named):
            continue
        if all(p["default"] or p["name"] in keywords for p in rest):
            return True
    return False


def constructor_overloads(cls: str) -> list[dict]:
    return CLASSES[cls]["constructors"]


def py_type(overloads: list[dict]) -> str | None:
    """The Python class a method returns when all overloads agree (``X | None`` counts as X)."""
    kinds = {(ov.get("py_returns") or "").replace(" | None", "") for ov in overloads}
    return kinds.pop() if len(kinds) == 1 else None
