"""QoS per topic, as ROS 2 conventions expect (rclcpp/rclpy presets):

- sensor data (IMU, lidar, force-torque): ``SensorDataQoS``, best effort, keep last 5;
- ``/clock``: ``ClockQoS``, best effort, keep last 1;
- ``/tf``: reliable, keep last 100 (tf2's broadcaster);
- everything else, commands included: the default profile, reliable, keep last 10.

All volatile. A best-effort subscriber matches a reliable publisher, not the
reverse, so state topics stay reliable for tools such as robot_state_publisher.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class QosSpec:
    reliable: bool
    depth: int


SENSOR_DATA = QosSpec(reliable=False, depth=5)
CLOCK = QosSpec(reliable=False, depth=1)
TF = QosSpec(reliable=True, depth=100)
DEFAULT = QosSpec(reliable=True, depth=10)

SENSOR_TYPES = {"sensor_msgs/msg/Imu", "sensor_msgs/msg/PointCloud2", "geometry_msgs/msg/WrenchStamped",
                "sensor_msgs/msg/Image", "sensor_msgs/msg/LaserScan"}


def qos_for(ros_topic: str, ros_type: str) -> QosSpec:
    """The QoS of a bridged topic (see the module docstring)."""
    if ros_topic == "/clock":
        return CLOCK
    if ros_topic in ("/tf", "/tf_static"):
        return TF
    if ros_type in SENSOR_TYPES:
        return SENSOR_DATA
    return DEFAULT
