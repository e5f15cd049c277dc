"""Rotations and quaternions: the conversions between rotation matrices, unit quaternions and
roll-pitch-yaw, in one pure module (numpy and numba; no engine, gz or ROS).

Conventions, as URDF, SDF and gz-math use them:

- a rotation matrix ``R`` (3, 3) has the body axes in the world as its columns (``R v`` maps body to
  world);
- a quaternion is ``(w, x, y, z)``, scalar first, unit norm; ``matrix_to_quat`` returns ``w >= 0``;
- roll-pitch-yaw (rad) are fixed-axis angles about x, then y, then z: ``R = Rz(yaw) Ry(pitch)
  Rx(roll)`` (scipy's ``Rotation.from_euler("xyz", ...)``, lower case: extrinsic).

The ROS messages' batched matrix-to-quaternion kernel (``eels_gz.ros.messages.quaternions_xyzw``,
x, y, z, w order for the wire) and gz-math's ``Quaterniond.euler`` (``eels_gz.gzapi.gzmath``, gz's own
formula) stay where they are.
"""

from __future__ import annotations

import math

import numba
import numpy as np


def rpy_matrix(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """Fixed-axis roll-pitch-yaw (rad) as a rotation matrix: ``Rz(yaw) Ry(pitch) Rx(roll)``."""
    cr, sr, cp, sp, cy, sy = (math.cos(roll), math.sin(roll), math.cos(pitch), math.sin(pitch),
                              math.cos(yaw), math.sin(yaw))
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def matrix_rpy(R: np.ndarray) -> tuple[float, float, float]:
    """Inverse of :func:`rpy_matrix` (rad), pitch in [-pi/2, pi/2]; at pitch = ±pi/2 (gimbal lock: only
    yaw ∓ roll is defined) the roll is set to 0."""
    pitch = float(np.arctan2(-R[2, 0], np.hypot(R[0, 0], R[1, 0])))
    if np.hypot(R[2, 1], R[2, 2]) < 1e-12:
        return 0.0, pitch, float(np.arctan2(-R[0, 1], R[1, 1]))
    return float(np.arctan2(R[2, 1], R[2, 2])), pitch, float(np.arctan2(R[1, 0], R[0, 0]))


def quat_from_rpy(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """The unit quaternion (w, x, y, z) of fixed-axis roll-pitch-yaw (rad), as gz-math's
    ``Quaterniond(roll, pitch, yaw)`` builds it."""
    cr, sr = math.cos(roll / 2), math.sin(roll / 2)
    cp, sp = math.cos(pitch / 2), math.sin(pitch / 2)
    cy, sy = math.cos(yaw / 2), math.sin(yaw / 2)
    return np.array((
        cr * cp * cy + sr * sp * sy,
        sr * cp * cy - cr * sp * sy,
        cr * sp * cy + sr * cp * sy,
        cr * cp * sy - sr * sp * cy,
    ))


def quat_yaw(q: np.ndarray) -> float:
    """The yaw (rad, about world z) of a unit quaternion (w, x, y, z)."""
    w, x, y, z = q
    return float(np.arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z)))


def quat_rpy(q: np.ndarray) -> list[float]:
    """Fixed-axis roll, pitch, yaw (rad) of a unit quaternion (w, x, y, z); the pitch's sine clipped to
    [-1, 1] against round-off."""
    w, x, y, z = q
    roll = np.arctan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y))
    pitch = np.arcsin(np.clip(2 * (w * y - z * x), -1, 1))
    return [float(roll), float(pitch), quat_yaw(q)]


def quat_to_matrix(q) -> np.ndarray:
    """Rotation matrix of a unit quaternion (w, x, y, z) (not normalized here: see ``rotation_matrix``)."""
    w, x, y, z = q
    return np.array((
        (1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)),
        (2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)),
        (2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)),
    ))


def rotation_matrix(w: float, x: float, y: float, z: float) -> np.ndarray:
    """Rotation matrix of a quaternion (w, x, y, z) of any nonzero norm: normalized first; ValueError
    for a zero or NaN norm."""
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


def matrix_to_quat(R: np.ndarray) -> np.ndarray:
    """Unit quaternion (w, x, y, z), w >= 0, of a rotation matrix."""
    out = np.empty(4)
    quat_from_matrix(np.asarray(R, dtype=float), out, 0)
    return out
