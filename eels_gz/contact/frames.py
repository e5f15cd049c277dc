"""Frame helpers shared by the contact plugin and models."""

from __future__ import annotations

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
