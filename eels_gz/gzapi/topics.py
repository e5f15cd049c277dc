"""What Gazebo publishes and serves beside the Python systems, on the host's
gz topics (names as in config/bridge.yaml and config/bridge_host.yaml;
test/ros checks they agree):

- ``/clock`` (gz.msgs.Clock), like gz-sim's server, every ``period`` steps;
- the publishing systems the robot's description names, as gz-sim runs them
  (eels_gz/gzapi/publishers.py): JointStatePublisher (``/joint_states`` in
  the shipped descriptions) and OdometryPublisher (``/ground_truth/odom``:
  the base pose in ``world``, the twist from finite differences as gz-sim
  computes it);
- the embedded host's own commands, which gz-sim has no topics for:
  ``/enable_gravity`` (gz.msgs.Boolean: the world's gravity on or off) and
  ``/set_pose`` (gz.msgs.Pose: the robot's base pose in the world, applied
  before the next step, velocities kept).

State topics go out after the step (post_update).
"""

from __future__ import annotations

import logging

import numpy as np

from eels_gz.gzapi import msgs, publishers, transport
from eels_gz.gzapi.gzmath import Pose3d, Quaterniond, Vector3d

log = logging.getLogger(__name__)

CLOCK, JOINT_STATES, GROUND_TRUTH = "/clock", "/joint_states", "/ground_truth/odom"
ENABLE_GRAVITY, SET_POSE = "/enable_gravity", "/set_pose"


class HostTopics:
    """Publishes the clock and the description's publishing systems, and serves gravity and pose commands."""

    def __init__(self, sim, period: int = 1):
        self.sim = sim
        self.period = max(1, int(period))
        self.node = transport.node_on(sim.transport)
        self._clock = self.node.advertise(CLOCK, msgs.Clock)
        self.node.subscribe(msgs.Boolean, ENABLE_GRAVITY, self._on_gravity)
        self.node.subscribe(msgs.Pose, SET_POSE, self._on_set_pose)
        self.gravity = sim.gravity
        self.systems = publishers.start(sim, self.node)

    # --- commands -------------------------------------------------------------------
    def _on_gravity(self, msg) -> None:
        self.sim.set_gravity(self.gravity if msg.data else np.zeros(3))
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
        """Publish what is due after this step."""
        sim = self.sim
        ns = int(round(sim.time * 1e9))
        sec, nsec = divmod(ns, 1_000_000_000)
        for system in self.systems:
            system.post_update(sec, nsec)
        if sim.iterations % self.period:
            return
        clock = msgs.Clock()
        clock.sim.sec, clock.sim.nsec = sec, nsec
        clock.header.stamp.sec, clock.header.stamp.nsec = sec, nsec
        transport.publish_owned(self._clock, clock)
