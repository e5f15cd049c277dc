"""The joint-space mass matrix of a DART skeleton in one numba pass (composite
rigid bodies), for the couplings' ``M^-1 J^T`` (eels_gz.dart.couplings).

DART's ``getInvMassMatrix`` (and ``getMassMatrix``) of the 41-body, 46-DOF
EELS 1.0 alternating costs about 115 µs, more than its physics step; this
pass costs a few, and a Cholesky solve of the coupling rows does the rest.

The matrix is ``M = sum_b J_b^T I_b J_b`` in the skeleton's own generalized
velocities: ``J_b`` maps them to body b's twist as
:mod:`eels_gz.dart.kinematics` does (checked against DART there), here as
world-frame twists ``(w, v_O)`` (``v_O``: the velocity of the body point at
the world origin), and ``I_b`` is the body's spatial inertia about the world
origin. Each joint column is multiplied once by the composite inertia of its
subtree and dotted with the columns of the joints above it (Featherstone's
composite-rigid-body algorithm, in world coordinates). It equals DART's
``getMassMatrix()`` to round-off (test/plugins/test_link_states.py); joints
with armature are not read (dartpy 6.20 does not expose it; the loader sets
none).
"""

from __future__ import annotations

import numba
import numpy as np

from eels_gz.dart.kinematics import FREE, PRISMATIC, REVOLUTE, WELD, SkeletonKinematics

_NUM_DOFS = {FREE: 6, REVOLUTE: 1, PRISMATIC: 1, WELD: 0}


def body_inertias(skel) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each body's mass (B,) kg, centre of mass (B, 3) m in its frame and rotational inertia (B, 3, 3)
    kg m^2 about it in its axes, indexed like ``skel.getBodyNode(i)``."""
    n = skel.getNumBodyNodes()
    mass, com, inertia = np.zeros(n), np.zeros((n, 3)), np.zeros((n, 3, 3))
    for b in range(n):
        body = skel.getBodyNode(b)
        mass[b] = body.getMass()
        com[b] = body.getLocalCOM()
        inertia[b] = body.getInertia().getMoment()
    return mass, com, inertia


@numba.njit(cache=True)
def center_of_mass(T, mass, com, out):  # pragma: no cover - compiled
    """The skeleton's centre of mass (3,) in the world into ``out``, from its bodies' world poses
    ``T`` (B, 4, 4) and ``body_inertias``' masses and centres (DART's ``getCOM()``)."""
    total = 0.0
    out[0] = out[1] = out[2] = 0.0
    for b in range(mass.shape[0]):
        m = mass[b]
        total += m
        for i in range(3):
            out[i] += m * (T[b, i, 3] + T[b, i, 0] * com[b, 0] + T[b, i, 1] * com[b, 1] + T[b, i, 2] * com[b, 2])
    for i in range(3):
        out[i] /= total


def dof_parents(kin: SkeletonKinematics, ndofs: int) -> np.ndarray:
    """Each DOF's parent DOF, -1 at the root: the one before it on its path to the root (a free
    joint's DOFs form a chain). ``M[i, j]`` is zero unless one of ``i``, ``j`` is the other's ancestor.
    DART numbers DOFs body by body, parents first, so a parent's index is the smaller."""
    parent = np.full(ndofs, -1, np.int64)
    last = np.full(kin.kind.shape[0], -1, np.int64)  # each body's last DOF on its path to the root
    for b in range(kin.kind.shape[0]):
        prev = -1 if kin.parent[b] < 0 else last[kin.parent[b]]
        for d in range(_NUM_DOFS[int(kin.kind[b])]):
            parent[kin.dof[b] + d] = prev
            prev = kin.dof[b] + d
        last[b] = prev
    late = np.flatnonzero(parent >= np.arange(ndofs))
    if late.size:
        raise ValueError(f"DOF {late[0]}'s parent DOF {parent[late[0]]} comes after it: not numbered parents first")
    return parent


class MassMatrix:
    """``matrix(q, dq)``: the mass matrix (n, n) of ``skel`` at positions ``q``, or None for a skeleton
    :class:`SkeletonKinematics` does not support."""

    def __init__(self, kin: SkeletonKinematics, mass: np.ndarray, com: np.ndarray, inertia: np.ndarray, ndofs: int):
        self.kin, self.mass, self.com, self.inertia = kin, mass, com, inertia
        self.M = np.zeros((ndofs, ndofs))
        self._S = np.zeros((ndofs, 6))
        self.dof_parent = dof_parents(kin, ndofs)

    @classmethod
    def build(cls, skel) -> MassMatrix | None:
        kin = SkeletonKinematics.build(skel)
        if kin is None:
            return None
        return cls(kin, *body_inertias(skel), skel.getNumDofs())

    def matrix(self, q: np.ndarray, dq: np.ndarray) -> np.ndarray:
        """M at ``q`` (``dq`` only feeds the kinematics pass); the array is overwritten by the next call."""
        k = self.kin
        k.update(q, dq)
        _mass_matrix(k.kind, k.parent, k.dof, k.axis, k.T_pj, k.T, self.mass, self.com, self.inertia, self._S, self.M)
        return self.M


@numba.njit(cache=True)
def _mass_matrix(kind, parent, dof, axis, T_pj, T, mass, com, inertia, S, M):  # pragma: no cover - compiled
    n = kind.shape[0]
    m_c = np.zeros(n)  # composite mass, first moment about the world origin, rotational inertia about it
    h = np.zeros((n, 3))
    Ir = np.zeros((n, 3, 3))
    nd = np.zeros(n, np.int64)
    P = np.empty((3, 3))
    c, o, a, x = np.empty(3), np.empty(3), np.empty(3), np.empty(3)
    RI, Ic = np.empty((3, 3)), np.empty((3, 3))
    for b in range(n):
        for i in range(3):
            c[i] = T[b, i, 3] + T[b, i, 0] * com[b, 0] + T[b, i, 1] * com[b, 1] + T[b, i, 2] * com[b, 2]
            x[i] = T[b, i, 3]
            for j in range(3):
                RI[i, j] = T[b, i, 0] * inertia[b, 0, j] + T[b, i, 1] * inertia[b, 1, j] + T[b, i, 2] * inertia[b, 2, j]
        for i in range(3):
            for j in range(3):  # R I R^T
                Ic[i, j] = RI[i, 0] * T[b, j, 0] + RI[i, 1] * T[b, j, 1] + RI[i, 2] * T[b, j, 2]
        m = mass[b]
        cc = c[0] * c[0] + c[1] * c[1] + c[2] * c[2]
        for i in range(3):
            h[b, i] = m * c[i]
            for j in range(3):  # parallel axes: Ic + m (|c|^2 1 - c c^T)
                Ir[b, i, j] = Ic[i, j] + m * ((cc if i == j else 0.0) - c[i] * c[j])
        m_c[b] = m
        # the parent-side joint frame's rotation and origin, as in kinematics._forward
        p = parent[b]
        for i in range(3):
            if p < 0:
                o[i] = T_pj[b, i, 3]
                for j in range(3):
                    P[i, j] = T_pj[b, i, j]
            else:
                o[i] = T[p, i, 0] * T_pj[b, 0, 3] + T[p, i, 1] * T_pj[b, 1, 3] + T[p, i, 2] * T_pj[b, 2, 3] + T[p, i, 3]
                for j in range(3):
                    P[i, j] = T[p, i, 0] * T_pj[b, 0, j] + T[p, i, 1] * T_pj[b, 1, j] + T[p, i, 2] * T_pj[b, 2, j]
        k, d = kind[b], dof[b]
        if k == REVOLUTE or k == PRISMATIC:
            for i in range(3):
                a[i] = P[i, 0] * axis[b, 0] + P[i, 1] * axis[b, 1] + P[i, 2] * axis[b, 2]
            nd[b] = 1
            for i in range(3):
                S[d, i] = a[i] if k == REVOLUTE else 0.0
            if k == REVOLUTE:  # rotation about the line through o along a: v_O = o x a
                S[d, 3], S[d, 4], S[d, 5] = o[1] * a[2] - o[2] * a[1], o[2] * a[0] - o[0] * a[2], o[0] * a[1] - o[1] * a[0]
            else:
                S[d, 3], S[d, 4], S[d, 5] = a[0], a[1], a[2]
        elif k == FREE:  # (w, v of the body origin x) in the parent-side frame: rotations about x, then translations
            nd[b] = 6
            for r in range(3):
                a0, a1, a2 = P[0, r], P[1, r], P[2, r]
                S[d + r, 0], S[d + r, 1], S[d + r, 2] = a0, a1, a2
                S[d + r, 3], S[d + r, 4], S[d + r, 5] = x[1] * a2 - x[2] * a1, x[2] * a0 - x[0] * a2, x[0] * a1 - x[1] * a0
                S[d + 3 + r, 0], S[d + 3 + r, 1], S[d + 3 + r, 2] = 0.0, 0.0, 0.0
                S[d + 3 + r, 3], S[d + 3 + r, 4], S[d + 3 + r, 5] = a0, a1, a2
    for b in range(n - 1, 0, -1):  # composite inertias, children before parents
        p = parent[b]
        if p >= 0:
            m_c[p] += m_c[b]
            h[p] += h[b]
            Ir[p] += Ir[b]
    M[:, :] = 0.0
    for b in range(n):
        for ii in range(nd[b]):
            i = dof[b] + ii
            w0, w1, w2, v0, v1, v2 = S[i, 0], S[i, 1], S[i, 2], S[i, 3], S[i, 4], S[i, 5]
            hx, hy, hz, m = h[b, 0], h[b, 1], h[b, 2], m_c[b]
            # F = I_b s: [Ir w + h x v ; m v - h x w]
            f0 = Ir[b, 0, 0] * w0 + Ir[b, 0, 1] * w1 + Ir[b, 0, 2] * w2 + hy * v2 - hz * v1
            f1 = Ir[b, 1, 0] * w0 + Ir[b, 1, 1] * w1 + Ir[b, 1, 2] * w2 + hz * v0 - hx * v2
            f2 = Ir[b, 2, 0] * w0 + Ir[b, 2, 1] * w1 + Ir[b, 2, 2] * w2 + hx * v1 - hy * v0
            f3 = m * v0 - (hy * w2 - hz * w1)
            f4 = m * v1 - (hz * w0 - hx * w2)
            f5 = m * v2 - (hx * w1 - hy * w0)
            a = b
            while a >= 0:
                for jj in range(nd[a]):
                    j = dof[a] + jj
                    val = S[j, 0] * f0 + S[j, 1] * f1 + S[j, 2] * f2 + S[j, 3] * f3 + S[j, 4] * f4 + S[j, 5] * f5
                    M[i, j] = val
                    M[j, i] = val
                a = parent[a]
