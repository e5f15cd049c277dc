"""Force-torque sensor frames: a wrench (force, torque about a point) moved
to another point and expressed in another frame."""

from __future__ import annotations

import numpy as np


def wrench_in_frame(force_a: np.ndarray, torque_a: np.ndarray, T_a_s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A wrench given in frame A (about A's origin) -> frame S (about S's origin); ``T_a_s`` is S's pose in A.

    f_s = R^T f_a;  tau_s = R^T (tau_a - p x f_a), with R, p the rotation and origin of S in A.
    """
    R, p = T_a_s[:3, :3], T_a_s[:3, 3]
    return R.T @ force_a, R.T @ (torque_a - np.cross(p, force_a))
