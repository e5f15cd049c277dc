"""The embedded host's imitation of the gz-sim 8 Python API offers nothing
the real API lacks: every public method (and operator) of the host's Model,
Link, Joint, World, UpdateInfo, EntityComponentManager, EventManager,
sdformat Element, gz.math Vector3d/Quaterniond/Pose3d and gz.transport
Node/Publisher exists in the manifest, and every call form the host accepts
is one the real overloads accept. The host-only batch helpers are module
functions that gz_compat exposes, not methods. Also: the host's gz.msgs
classes have the real fields, and the manifest is the one the generator
writes from pinned sources."""

from __future__ import annotations

import inspect
import json
import re

import pytest

from eels_gz.gzapi import element, gzmath, gzsim, transport
from eels_gz.gzapi import msgs as host_msgs
from gz_manifest import CLASSES, MANIFEST, MESSAGES, MODULE_OF, accepts

HOST_CLASSES = {
    "Model": gzsim.Model, "Link": gzsim.Link, "Joint": gzsim.Joint, "World": gzsim.World,
    "UpdateInfo": gzsim.UpdateInfo, "EntityComponentManager": gzsim.EntityComponentManager,
    "EventManager": gzsim.EventManager, "Element": element.Element, "Vector3d": gzmath.Vector3d,
    "Quaterniond": gzmath.Quaterniond, "Pose3d": gzmath.Pose3d, "Node": transport.Node,
    "Publisher": transport.Publisher,
}
# constructors plugins never call: the host builds these from its own records
HOST_BUILT = {"Element": "built from the world/description XML", "Publisher": "returned by Node.advertise"}
OPERATORS = {"__add__", "__sub__", "__mul__", "__truediv__", "__neg__", "__eq__", "__ne__", "__getitem__",
             "__setitem__", "__len__", "__iadd__", "__isub__", "__imul__", "__itruediv__", "__radd__", "__rmul__",
             "__bool__", "__iter__", "__contains__", "__call__", "__lt__", "__gt__", "__copy__", "__deepcopy__"}


def call_forms(fn, max_positional: int) -> list[tuple[int, frozenset]]:
    """(number of positional arguments, keyword names) of every way to call ``fn`` (self excluded);
    a ``*args`` parameter counts up to ``max_positional`` positional arguments."""
    params = list(inspect.signature(fn).parameters.values())[1:]
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = sum(p.default is p.empty for p in positional)
    top = max_positional if any(p.kind == p.VAR_POSITIONAL for p in params) else len(positional)
    forms = [(n, frozenset()) for n in range(required, max(top, len(positional)) + 1)]
    for i, p in enumerate(positional):  # one argument by keyword, the ones before it positional
        if p.kind == p.POSITIONAL_OR_KEYWORD and all(q.default is not q.empty for q in positional[i + 1:]):
            if i >= required or p.default is p.empty:
                forms.append((i, frozenset({p.name})))
    forms += [(required, frozenset({p.name})) for p in params if p.kind == p.KEYWORD_ONLY]
    return forms


def public_members(cls) -> dict[str, object]:
    out = {}
    for name, value in vars(cls).items():
        if name.startswith("_") and name not in OPERATORS:
            continue
        if callable(value) or isinstance(value, (staticmethod, classmethod, property)):
            out[name] = value
    return out


@pytest.mark.parametrize("name", sorted(HOST_CLASSES))
def test_host_class_offers_nothing_the_real_one_lacks(name):
    host, real = HOST_CLASSES[name], CLASSES[name]
    for member, value in public_members(host).items():
        assert member in real["methods"] or member in real["attributes"], \
            f"{host.__module__}.{name}.{member} is not in the real {MODULE_OF[name]} {name}"
        if member in real["methods"] and inspect.isfunction(value):
            overloads = real["methods"][member]
            top = max(len(ov["params"]) for ov in overloads)
            for n, kw in call_forms(value, top):
                assert accepts(overloads, n, set(kw)), (
                    f"host {name}.{member} accepts {n} positional argument(s) and keywords {sorted(kw)}; "
                    f"the real overloads take {[[p['name'] or '_' for p in ov['params']] for ov in overloads]}")
    for slot in getattr(host, "__slots__", ()):
        assert slot.startswith("_") or slot in real["attributes"], f"{name} exposes '{slot}'"


@pytest.mark.parametrize("name", sorted(set(HOST_CLASSES) - set(HOST_BUILT)))
def test_host_constructors_take_real_forms(name):
    """Every number of positional arguments the host constructor takes is one a real constructor takes."""
    host, real = HOST_CLASSES[name], CLASSES[name]["constructors"]
    real_counts = {len(c["params"]) for c in real}
    for n in range(0, 9):
        args = [gzmath.Vector3d()] if n == 1 and name in ("Quaterniond",) else [1.0] * n
        if name in ("Model", "Link", "Joint", "World"):
            args = [1] * n
        try:
            host(*args)
        except (TypeError, ValueError):
            continue
        assert n in real_counts, \
            f"host {name}() takes {n} argument(s); the real constructors take {sorted(real_counts)}"


def test_batch_helpers_are_module_functions_not_api_methods():
    for helper in ("link_world_states", "add_link_world_wrenches", "joint_states", "set_joint_forces", "batch_api"):
        assert inspect.isfunction(getattr(gzsim, helper))
        assert not any(helper in c["methods"] for c in CLASSES.values())


@pytest.mark.parametrize("name", sorted(host_msgs.MESSAGES))
def test_host_messages_have_the_real_fields(name):
    real = MESSAGES[name]["fields"]
    cls = host_msgs.MESSAGES[name]
    assert set(cls._FIELDS) <= set(real), f"host gz.msgs {name} fields {sorted(set(cls._FIELDS) - set(real))} " \
                                          f"are not in gz-msgs 10's {MESSAGES[name]['proto_name']}"
    for field in cls._FIELDS:
        repeated = field in cls._REPEATED
        assert repeated == real[field]["repeated"], f"{name}.{field}: repeated is {real[field]['repeated']} in gz-msgs"
        sub = cls._MESSAGE_FIELDS.get(field) or (cls._REPEATED.get(field) if repeated else None)
        if sub is not None:
            assert real[field]["type"] in (sub.__name__, sub.__name__.split("_")[-1]), (name, field)


def test_manifest_records_its_sources():
    for name, src in MANIFEST["sources"].items():
        assert re.fullmatch(r"[0-9a-f]{40}", src["commit"] or ""), f"{name}: no commit recorded"
    assert MANIFEST["sources"]["gz-sim"]["branch"] == "gz-sim8"
    assert MANIFEST["sources"]["sdformat"]["branch"] == "sdf14"


def test_manifest_is_the_generators_output():
    """The committed JSON is what tools/gz_api_manifest.py writes (sorted keys aside, no hand edits):
    regenerate with the command in the README's Gazebo conformance section."""
    text = json.dumps(MANIFEST, indent=1) + "\n"
    from gz_manifest import MANIFEST_FILE

    assert MANIFEST_FILE.read_text() == text
