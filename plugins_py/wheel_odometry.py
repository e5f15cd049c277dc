"""gz-sim Python system: least-squares wheel odometry (Archimede Eq. 5-7).

Reads every steering angle and wheel rate after each step, integrates the
body twist (eels_gz.rover.WheelOdometry) and publishes ``/odom``
(gz.msgs.Odometry, frame ``odom``, child ``base_link``) and the
``odom -> base_link`` transform on ``/tf`` (gz.msgs.Pose_V). Frames travel
in the header's data entries ``frame_id`` and ``child_frame_id``, the only
place ros_gz_bridge reads them from (it ignores ``Pose.name``).

Parameters: ``<base_link>``, ``<wheel_radius>`` (m), ``<steer joint lower
upper/>`` (as icr_steering), ``<odom_topic>`` (/odom), ``<tf_topic>`` (/tf),
``<odom_frame>`` (odom), ``<publish_rate>`` (Hz, default 50).
``reset`` (a world reset) puts the odometry back at the origin and rewinds
the publishing clock.
"""

from __future__ import annotations

import math

import numpy as np
from gz_compat import joint_states, msgs, param, sim, transport
from icr_steering import steer_limits

from eels_gz.rover.gz_model import wheel_joints, wheels_from_model
from eels_gz.rover.odometry import WheelOdometry


PLUGIN = "wheel_odometry"


class WheelOdometrySystem:
    def configure(self, entity, sdf, ecm, event_mgr):
        model = sim.Model(entity)
        self.base, _ = sdf.get_string("base_link", "base_link")
        radius = param(sdf, "get_double", "wheel_radius", PLUGIN)
        self.wheels = wheels_from_model(sim, model, ecm, self.base, radius, steer_limits(sdf, PLUGIN))
        self.odometry = WheelOdometry(self.wheels)
        pairs = wheel_joints(sim, model, ecm)
        self.wheel_joints = [w for _, w, _ in pairs]
        self.steer_joints = [s for _, _, s in pairs]
        self.steered = [k for k, s in enumerate(self.steer_joints) if s is not None]
        self.steered_joints = [self.steer_joints[k] for k in self.steered]
        self.fixed_angle = np.array([w.steer_min for w in self.wheels])
        for j in self.wheel_joints + [s for s in self.steer_joints if s is not None]:
            j.enable_position_check(ecm)
            j.enable_velocity_check(ecm)
        self.frame, _ = sdf.get_string("odom_frame", "odom")
        rate, _ = sdf.get_double("publish_rate", 50.0)
        self.period = 1.0 / rate if rate > 0 else 0.0
        self.next_publish = 0.0
        odom_topic, _ = sdf.get_string("odom_topic", "/odom")
        tf_topic, _ = sdf.get_string("tf_topic", "/tf")
        self.node = transport.Node()
        self.odom_pub = self.node.advertise(odom_topic, msgs.Odometry)
        self.tf_pub = self.node.advertise(tf_topic, msgs.Pose_V)

    def reset(self, info, ecm):
        self.odometry.reset()
        self.next_publish = 0.0

    def post_update(self, info, ecm):
        if info.paused:
            return
        wheels = joint_states(ecm, self.wheel_joints)
        steers = joint_states(ecm, self.steered_joints) if self.steered_joints else (np.zeros(0), np.zeros(0))
        if wheels is None or steers is None:
            return  # joint states are reported from the first physics update after the checks
        angles = self.fixed_angle.copy()
        angles[self.steered] = steers[0]
        x, y, yaw = self.odometry.update(angles, wheels[1], info.dt.total_seconds())
        t = info.sim_time.total_seconds()
        if t + 1e-12 < self.next_publish:
            return
        self.next_publish = t + self.period
        self.publish(t, x, y, yaw)

    def publish(self, t: float, x: float, y: float, yaw: float) -> None:
        odom = msgs.Odometry()
        _stamp(odom.header, t)
        _frame(odom.header, "frame_id", self.frame)
        _frame(odom.header, "child_frame_id", self.base)
        _pose(odom.pose, x, y, yaw)
        vx, vy, wz = self.odometry.twist
        odom.twist.linear.x, odom.twist.linear.y, odom.twist.angular.z = vx, vy, wz
        self.odom_pub.publish(odom)
        tf = msgs.Pose_V()
        _stamp(tf.header, t)
        p = tf.pose.add()
        p.name = self.base
        _stamp(p.header, t)
        _frame(p.header, "frame_id", self.frame)
        _frame(p.header, "child_frame_id", self.base)
        _pose(p, x, y, yaw)
        self.tf_pub.publish(tf)


def _stamp(header, t: float) -> None:
    ns = int(round(t * 1e9))
    header.stamp.sec, header.stamp.nsec = ns // 1_000_000_000, ns % 1_000_000_000


def _frame(header, key: str, value: str) -> None:
    """gz headers carry frame ids as data entries (ros_gz_bridge's convention)."""
    entry = header.data.add()
    entry.key = key
    entry.value.append(value)


def _pose(pose, x: float, y: float, yaw: float) -> None:
    pose.position.x, pose.position.y, pose.position.z = x, y, 0.0
    pose.orientation.w, pose.orientation.z = math.cos(yaw / 2), math.sin(yaw / 2)
    pose.orientation.x = pose.orientation.y = 0.0


def get_system():
    return WheelOdometrySystem()
