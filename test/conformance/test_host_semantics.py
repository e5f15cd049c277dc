"""The host reproduces the return rules and loader contract the manifest
records from gz-sim 8's and sdformat 14's sources:

- sdformat ``get_T(key)`` gives ``T()`` for a missing key, ``get_T(key,
  default)`` gives ``(value, found)``, attributes before child elements;
- ``enable_*_check`` creates empty components (``[]``, zero vectors; the
  joint and link cases run in test/plugins/test_gz_api.py);
- the loader appends the plugin paths to ``sys.path``, calls ``reset`` on a
  world reset and ``shutdown`` when destroyed, and hands every callback its
  own UpdateInfo;
- a raising callback disables the system (``sim.plugin_errors: disable``); by
  default the host stops and names it, a documented difference.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from lxml import etree

from eels_gz.errors import PluginCallbackError, PluginError
from eels_gz.gzapi.element import Element
from eels_gz.gzapi.gzmath import Pose3d, Vector3d, pose_matrix
from eels_gz.dart.simulation import Simulation
from gz_manifest import MANIFEST

LOADER = 'filename="gz-sim-python-system-loader-system" name="gz::sim::systems::PythonSystemLoader"'


def test_manifest_rules_are_the_ones_the_host_implements():
    """If gz-sim or sdformat change these, the host must change with them."""
    assert MANIFEST["element_get"]["one_arg_missing_key"] == "T()"
    assert MANIFEST["element_get"]["two_arg_returns"] == "(value, found)"
    assert MANIFEST["element_get"]["two_arg_missing_key"] == "(default, False)"
    assert MANIFEST["element_get"]["lookup_order"].startswith("attribute, then child element")
    checks = MANIFEST["checks"]
    assert checks["Joint.enable_position_check"]["creates"] == [{"component": "components::JointPosition",
                                                                  "initial": "T()"}]
    assert checks["Joint.Position"]["reads"] == "components::JointPosition"
    linear = [c for c in checks["Link.enable_velocity_checks"]["creates"]
              if c["component"] == "components::WorldLinearVelocity"]
    assert linear == [{"component": "components::WorldLinearVelocity", "initial": "defaultWorldLinVel"}]
    loader = MANIFEST["loader"]
    assert loader["module_path"]["operation"] == "append"
    assert {"configure", "pre_update", "update", "post_update", "reset", "shutdown"} == set(loader["callbacks"])
    assert loader["shutdown_on_destruction"] and loader["callback_exception_disables"]
    assert loader["configure_exception_disables"]


# --- sdformat Element getters --------------------------------------------------------------------------
ELEMENT = etree.fromstring('<plugin p="1.5" flag="true"><p>9</p><name>screw</name><n>3</n>'
                           '<v>1 2 3</v><pose>1 2 3 0 0 0</pose><bad>x</bad></plugin>')


@pytest.mark.parametrize("getter, empty", [("get_double", 0.0), ("get_float", 0.0), ("get_int", 0),
                                           ("get_unsigned_int", 0), ("get_bool", False), ("get_string", "")])
def test_one_argument_getter_gives_the_default_value_for_a_missing_key(getter, empty):
    el = Element(ELEMENT, "plugin.sdf")
    value = getattr(el, getter)("no_such_key")
    assert value == empty and type(value) is type(empty)


def test_one_argument_vector_and_pose_getters_give_zero():
    el = Element(ELEMENT, "plugin.sdf")
    v = el.get_vector3("missing")
    assert (v.x(), v.y(), v.z()) == (0.0, 0.0, 0.0)
    assert (pose_matrix(el.get_pose("missing")) == pose_matrix(Pose3d())).all()


def test_two_argument_getter_gives_value_and_found():
    el = Element(ELEMENT, "plugin.sdf")
    assert el.get_double("missing", 7.0) == (7.0, False)
    assert el.get_string("name", "") == ("screw", True)
    assert el.get_int("n", 0) == (3, True)
    v, found = el.get_vector3("v", Vector3d())
    assert found and (v.x(), v.y(), v.z()) == (1.0, 2.0, 3.0)
    # the attribute is found before the child element of the same name
    assert el.get_double("p") == 1.5 and el.get_double("p", 0.0) == (1.5, True)
    assert el.get_bool("flag") is True


def test_unreadable_value_raises_naming_file_and_key():
    el = Element(ELEMENT, "plugin.sdf")
    with pytest.raises(Exception, match=r"plugin\.sdf.*'bad': cannot read a double"):
        el.get_double("bad")


def test_getter_forms_the_bindings_do_not_take():
    el = Element(ELEMENT, "plugin.sdf")
    with pytest.raises(TypeError):
        el.get_double("p", 0.0, 1.0)
    with pytest.raises(TypeError):
        el.get_double("p", default=0.0)  # the two-argument overload has no keyword names
    with pytest.raises(TypeError):
        el.get_next_element()  # pybind11 does not see the C++ default ""


# --- the loader -------------------------------------------------------------------------------------------
LIFECYCLE = """
    from gz_compat import sim

    LOG = []


    class Lifecycle:
        def configure(self, entity, sdf, ecm, event_mgr):
            self.raise_at, _ = sdf.get_int("raise_at", -1)
            self.infos = []
            LOG.append(("configure", sys_path_position()))

        def pre_update(self, info, ecm):
            step = info.iterations
            self.infos.append(("pre", info))
            info.iterations = -1  # a plugin scribbling on its copy must not change what others see
            if step == self.raise_at:
                raise RuntimeError("deliberate")

        def update(self, info, ecm):
            self.infos.append(("update", info))

        def post_update(self, info, ecm):
            self.infos.append(("post", info))

        def reset(self, info, ecm):
            LOG.append(("reset", info.sim_time.total_seconds(), info.iterations, info.dt.total_seconds()))

        def shutdown(self):
            LOG.append(("shutdown",))


    def sys_path_position():
        import os
        import sys
        folder = os.path.dirname(os.path.abspath(__file__))
        return sys.path.index(folder), len(sys.path)


    def get_system():
        return Lifecycle()
"""


def world(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "w.sdf"
    path.write_text(f"""<?xml version="1.0"?>
<sdf version="1.9"><world name="w">
  <physics name="1ms" type="dart"><max_step_size>0.001</max_step_size></physics>
  <gravity>0 0 -9.8</gravity>
  <model name="box"><pose>0 0 1 0 0 0</pose>
    <link name="body"><inertial><mass>1</mass></inertial>
      <collision name="c"><geometry><box><size>0.1 0.1 0.1</size></box></geometry></collision></link>
  </model>
  {body}
</world></sdf>""")
    return path


def lifecycle_plugin(name: str, extra: str = "") -> str:
    return f"<plugin {LOADER}><module_name>{name}</module_name>{extra}</plugin>"


def test_plugin_paths_are_appended_to_sys_path(tmp_path, plugin_dir):
    plugin_dir("lifecycle", LIFECYCLE)
    before = list(sys.path)
    sim = Simulation(world(tmp_path, lifecycle_plugin("lifecycle")))
    module = sys.modules["lifecycle"]
    index, length = module.LOG[0][1]
    assert index >= len(before), "gz-sim appends the system plugin paths; the host put them first"
    assert sys.path[:len(before)] == before
    sim.close()


def test_every_callback_gets_its_own_update_info(tmp_path, plugin_dir):
    plugin_dir("lifecycle", LIFECYCLE)
    sim = Simulation(world(tmp_path, lifecycle_plugin("lifecycle")))
    for _ in range(3):
        sim.step()
    probe = sim.systems[0].system
    infos = [i for _, i in probe.infos]
    assert len({id(i) for i in infos}) == len(infos) == 9
    # the pre_update copy was scribbled on; update and post_update of the same step are untouched
    assert [i.iterations for phase, i in probe.infos if phase != "pre"] == [1, 1, 2, 2, 3, 3]
    assert [i.sim_time.total_seconds() for phase, i in probe.infos if phase == "post"] == [0.001, 0.002, 0.003]
    assert all(i.paused is False and i.dt.total_seconds() == 0.001 for i in infos)
    sim.close()


LATE_CALLBACKS = """
    class Late:
        def configure(self, entity, sdf, ecm, event_mgr):
            self.calls = []
            # gz-sim 8's loader looks the callbacks up after configure (PythonSystemLoader.cc)
            self.post_update = lambda info, ecm: self.calls.append(info.iterations)


    def get_system():
        return Late()
"""


def test_callbacks_a_system_sets_in_configure_are_called(tmp_path, plugin_dir):
    plugin_dir("late_callbacks", LATE_CALLBACKS)
    sim = Simulation(world(tmp_path, lifecycle_plugin("late_callbacks")))
    for _ in range(3):
        sim.step()
    assert sim.systems[0].system.calls == [1, 2, 3]
    sim.close()


def test_world_reset_calls_reset_and_returns_to_the_start(tmp_path, plugin_dir):
    plugin_dir("lifecycle", LIFECYCLE)
    sim = Simulation(world(tmp_path, lifecycle_plugin("lifecycle")))
    body = sim.world.getSkeleton("box").getBodyNode(0)
    z0 = body.getWorldTransform().translation()[2]
    for _ in range(100):
        sim.step()
    assert body.getWorldTransform().translation()[2] < z0 - 0.04  # fell 4.9 cm in 0.1 s
    sim.reset()
    log = sys.modules["lifecycle"].LOG
    assert log[-1] == ("reset", 0.0, 0, pytest.approx(-0.1))
    assert sim.time == 0.0 and sim.iterations == 0 and sim.total_iterations == 100
    assert body.getWorldTransform().translation()[2] == pytest.approx(z0, abs=1e-12)
    sim.step()
    assert sim.systems[0].system.infos[-1][1].iterations == 1
    sim.close()
    sim.close()
    assert log.count(("shutdown",)) == 1


def test_a_raising_callback_stops_the_run_naming_the_plugin_by_default(tmp_path, plugin_dir):
    plugin_dir("lifecycle", LIFECYCLE)
    sim = Simulation(world(tmp_path, lifecycle_plugin("lifecycle", "<raise_at>3</raise_at>")))
    sim.step()
    sim.step()
    with pytest.raises(PluginCallbackError, match=r"plugin 'lifecycle' raised in pre_update\(\) at step 3 "
                                                   r"\(t = 0\.003000 s\): RuntimeError: deliberate"):
        sim.step()
    sim.close()


def test_gazebo_mode_disables_a_raising_system_and_runs_the_others(tmp_path, plugin_dir):
    plugin_dir("lifecycle", LIFECYCLE)
    plugin_dir("other", LIFECYCLE.replace("LOG = []", "LOG = []  # a second copy"))
    sim = Simulation(world(tmp_path, lifecycle_plugin("lifecycle", "<raise_at>2</raise_at>")
                           + lifecycle_plugin("other")), plugin_errors="disable")
    for _ in range(5):
        sim.step()
    failing, other = (s.system for s in sim.systems)
    assert [p for p, _ in failing.infos] == ["pre", "update", "post", "pre"]  # nothing after the raise
    assert len(other.infos) == 15
    assert "raised in pre_update() at step 2" in sim.systems[0].disabled
    sim.close()
    assert sys.modules["lifecycle"].LOG[-1] == ("shutdown",)  # still shut down, as gz-sim's destructor does


def test_a_raising_configure_disables_in_gazebo_mode_and_stops_by_default(tmp_path, plugin_dir):
    plugin_dir("broken", """
        class Broken:
            def configure(self, entity, sdf, ecm, event_mgr):
                raise ValueError("bad parameter")

            def pre_update(self, info, ecm):
                raise AssertionError("never called")

        def get_system():
            return Broken()
    """)
    with pytest.raises(PluginError, match="configure\\(\\) of 'broken' failed: ValueError: bad parameter"):
        Simulation(world(tmp_path, lifecycle_plugin("broken")))
    sim = Simulation(world(tmp_path, lifecycle_plugin("broken")), plugin_errors="disable")
    sim.step()
    assert sim.systems[0].disabled
    sim.close()


def test_a_run_resets_the_world_at_sim_reset_at(tmp_path):
    """``--set sim.reset_at=T`` does what gz-sim's reset does to a robot ros_gz_sim create spawned: the
    world goes back to its loaded state, which does not hold the robot, so the run ends there with a
    status that says so; the log holds the robot up to T."""
    from mcap.reader import make_reader

    from eels_gz import config
    from eels_gz.run.runner import run

    cfg = config.resolve(overrides={"robot": {"name": "eels_1_0_front_only", "n_modules": 2}, "duration": 0.1,
                                    "sim": {"reset_at": 0.04}, "log": {"plot": False}})
    summary = run(cfg, tmp_path / "run")
    assert summary["status"] == "robot_removed" and summary["resets"] == 1
    assert "world reset at t = 0.0400 s" in summary["message"] and "removed" in summary["message"]
    assert summary["steps"] == 40 and summary["sim_time"] == 0.0  # the world's clock after the reset
    assert summary["real_time_factor"] > 0  # the 0.04 s simulated before the reset, over the wall time
    with open(tmp_path / "run" / "log.mcap", "rb") as f:
        stamps = [m.log_time for _, _, m in make_reader(f).iter_messages(topics=["/joint_states"])]
    assert max(stamps) == 40_000_000  # the robot's last state is the one at the reset


def test_world_reset_removes_the_spawned_robot_after_its_systems_reset(tmp_path, plugin_dir):
    """gz-sim 8: ResetTo marks the robot (added after the world loaded) removed, SystemManager::Reset
    still calls its systems' reset(), then ProcessRemovedEntities unloads them; world systems stay."""
    from eels_gz import registry
    from eels_gz.description.assemble import robot_description
    from eels_gz.dart.simulation import RobotSpec

    plugin_dir("lifecycle", LIFECYCLE)
    desc = robot_description(registry.robot("eels_1_0_front_only"), n_modules=2, xacro_args={"contact": "stock"})
    sim = Simulation(world(tmp_path, lifecycle_plugin("lifecycle")), RobotSpec("eels", desc))
    robot_systems = [s for s in sim.systems if s.entity == sim.robot_entity]
    assert {s.module for s in robot_systems} >= {"joint_control"}
    reset_calls = []
    for s in robot_systems:
        s.reset = (lambda name: lambda info, ecm: reset_calls.append(name))(s.module)
    for _ in range(10):
        sim.step()
    n_skeletons = sim.world.getNumSkeletons()
    sim.reset()
    assert sorted(reset_calls) == sorted(s.module for s in robot_systems)  # reset ran, once each
    assert sim.robot_removed and sim.robot_skeleton is None
    assert sim.world.getNumSkeletons() == n_skeletons - 1
    assert [s.module for s in sim.systems] == ["lifecycle"]  # the world's system stays
    body = sim.world.getSkeleton("box").getBodyNode(0)
    z0 = body.getWorldTransform().translation()[2]
    steps = len(sim.systems[0].system.infos)
    for _ in range(10):  # the world runs on without the robot, and its system with it
        sim.step()
    assert body.getWorldTransform().translation()[2] < z0
    assert len(sim.systems[0].system.infos) == steps + 30
    sim.close()


def test_sim_settings_are_checked():
    from eels_gz import config
    from eels_gz.errors import ConfigError

    with pytest.raises(ConfigError, match="'sim.plugin_errors' must be one of stop, disable"):
        config.resolve(sets=["sim.plugin_errors=ignore"])
    with pytest.raises(ConfigError, match="'sim.reset_at' must be a positive time"):
        config.resolve(sets=["sim.reset_at=-1"])
