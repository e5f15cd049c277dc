"""Build ROS 2 messages and encode them as CDR, with rosbags' ROS 2 (Jazzy)
type store, so the bytes are those a ROS 2 node would put on the wire."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from rosbags.typesys import Stores, get_typestore

JOINT_STATE = "sensor_msgs/msg/JointState"
CLOCK = "rosgraph_msgs/msg/Clock"
ODOMETRY = "nav_msgs/msg/Odometry"


@lru_cache(maxsize=1)
def typestore():
    return get_typestore(Stores.ROS2_JAZZY)


def msgdef(typename: str) -> str:
    """The ``ros2msg`` schema text (with dependencies) of a message type."""
    return typestore().generate_msgdef(typename, ros_version=2)[0]


def encode(msg, typename: str) -> bytes:
    return bytes(typestore().serialize_cdr(msg, typename))


def _types():
    t = typestore().types
    return t


def stamp(t_ns: int):
    Time = _types()["builtin_interfaces/msg/Time"]
    return Time(sec=int(t_ns // 1_000_000_000), nanosec=int(t_ns % 1_000_000_000))


def header(t_ns: int, frame_id: str):
    return _types()["std_msgs/msg/Header"](stamp=stamp(t_ns), frame_id=frame_id)


def clock(t_ns: int):
    return _types()[CLOCK](clock=stamp(t_ns))


def joint_state(t_ns: int, names: list[str], position, velocity, effort):
    return _types()[JOINT_STATE](
        header=header(t_ns, ""), name=list(names),
        position=np.asarray(position, dtype=np.float64),
        velocity=np.asarray(velocity, dtype=np.float64),
        effort=np.asarray(effort, dtype=np.float64),
    )


def odometry(t_ns: int, frame_id: str, child_frame_id: str, position, quat_wxyz,
             linear_child, angular_child):
    """nav_msgs/Odometry: pose in ``frame_id``, twist in ``child_frame_id`` (REP-105)."""
    T = _types()
    pose = T["geometry_msgs/msg/Pose"](
        position=T["geometry_msgs/msg/Point"](x=float(position[0]), y=float(position[1]), z=float(position[2])),
        orientation=T["geometry_msgs/msg/Quaternion"](
            x=float(quat_wxyz[1]), y=float(quat_wxyz[2]), z=float(quat_wxyz[3]), w=float(quat_wxyz[0])),
    )
    vec = T["geometry_msgs/msg/Vector3"]
    twist = T["geometry_msgs/msg/Twist"](
        linear=vec(x=float(linear_child[0]), y=float(linear_child[1]), z=float(linear_child[2])),
        angular=vec(x=float(angular_child[0]), y=float(angular_child[1]), z=float(angular_child[2])),
    )
    zeros = np.zeros(36, dtype=np.float64)
    return T[ODOMETRY](
        header=header(t_ns, frame_id), child_frame_id=child_frame_id,
        pose=T["geometry_msgs/msg/PoseWithCovariance"](pose=pose, covariance=zeros),
        twist=T["geometry_msgs/msg/TwistWithCovariance"](twist=twist, covariance=zeros.copy()),
    )
