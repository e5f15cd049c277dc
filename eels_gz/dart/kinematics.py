"""Batched forward kinematics of a DART skeleton, for plugins that read many
links per step.

dartpy answers one body per call (``getWorldTransform``, ``getLinearVelocity``
...), about 8 us for a link's pose and twist, which for the 20 screws of
EELS 1.0 alternating costs more than the physics step. This module reads the
joint structure once and computes every body's world pose and twist from the
skeleton's generalized positions and velocities in one numba pass, the same
quantities DART computes (checked against it in test/plugins/test_link_states.py).

Supported joints: Free (dartpy 6.20's coordinates: rotation vector, then
translation; velocities: angular, then linear velocity of the child origin,
in the parent-side joint frame),
Revolute, Prismatic and Weld. A skeleton with any other joint gets ``None``
from ``SkeletonKinematics.build`` and the host falls back to per-body calls.
"""

from __future__ import annotations

import numba
import numpy as np

FREE, REVOLUTE, PRISMATIC, WELD = 0, 1, 2, 3
_TYPES = {"FreeJoint": FREE, "RevoluteJoint": REVOLUTE, "PrismaticJoint": PRISMATIC, "WeldJoint": WELD}


@numba.njit(cache=True)
def _rot_axis_angle(x, y, z, angle, out):
    """Rotation about the unit axis (x, y, z) by ``angle`` into out[:3, :3]."""
    c, s = np.cos(angle), np.sin(angle)
    t = 1.0 - c
    out[0, 0] = c + x * x * t
    out[0, 1] = x * y * t - z * s
    out[0, 2] = x * z * t + y * s
    out[1, 0] = y * x * t + z * s
    out[1, 1] = c + y * y * t
    out[1, 2] = y * z * t - x * s
    out[2, 0] = z * x * t - y * s
    out[2, 1] = z * y * t + x * s
    out[2, 2] = c + z * z * t


@numba.njit(cache=True)
def _mul4(A, B, out):
    """out = A @ B for rigid transforms (last row 0 0 0 1)."""
    for i in range(3):
        for j in range(4):
            out[i, j] = A[i, 0] * B[0, j] + A[i, 1] * B[1, j] + A[i, 2] * B[2, j]
        out[i, 3] += A[i, 3]
    out[3, 0] = out[3, 1] = out[3, 2] = 0.0
    out[3, 3] = 1.0


@numba.njit(cache=True)
def _forward(kind, parent, dof, axis, T_pj, T_cj_inv, q, dq, T_out, w_out, v_out):
    """World transforms (B, 4, 4), and world angular velocity and linear
    velocity of each body origin (B, 3), bodies in parent-first order.

    T_b = T_parent T_parent->joint J(q) T_child->joint^-1. A revolute joint
    adds axis_w dq to the angular velocity and (axis_w dq) x (x_b - o_joint)
    to the origin's velocity; a prismatic one adds axis_w dq; a free joint's
    dq is (angular, linear velocity of the child origin) in the parent-side
    joint frame, as dartpy 6.20 reports it (world axes for a root)."""
    n = kind.shape[0]
    J = np.eye(4)
    A = np.empty((4, 4))
    Tj = np.empty((4, 4))
    for b in range(n):
        k = kind[b]
        d = dof[b]
        p = parent[b]
        for i in range(3):
            for j in range(4):
                J[i, j] = 1.0 if i == j else 0.0
        if k == FREE:
            wx, wy, wz = q[d], q[d + 1], q[d + 2]
            th = np.sqrt(wx * wx + wy * wy + wz * wz)
            if th > 1e-12:
                _rot_axis_angle(wx / th, wy / th, wz / th, th, J)
            J[0, 3], J[1, 3], J[2, 3] = q[d + 3], q[d + 4], q[d + 5]
        elif k == REVOLUTE:
            _rot_axis_angle(axis[b, 0], axis[b, 1], axis[b, 2], q[d], J)
        elif k == PRISMATIC:
            J[0, 3], J[1, 3], J[2, 3] = axis[b, 0] * q[d], axis[b, 1] * q[d], axis[b, 2] * q[d]
        if p < 0:
            _mul4(T_pj[b], J, Tj)
            _mul4(Tj, T_cj_inv[b], T_out[b])
            wx = wy = wz = vx = vy = vz = 0.0
            rx, ry, rz = T_out[b, 0, 3], T_out[b, 1, 3], T_out[b, 2, 3]
            # the world does not move: no carried velocity
        else:
            _mul4(T_out[p], T_pj[b], A)
            _mul4(A, J, Tj)
            _mul4(Tj, T_cj_inv[b], T_out[b])
            wx, wy, wz = w_out[p, 0], w_out[p, 1], w_out[p, 2]
            rx = T_out[b, 0, 3] - T_out[p, 0, 3]
            ry = T_out[b, 1, 3] - T_out[p, 1, 3]
            rz = T_out[b, 2, 3] - T_out[p, 2, 3]
            vx = v_out[p, 0] + wy * rz - wz * ry
            vy = v_out[p, 1] + wz * rx - wx * rz
            vz = v_out[p, 2] + wx * ry - wy * rx
        if k == REVOLUTE or k == PRISMATIC:
            ax = (Tj[0, 0] * axis[b, 0] + Tj[0, 1] * axis[b, 1] + Tj[0, 2] * axis[b, 2]) * dq[d]
            ay = (Tj[1, 0] * axis[b, 0] + Tj[1, 1] * axis[b, 1] + Tj[1, 2] * axis[b, 2]) * dq[d]
            az = (Tj[2, 0] * axis[b, 0] + Tj[2, 1] * axis[b, 1] + Tj[2, 2] * axis[b, 2]) * dq[d]
            if k == REVOLUTE:
                ox = T_out[b, 0, 3] - Tj[0, 3]
                oy = T_out[b, 1, 3] - Tj[1, 3]
                oz = T_out[b, 2, 3] - Tj[2, 3]
                wx += ax
                wy += ay
                wz += az
                vx += ay * oz - az * oy
                vy += az * ox - ax * oz
                vz += ax * oy - ay * ox
            else:
                vx += ax
                vy += ay
                vz += az
        elif k == FREE:
            # parent-side joint frame rotation: Tj without J's rotation
            if p < 0:
                for i in range(3):
                    for j in range(3):
                        A[i, j] = T_pj[b, i, j]
            for i in range(3):
                wi = A[i, 0] * dq[d] + A[i, 1] * dq[d + 1] + A[i, 2] * dq[d + 2]
                vi = A[i, 0] * dq[d + 3] + A[i, 1] * dq[d + 4] + A[i, 2] * dq[d + 5]
                if i == 0:
                    wx += wi
                    vx += vi
                elif i == 1:
                    wy += wi
                    vy += vi
                else:
                    wz += wi
                    vz += vi
        w_out[b, 0], w_out[b, 1], w_out[b, 2] = wx, wy, wz
        v_out[b, 0], v_out[b, 1], v_out[b, 2] = vx, vy, vz


@numba.njit(cache=True)
def _cross_add(ax, ay, az, bx, by, bz, out, i):
    """out[i] += a x b."""
    out[i, 0] += ay * bz - az * by
    out[i, 1] += az * bx - ax * bz
    out[i, 2] += ax * by - ay * bx


@numba.njit(cache=True)
def _carry(alpha, acc, w, p, b, rx, ry, rz):
    """acc[b] += alpha[p] x r + w[p] x (w[p] x r): a point fixed on body p at r from its origin."""
    wx, wy, wz = w[p, 0], w[p, 1], w[p, 2]
    _cross_add(alpha[p, 0], alpha[p, 1], alpha[p, 2], rx, ry, rz, acc, b)
    _cross_add(wx, wy, wz, wy * rz - wz * ry, wz * rx - wx * rz, wx * ry - wy * rx, acc, b)


@numba.njit(cache=True)
def _accelerations(kind, parent, dof, axis, T_pj, T, w, dq, ddq, alpha_out, a_out):  # pragma: no cover
    """World angular acceleration and classical linear acceleration of each body origin (B, 3) from the
    generalized accelerations ``ddq``, with ``T`` and ``w`` from ``_forward`` at the same state.

    A body's origin at r_po + r_ob from its parent's (r_po to the joint origin, fixed on the parent;
    r_ob from it, fixed on the child): a_b = a_p + alpha_p x r_po + w_p x (w_p x r_po) + alpha_b x r_ob
    + w_b x (w_b x r_ob); a revolute joint adds u ddq + w_p x (u dq) to alpha (u its world axis), a
    prismatic one u ddq + 2 w_p x (u dq) to the acceleration. A free joint's ddq is the rate of its dq,
    (angular, linear velocity of the child origin) in the parent-side frame: supported at a root only
    (a fixed frame); False for a free joint below another body."""
    n = kind.shape[0]
    A = np.empty((4, 4))
    for b in range(n):
        k, d, p = kind[b], dof[b], parent[b]
        if p < 0:
            A[:, :] = T_pj[b]
        else:
            _mul4(T[p], T_pj[b], A)
        for i in range(3):
            alpha_out[b, i] = 0.0
            a_out[b, i] = 0.0
        if k == FREE:
            if p >= 0:
                return False
            for i in range(3):
                alpha_out[b, i] = A[i, 0] * ddq[d] + A[i, 1] * ddq[d + 1] + A[i, 2] * ddq[d + 2]
                a_out[b, i] = A[i, 0] * ddq[d + 3] + A[i, 1] * ddq[d + 4] + A[i, 2] * ddq[d + 5]
            continue
        ux = uy = uz = 0.0
        if k == REVOLUTE or k == PRISMATIC:
            ux = A[0, 0] * axis[b, 0] + A[0, 1] * axis[b, 1] + A[0, 2] * axis[b, 2]
            uy = A[1, 0] * axis[b, 0] + A[1, 1] * axis[b, 1] + A[1, 2] * axis[b, 2]
            uz = A[2, 0] * axis[b, 0] + A[2, 1] * axis[b, 1] + A[2, 2] * axis[b, 2]
        px = py = pz = 0.0  # the parent's origin (the world's for a root)
        if p >= 0:
            px, py, pz = T[p, 0, 3], T[p, 1, 3], T[p, 2, 3]
            for i in range(3):
                alpha_out[b, i] = alpha_out[p, i]
                a_out[b, i] = a_out[p, i]
        if k == REVOLUTE:
            ox, oy, oz = A[0, 3], A[1, 3], A[2, 3]  # the joint origin: the rotation leaves it in place
            if p >= 0:
                _carry(alpha_out, a_out, w, p, b, ox - px, oy - py, oz - pz)
                wd = dq[d]
                _cross_add(w[p, 0], w[p, 1], w[p, 2], ux * wd, uy * wd, uz * wd, alpha_out, b)
            alpha_out[b, 0] += ux * ddq[d]
            alpha_out[b, 1] += uy * ddq[d]
            alpha_out[b, 2] += uz * ddq[d]
            _carry(alpha_out, a_out, w, b, b, T[b, 0, 3] - ox, T[b, 1, 3] - oy, T[b, 2, 3] - oz)
        else:  # weld or prismatic: the child turns with the parent
            if p >= 0:
                _carry(alpha_out, a_out, w, p, b, T[b, 0, 3] - px, T[b, 1, 3] - py, T[b, 2, 3] - pz)
            if k == PRISMATIC:
                if p >= 0:
                    sd = 2.0 * dq[d]
                    _cross_add(w[p, 0], w[p, 1], w[p, 2], ux * sd, uy * sd, uz * sd, a_out, b)
                a_out[b, 0] += ux * ddq[d]
                a_out[b, 1] += uy * ddq[d]
                a_out[b, 2] += uz * ddq[d]
    return True


@numba.njit(cache=True)
def gather_link_states(T, v, w, idx, pos, rot, lin, ang):
    """Positions, rotations, linear and angular velocities of the bodies ``idx`` into the output arrays."""
    for s in range(idx.shape[0]):
        b = idx[s]
        for i in range(3):
            pos[s, i] = T[b, i, 3]
            lin[s, i] = v[b, i]
            ang[s, i] = w[b, i]
            for j in range(3):
                rot[s, i, j] = T[b, i, j]


class SkeletonKinematics:
    """Joint structure of one skeleton; ``update(q, dq)`` fills ``T`` (B, 4, 4),
    ``w`` and ``v`` (B, 3): world poses, angular velocities and linear
    velocities of the body origins, indexed like ``skel.getBodyNode(i)``."""

    def __init__(self, kind, parent, dof, axis, T_pj, T_cj_inv):
        self.kind, self.parent, self.dof, self.axis = kind, parent, dof, axis
        self.T_pj, self.T_cj_inv = T_pj, T_cj_inv
        n = kind.shape[0]
        self.T, self.w, self.v = np.zeros((n, 4, 4)), np.zeros((n, 3)), np.zeros((n, 3))
        self.alpha, self.a = np.zeros((n, 3)), np.zeros((n, 3))  # from ``accelerations``

    @classmethod
    def build(cls, skel) -> SkeletonKinematics | None:
        n = skel.getNumBodyNodes()
        kind, parent, dof = np.zeros(n, np.int64), np.full(n, -1, np.int64), np.zeros(n, np.int64)
        axis, T_pj, T_cj_inv = np.zeros((n, 3)), np.zeros((n, 4, 4)), np.zeros((n, 4, 4))
        for b in range(n):
            body = skel.getBodyNode(b)
            joint = body.getParentJoint()
            code = _TYPES.get(joint.getType())
            if code is None:
                return None
            pb = body.getParentBodyNode()
            parent[b] = -1 if pb is None else pb.getIndexInSkeleton()
            if parent[b] >= b:
                return None  # not parent-first; never seen with DART's ordering
            kind[b] = code
            dof[b] = joint.getIndexInSkeleton(0) if joint.getNumDofs() else 0
            if code in (REVOLUTE, PRISMATIC):
                axis[b] = joint.getAxis()
            T_pj[b] = joint.getTransformFromParentBodyNode().matrix()
            T_cj_inv[b] = np.linalg.inv(joint.getTransformFromChildBodyNode().matrix())
        return cls(kind, parent, dof, axis, T_pj, T_cj_inv)

    def update(self, q: np.ndarray, dq: np.ndarray) -> None:
        _forward(self.kind, self.parent, self.dof, self.axis, self.T_pj, self.T_cj_inv,
                 np.ascontiguousarray(q, dtype=float), np.ascontiguousarray(dq, dtype=float), self.T, self.w, self.v)

    def accelerations(self, dq: np.ndarray, ddq: np.ndarray) -> bool:
        """Fill ``alpha`` and ``a`` (B, 3): every body's world angular acceleration and its origin's
        classical linear acceleration (DART's ``getAngularAcceleration()``, ``getLinearAcceleration()``)
        for the generalized accelerations ``ddq``, at the state of the last ``update`` (whose ``dq`` is
        given again). False for a free joint that is not a root (not supported)."""
        return _accelerations(self.kind, self.parent, self.dof, self.axis, self.T_pj, self.T, self.w,
                              np.ascontiguousarray(dq, dtype=float), np.ascontiguousarray(ddq, dtype=float),
                              self.alpha, self.a)


@numba.njit(cache=True)
def _wrench_forces(kind, parent, dof, axis, T_pj, T_out, bodies, forces, torques, tau):
    """Generalized forces of world wrenches (force at the body origin, torque)
    on ``bodies``: tau += J_b^T [torque; force] summed over the bodies (what DART
    does with an external force), in one backward pass: each body's subtree
    force and moment (about the world origin) are accumulated towards the root,
    and each joint takes its share, so the cost grows with the number of bodies,
    not with bodies times depth."""
    n = kind.shape[0]
    F = np.zeros((n, 3))
    M = np.zeros((n, 3))
    for s in range(bodies.shape[0]):
        b = bodies[s]
        fx, fy, fz = forces[s, 0], forces[s, 1], forces[s, 2]
        px, py, pz = T_out[b, 0, 3], T_out[b, 1, 3], T_out[b, 2, 3]
        F[b, 0] += fx
        F[b, 1] += fy
        F[b, 2] += fz
        M[b, 0] += torques[s, 0] + py * fz - pz * fy
        M[b, 1] += torques[s, 1] + pz * fx - px * fz
        M[b, 2] += torques[s, 2] + px * fy - py * fx
    for b in range(n - 1, 0, -1):  # children come after their parents
        p = parent[b]
        if p >= 0:
            for i in range(3):
                F[p, i] += F[b, i]
                M[p, i] += M[b, i]
    A = np.empty((4, 4))
    for j in range(n):
        k = kind[j]
        if k == WELD:
            continue
        fx, fy, fz = F[j, 0], F[j, 1], F[j, 2]
        if fx == 0.0 and fy == 0.0 and fz == 0.0 and M[j, 0] == 0.0 and M[j, 1] == 0.0 and M[j, 2] == 0.0:
            continue
        p = parent[j]
        if p < 0:
            A[:, :] = T_pj[j]
        else:
            _mul4(T_out[p], T_pj[j], A)
        if k == FREE:
            # conjugate to (angular, linear velocity of the child origin) in the parent-side joint frame
            ox, oy, oz = T_out[j, 0, 3], T_out[j, 1, 3], T_out[j, 2, 3]
            mx = M[j, 0] - (oy * fz - oz * fy)
            my = M[j, 1] - (oz * fx - ox * fz)
            mz = M[j, 2] - (ox * fy - oy * fx)
            for i in range(3):
                tau[dof[j] + i] += A[0, i] * mx + A[1, i] * my + A[2, i] * mz
                tau[dof[j] + 3 + i] += A[0, i] * fx + A[1, i] * fy + A[2, i] * fz
        else:
            # joint axis in the world: the parent-side frame's rotation
            # (a revolute joint's own rotation leaves its axis unchanged)
            ax = A[0, 0] * axis[j, 0] + A[0, 1] * axis[j, 1] + A[0, 2] * axis[j, 2]
            ay = A[1, 0] * axis[j, 0] + A[1, 1] * axis[j, 1] + A[1, 2] * axis[j, 2]
            az = A[2, 0] * axis[j, 0] + A[2, 1] * axis[j, 1] + A[2, 2] * axis[j, 2]
            if k == REVOLUTE:
                ox, oy, oz = A[0, 3], A[1, 3], A[2, 3]
                mx = M[j, 0] - (oy * fz - oz * fy)
                my = M[j, 1] - (oz * fx - ox * fz)
                mz = M[j, 2] - (ox * fy - oy * fx)
                tau[dof[j]] += ax * mx + ay * my + az * mz
            else:
                tau[dof[j]] += ax * fx + ay * fy + az * fz


def wrench_forces(kin: SkeletonKinematics, bodies: np.ndarray, forces: np.ndarray, torques: np.ndarray,
                  tau: np.ndarray) -> None:
    """Add to ``tau`` (skeleton DOFs) the generalized forces of world wrenches
    on ``bodies`` (indices), forces (N) at the body origins and torques (N m);
    ``kin`` must be updated to the current state."""
    _wrench_forces(kin.kind, kin.parent, kin.dof, kin.axis, kin.T_pj, kin.T, np.ascontiguousarray(bodies, np.int64),
                   np.ascontiguousarray(forces, float), np.ascontiguousarray(torques, float), tau)
