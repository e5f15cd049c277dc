"""Exact joint couplings for URDF ``<mimic>`` joints (counter-rotating screw
pairs, rover differentials): ``q_follower = multiplier * q_leader + offset``.

Why the host does this itself: DART's coupler constraint (``Joint::
setUseCouplerConstraint``) drives the follower to the leader's position at
the *start* of the step, so the follower lags by one step,
``|q_f - m q_l| = dt |dq_l|`` (5e-3 rad for a screw at 5 rad/s, dt = 1 ms),
and its mimic motor is one-sided (no reaction on the leader). A gearbox has
neither lag nor free play, so the host enforces the coupling as a bilateral
constraint:

- before the step, the constraint torque ``J^T lambda`` of the steps so far
  (warm start: each step adds the impulse its projection needed, divided by
  dt), so that the step's contact solve sees the gear's reaction (without it
  a rover body loaded through its differential settles a few mrad off
  level) and the projection after it is small;
- after the step, the mass-weighted impulse ``dv = M^-1 J^T (J M^-1 J^T)^-1 J dq`` removes
  what contacts and joint limits left of ``J dq``;
- the single-DOF joints' positions are moved by ``-dt dv``, so that they
  are what the semi-implicit Euler step would have integrated with the
  coupled velocity, and the follower is put on the constraint (round-off).

The reaction acts on the leader, the base and every body between them, as
the mass matrix says. ``J dq = 0`` after the step holds for any
positive-definite metric, so ``M^-1 J^T`` is refreshed every ``refresh_steps`` steps (default 20, i.e.
20 ms at dt = 1 ms, while a shape joint turns at most 0.02 rad); the full
inverse mass matrix of a 41-body robot costs more than its physics step.
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

    def __init__(self, skel, couplings: list[Coupling], dt: float, refresh_steps: int = 20):
        self.skel = skel
        self.couplings = couplings
        self.dt = dt
        self.refresh_steps = max(1, int(refresh_steps))
        self._age = self.refresh_steps  # steps since M^-1 J^T was computed
        self._gain = None
        self._lam = None  # constraint torque multipliers, N m (or N)
        # positions corrected with the impulse: single-DOF joints only (the
        # base is left where the contact solve put it)
        self.scalar_dofs = np.array([skel.getJoint(j).getIndexInSkeleton(0) for j in range(skel.getNumJoints())
                                     if skel.getJoint(j).getNumDofs() == 1], dtype=int)
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

    def _refresh(self) -> None:
        if self._age >= self.refresh_steps or self._gain is None:
            J = self.J
            MinvJt = self.skel.getInvMassMatrix() @ J.T
            self._A_inv = np.linalg.inv(J @ MinvJt)
            self._gain = MinvJt @ self._A_inv
            self._age = 0

    def before_step(self) -> None:
        """Add the constraint torque of the last step (warm start)."""
        if self._lam is not None:
            self.skel.setForces(self.skel.getForces() + self.J.T @ self._lam)

    def after_step(self) -> None:
        """Remove ``J dq`` with a mass-weighted impulse, move the positions to
        match, and put the followers on their constraint."""
        skel = self.skel
        v = skel.getVelocities()
        c = v[self.follower] - self.mult * v[self.leader]  # J dq
        if c.any():
            self._refresh()
            dv = self._gain @ c
            # the impulse that removed c, as a torque over the step, joins the
            # constraint torque applied before the next step
            lam = -(self._A_inv @ c) / self.dt
            self._lam = lam if self._lam is None else self._lam + lam
            skel.setVelocities(v - dv)
            q = skel.getPositions()
            idx = self.scalar_dofs
            q[idx] -= self.dt * dv[idx]
        else:
            q = skel.getPositions()
        self._age += 1
        q[self.follower] = self.mult * q[self.leader] + self.offset
        skel.setPositions(q)
