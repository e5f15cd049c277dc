"""Frame helpers shared by the contact plugin, the models, the sensors and the host."""

from __future__ import annotations

import math

import numba
import numpy as np


def rotation_matrix(w: float, x: float, y: float, z: float) -> np.ndarray:
    """Rotation matrix (columns: body axes in the world) of a quaternion (w, x, y, z); normalizes it."""
    n = np.sqrt(w * w + x * x + y * y + z * z)
    if not n > 0.0:
        raise ValueError(f"quaternion ({w}, {x}, {y}, {z}) has no rotation (zero or NaN norm)")
    w, x, y, z = w / n, x / n, y / n, z / n
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ])


@numba.njit(cache=True)
def quat_from_matrix(R, out, at):  # pragma: no cover - compiled
    """The unit quaternion (w, x, y, z), w >= 0, of the rotation matrix ``R`` (3, 3) into
    ``out[at:at + 4]`` (Shepperd's method: the branch of the largest diagonal term)."""
    tr = R[0, 0] + R[1, 1] + R[2, 2]
    if tr > 0.0:
        s = 2.0 * math.sqrt(tr + 1.0)
        w, x, y, z = 0.25 * s, (R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s
    elif R[0, 0] > R[1, 1] and R[0, 0] > R[2, 2]:
        s = 2.0 * math.sqrt(1.0 + R[0, 0] - R[1, 1] - R[2, 2])
        w, x, y, z = (R[2, 1] - R[1, 2]) / s, 0.25 * s, (R[0, 1] + R[1, 0]) / s, (R[0, 2] + R[2, 0]) / s
    elif R[1, 1] > R[2, 2]:
        s = 2.0 * math.sqrt(1.0 + R[1, 1] - R[0, 0] - R[2, 2])
        w, x, y, z = (R[0, 2] - R[2, 0]) / s, (R[0, 1] + R[1, 0]) / s, 0.25 * s, (R[1, 2] + R[2, 1]) / s
    else:
        s = 2.0 * math.sqrt(1.0 + R[2, 2] - R[0, 0] - R[1, 1])
        w, x, y, z = (R[1, 0] - R[0, 1]) / s, (R[0, 2] + R[2, 0]) / s, (R[1, 2] + R[2, 1]) / s, 0.25 * s
    n = math.sqrt(w * w + x * x + y * y + z * z)
    if w < 0.0:
        n = -n
    out[at], out[at + 1], out[at + 2], out[at + 3] = w / n, x / n, y / n, z / n
