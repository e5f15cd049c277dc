"""Closing the loop over DDS: commands published by a ROS 2 participant on
loopback reach the host (a publisher thread repeats each command until the
bridge has accepted it; volatile QoS drops what is sent before discovery).

- /joint_commands moves a joint to its set point; an unknown joint name and
  a malformed message are logged and the run goes on;
- /enable_gravity false: a robot released 1 m above the ground does not fall;
  true again: its centre of mass falls as DART's semi-implicit Euler does,
  x_n = g dt^2 n (n + 1) / 2;
- /set_pose places the robot's base;
- --rate 1.0 keeps simulated time with wall time."""

from __future__ import annotations

import logging
import math
import os
import threading
import time

import numpy as np
import pytest

from eels_gz import config
from eels_gz.run.resolve import resolve_run
from eels_gz.run.runner import HostRos, prepare
from eels_gz.ros.dds import DdsNode
from eels_gz.ros.messages import typestore
from eels_gz.ros.qos import BRIDGE as DEFAULT

T = typestore().types
WAIT_S = 10.0  # s of wall time allowed for DDS discovery and delivery


def _domain() -> int:
    return 20 + os.getpid() % 80


def _setup(pose=None, robot="eels_1_0_front_only"):
    overrides = {"robot": {"name": robot}, "duration": 1.0,
                 "ros": {"enabled": True, "transport": "dds", "domain": _domain()}}
    if pose is not None:
        overrides["robot"]["pose"] = pose
    cfg = config.resolve(overrides=overrides)
    plan = resolve_run(cfg)
    sim = prepare(plan).sim
    return sim, HostRos(sim, cfg["ros"], plan.dt)


class Repeater:
    """Publishes one message every 20 ms from a thread until stopped."""

    def __init__(self, node: DdsNode, topic: str, ros_type: str, msg):
        self.pub = node.publisher(topic, ros_type, DEFAULT)
        self.msg, self._stop = msg, threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self._stop.is_set():
            self.pub.publish(self.msg)
            time.sleep(0.02)

    def stop(self):
        self._stop.set()
        self.thread.join()


def _wait_received(ros: HostRos, topic: str, count: int = 1, stat: str = "received") -> None:
    end = time.monotonic() + WAIT_S
    counts = getattr(ros.interface.bridge, stat)
    while counts[topic] < count:
        assert time.monotonic() < end, f"{topic}: nothing {stat} over DDS within {WAIT_S} s"
        time.sleep(0.01)


def _steps(sim, ros, n):
    for _ in range(n):
        sim.step()
        ros.post_step()


def _header():
    return T["std_msgs/msg/Header"](stamp=T["builtin_interfaces/msg/Time"](sec=0, nanosec=0), frame_id="world")


def test_joint_commands_move_a_joint_to_its_set_point(caplog):
    sim, ros = _setup()
    node = DdsNode(_domain())
    try:
        (jc,) = [s.system for s in sim.systems if s.module == "joint_control"]
        k = int(np.flatnonzero(~jc.velocity_mode)[0])
        name = jc.names[k]
        _steps(sim, ros, 10)
        q0 = jc.joints[k].position(sim.ecm)[0]
        target = q0 + 0.2  # rad
        malformed = T["sensor_msgs/msg/JointState"](header=_header(), name=["a", "b"], position=np.array([1.0]),
                                                    velocity=np.array([], float), effort=np.array([], float))
        bad = Repeater(node, "/joint_commands", "sensor_msgs/msg/JointState", malformed)
        _wait_received(ros, "/joint_commands", stat="rejected")
        bad.stop()
        # a position-only command (velocity and effort empty) is what ros_gz_bridge mangles: refused
        position_only = T["sensor_msgs/msg/JointState"](header=_header(), name=[name], position=np.array([target]),
                                                        velocity=np.array([], float), effort=np.array([], float))
        with caplog.at_level(logging.WARNING):
            bad = Repeater(node, "/joint_commands", "sensor_msgs/msg/JointState", position_only)
            _wait_received(ros, "/joint_commands", count=2, stat="rejected")
            bad.stop()
        assert "1 names and 1 position, 0 velocity and 0 effort values" in caplog.text
        nan = float("nan")
        cmd = T["sensor_msgs/msg/JointState"](header=_header(), name=[name, "no_such_joint"],
                                              position=np.array([target, 0.0]), velocity=np.array([nan, nan]),
                                              effort=np.array([nan, nan]))
        with caplog.at_level(logging.WARNING):
            rep = Repeater(node, "/joint_commands", "sensor_msgs/msg/JointState", cmd)
            _wait_received(ros, "/joint_commands")
            rep.stop()
            _steps(sim, ros, 2000)
        q = jc.joints[k].position(sim.ecm)[0]
        # the PID (with integral action) settles on the set point; 2 % of the 0.2 rad step
        assert q == pytest.approx(target, abs=0.004)
        text = caplog.text
        assert "no_such_joint" in text and "not a controlled joint" in text
        assert "2 names and 1 position, 0 velocity and 0 effort values" in text
    finally:
        ros.close()


def test_enable_gravity_false_stops_a_dropped_robot_falling():
    sim, ros = _setup(pose=[0.0, 0.0, 1.0, 0.0, 0.0, 0.0])
    node = DdsNode(_domain())
    skel = sim.robot_skeleton
    g = -float(sim.world.getGravity()[2])
    try:
        off = Repeater(node, "/enable_gravity", "std_msgs/msg/Bool", T["std_msgs/msg/Bool"](data=False))
        _wait_received(ros, "/enable_gravity")
        off.stop()
        z0 = skel.getCOM()[2]
        _steps(sim, ros, 300)
        # no gravity, no contact: the centre of mass stays (internal joint forces cannot move it)
        assert skel.getCOM()[2] == pytest.approx(z0, abs=1e-9)
        n_received = ros.interface.bridge.received["/enable_gravity"]
        on = Repeater(node, "/enable_gravity", "std_msgs/msg/Bool", T["std_msgs/msg/Bool"](data=True))
        _wait_received(ros, "/enable_gravity", n_received + 1)
        on.stop()
        n = 200
        _steps(sim, ros, n)
        drop = z0 - skel.getCOM()[2]
        expected = g * sim.dt ** 2 * n * (n + 1) / 2
        # the repeater may have queued more "true" commands: harmless; the fall is exact to rounding
        assert drop == pytest.approx(expected, rel=1e-6)
    finally:
        ros.close()


def test_set_pose_places_the_robot():
    sim, ros = _setup()
    node = DdsNode(_domain())
    yaw = 0.5  # rad
    target = np.array([2.0, -1.0, 0.8])  # m
    msg = T["geometry_msgs/msg/PoseStamped"](header=_header(), pose=T["geometry_msgs/msg/Pose"](
        position=T["geometry_msgs/msg/Point"](x=target[0], y=target[1], z=target[2]),
        orientation=T["geometry_msgs/msg/Quaternion"](x=0.0, y=0.0, z=math.sin(yaw / 2), w=math.cos(yaw / 2))))
    try:
        rep = Repeater(node, "/set_pose", "geometry_msgs/msg/PoseStamped", msg)
        _wait_received(ros, "/set_pose")
        rep.stop()
        _steps(sim, ros, 1)
        T_base = sim.robot_skeleton.getBodyNode(0).getWorldTransform().matrix()
        # one 1 ms step after placement: the base moves by at most g dt^2 ~ 1e-5 m
        assert np.allclose(T_base[:3, 3], target, atol=1e-4)
        assert math.atan2(T_base[1, 0], T_base[0, 0]) == pytest.approx(yaw, abs=1e-4)
    finally:
        ros.close()


def test_set_pose_rejects_a_zero_quaternion(caplog):
    sim, ros = _setup()
    try:
        from eels_gz.gzapi import msgs

        before = sim.robot_skeleton.getPositions().copy()
        bad = msgs.Pose(position={"x": 5.0})  # orientation left all zero
        with caplog.at_level(logging.WARNING):
            ros.topics._on_set_pose(bad)
        _steps(sim, ros, 1)
        assert "non-zero quaternion" in caplog.text
        assert abs(sim.robot_skeleton.getPositions()[3] - before[3]) < 1e-3
    finally:
        ros.close()
