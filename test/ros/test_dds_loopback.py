"""A host run with the ROS interface on DDS, watched by a listener in a
separate process (test/ros/dds_listener.py: cyclonedds with its own IDL
classes, no eels_gz import): it receives /joint_states with the robot's
joint names, /clock advancing with simulated time, the force-torque
wrenches and /imu."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from eels_gz import config
from eels_gz.run.resolve import resolve_run
from eels_gz.run.runner import prepare
from eels_gz.dart.sensors import HostSensors
from eels_gz.gzapi.topics import HostTopics
from eels_gz.ros.interface import RosInterface

HERE = Path(__file__).resolve().parent


def domain_id() -> int:
    """A domain per test process, away from the default 0, so parallel runs do not cross-talk."""
    return 100 + os.getpid() % 100


def start_listener(domain: int, seconds: float, topics: dict[str, str]) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHONPATH")}
    proc = subprocess.Popen([sys.executable, str(HERE / "dds_listener.py"), str(domain), str(seconds)]
                            + [f"{t}:{k}" for t, k in topics.items()],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd="/")
    assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
    return proc


def run_until_done(sim, topics: HostTopics, proc: subprocess.Popen, budget_s: float, sensors=None) -> dict:
    """Step the host (paced at about real time, as a ROS consumer would see it) until the listener reports."""
    end = time.monotonic() + budget_s
    while proc.poll() is None and time.monotonic() < end:
        for _ in range(10):
            sim.step()
            topics.post_step()
            if sensors is not None:
                sensors.post_step()
        time.sleep(0.005)
    out, err = proc.communicate(timeout=budget_s)
    assert proc.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1])


@pytest.fixture
def eels_1_5():
    cfg = config.resolve(overrides={"robot": {"name": "eels_1_5", "xacro_args": {"head": "true"}},
                                    "duration": 1.0})
    return prepare(resolve_run(cfg)).sim


def test_listener_receives_joint_states_clock_wrenches_and_imu(eels_1_5):
    sim = eels_1_5
    names, _ = sim.robot_joints()
    topics = HostTopics(sim, period=5)
    sensors = HostSensors(sim, noise=False)
    fts = [n for _, n, kind, _ in sim.sensor_specs if kind == "force_torque"]
    assert len(fts) == 3  # EELS 1.5 carries three force-torque sensors
    robot = sim.robot_skeleton.getName()
    wanted = {"/joint_states": "joint_states", "/clock": "clock", "/imu": "imu"}
    wanted.update({f"/{robot}/fts/{n}/wrench": "wrench" for n in fts})
    domain = domain_id()
    ros = RosInterface(sim, "dds", domain)
    try:
        assert ros.kind == "dds"
        proc = start_listener(domain, 15.0, wanted)
        got = run_until_done(sim, topics, proc, 20.0, sensors)
    finally:
        ros.close()
    g = -sim.world.getGravity()[2]
    for n in fts:
        w = got[f"/{robot}/fts/{n}/wrench"]
        assert w[-1]["count"] >= 3, got
        assert w[0]["frame"] == f"{n}_link"
        assert max(abs(v) for v in w[-2]["force"]) > 0.1  # resting on the ice loads every joint (values: test_hang)
    imu = got["/imu"]
    assert imu[-1]["count"] >= 3 and imu[0]["frame"] == "imu_link"  # its <gz_frame_id>
    # lying on the ice, noise off: the accelerometer reads +g along the world vertical (within contact jitter)
    assert sum(a * a for a in imu[0]["acc"]) ** 0.5 == pytest.approx(g, rel=0.02)
    js, clock = got["/joint_states"], got["/clock"]
    assert js[-1]["count"] >= 3 and clock[-1]["count"] >= 3, got
    assert js[0]["names"] == names and len(names) == sim.robot_skeleton.getNumDofs() - 6
    # clock stamps are multiples of the publishing period (5 steps) and increase
    ts = [c["t"] for c in clock[:-1]]
    assert all(b > a for a, b in zip(ts, ts[1:]))
    period = 5 * sim.dt
    assert all(abs(t / period - round(t / period)) < 1e-6 for t in ts)
