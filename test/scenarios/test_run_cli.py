"""`eels-gz run` end to end: outputs, determinism, configuration precedence,
divergence handling and bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml
from click.testing import CliRunner
from mcap.reader import make_reader

from eels_gz import registry
from eels_gz.cli import main
from eels_gz.control.setpoints import SetpointSchedule, load_scenario
from eels_gz.description.xacro_loader import load_description
from eels_gz.ros.messages import typestore

ROBOT = "eels_1_0_front_only"


def run_cli(*args):
    result = CliRunner().invoke(main, ["run", *args])
    return result


def read_mcap(path):
    out = {}
    with open(path, "rb") as f:
        for schema, channel, message in make_reader(f).iter_messages():
            out.setdefault(channel.topic, []).append((schema.name, message.log_time, message.data))
    return out


def test_run_writes_log_summary_and_plot(tmp_path):
    res = run_cli("--robot", ROBOT, "--world", "ice_plane", "--duration", "0.5", "--out", str(tmp_path), "--json",
                  "--set", "log.rate=50")
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout[res.stdout.index("{"):])
    assert summary["status"] == "ok"
    assert summary["sim_time"] == pytest.approx(0.5, abs=1e-9)
    assert summary["real_time_factor"] > 0
    assert summary["settings"]["resolved"]["dofs"] == 36
    assert set(summary["final_base_pose"]) == {"position", "orientation_wxyz", "rpy"}
    assert json.loads((tmp_path / "summary.json").read_text()) == summary
    assert (tmp_path / "trajectory.png").stat().st_size > 10_000

    topics = read_mcap(tmp_path / "log.mcap")
    sampled = {"/clock", "/joint_states", "/ground_truth/odom", "/tf"}
    # and the run's 3D scene, written once (docs/viewer.md)
    assert set(topics) == sampled | {"/robot_description", "/tf_static", "/terrain", "/terrain/embedded"}
    # one sample at t = 0 and one every 1/50 s: 0.5 s -> 26
    assert all(len(topics[t]) == 26 for t in sampled)
    assert topics["/joint_states"][0][0] == "sensor_msgs/msg/JointState"
    ts = typestore()
    js = ts.deserialize_cdr(topics["/joint_states"][-1][2], "sensor_msgs/msg/JointState")
    assert len(js.name) == 30 and "module_1_bend" in js.name and "module_10_screw" in js.name
    assert len(js.position) == len(js.velocity) == len(js.effort) == 30
    odom = ts.deserialize_cdr(topics["/ground_truth/odom"][-1][2], "nav_msgs/msg/Odometry")
    assert odom.child_frame_id == "base_link"
    p = summary["final_base_pose"]["position"]
    assert [odom.pose.pose.position.x, odom.pose.pose.position.y, odom.pose.pose.position.z] == pytest.approx(p, abs=1e-12)
    clock = ts.deserialize_cdr(topics["/clock"][-1][2], "rosgraph_msgs/msg/Clock")
    assert clock.clock.sec * 10**9 + clock.clock.nanosec == topics["/clock"][-1][1] == 500_000_000


def test_same_inputs_give_identical_logs(tmp_path):
    args = ["--robot", ROBOT, "--world", "ice_plane", "--scenario", "crescent_spin", "--duration", "1.0"]
    for name in ("a", "b"):
        assert run_cli(*args, "--out", str(tmp_path / name)).exit_code == 0
    a, b = (tmp_path / "a" / "log.mcap").read_bytes(), (tmp_path / "b" / "log.mcap").read_bytes()
    assert len(a) > 100_000 and a == b


def test_config_precedence_and_save_config(tmp_path):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(yaml.safe_dump({"duration": 0.3, "log": {"rate": 20.0}, "physics": {"dt": 0.002}}))
    saved = tmp_path / "resolved.yaml"
    # command line beats the file (duration), --set beats both (dt)
    res = run_cli("--config", str(cfg), "--duration", "0.2", "--set", "physics.dt=0.001",
                  "--save-config", str(saved), "--out", str(tmp_path / "o"), "--json")
    assert res.exit_code == 0, res.output
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["sim_time"] == pytest.approx(0.2, abs=1e-9)
    assert summary["settings"]["resolved"]["dt"] == 0.001
    resolved = yaml.safe_load(saved.read_text())
    assert resolved["duration"] == 0.2 and resolved["log"]["rate"] == 20.0 and resolved["physics"]["dt"] == 0.001
    assert resolved["robot"]["name"] == ROBOT and resolved["world"] == "ice_plane"
    # the saved file reproduces the run on its own
    res2 = run_cli("--config", str(saved), "--out", str(tmp_path / "o2"))
    assert res2.exit_code == 0, res2.output
    s2 = json.loads((tmp_path / "o2" / "summary.json").read_text())
    assert s2["final_base_pose"] == summary["final_base_pose"]


def test_divergence_stops_with_step_and_body_after_writing_the_log(tmp_path):
    # A 1e-9 bound on joint speed is exceeded on the first step of settling:
    # the run must stop there, name the step and a body, and keep the log.
    res = run_cli("--duration", "1.0", "--set", "physics.max_velocity=1e-9", "--out", str(tmp_path))
    assert res.exit_code == 3
    assert "diverged at step 1 " in res.output and "in body '" in res.output
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["status"] == "diverged" and summary["error"]["step"] == 1
    assert summary["error"]["body"] in {"base_link"} | {f"module_{i}_{p}" for i in range(1, 11)
                                                         for p in ("yoke", "shell", "screw_link")}
    assert read_mcap(tmp_path / "log.mcap")["/clock"]  # the last good state is in the log


def test_the_timed_loop_runs_after_the_kernels_load_with_the_setup_frozen(tmp_path, monkeypatch):
    """The cached kernels load before the timed loop; the loop runs with everything built before it
    frozen for the collector (its full passes would walk it) and leaves nothing frozen, even when the
    run diverges."""
    import gc

    from eels_gz.run import runner
    from eels_gz.dart import simulation

    events, step = [], simulation.Simulation.step
    load = runner.load_cached_kernels
    monkeypatch.setattr(runner, "load_cached_kernels", lambda **kw: (events.append(("load", gc.get_freeze_count())),
                                                                    load(**kw))[1])
    monkeypatch.setattr(simulation.Simulation, "step",
                        lambda self: (events.append(("step", gc.get_freeze_count())), step(self))[1])
    res = run_cli("--robot", ROBOT, "--duration", "0.05", "--out", str(tmp_path / "ok"), "--json", "--set", "log.plot=false")
    assert res.exit_code == 0, res.output
    assert events[0] == ("load", 0) and len(events) == 51
    assert all(kind == "step" and frozen > 0 for kind, frozen in events[1:])
    assert gc.get_freeze_count() == 0
    summary = json.loads((tmp_path / "ok" / "summary.json").read_text())
    assert summary["numba"]["cache_loaded"] >= 0 and summary["numba"]["cache_load_time"] >= 0
    res = run_cli("--robot", ROBOT, "--duration", "0.05", "--set", "physics.max_velocity=1e-9",
                  "--out", str(tmp_path / "diverged"))
    assert res.exit_code == 3 and gc.get_freeze_count() == 0


@pytest.mark.parametrize(
    "args, message",
    [
        (["--robot", "eels_9"], "unknown robot 'eels_9'"),
        (["--world", "nowhere.sdf"], "world file 'nowhere.sdf' does not exist"),
        (["--world", "moon"], "unknown world 'moon'"),
        (["--scenario", "dance"], "unknown scenario 'dance'"),
        (["--set", "physics.foo=1"], "unknown config key 'physics.foo'"),
        (["--set", "physics.dt=fast"], "'physics.dt' expects a float"),
        (["--set", "duration"], "expected KEY=VALUE"),
        (["--set", "robot.pose=[1, 2]"], "robot.pose must be 'auto' or a list of 6 numbers"),
        (["--collision-detector", "havok"], "Invalid value for '--collision-detector'"),
    ],
)
def test_bad_input_is_reported_clearly(tmp_path, args, message):
    res = run_cli(*args, "--duration", "0.01", "--out", str(tmp_path))
    assert res.exit_code == 2
    assert message in res.output


def test_bad_config_file(tmp_path):
    f = tmp_path / "bad.yaml"
    f.write_text("physics:\n  dt: [unclosed\n")
    res = run_cli("--config", str(f), "--out", str(tmp_path))
    assert res.exit_code == 2 and "bad.yaml" in res.output and "invalid YAML" in res.output
    f.write_text("physiks:\n  dt: 0.001\n")
    res = run_cli("--config", str(f), "--out", str(tmp_path))
    assert res.exit_code == 2 and "unknown config key 'physiks'" in res.output


@pytest.mark.parametrize("name", sorted(registry.scenarios()))
def test_every_scenario_fits_the_default_robot(name):
    data = load_scenario(registry.scenario_path(name))
    if data.get("robot") and registry.robot(data["robot"]).family in ("rig", "rover"):
        # wheel_rig, drag_rig, rover_drive: their own systems drive the rig or the rover
        assert not data["setpoints"] and data["systems"]
        return
    entry = registry.robot(ROBOT)
    from lxml import etree

    urdf = etree.fromstring(load_description(entry.path, dict(entry.xacro_args)).urdf.encode())
    joints = [j.get("name") for j in urdf.iter("joint") if j.get("type") != "fixed"]
    schedule = SetpointSchedule(joints, data["setpoints"], name)
    assert schedule.frames and data["duration"] > 0


def test_hold_scenario_keeps_the_robot_at_rest(tmp_path):
    """Screws held at zero speed and the shape held straight: the base moves
    less than 1 mm in 3 s (the robot only settles into contact)."""
    res = run_cli("--scenario", "hold", "--duration", "3", "--out", str(tmp_path), "--set", "log.plot=false")
    assert res.exit_code == 0, res.output
    ts = typestore()
    odom = [ts.deserialize_cdr(d, "nav_msgs/msg/Odometry") for _, _, d in read_mcap(tmp_path / "log.mcap")["/ground_truth/odom"]]
    xyz = np.array([[o.pose.pose.position.x, o.pose.pose.position.y, o.pose.pose.position.z] for o in odom])
    assert np.max(np.linalg.norm(xyz[10:] - xyz[10], axis=1)) < 1e-3
