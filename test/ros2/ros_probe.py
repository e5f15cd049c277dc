"""An rclpy node for the ROS 2 tier, run as its own process in the ROS 2 environment (the test's own
interpreter has no rclpy). Prints one JSON object on stdout when done.

    python ros_probe.py listen SECONDS [--tf-from FRAME ...] [--joint NAME]   what arrived: /clock, /joint_states
        names and positions (NAME's as a stamped series), 
        every /<robot>/fts/*/wrench (forces per message), /imu, /ground_truth/odom and /odom
        (stamped positions and twists), and which frames tf2 resolves from FRAME at the newest stamp
    python ros_probe.py cmd_vel VX SECONDS                    publish geometry_msgs/Twist on /cmd_vel at 20 Hz
    python ros_probe.py joint_command NAME POSITION SECONDS   publish sensor_msgs/JointState on /joint_commands
        (name, position, velocity NaN, effort NaN: the form ros_gz_bridge converts) at 10 Hz

Topics are subscribed with the QoS ros_gz_bridge offers (reliable, volatile, depth 10) and /tf_static
transient local.
"""

from __future__ import annotations

import json
import math
import sys
import time

import rclpy
from rclpy.node import Node
from rclpy.qos import QoSProfile


def spin_for(node, seconds: float, until=None) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end and not (until and until()):
        rclpy.spin_once(node, timeout_sec=0.05)


def listen(seconds: float, tf_from: list[str], track: str = "") -> dict:
    from geometry_msgs.msg import WrenchStamped
    from nav_msgs.msg import Odometry
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import Imu, JointState
    from tf2_ros import Buffer, TransformListener

    node = Node("eels_gz_probe")
    qos = QoSProfile(depth=10)
    out: dict = {"clock": [], "joint_states": {"names": [], "count": 0, "last": {}}, "wrench": {}, "imu": [],
                 "odom": {}, "tf": {}}

    def stamp(h) -> float:
        return h.stamp.sec + 1e-9 * h.stamp.nanosec

    node.create_subscription(Clock, "/clock", lambda m: out["clock"].append(m.clock.sec + 1e-9 * m.clock.nanosec),
                             qos)

    def joints(m: JointState) -> None:
        js = out["joint_states"]
        js["names"] = list(m.name)
        js["count"] += 1
        js["stamp"] = stamp(m.header)
        js["last"] = dict(zip(m.name, [float(p) for p in m.position]))
        if track in js["last"]:
            js.setdefault("track", []).append([js["stamp"], js["last"][track]])
    node.create_subscription(JointState, "/joint_states", joints, qos)
    node.create_subscription(Imu, "/imu", lambda m: out["imu"].append(
        [stamp(m.header), m.linear_acceleration.x, m.linear_acceleration.y, m.linear_acceleration.z]), qos)
    for topic in ("/ground_truth/odom", "/odom"):
        def odom(m: Odometry, topic=topic) -> None:
            p, v = m.pose.pose.position, m.twist.twist.linear
            out["odom"].setdefault(topic, []).append([stamp(m.header), p.x, p.y, p.z, v.x, v.y, v.z])
        node.create_subscription(Odometry, topic, odom, qos)
    seen: set[str] = set()

    def discover() -> None:
        for name, types in node.get_topic_names_and_types():
            if name.endswith("/wrench") and "/fts/" in name and name not in seen:
                seen.add(name)
                node.create_subscription(WrenchStamped, name, lambda m, n=name: out["wrench"].setdefault(n, []).append(
                    [stamp(m.header), m.wrench.force.x, m.wrench.force.y, m.wrench.force.z]), qos)
    buffer = Buffer()
    TransformListener(buffer, node)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        discover()
        spin_for(node, 0.5)
    frames = {}
    newest = None
    if out["joint_states"]["names"] and "stamp" in out["joint_states"]:
        newest = out["joint_states"]["stamp"]
    for root in tf_from:
        for link in yaml_frames(buffer):
            try:
                t = buffer.lookup_transform(root, link, rclpy.time.Time())
                frames.setdefault(root, {})[link] = t.header.stamp.sec + 1e-9 * t.header.stamp.nanosec
            except Exception as exc:  # noqa: BLE001 - report which frame failed
                frames.setdefault(root, {})[link] = f"{type(exc).__name__}: {exc}"[:200]
    out["tf"] = frames
    out["tf_frames"] = sorted(yaml_frames(buffer))
    out["newest_joint_stamp"] = newest
    node.destroy_node()
    return out


def yaml_frames(buffer) -> list[str]:
    import yaml

    return list((yaml.safe_load(buffer.all_frames_as_yaml()) or {}).keys())


def cmd_vel(vx: float, seconds: float) -> dict:
    from geometry_msgs.msg import Twist

    node = Node("eels_gz_cmd_vel")
    pub = node.create_publisher(Twist, "/cmd_vel", QoSProfile(depth=10))
    msg = Twist()
    msg.linear.x = vx
    sent, end = 0, time.monotonic() + seconds
    while time.monotonic() < end:
        pub.publish(msg)
        sent += 1
        spin_for(node, 0.05)
    node.destroy_node()
    return {"sent": sent}


def joint_command(name: str, position: float, seconds: float) -> dict:
    from sensor_msgs.msg import JointState

    node = Node("eels_gz_joint_command")
    pub = node.create_publisher(JointState, "/joint_commands", QoSProfile(depth=10))
    msg = JointState()
    msg.name, msg.position, msg.velocity, msg.effort = [name], [position], [math.nan], [math.nan]
    sent, end = 0, time.monotonic() + seconds
    while time.monotonic() < end:
        pub.publish(msg)
        sent += 1
        spin_for(node, 0.1)
    node.destroy_node()
    return {"sent": sent}


def main(argv: list[str]) -> None:
    rclpy.init()
    try:
        if argv[0] == "listen":
            tf_from = [argv[i + 1] for i, a in enumerate(argv) if a == "--tf-from"]
            track = next((argv[i + 1] for i, a in enumerate(argv) if a == "--joint"), "")
            result = listen(float(argv[1]), tf_from, track)
        elif argv[0] == "cmd_vel":
            result = cmd_vel(float(argv[1]), float(argv[2]))
        elif argv[0] == "joint_command":
            result = joint_command(argv[1], float(argv[2]), float(argv[3]))
        else:
            raise SystemExit(f"unknown probe command {argv[0]!r}")
    finally:
        rclpy.shutdown()
    print(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1:])
