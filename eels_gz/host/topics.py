"""What Gazebo's own systems publish and serve, on the host's gz topics
(names as in config/bridge.yaml; test/ros checks they agree):

- ``/clock`` (gz.msgs.Clock), like gz-sim's clock publisher;
- ``/joint_states`` (gz.msgs.Model), like the JointStatePublisher system
  with ``<topic>/joint_states</topic>``: every 1-DOF joint of the robot,
  with position (rad or m), velocity and the generalized force applied in
  the last step;
- ``/ground_truth/odom`` (gz.msgs.Odometry), like the OdometryPublisher
  system: base link pose in ``world``, twist in the base link frame;
- commands ``/enable_gravity`` (gz.msgs.Boolean: the world's gravity on or
  off) and ``/set_pose`` (gz.msgs.Pose: the robot's base pose in the world,
  applied before the next step, velocities kept).

State topics go out every ``period`` steps, after the step (post_update).
"""

from __future__ import annotations

import logging

import numpy as np

from eels_gz.host import msgs, transport
from eels_gz.host.gzmath import Pose3d, Quaterniond, Vector3d, matrix_to_quat

log = logging.getLogger(__name__)

CLOCK, JOINT_STATES, GROUND_TRUTH = "/clock", "/joint_states", "/ground_truth/odom"
ENABLE_GRAVITY, SET_POSE = "/enable_gravity", "/set_pose"


def robot_joints(skel) -> tuple[list[str], np.ndarray]:
    """Names and DOF indices of the robot's 1-DOF joints (the joint-state publisher's joints)."""
    names, dofs = [], []
    for j in range(skel.getNumJoints()):
        joint = skel.getJoint(j)
        if joint.getType() != "FreeJoint" and joint.getNumDofs() == 1:
            names.append(joint.getName())
            dofs.append(joint.getIndexInSkeleton(0))
    return names, np.array(dofs, dtype=int)


class HostTopics:
    """Publishes clock, joint states and ground truth, and serves gravity and pose commands."""

    def __init__(self, sim, period: int = 1):
        self.sim = sim
        self.period = max(1, int(period))
        self.node = transport.Node(bus=sim.transport)
        self._clock = self.node.advertise(CLOCK, msgs.Clock)
        self._joints = self.node.advertise(JOINT_STATES, msgs.Model)
        self._odom = self.node.advertise(GROUND_TRUTH, msgs.Odometry)
        self.node.subscribe(msgs.Boolean, ENABLE_GRAVITY, self._on_gravity)
        self.node.subscribe(msgs.Pose, SET_POSE, self._on_set_pose)
        self.gravity = np.array(sim.world.getGravity(), dtype=float)
        skel = sim.robot_skeleton
        self.base = skel.getBodyNode(0) if skel is not None else None
        self.joint_names, self.joint_dofs = robot_joints(skel) if skel is not None else ([], np.zeros(0, int))
        self.state = next((s for s in sim.states if s.skel is skel), None)
        self.model_name = skel.getName() if skel is not None else ""

    # --- commands -------------------------------------------------------------------
    def _on_gravity(self, msg) -> None:
        g = self.gravity if msg.data else np.zeros(3)
        self.sim.world.setGravity(g)
        self.sim.ecm.gravity = g.copy()
        log.info("gravity %s", "on" if msg.data else "off")

    def _on_set_pose(self, msg) -> None:
        if self.sim.robot_entity == 0:
            log.warning("/set_pose: there is no robot to place")
            return
        p, q = msg.position, msg.orientation
        values = np.array([p.x, p.y, p.z, q.w, q.x, q.y, q.z], dtype=float)
        norm = np.linalg.norm(values[3:])
        if not np.all(np.isfinite(values)) or norm < 1e-9:
            log.warning("/set_pose ignored: position and a non-zero quaternion must be finite, got %s", values)
            return
        quat = values[3:] / norm
        self.sim.ecm.pose_cmds[self.sim.robot_entity] = Pose3d(Vector3d(*values[:3]), Quaterniond(*quat))

    # --- state ----------------------------------------------------------------------
    def post_step(self) -> None:
        """Publish the state topics if this step is on the publishing period."""
        sim = self.sim
        if sim.iterations % self.period:
            return
        ns = int(round(sim.time * 1e9))
        sec, nsec = divmod(ns, 1_000_000_000)
        clock = msgs.Clock()
        clock.sim.sec, clock.sim.nsec = sec, nsec
        clock.header.stamp.sec, clock.header.stamp.nsec = sec, nsec
        self._clock.publish(clock, copy=False)
        if self.base is None:
            return
        st, idx = self.state, self.joint_dofs
        q, dq = st.q[idx], st.dq[idx]
        effort = st.applied[idx] if st.applied is not None else np.zeros(len(idx))
        model = msgs.Model(name=self.model_name)
        model.header.stamp.sec, model.header.stamp.nsec = sec, nsec
        for name, qi, vi, fi in zip(self.joint_names, q.tolist(), dq.tolist(), effort.tolist()):
            axis = model.joint.add(name=name).axis1
            axis.position, axis.velocity, axis.force = qi, vi, fi
        self._joints.publish(model, copy=False)

        T = self.base.getWorldTransform().matrix()
        R = T[:3, :3]
        quat = matrix_to_quat(R)
        v = R.T @ self.base.getLinearVelocity()
        w = R.T @ self.base.getAngularVelocity()
        odom = msgs.Odometry()
        odom.header.stamp.sec, odom.header.stamp.nsec = sec, nsec
        msgs.set_frame_id(odom.header, "world")
        odom.header.data.add(key="child_frame_id", value=[self.base.getName()])
        pos, ori = odom.pose.position, odom.pose.orientation
        pos.x, pos.y, pos.z = T[:3, 3].tolist()
        ori.w, ori.x, ori.y, ori.z = quat.tolist()
        lin, ang = odom.twist.linear, odom.twist.angular
        lin.x, lin.y, lin.z = v.tolist()
        ang.x, ang.y, ang.z = w.tolist()
        self._odom.publish(odom, copy=False)
