"""Gazebo's own publishing systems, in the host: what gz-sim 8's
JointStatePublisher and OdometryPublisher (src/systems/joint_state_publisher,
src/systems/odometry_publisher) publish, read from the same ``<plugin>``
parameters, so one robot description gives the same topics in both hosts.

- ``JointStatePublisher``: ``<topic>`` (default
  ``/world/<world>/model/<model>/joint_state``), ``<joint_name>`` (repeated;
  default every joint), ``<update_rate>`` (Hz; 0 or absent: every
  iteration). A gz.msgs.Model with each joint's ``axis1`` position,
  velocity and the force applied in the last step.
- ``OdometryPublisher``: ``<odom_topic>`` (default
  ``/model/<model>/odometry``), ``<odom_frame>`` (``<model>/odom``),
  ``<robot_base_frame>`` (``<model>/base_footprint``), ``<dimensions>`` 2 or
  3 (default 2: z, roll and pitch rates left out), ``<odom_publish_frequency>``
  (Hz, default 50), ``<xyz_offset>``/``<rpy_offset>``, ``<tf_topic>``
  (default ``/model/<model>/pose``). The pose is the model's world pose as
  gz-sim's physics reports it (``ModelState.reported_link``: only once the
  model has moved 1e-6, ``eels_gz/gzapi/reported_links.py``) times the
  offset; the twist, in the body frame, is a moving average over the last 10
  iterations of finite differences of that pose, as gz-sim computes it (not
  the engine's instantaneous velocity). ``<gaussian_noise>`` is not simulated
  (a warning says so).

Both publish after the step, like gz-sim's PostUpdate; the host runs them
with the ROS interface (eels_gz/gzapi/topics.py).
"""

from __future__ import annotations

import logging
import math
from collections import deque

import numpy as np

from eels_gz.errors import SdfError
from eels_gz.gzapi import msgs, transport
from eels_gz.gzapi.gzmath import Quaterniond, matrix_to_quat, quat_to_matrix
from eels_gz.steps import period

log = logging.getLogger(__name__)
WINDOW = 10  # gz-sim's OdometryPublisher moving-average window (iterations)


def _rate_period(rate: float, dt: float, where: str, what: str) -> int:
    if rate < 0:
        raise SdfError(f"{what} must be >= 0, got {rate}", where)
    return period(rate, dt)


class JointStatePublisher:
    def __init__(self, sim, entity: int, element, node) -> None:
        self.sim = sim
        model = sim.ecm.models[entity]
        if model.state is None:
            raise SdfError(f"JointStatePublisher on static model '{model.name}': it has no joints to publish",
                           element.file_path())
        self.state = model.state
        records = [sim.ecm.joints[e] for e in model.joints if sim.ecm.joints[e].ndofs == 1]
        wanted, el = [], element.find_element("joint_name") if element.has_element("joint_name") else None
        while el is not None:
            name, _ = el.get_string("", "")
            wanted.append(name)
            el = el.get_next_element("joint_name")
        if wanted:
            by_name = {r.name: r for r in records}
            missing = [n for n in wanted if n not in by_name]
            if missing:
                raise SdfError(f"JointStatePublisher: <joint_name> {missing} are not 1-DOF joints of model "
                               f"'{model.name}'", element.file_path())
            records = [by_name[n] for n in wanted]
        self.names = [r.name for r in records]
        self.dofs = np.array([r.dof for r in records], dtype=int)
        self.model = model.name
        topic, _ = element.get_string("topic", f"/world/{sim.spec.name}/model/{model.name}/joint_state")
        rate, _ = element.get_double("update_rate", 0.0)
        self.period = _rate_period(rate, sim.dt, element.file_path(), "JointStatePublisher <update_rate>")
        self.pub = node.advertise(topic, msgs.Model)
        self.topic = topic

    def post_update(self, sec: int, nsec: int) -> None:
        if self.sim.iterations % self.period:
            return
        st, idx = self.state, self.dofs
        q, dq = st.q[idx], st.dq[idx]
        effort = st.applied[idx] if st.applied is not None else np.zeros(len(idx))
        model = msgs.Model(name=self.model)
        model.header.stamp.sec, model.header.stamp.nsec = sec, nsec
        for name, qi, vi, fi in zip(self.names, q.tolist(), dq.tolist(), effort.tolist()):
            axis = model.joint.add(name=name).axis1
            axis.position, axis.velocity, axis.force = qi, vi, fi
        transport.publish_owned(self.pub, model)


class OdometryPublisher:
    def __init__(self, sim, entity: int, element, node) -> None:
        self.sim = sim
        model = sim.ecm.models[entity]
        if model.state is None:
            raise SdfError(f"OdometryPublisher on static model '{model.name}'", element.file_path())
        self.body = sim.ecm.links[model.links[0]].body  # a URDF model's frame is its root (canonical) link's
        self.engine = sim.ecm.engine
        # the model pose gz-sim reports (eels_gz/gzapi/reported_links.py)
        self.model_state, self.index = model.state, self.engine.link_index(self.body)
        where = element.file_path()
        self.odom_frame, _ = element.get_string("odom_frame", f"{model.name}/odom")
        self.base_frame, _ = element.get_string("robot_base_frame", f"{model.name}/base_footprint")
        self.dimensions, _ = element.get_int("dimensions", 2)
        if self.dimensions not in (2, 3):
            raise SdfError(f"OdometryPublisher <dimensions> must be 2 or 3, got {self.dimensions}", where)
        freq, _ = element.get_double("odom_publish_frequency", 50.0)
        self.period_s = 1.0 / freq if freq > 0 else 0.0
        xyz, _ = element.get_string("xyz_offset", "0 0 0")
        rpy, _ = element.get_string("rpy_offset", "0 0 0")
        try:
            offset_p = np.array([float(v) for v in xyz.split()])
            offset_q = Quaterniond(*[float(v) for v in rpy.split()])
        except (TypeError, ValueError):
            raise SdfError(f"OdometryPublisher <xyz_offset>/<rpy_offset>: three numbers each, got '{xyz}', '{rpy}'",
                           where) from None
        self.offset = np.eye(4)
        self.offset[:3, :3] = quat_to_matrix(np.array([offset_q.w(), offset_q.x(), offset_q.y(), offset_q.z()]))
        self.offset[:3, 3] = offset_p
        noise, _ = element.get_double("gaussian_noise", 0.0)
        if noise:
            log.warning("%s: OdometryPublisher <gaussian_noise> %g is not simulated by the embedded host", where, noise)
        topic, _ = element.get_string("odom_topic", f"/model/{model.name}/odometry")
        tf_topic, _ = element.get_string("tf_topic", f"/model/{model.name}/pose")
        self.pub = node.advertise(topic, msgs.Odometry)
        self.tf_pub = node.advertise(tf_topic, msgs.Pose_V)
        self.topic = topic
        self.last_T: np.ndarray | None = None
        self.last_t = 0.0
        self.last_pub_t: float | None = None
        self.linear = [deque(maxlen=WINDOW) for _ in range(3)]
        self.angular = [deque(maxlen=WINDOW) for _ in range(3)]

    def post_update(self, sec: int, nsec: int) -> None:
        t = sec + nsec * 1e-9
        reported = self.model_state.reported_link(self.index)
        T = (self.engine.link_pose(self.body) if reported is None else reported[0]) @ self.offset
        if self.last_T is None:  # gz-sim: the first update only records the start
            self.last_T, self.last_t = T, t
            return
        dt = t - self.last_t
        if dt <= 0:
            if dt < 0:  # a world reset: start again
                self.last_T, self.last_t, self.last_pub_t = T, t, None
                for d in (*self.linear, *self.angular):
                    d.clear()
            return
        R, R0 = T[:3, :3], self.last_T[:3, :3]
        disp = T[:3, 3] - self.last_T[:3, 3]
        # gz-sim's CalculateAngularVelocity: the world-frame rotation since the last
        # update as axis-angle over dt, expressed in the current body frame
        dR = R @ R0.T
        v = np.array([dR[2, 1] - dR[1, 2], dR[0, 2] - dR[2, 0], dR[1, 0] - dR[0, 1]])
        sin_angle = 0.5 * float(np.linalg.norm(v))
        angle = math.atan2(sin_angle, 0.5 * (np.trace(dR) - 1.0))
        w_world = v * (0.5 / dt if sin_angle < 1e-15 else angle / (2.0 * sin_angle * dt))
        w_body = R.T @ w_world
        if self.dimensions == 3:
            v = R.T @ disp / dt
            for k in range(3):
                self.linear[k].append(v[k])
            for k in range(2):
                self.angular[k].append(w_body[k])
        else:
            yaw = math.atan2(R[1, 0], R[0, 0])
            c, s = math.cos(yaw), math.sin(yaw)
            self.linear[0].append((c * disp[0] + s * disp[1]) / dt)
            self.linear[1].append((c * disp[1] - s * disp[0]) / dt)
        self.angular[2].append(w_body[2])
        self.last_T, self.last_t = T, t
        if self.last_pub_t is not None and 0 < t - self.last_pub_t < self.period_s - 1e-12:
            return
        self.last_pub_t = t
        odom = msgs.Odometry()
        odom.header.stamp.sec, odom.header.stamp.nsec = sec, nsec
        odom.header.data.add(key="frame_id", value=[self.odom_frame])
        odom.header.data.add(key="child_frame_id", value=[self.base_frame])
        q = matrix_to_quat(R)
        pos, ori = odom.pose.position, odom.pose.orientation
        pos.x, pos.y = float(T[0, 3]), float(T[1, 3])
        if self.dimensions == 3:
            pos.z = float(T[2, 3])
        ori.w, ori.x, ori.y, ori.z = (float(x) for x in q)
        mean = [float(np.mean(d)) if d else 0.0 for d in (*self.linear, *self.angular)]
        lin, ang = odom.twist.linear, odom.twist.angular
        lin.x, lin.y, lin.z, ang.x, ang.y, ang.z = mean
        tf = msgs.Pose_V()
        tf.header.CopyFrom(odom.header)
        p = tf.pose.add()
        p.header.CopyFrom(odom.header)
        p.position.CopyFrom(odom.pose.position)
        p.orientation.CopyFrom(odom.pose.orientation)
        transport.publish_owned(self.pub, odom)
        transport.publish_owned(self.tf_pub, tf)


SYSTEMS = {"gz-sim-joint-state-publisher-system": JointStatePublisher,
           "gz-sim-odometry-publisher-system": OdometryPublisher}


def start(sim, node) -> list:
    """The publishing systems the world and the models name, on ``node``."""
    out = []
    for filename, cls in SYSTEMS.items():
        for entity, spec in sim.gz_systems.get(filename, []):
            if entity == sim.ecm.world_entity:
                raise SdfError(f"{cls.__name__} must be attached to a model, not the world", spec.where)
            out.append(cls(sim, entity, spec.element, node))
    return out
