"""Every gz call in plugins_py/ (found by AST) exists in the real gz-sim 8 API
with that argument form (test/conformance/gz_api_manifest.json), and no
plugin reads a parameter with sdformat's one-argument getter. The checker
itself is tested on mutated plugins: each kind of mistake is found."""

from __future__ import annotations

import ast
import inspect
import textwrap
from pathlib import Path

import pytest
from gz_calls import check_file

from eels_gz.gzapi import element, gzmath, gzsim, transport
from gz_manifest import CLASSES

REPO = Path(__file__).resolve().parents[2]
PLUGINS = sorted((REPO / "plugins_py").glob("*.py"))


def _compat_modules() -> list[str]:
    """The compat layer: gz_compat and the plugins_py modules it re-exports (imports at any depth of its
    code), one a job (binding, middleware, <plugin> parameters, batched state, scenario support); none of
    them is a system."""
    found = set()
    for node in ast.walk(ast.parse((REPO / "plugins_py" / "gz_compat.py").read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return ["gz_compat"] + sorted(m for m in found if (REPO / "plugins_py" / f"{m}.py").is_file())


COMPAT = _compat_modules()
SYSTEM_PLUGINS = [p for p in PLUGINS if p.stem not in COMPAT]
# the compat layer: the functions that run under Gazebo (the embedded-host branches call the host's batch helpers)
COMPAT_FUNCTIONS = {"iter_elements", "param", "link_world_states_each", "add_link_world_wrenches_each",
                    "joint_states_each", "set_joint_forces_each", "base_link", "watched_link"}
# the gz calls the checker must recognise in a file (fewer: it lost track of the types); a thin watcher
# whose gz calls are in shared helpers (gz_compat.base_link, tethers.TetherWatch, eels_gz.steps.step_start's
# UpdateInfo reads) makes only a few itself; timed_system: its own params and UpdateInfo; the contact
# systems: their pre_update, reset and <world_file> are contact_system.ContactSystem's
MIN_CHECKED = {"hang.py": 3, "tube_dangle.py": 1, "timed_system.py": 4,
               "contact_system.py": 4, "rft_contact.py": 3, "screw_contact.py": 4,
               "leader_follower.py": 3, "screw_spin.py": 2, "sidewind.py": 3, "surface_traverse.py": 4,
               "steps.py": 2}
# model code that receives the gz API module (or its UpdateInfo) from a plugin
API_USERS = [REPO / "eels_gz" / "rover" / "gz_model.py", REPO / "eels_gz" / "steps.py"]


def host_only_names() -> set[str]:
    """Public names the embedded host's imitation offers that no real class has."""
    real = {m for entry in CLASSES.values() for m in (*entry["methods"], *entry["attributes"])}
    names = set()
    for module in (gzsim, element, gzmath, transport):
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module.__name__ and name in CLASSES:
                names |= {n for n in vars(cls) if not n.startswith("_")}
    return names - real


HOST_ONLY = host_only_names()


def test_the_plugin_set_is_the_expected_one():
    assert {p.stem for p in SYSTEM_PLUGINS} == {"joint_control", "screw_contact", "soil_contact", "icr_steering",
                                                "contact_system", "wheel_odometry", "wheel_rig", "initial_joints",
                                                "joint_coupling",
                                                "hold", "screw_spin", "surface_traverse", "sidewind", "leader_follower",
                                                "snake_io", "tethers", "tube_dangle", "wall_climb", "moulin_descent",
                                                "rover_drive", "drag_rig", "rft_contact", "hang", "timed_system"}


@pytest.mark.parametrize("path", SYSTEM_PLUGINS + API_USERS, ids=lambda p: p.name)
def test_every_gz_call_exists_in_the_real_api(path):
    problems, checked = check_file(path, HOST_ONLY)
    assert not problems, "\n".join(sorted({str(p) for p in problems}))
    least = MIN_CHECKED.get(path.name, 5)
    assert checked >= least, f"only {checked} gz calls recognised in {path.name}: the checker lost track of the types"


def test_gz_compat_gazebo_paths_use_the_real_api():
    total = 0
    for name in COMPAT:
        problems, checked = check_file(REPO / "plugins_py" / f"{name}.py", HOST_ONLY, COMPAT_FUNCTIONS)
        assert not problems, "\n".join(sorted({str(p) for p in problems}))
        total += checked
    assert total >= 10


def test_the_compat_layer_is_split_by_job_and_gz_compat_re_exports_it(monkeypatch):
    """gz_compat.py (a named contract) only re-exports the public names of its job modules, each of them
    every one; no job module is a system, so neither gz-sim nor the host's loader can take one for a
    plugin (the host refuses a module without get_system())."""
    import importlib

    monkeypatch.syspath_prepend(str(REPO / "plugins_py"))
    monkeypatch.setattr(gzsim, "HOST_ACTIVE", True)  # bound to the host, as while it loads a plugin
    gz_compat = importlib.import_module("gz_compat")
    jobs = [importlib.import_module(name) for name in COMPAT[1:]]
    assert len(jobs) == 5, COMPAT
    for module in jobs:
        assert not hasattr(module, "get_system"), module.__name__
        # its own functions and classes, and its constants
        public = [n for n, v in vars(module).items() if not n.startswith("_")
                  and (getattr(v, "__module__", None) == module.__name__ or n.isupper())]
        for name in public:
            assert getattr(gz_compat, name) is getattr(module, name), f"gz_compat.{name} is not {module.__name__}'s"
    for name in ("sim", "gzmath", "HOST", "transport", "msgs"):
        assert getattr(gz_compat, name) is not None
    own = [type(n).__name__ for n in ast.parse((REPO / "plugins_py" / "gz_compat.py").read_text()).body
           if not isinstance(n, (ast.Import, ast.ImportFrom, ast.Expr)) and not (
               isinstance(n, ast.FunctionDef) and n.name == "__getattr__")]
    assert own == [], f"gz_compat.py defines {own}: it should only re-export its job modules"


# --- the checker finds each kind of mistake ----------------------------------------------------------
GOOD = """
    from gz_compat import gzmath, iter_elements, msgs, param, sim, transport


    class Probe:
        def configure(self, entity, sdf, ecm, event_mgr):
            model = sim.Model(entity)
            self.link = sim.Link(model.link_by_name(ecm, "base"))
            self.joints = [sim.Joint(e) for e in model.joints(ecm)]
            self.gain = param(sdf, "get_double", "gain", "probe")
            for el in iter_elements(sdf, "item"):
                name, found = el.get_string("name", "")
            self.node = transport.Node()
            self.pub = self.node.advertise("/out", msgs.Twist)
            self.node.subscribe(msgs.Twist, "/in", self.on_twist)
            for j in self.joints:
                j.enable_position_check(ecm)

        def on_twist(self, msg):
            self.cmd = msg.linear.x

        def pre_update(self, info, ecm):
            dt = info.dt.total_seconds()
            for j in self.joints:
                q = j.position(ecm)
            self.link.add_world_wrench(ecm, gzmath.Vector3d(0, 0, 1), gzmath.Vector3d())
            out = msgs.Twist()
            out.angular.z = dt
            self.pub.publish(out)
{extra}

    def get_system():
        return Probe()
"""
MUTATIONS = {
    "one_arg_getter": ("            self.gain2 = sdf.get_double('gain2')", "one-argument Element.get_double"),
    "host_only_name": ("            v = sdf.get_vector3d('v', gzmath.Vector3d())", "no method 'get_vector3d'"),
    "absent_method": ("            t = self.link.world_twist(ecm)", "Link has no method 'world_twist'"),
    "absent_on_untyped": ("            other = self.joints[0]\n            other.set_torque(ecm, [1.0])",
                          "Joint has no method 'set_torque'"),
    "wrong_arity": ("            self.link.add_world_wrench(ecm, gzmath.Vector3d())", "add_world_wrench takes no 2"),
    "keyword_not_named": ("            el = sdf.get_next_element(name='item')", "get_next_element takes no 0"),
    "bad_constructor": ("            v = gzmath.Vector3d(1.0, 2.0)", "Vector3d() takes no constructor with 2"),
    "message_field": ("            m = msgs.Twist()\n            m.linear.w = 1.0", "has no field 'w'"),
    "ecm_attribute": ("            n = len(ecm.models)", "the ECM is opaque"),
    "update_info": ("            t = info.time", "UpdateInfo has no attribute or method 'time'"),
}


def checked_source(tmp_path, extra: str, where: str = "pre_update"):
    path = tmp_path / "probe.py"
    source = textwrap.dedent(GOOD.replace("{extra}", "")).splitlines()
    marker = "    def pre_update(self, info, ecm):" if where == "pre_update" else \
        "    def configure(self, entity, sdf, ecm, event_mgr):"
    at = source.index(marker) + 1
    source[at:at] = [line[4:] for line in extra.splitlines()]
    path.write_text("\n".join(source) + "\n")
    return check_file(path, HOST_ONLY)


def test_the_checker_passes_the_good_probe(tmp_path):
    problems, checked = checked_source(tmp_path, "")
    assert not problems, "\n".join(map(str, problems))
    assert checked >= 15


@pytest.mark.parametrize("name", sorted(MUTATIONS))
def test_the_checker_finds_each_mistake(tmp_path, name):
    line, expected = MUTATIONS[name]
    where = "configure" if "sdf" in line else "pre_update"
    problems, _ = checked_source(tmp_path, line, where)
    assert any(expected in str(p) for p in problems), [str(p) for p in problems]
