"""The embedded host's engine side of the gz-sim API (``eels_gz.gzapi.engine``'s protocols, on DART):

- :class:`SkeletonState`: one skeleton's state cache, refreshed once per step, its command buffers,
  its batched kinematics (:mod:`eels_gz.dart.kinematics`), the link states physics reported to the ECM
  (:mod:`eels_gz.gzapi.reported_links`: gz-sim's rule) and the batched link access built on them;
- :class:`BatchedWrenches`: the batched link wrenches of a step, for the force-torque sensors;
- :class:`DartEngine`: the per-link and per-joint reads and writes of the API on DART's bodies and joints.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from eels_gz.dart.kinematics import SkeletonKinematics, gather_link_states, wrench_forces
from eels_gz.gzapi.reported_links import ReportedLinks


@dataclass
class SkeletonState:
    """Per-skeleton state cache, refreshed once per step, and the command buffer."""

    skel: Any
    q: np.ndarray
    dq: np.ndarray
    tau: np.ndarray  # force commands for the next step (NaN = none)
    vel_cmd: dict[int, float] = field(default_factory=dict)
    has_tau: bool = False
    applied: np.ndarray | None = None  # generalized forces applied in the last step
    dof_owner: list = field(default_factory=list)  # DOF index -> (DART joint, index in joint)
    servo: set[int] = field(default_factory=set)  # DOFs in SERVO mode from last step's velocity commands
    ext_tau: np.ndarray | None = None  # generalized forces of batched link wrenches for the next step
    ext_used: bool = False  # ext_tau holds wrenches for the next step
    kin: Any = None  # SkeletonKinematics, False when the skeleton's joints are not supported
    kin_fresh: bool = False
    acc_fresh: bool = False  # kin's accelerations are of the current state
    acc_supported: bool = True  # False once SkeletonKinematics.accelerations declined the skeleton
    total: np.ndarray | None = None  # buffer: the generalized forces set on the skeleton
    applied_buf: np.ndarray | None = None  # buffer behind ``applied``
    zero: np.ndarray | None = None  # zeros, the base of the forces when joint commands replace them
    # Batched link wrenches enter DART as generalized forces (ext_tau), which its transmitted body forces
    # (a force-torque sensor's reading) do not include, as they include DART's own external forces. A
    # sensor that needs them tracks them (BatchedWrenches): per body, the world force and its world
    # moment about the world origin, and the bodies' world poses they were applied at.
    wrenches: Any = None
    # what gz-sim's ECM holds of the links (ReportedLinks): a link's state as of the last step that moved it
    # beyond 1e-6; the Link API, the batch helpers and the run's ground truth read it (reported_link)
    reported: ReportedLinks | None = None
    # each DOF's effort limits (the description's <limit effort>): gz-physics sets a joint force command
    # with DART's setCommand, which clips it to them; the host clips its commands the same way
    force_lo: np.ndarray | None = None
    force_hi: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.reported is None:
            self.reported = ReportedLinks(self.skel.getNumBodyNodes())
        if self.force_lo is None:
            self.force_lo = np.asarray(self.skel.getForceLowerLimits(), float)
            self.force_hi = np.asarray(self.skel.getForceUpperLimits(), float)

    def refresh(self) -> None:
        self.q = self.skel.getPositions()
        self.dq = self.skel.getVelocities()
        self.kin_fresh = self.acc_fresh = False

    def kinematics(self):
        """Every body's world pose and twist at the current state (batched), or None."""
        if self.kin is None:
            self.kin = SkeletonKinematics.build(self.skel) or False
        if self.kin is False:
            return None
        if not self.kin_fresh:
            self.kin.update(self.q, self.dq)
            self.kin_fresh = True
        return self.kin

    def accelerations(self):
        """``kinematics()`` with every body's angular and linear acceleration (``kin.alpha``, ``kin.a``)
        from the skeleton's generalized accelerations of the last step, or None (then ask DART)."""
        kin = self.kinematics() if self.acc_supported else None
        if kin is None:
            return None
        if not self.acc_fresh:
            if not kin.accelerations(self.dq, self.skel.getAccelerations()):
                self.acc_supported = False
                return None
            self.acc_fresh = True
        return kin

    # --- the link states physics reported (gzapi.engine.ModelState.reported_link) -----------
    def report(self) -> None:
        """After a step (its state read): what gz-sim's ECM gets of it, the links that moved beyond 1e-6."""
        kin = self.kinematics()
        if kin is not None:
            self.reported.update(kin.T, kin.v, kin.w)
            return
        bodies = [self.skel.getBodyNode(b) for b in range(self.skel.getNumBodyNodes())]
        self.reported.update(np.array([b.getWorldTransform().matrix() for b in bodies]).reshape(-1, 4, 4),
                             np.array([b.getLinearVelocity() for b in bodies], dtype=float).reshape(-1, 3),
                             np.array([b.getAngularVelocity() for b in bodies], dtype=float).reshape(-1, 3))

    def forget_reports(self) -> None:
        """A reset or a placement: the ECM holds the state set until the next step reports every link."""
        self.reported.forget()

    def reported_link(self, index):
        reported = self.reported
        if not reported.valid:
            return None
        return reported.T[index], reported.v[index], reported.w[index]

    # --- the batched link access (gzapi.engine.ModelState) ---------------------------------
    def batchable(self) -> bool:
        return self.kinematics() is not None

    def link_states(self, idx, pos, rot, lin, ang) -> None:
        src = self.reported if self.reported.valid else self.kinematics()
        gather_link_states(src.T, src.v, src.w, idx, pos, rot, lin, ang)

    def add_link_wrenches(self, idx, forces, torques) -> bool:
        if self.vel_cmd or self.servo:
            # velocity-commanded joints (SERVO actuators) discard the generalized forces set on their DOFs,
            # so batched wrenches would not reach them; gz-sim applies link wrenches to the bodies, which a
            # servo resists only up to its effort limit: the caller applies them one link at a time
            return False
        if self.ext_tau is None:
            self.ext_tau = np.zeros(self.skel.getNumDofs())
        kin = self.kinematics()
        wrench_forces(kin, idx, np.asarray(forces, float), np.asarray(torques, float), self.ext_tau)
        self.ext_used = True
        if self.wrenches is not None:
            self.wrenches.add(kin.T, idx, forces, torques)
        return True


class BatchedWrenches:
    """The batched link wrenches of one skeleton, for the force-torque sensors: those of the coming step
    (``add``), and, once it is taken (``step_taken``), those of the step just taken with the body poses
    they were applied at (``subtree_wrench``)."""

    def __init__(self, n_bodies: int):
        self.coming = np.zeros((n_bodies, 6))  # world force, world moment about the origin
        self.taken = np.zeros((n_bodies, 6))
        self.T_coming = np.zeros((n_bodies, 4, 4))
        self.T_taken = np.zeros((n_bodies, 4, 4))
        self.any_coming = self.any_taken = False

    def add(self, T: np.ndarray, idx, forces, torques) -> None:
        f = np.asarray(forces, float)
        moment = np.asarray(torques, float) + np.cross(T[idx, :3, 3], f)
        np.add.at(self.coming[:, :3], idx, f)
        np.add.at(self.coming[:, 3:], idx, moment)
        if not self.any_coming:
            self.T_coming[:] = T  # the state they act in: the step's start
        self.any_coming = True

    def step_taken(self) -> None:
        self.coming, self.taken = self.taken, self.coming
        self.T_coming, self.T_taken = self.T_taken, self.T_coming
        self.any_taken, self.any_coming = self.any_coming, False
        self.coming.fill(0.0)

    def clear(self) -> None:
        self.coming.fill(0.0)
        self.taken.fill(0.0)
        self.any_coming = self.any_taken = False

    def subtree_wrench(self, bodies, child: int) -> tuple[np.ndarray, np.ndarray] | None:
        """(torque, force) in body ``child``'s frame about its origin of the batched wrenches the last
        step applied to ``bodies`` (the subtree below a joint), or None when it applied none."""
        if not self.any_taken:
            return None
        f = self.taken[bodies, :3].sum(axis=0)
        moment = self.taken[bodies, 3:].sum(axis=0)
        T = self.T_taken[child]
        R, p = T[:3, :3], T[:3, 3]
        return R.T @ (moment - np.cross(p, f)), R.T @ f


class DartEngine:
    """``gzapi.engine.Engine`` on DART: the handles are ``BodyNode`` and ``Joint`` objects."""

    @staticmethod
    def link_pose(body) -> np.ndarray:
        return body.getWorldTransform().matrix()

    @staticmethod
    def link_local_com(body) -> np.ndarray:
        return body.getLocalCOM()

    @staticmethod
    def link_inertia(body) -> tuple[float, np.ndarray]:
        return body.getMass(), np.asarray(body.getInertia().getMoment(), dtype=float)

    @staticmethod
    def link_index(body) -> int:
        return body.getIndexInSkeleton()

    @staticmethod
    def link_linear_velocity(body, offset=None) -> np.ndarray:
        return body.getLinearVelocity() if offset is None else body.getLinearVelocity(offset)

    @staticmethod
    def link_angular_velocity(body) -> np.ndarray:
        return body.getAngularVelocity()

    @staticmethod
    def add_link_force(body, force, offset) -> None:
        body.addExtForce(force, offset, False, True)

    @staticmethod
    def add_link_torque(body, torque) -> None:
        body.addExtTorque(torque, False)

    @staticmethod
    def set_joint_positions(joint, positions) -> None:
        joint.setPositions(positions)

    @staticmethod
    def set_joint_velocities(joint, velocities) -> None:
        joint.setVelocities(velocities)
