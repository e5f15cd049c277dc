"""The gz.math types our plugins use: ``Vector3d``, ``Quaterniond`` and
``Pose3d``, with gz-math's Python method names (``x()``, ``rot()``,
``rotate_vector()``, ``euler()``...). Quaternions are (w, x, y, z) and
Euler angles are roll-pitch-yaw (extrinsic x-y-z), as in gz-math."""

from __future__ import annotations

import math

import numpy as np


class Vector3d:
    __slots__ = ("_v",)

    def __init__(self, x: float = 0.0, y: float = 0.0, z: float = 0.0):
        self._v = np.array((x, y, z), dtype=float)

    @classmethod
    def from_array(cls, a) -> Vector3d:
        v = cls.__new__(cls)
        v._v = np.array(a, dtype=float).reshape(3)
        return v

    def x(self) -> float:
        return float(self._v[0])

    def y(self) -> float:
        return float(self._v[1])

    def z(self) -> float:
        return float(self._v[2])

    def length(self) -> float:
        return float(np.linalg.norm(self._v))

    def dot(self, other: Vector3d) -> float:
        return float(self._v @ other._v)

    def cross(self, other: Vector3d) -> Vector3d:
        return Vector3d.from_array(np.cross(self._v, other._v))

    def normalized(self) -> Vector3d:
        n = self.length()
        return Vector3d.from_array(self._v / n if n > 0 else self._v)

    def to_array(self) -> np.ndarray:
        return self._v.copy()

    def __add__(self, o: Vector3d) -> Vector3d:
        return Vector3d.from_array(self._v + o._v)

    def __sub__(self, o: Vector3d) -> Vector3d:
        return Vector3d.from_array(self._v - o._v)

    def __neg__(self) -> Vector3d:
        return Vector3d.from_array(-self._v)

    def __mul__(self, s) -> Vector3d:
        if isinstance(s, Vector3d):
            return Vector3d.from_array(self._v * s._v)
        return Vector3d.from_array(self._v * float(s))

    __rmul__ = __mul__

    def __truediv__(self, s: float) -> Vector3d:
        return Vector3d.from_array(self._v / float(s))

    def __eq__(self, o) -> bool:
        return isinstance(o, Vector3d) and bool(np.allclose(self._v, o._v, rtol=0, atol=1e-6))

    def __getitem__(self, i: int) -> float:
        return float(self._v[i])

    def __repr__(self) -> str:
        return f"Vector3d({self.x():g}, {self.y():g}, {self.z():g})"


def _quat_from_rpy(roll: float, pitch: float, yaw: float) -> np.ndarray:
    cr, sr = math.cos(roll / 2), math.sin(roll / 2)
    cp, sp = math.cos(pitch / 2), math.sin(pitch / 2)
    cy, sy = math.cos(yaw / 2), math.sin(yaw / 2)
    return np.array((
        cr * cp * cy + sr * sp * sy,
        sr * cp * cy - cr * sp * sy,
        cr * sp * cy + sr * cp * sy,
        cr * cp * sy - sr * sp * cy,
    ))


def quat_to_matrix(q) -> np.ndarray:
    """Rotation matrix of a unit quaternion (w, x, y, z)."""
    w, x, y, z = q
    return np.array((
        (1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)),
        (2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)),
        (2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)),
    ))


def matrix_to_quat(R: np.ndarray) -> np.ndarray:
    """Unit quaternion (w, x, y, z), w >= 0, of a rotation matrix."""
    tr = R[0, 0] + R[1, 1] + R[2, 2]
    if tr > 0:
        s = 2.0 * math.sqrt(tr + 1.0)
        q = (0.25 * s, (R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s)
    elif R[0, 0] > R[1, 1] and R[0, 0] > R[2, 2]:
        s = 2.0 * math.sqrt(1.0 + R[0, 0] - R[1, 1] - R[2, 2])
        q = ((R[2, 1] - R[1, 2]) / s, 0.25 * s, (R[0, 1] + R[1, 0]) / s, (R[0, 2] + R[2, 0]) / s)
    elif R[1, 1] > R[2, 2]:
        s = 2.0 * math.sqrt(1.0 + R[1, 1] - R[0, 0] - R[2, 2])
        q = ((R[0, 2] - R[2, 0]) / s, (R[0, 1] + R[1, 0]) / s, 0.25 * s, (R[1, 2] + R[2, 1]) / s)
    else:
        s = 2.0 * math.sqrt(1.0 + R[2, 2] - R[0, 0] - R[1, 1])
        q = ((R[1, 0] - R[0, 1]) / s, (R[0, 2] + R[2, 0]) / s, (R[1, 2] + R[2, 1]) / s, 0.25 * s)
    q = np.array(q)
    q /= np.linalg.norm(q)
    return -q if q[0] < 0 else q


class Quaterniond:
    __slots__ = ("_q",)

    def __init__(self, *args):
        if len(args) == 0:
            q = (1.0, 0.0, 0.0, 0.0)
        elif len(args) == 4:
            q = args
        elif len(args) == 3:
            q = _quat_from_rpy(*args)
        elif len(args) == 1 and isinstance(args[0], Vector3d):
            q = _quat_from_rpy(*args[0].to_array())
        else:
            raise TypeError("Quaterniond(), Quaterniond(w, x, y, z) or Quaterniond(roll, pitch, yaw)")
        self._q = np.array(q, dtype=float)

    @classmethod
    def from_matrix(cls, R: np.ndarray) -> Quaterniond:
        return cls(*matrix_to_quat(R))

    def w(self) -> float:
        return float(self._q[0])

    def x(self) -> float:
        return float(self._q[1])

    def y(self) -> float:
        return float(self._q[2])

    def z(self) -> float:
        return float(self._q[3])

    def to_matrix(self) -> np.ndarray:
        return quat_to_matrix(self._q / np.linalg.norm(self._q))

    def euler(self) -> Vector3d:
        R = self.to_matrix()
        roll = math.atan2(R[2, 1], R[2, 2])
        pitch = math.asin(max(-1.0, min(1.0, -R[2, 0])))
        yaw = math.atan2(R[1, 0], R[0, 0])
        return Vector3d(roll, pitch, yaw)

    def roll(self) -> float:
        return self.euler().x()

    def pitch(self) -> float:
        return self.euler().y()

    def yaw(self) -> float:
        return self.euler().z()

    def inverse(self) -> Quaterniond:
        w, x, y, z = self._q / (self._q @ self._q)
        return Quaterniond(w, -x, -y, -z)

    def rotate_vector(self, v: Vector3d) -> Vector3d:
        return Vector3d.from_array(self.to_matrix() @ v.to_array())

    def __mul__(self, o: Quaterniond) -> Quaterniond:
        w1, x1, y1, z1 = self._q
        w2, x2, y2, z2 = o._q
        return Quaterniond(
            w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
            w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
            w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
            w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2,
        )

    def __repr__(self) -> str:
        return f"Quaterniond({self.w():g}, {self.x():g}, {self.y():g}, {self.z():g})"


class Pose3d:
    __slots__ = ("_p", "_q")

    def __init__(self, *args):
        if len(args) == 0:
            self._p, self._q = Vector3d(), Quaterniond()
        elif len(args) == 2 and isinstance(args[0], Vector3d) and isinstance(args[1], Quaterniond):
            self._p, self._q = args
        elif len(args) == 6:
            self._p, self._q = Vector3d(*args[:3]), Quaterniond(*args[3:])
        elif len(args) == 7:
            self._p, self._q = Vector3d(*args[:3]), Quaterniond(*args[3:])
        else:
            raise TypeError("Pose3d(), Pose3d(pos, rot), Pose3d(x, y, z, roll, pitch, yaw) or Pose3d(x, y, z, qw, qx, qy, qz)")

    @classmethod
    def from_matrix(cls, T: np.ndarray) -> Pose3d:
        return cls(Vector3d.from_array(T[:3, 3]), Quaterniond.from_matrix(T[:3, :3]))

    def pos(self) -> Vector3d:
        return self._p

    def rot(self) -> Quaterniond:
        return self._q

    def x(self) -> float:
        return self._p.x()

    def y(self) -> float:
        return self._p.y()

    def z(self) -> float:
        return self._p.z()

    def roll(self) -> float:
        return self._q.roll()

    def pitch(self) -> float:
        return self._q.pitch()

    def yaw(self) -> float:
        return self._q.yaw()

    def to_matrix(self) -> np.ndarray:
        T = np.eye(4)
        T[:3, :3] = self._q.to_matrix()
        T[:3, 3] = self._p.to_array()
        return T

    def __repr__(self) -> str:
        e = self._q.euler()
        return f"Pose3d({self.x():g} {self.y():g} {self.z():g} {e.x():g} {e.y():g} {e.z():g})"
