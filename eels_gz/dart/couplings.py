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
20 ms at dt = 1 ms, while a shape joint turns at most 0.02 rad), from the
mass matrix of :mod:`eels_gz.dart.mass_matrix` and one compiled solve that
factors it with the tree's sparsity (DART's full inverse mass matrix of a
41-body robot, the fallback for skeletons with other joints, costs more than
its physics step).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import dartpy as dart
import numba
import numpy as np

from eels_gz.errors import DescriptionError
from eels_gz.dart.mass_matrix import MassMatrix

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


# physics.mimic: "none" as gz-physics 7's DART plugin (no mimic constraint), "exact" the host's coupling
MIMIC = ("none", "exact")


def mimic_couplings(model, skel) -> list[Coupling]:
    """The ``<mimic>`` relations of a robot model (eels_gz.description.model), resolved to DOF indices
    of ``skel``."""
    source = model.source
    out = []
    for mimic in model.mimics:
        name, leader, m, off = mimic.follower, mimic.leader, mimic.multiplier, mimic.offset
        jf, jl = skel.getJoint(name), skel.getJoint(leader)
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


@numba.njit(cache=True)
def _correct(v, q, follower, leader, mult, offset, gain, a_inv, scalar_dofs, dt, lam, J, jt_lam):
    """After the step: remove ``c = J dq`` with the mass-weighted impulse ``gain c``,
    move the single-DOF positions by ``-dt dv``, add the impulse (as a torque over
    the step) to ``lam`` and ``J^T lam`` to ``jt_lam``, put the followers on
    their constraint. Returns whether there was anything to remove."""
    m = follower.shape[0]
    n = v.shape[0]
    c = np.empty(m)
    any_c = False
    for r in range(m):
        c[r] = v[follower[r]] - mult[r] * v[leader[r]]
        if c[r] != 0.0:
            any_c = True
    if any_c:
        for k in range(n):
            dv = 0.0
            for r in range(m):
                dv += gain[k, r] * c[r]
            v[k] -= dv
            if scalar_dofs[k]:
                q[k] -= dt * dv
        for r in range(m):
            acc = 0.0
            for s in range(m):
                acc += a_inv[r, s] * c[s]
            lam[r] -= acc / dt
        for k in range(n):
            acc = 0.0
            for r in range(m):
                acc += J[r, k] * lam[r]
            jt_lam[k] = acc
    for r in range(m):
        q[follower[r]] = mult[r] * q[leader[r]] + offset[r]
    return any_c


@numba.njit(cache=True)
def _coupling_gain(M, lam, follower, leader, mult, L, X, A, gain):  # pragma: no cover - compiled
    """``X = M^-1 J^T`` (J's rows are ``e_follower - mult e_leader``), ``A = J X`` and ``gain = X A^-1``,
    in the given buffers; ``A`` ends as ``A^-1``, ``M`` is read only. ``M = L^T L`` is factored with
    the tree's sparsity (``lam``: each DOF's parent DOF, -1 at the root; Featherstone, *Rigid Body
    Dynamics Algorithms*, sec. 6.5): no fill-in, and ``L^T y = e_f - mult e_l`` touches only the
    ancestors of the two joints. Returns -1, or where a pivot was not positive: ``k`` for M's,
    ``n + k`` for A's."""
    n, m = M.shape[0], follower.shape[0]
    L[:, :] = M
    for k in range(n - 1, -1, -1):
        if not L[k, k] > 0.0:
            return k
        d = np.sqrt(L[k, k])
        L[k, k] = d
        i = lam[k]
        while i >= 0:
            L[k, i] /= d
            i = lam[i]
        i = lam[k]
        while i >= 0:
            j = i
            while j >= 0:
                L[i, j] -= L[k, i] * L[k, j]
                j = lam[j]
            i = lam[i]
    X[:, :] = 0.0
    for r in range(m):  # L^T Y = J^T, column by column, in X: only the two joints' ancestors
        X[follower[r], r] = 1.0
        X[leader[r], r] -= mult[r]
        for i in range(max(follower[r], leader[r]), -1, -1):
            if X[i, r] != 0.0:
                X[i, r] /= L[i, i]
                j = lam[i]
                while j >= 0:
                    X[j, r] -= L[i, j] * X[i, r]
                    j = lam[j]
    for i in range(n):  # L X = Y, row by row, in place
        j = lam[i]
        while j >= 0:
            f = L[i, j]
            for r in range(m):
                X[i, r] -= f * X[j, r]
            j = lam[j]
        d = L[i, i]
        for r in range(m):
            X[i, r] /= d
    for r in range(m):
        for s in range(m):
            A[r, s] = X[follower[r], s] - mult[r] * X[leader[r], s]
    # A^-1 by Gauss-Jordan on the small, symmetric positive-definite A (pivots on the diagonal)
    inv = np.eye(m)
    for j in range(m):
        p = A[j, j]
        if not p > 0.0:
            return n + j
        for k in range(m):
            A[j, k] /= p
            inv[j, k] /= p
        for i in range(m):
            if i != j and A[i, j] != 0.0:
                f = A[i, j]
                for k in range(m):
                    A[i, k] -= f * A[j, k]
                    inv[i, k] -= f * inv[j, k]
    A[:, :] = inv
    for i in range(n):
        for s in range(m):
            acc = 0.0
            for r in range(m):
                acc += X[i, r] * A[r, s]
            gain[i, s] = acc
    return -1


class CouplingSolver:
    """Applies a skeleton's couplings around each physics step."""

    def __init__(self, skel, couplings: list[Coupling], dt: float, refresh_steps: int = 20):
        self.skel = skel
        self.couplings = couplings
        self.dt = dt
        self.refresh_steps = max(1, int(refresh_steps))
        self._age = self.refresh_steps  # steps since M^-1 J^T was computed
        self._gain = None
        self._L = None  # buffers of the compiled gain
        self._mass = MassMatrix.build(skel)  # None: DART's inverse mass matrix
        n = skel.getNumDofs()
        self.lam = np.zeros(len(couplings))  # constraint torque multipliers, N m (or N)
        self.constraint_torque = np.zeros(n)  # J^T lam: added to the forces before each step
        self.active = False  # a constraint torque is to be applied
        # positions corrected with the impulse: single-DOF joints only (the
        # base is left where the contact solve put it)
        self.scalar_dofs = np.zeros(n, dtype=np.bool_)
        for j in range(skel.getNumJoints()):
            if skel.getJoint(j).getNumDofs() == 1:
                self.scalar_dofs[skel.getJoint(j).getIndexInSkeleton(0)] = True
        self.J = np.zeros((len(couplings), n))
        for r, c in enumerate(couplings):
            self.J[r, c.follower_dof] = 1.0
            self.J[r, c.leader_dof] -= c.multiplier
        self.follower = np.array([c.follower_dof for c in couplings], dtype=np.int64)
        self.leader = np.array([c.leader_dof for c in couplings], dtype=np.int64)
        self.mult = np.array([c.multiplier for c in couplings])
        self.offset = np.array([c.offset for c in couplings])

    def project_positions(self) -> None:
        """Put every follower on its constraint (used at start and after each step)."""
        q = self.skel.getPositions()
        q[self.follower] = self.mult * q[self.leader] + self.offset
        self.skel.setPositions(q)

    def _refresh(self, q: np.ndarray, dq: np.ndarray) -> None:
        if self._age >= self.refresh_steps or self._gain is None:
            if self._mass is not None:  # the mass matrix in one pass, then one compiled Cholesky solve
                self._compiled_gain(self._mass.matrix(q, dq))
            else:
                J = self.J
                MinvJt = self.skel.getInvMassMatrix() @ J.T
                self._A_inv = np.linalg.inv(J @ MinvJt)
                self._gain = np.ascontiguousarray(MinvJt @ self._A_inv)
            self._age = 0

    def _compiled_gain(self, M: np.ndarray) -> None:
        m, n = self.J.shape
        if self._L is None:
            self._L, self._X = np.zeros((n, n)), np.zeros((n, m))
            self._A_inv, self._gain = np.zeros((m, m)), np.zeros((n, m))
        if _coupling_gain(M, self._mass.dof_parent, self.follower, self.leader, self.mult, self._L, self._X, self._A_inv, self._gain) >= 0:
            # not positive definite: only a state gone non-finite gets here; LU lets the NaN through to the
            # divergence check after the step, which names the DOF
            MinvJt = np.linalg.solve(M, self.J.T)
            self._A_inv[:] = np.linalg.inv(self.J @ MinvJt)
            self._gain[:] = MinvJt @ self._A_inv

    def reset(self) -> None:
        """No constraint torque carried over (a world reset)."""
        self.lam[:] = 0.0
        self.constraint_torque[:] = 0.0
        self.active = False
        self._age = self.refresh_steps

    def before_step(self) -> None:
        """Add the constraint torque of the last steps (warm start) to the skeleton's forces."""
        if self.active:
            self.skel.setForces(self.skel.getForces() + self.constraint_torque)

    def correct(self, q: np.ndarray, dq: np.ndarray) -> None:
        """After the step, on the skeleton's positions and velocities read once: remove ``J dq`` with a
        mass-weighted impulse, move the positions to match, put the followers on their constraint
        (in place; the caller writes them back)."""
        self._refresh(q, dq)
        if _correct(dq, q, self.follower, self.leader, self.mult, self.offset, self._gain, self._A_inv,
                    self.scalar_dofs, self.dt, self.lam, self.J, self.constraint_torque):
            self.active = True
        self._age += 1

    def after_step(self) -> None:
        """``correct`` on the skeleton's own state (for callers outside the host's step)."""
        q, dq = self.skel.getPositions(), self.skel.getVelocities()
        self.correct(q, dq)
        self.skel.setVelocities(dq)
        self.skel.setPositions(q)
