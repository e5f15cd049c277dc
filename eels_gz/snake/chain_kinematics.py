"""Forward kinematics of a joint tree in one compiled call (used by :class:`eels_gz.snake.chain.SnakeChain`).

Joints are given in an order that places each parent link before its
children; link 0 is the root and joint ``k`` places link ``k + 1``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

FIXED, REVOLUTE, PRISMATIC = 0, 1, 2  # joint kinds (continuous joints are REVOLUTE)


@njit(cache=True)
def chain_poses(parent: np.ndarray, origin: np.ndarray, axis: np.ndarray, kind: np.ndarray, values: np.ndarray,
                base: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Link poses (n + 1, 4, 4), root first, and joint frames (n, 4, 4): the parent's pose times the joint's
    origin, before its motion. ``parent[k]``: the link index of joint k's parent; ``origin`` (n, 4, 4);
    unit ``axis`` (n, 3) in the joint frame; ``kind`` (n,) FIXED, REVOLUTE or PRISMATIC; ``values`` (n,)
    angles (rad) or displacements (m); ``base`` (4, 4) the root's pose."""
    n = parent.shape[0]
    poses = np.empty((n + 1, 4, 4))
    frames = np.empty((n, 4, 4))
    poses[0] = base
    R = np.empty((3, 3))
    for k in range(n):
        P, J, F, T = poses[parent[k]], origin[k], frames[k], poses[k + 1]
        for r in range(4):
            for c in range(4):
                acc = 0.0
                for m in range(4):
                    acc += P[r, m] * J[m, c]
                F[r, c] = acc
        T[:, :] = F
        if kind[k] == REVOLUTE:
            x, y, z = axis[k, 0], axis[k, 1], axis[k, 2]
            co, si = math.cos(values[k]), math.sin(values[k])
            C = 1.0 - co
            R[0, 0], R[0, 1], R[0, 2] = co + x * x * C, x * y * C - z * si, x * z * C + y * si
            R[1, 0], R[1, 1], R[1, 2] = y * x * C + z * si, co + y * y * C, y * z * C - x * si
            R[2, 0], R[2, 1], R[2, 2] = z * x * C - y * si, z * y * C + x * si, co + z * z * C
            for r in range(3):
                for c in range(3):
                    T[r, c] = F[r, 0] * R[0, c] + F[r, 1] * R[1, c] + F[r, 2] * R[2, c]
        elif kind[k] == PRISMATIC:
            d = values[k]
            for r in range(3):
                T[r, 3] = F[r, 3] + d * (F[r, 0] * axis[k, 0] + F[r, 1] * axis[k, 1] + F[r, 2] * axis[k, 2])
    return poses, frames
