"""A stand-alone ROS 2 DDS listener for the tests: cyclonedds with its own
IDL classes written here from the ROS 2 message definitions (it does not
import eels_gz), so it checks the wire independently of the project's ROS
module. Usage: python dds_listener.py DOMAIN SECONDS TOPIC:KIND ...

KIND is joint_states, clock, wrench or imu. It prints "ready", then one JSON
line with what each topic received when every topic has MIN samples
(env LISTENER_MIN, default 3) or when SECONDS pass."""

import json
import os
import sys
import time
from dataclasses import dataclass

import cyclonedds.idl.annotations as annotate
from cyclonedds.core import Policy, Qos
from cyclonedds.domain import DomainParticipant
from cyclonedds.idl import IdlStruct
from cyclonedds.idl.types import array, float64, int32, sequence, uint32
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic


@dataclass
@annotate.final
class Time(IdlStruct, typename="builtin_interfaces::msg::dds_::Time_"):
    sec: int32
    nanosec: uint32


@dataclass
@annotate.final
class Header(IdlStruct, typename="std_msgs::msg::dds_::Header_"):
    stamp: Time
    frame_id: str


@dataclass
@annotate.final
class Clock(IdlStruct, typename="rosgraph_msgs::msg::dds_::Clock_"):
    clock: Time


@dataclass
@annotate.final
class JointState(IdlStruct, typename="sensor_msgs::msg::dds_::JointState_"):
    header: Header
    name: sequence[str]
    position: sequence[float64]
    velocity: sequence[float64]
    effort: sequence[float64]


@dataclass
@annotate.final
class Vector3(IdlStruct, typename="geometry_msgs::msg::dds_::Vector3_"):
    x: float64
    y: float64
    z: float64


@dataclass
@annotate.final
class Quaternion(IdlStruct, typename="geometry_msgs::msg::dds_::Quaternion_"):
    x: float64
    y: float64
    z: float64
    w: float64


@dataclass
@annotate.final
class Wrench(IdlStruct, typename="geometry_msgs::msg::dds_::Wrench_"):
    force: Vector3
    torque: Vector3


@dataclass
@annotate.final
class WrenchStamped(IdlStruct, typename="geometry_msgs::msg::dds_::WrenchStamped_"):
    header: Header
    wrench: Wrench


@dataclass
@annotate.final
class Imu(IdlStruct, typename="sensor_msgs::msg::dds_::Imu_"):
    header: Header
    orientation: Quaternion
    orientation_covariance: array[float64, 9]
    angular_velocity: Vector3
    angular_velocity_covariance: array[float64, 9]
    linear_acceleration: Vector3
    linear_acceleration_covariance: array[float64, 9]


KINDS = {"joint_states": JointState, "clock": Clock, "wrench": WrenchStamped, "imu": Imu}


def summary(kind, s):
    if kind == "joint_states":
        return {"names": list(s.name), "position": list(s.position), "stamp": s.header.stamp.sec + 1e-9 * s.header.stamp.nanosec}
    if kind == "clock":
        return {"t": s.clock.sec + 1e-9 * s.clock.nanosec}
    if kind == "wrench":
        f, m = s.wrench.force, s.wrench.torque
        return {"frame": s.header.frame_id, "force": [f.x, f.y, f.z], "torque": [m.x, m.y, m.z]}
    a, w = s.linear_acceleration, s.angular_velocity
    return {"frame": s.header.frame_id, "acc": [a.x, a.y, a.z], "gyro": [w.x, w.y, w.z]}


def main():
    domain, seconds = int(sys.argv[1]), float(sys.argv[2])
    need = int(os.environ.get("LISTENER_MIN", "3"))
    dp = DomainParticipant(domain)
    # best effort readers match both reliable and best-effort writers
    qos = Qos(Policy.Reliability.BestEffort, Policy.History.KeepLast(50))
    readers = {}
    for arg in sys.argv[3:]:
        topic, kind = arg.rsplit(":", 1)
        readers[topic] = (kind, DataReader(dp, Topic(dp, "rt/" + topic.lstrip("/"), KINDS[kind]), qos=qos))
    got = {t: [] for t in readers}
    print("ready", flush=True)
    end = time.monotonic() + seconds
    while time.monotonic() < end and min(len(v) for v in got.values()) < need:
        for topic, (kind, reader) in readers.items():
            for s in reader.take(N=100):
                if isinstance(s, KINDS[kind]):
                    got[topic].append(summary(kind, s))
        time.sleep(0.005)
    print(json.dumps({t: v[-need:] + [{"count": len(v)}] for t, v in got.items()}), flush=True)


if __name__ == "__main__":
    main()
