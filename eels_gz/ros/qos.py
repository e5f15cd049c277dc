"""QoS of the topics the embedded host bridges: ros_gz_bridge's (jazzy, ``factory.hpp``), so that a
node gets from the host what it gets from Gazebo mode: every publisher and subscription reliable,
volatile, keep last 10 (its default queue size). A reliable publisher matches best-effort
subscribers (``SensorDataQoS``, ``ClockQoS``) and reliable ones alike; a best-effort one, as the
host offered ``/clock`` and sensor data before, would leave a default-QoS subscriber without
messages (the ROS 2 tier found it).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class QosSpec:
    reliable: bool
    depth: int


BRIDGE = QosSpec(reliable=True, depth=10)  # ros_gz_bridge: rclcpp::QoS(KeepLast(queue_size)), queue 10


def qos_for(ros_topic: str, ros_type: str) -> QosSpec:
    """The QoS of a bridged topic: ros_gz_bridge's, whatever the topic (module docstring)."""
    return BRIDGE
