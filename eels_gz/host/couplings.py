"""Exact joint couplings for URDF ``<mimic>`` joints (counter-rotating screw
pairs, rover differentials): ``q_follower = multiplier * q_leader + offset``.

Why the host does this itself: DART's coupler constraint (``Joint::
setUseCouplerConstraint``) drives the follower to the leader's position at
the *start* of the step, so the follower lags by one step,
``|q_f - m q_l| = dt |dq_l|`` (5e-3 rad for a screw at 5 rad/s, dt = 1 ms),
and its mimic motor is one-sided (no reaction on the leader). A gearbox has
neither lag nor free play, so the host enforces the coupling as a bilateral
constraint in two parts:

1. before the step, a constraint torque ``J^T lambda`` with
   ``J M^-1 J^T lambda = -(J ddq_free + J dq / dt)``, so that the step's own
   velocity update keeps ``J dq = 0`` (exact without contacts);
2. after the step, a mass-weighted impulse that removes what contacts and
   joint limits left of ``J dq``, and the follower's position is set on the
   constraint (the residual is round-off plus O(dt^2) contact terms).

The reaction of the coupling acts on the leader, the base and every body
between them, as the mass matrix says it should.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import dartpy as dart
import numpy as np
from lxml import etree

from eels_gz.errors import DescriptionError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Coupling:
    """One mimic relation between two single-DOF joints of a skeleton."""

    follower: str
    leader: str
    multiplier: float
    offset: float
    follower_dof: int
    leader_dof: int


def mimic_couplings(urdf: str, skel, source: str) -> list[Coupling]:
    """The ``<mimic>`` relations of a URDF, resolved to DOF indices of ``skel``."""
    root = etree.fromstring(urdf.encode())
    out = []
    for joint in root.iter("joint"):
        mimic = joint.find("mimic")
        if mimic is None:
            continue
        name, leader = joint.get("name"), mimic.get("joint")
        try:
            m = float(mimic.get("multiplier", "1"))
            off = float(mimic.get("offset", "0"))
        except ValueError:
            raise DescriptionError(f"{source}: joint '{name}': <mimic> multiplier/offset must be numbers") from None
        jf, jl = skel.getJoint(name), skel.getJoint(leader or "")
        if jl is None:
            raise DescriptionError(f"{source}: joint '{name}' mimics '{leader}', which is not a joint of the robot")
        if jf is None or jf.getNumDofs() != 1 or jl.getNumDofs() != 1:
            raise DescriptionError(f"{source}: <mimic> joint '{name}' and its leader '{leader}' must have one DOF each")
        # the host owns the coupling: the follower is a plain force-driven joint
        jf.setActuatorType(dart.dynamics.ActuatorType.FORCE)
        out.append(Coupling(name, leader, m, off, jf.getIndexInSkeleton(0), jl.getIndexInSkeleton(0)))
    leaders = {c.leader for c in out}
    chained = [c.follower for c in out if c.follower in leaders]
    if chained:
        raise DescriptionError(f"{source}: mimic joints {chained} are themselves mimicked; chains are not supported")
    return out


class CouplingSolver:
    """Applies a skeleton's couplings around each physics step."""

    def __init__(self, skel, couplings: list[Coupling], dt: float):
        self.skel = skel
        self.couplings = couplings
        self.dt = dt
        n = skel.getNumDofs()
        self.J = np.zeros((len(couplings), n))
        for r, c in enumerate(couplings):
            self.J[r, c.follower_dof] = 1.0
            self.J[r, c.leader_dof] -= c.multiplier
        self.follower = np.array([c.follower_dof for c in couplings])
        self.leader = np.array([c.leader_dof for c in couplings])
        self.mult = np.array([c.multiplier for c in couplings])
        self.offset = np.array([c.offset for c in couplings])

    def project_positions(self) -> None:
        """Put every follower on its constraint (used at start and after each step)."""
        q = self.skel.getPositions()
        q[self.follower] = self.mult * q[self.leader] + self.offset
        self.skel.setPositions(q)

    def before_step(self) -> None:
        """Add the constraint torque that keeps the coming velocity update coupled."""
        skel, J = self.skel, self.J
        skel.computeForwardDynamics()
        ddq_free = skel.getAccelerations()
        MinvJt = skel.getInvMassMatrix() @ J.T
        A = J @ MinvJt
        rhs = -(J @ ddq_free + J @ skel.getVelocities() / self.dt)
        lam = np.linalg.solve(A, rhs)
        skel.setForces(skel.getForces() + J.T @ lam)

    def after_step(self) -> None:
        """Remove the velocity residual with a mass-weighted impulse; snap positions."""
        skel, J = self.skel, self.J
        v = skel.getVelocities()
        c = J @ v
        if np.any(c):
            MinvJt = skel.getInvMassMatrix() @ J.T
            skel.setVelocities(v - MinvJt @ np.linalg.solve(J @ MinvJt, c))
        self.project_positions()
