"""The embedded host's rclpy transport (``eels-gz run --ros --ros-transport rclpy``) against real ROS 2
nodes in other processes: a subscriber receives ``/clock`` and ``/joint_states``, and publishers on
``/joint_commands`` and ``/cmd_vel`` (the QoS ros_gz_bridge uses: reliable, volatile, depth 10) move
the host's robot: an EELS bend joint to 0.3 rad, Archimede forward."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from launching import PROBE

from eels_gz.gazebo.agree import ground_truth


def host_env(ros_env: dict) -> dict:
    """The ROS 2 environment with this interpreter's packages (eels_gz, dartpy) after ROS 2's."""
    env = dict(ros_env)
    mine = [p for p in sys.path if p.endswith("-packages")] + [str(Path(__file__).resolve().parents[2])]
    env["PYTHONPATH"] = os.pathsep.join([*env.get("PYTHONPATH", "").split(os.pathsep), *mine])
    return env


def start_run(env: dict, out: Path, *args: str) -> subprocess.Popen:
    # the run's domain is ros.domain (--ros-domain), not the environment's ROS_DOMAIN_ID
    return subprocess.Popen([sys.executable, "-m", "eels_gz.cli", "run", "--ros", "--ros-transport", "rclpy",
                             "--ros-domain", env["ROS_DOMAIN_ID"], "--rate", "1", "--no-server", "--out", str(out),
                             *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def probe(env: dict, *args: str) -> subprocess.Popen:
    import shutil

    python = shutil.which("python3", path=env.get("PATH"))
    return subprocess.Popen([python, str(PROBE), *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def finish(proc: subprocess.Popen, timeout: float = 120) -> str:
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, err[-3000:]
    return out


def test_rclpy_carries_the_hosts_topics_both_ways(ros_env, tmp_path):
    env = host_env(ros_env)
    run = start_run(env, tmp_path / "snake", "--robot", "eels_1_0_front_only", "--duration", "12")
    time.sleep(4.0)  # the host builds its model and starts publishing
    listen = probe(ros_env, "listen", "3")
    seen = json.loads(finish(listen).strip().splitlines()[-1])
    assert len(seen["clock"]) > 50 and seen["clock"][-1] > seen["clock"][0]
    assert "module_3_bend" in seen["joint_states"]["names"]
    finish(probe(ros_env, "joint_command", "module_3_bend", "0.3", "3"))
    finish(run, 120)
    summary = json.loads((tmp_path / "snake" / "summary.json").read_text())
    assert summary["status"] == "ok" and summary["ros"]["bridged"]["transport"] == "rclpy"
    from mcap.reader import make_reader

    from eels_gz.ros.messages import typestore

    store, last = typestore(), None
    with open(tmp_path / "snake" / "log.mcap", "rb") as f:
        for _, _, message in make_reader(f).iter_messages(topics=["/joint_states"]):
            last = store.deserialize_cdr(message.data, "sensor_msgs/msg/JointState")
    q = dict(zip(last.name, last.position))
    assert q["module_3_bend"] == pytest.approx(0.3, abs=0.02)


def test_cmd_vel_over_rclpy_drives_the_hosts_rover(ros_env, tmp_path):
    env = host_env(ros_env)
    run = start_run(env, tmp_path / "rover", "--robot", "archimede", "--duration", "10")
    time.sleep(4.0)
    finish(probe(ros_env, "cmd_vel", "0.1", "4"))
    finish(run, 120)
    t, pos, _ = ground_truth(tmp_path / "rover" / "log.mcap")
    assert np.linalg.norm(pos[-1, :2] - pos[0, :2]) > 0.2  # 4 s at 0.1 m/s, less the ramp
