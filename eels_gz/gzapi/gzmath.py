"""The gz.math types our plugins use: ``Vector3d``, ``Quaterniond``,
``Pose3d`` and (for ``Link.world_inertial``) ``MassMatrix3d`` and ``Inertiald``, with gz-math 7's Python method names and constructor forms
(``x()``, ``rot()``, ``rotate_vector()``, ``euler()``...). Quaternions are
(w, x, y, z) and Euler angles are roll-pitch-yaw (extrinsic x-y-z), as in
gz-math.

The classes offer only what gz-math's bindings offer (a subset of it; see
test/conformance). The host converts to and from numpy with the module
functions ``vector3``, ``vector_array``, ``pose_from_matrix``,
``pose_matrix``, ``quaternion_from_matrix`` and ``quaternion_matrix``."""

from __future__ import annotations

import math

import numpy as np

from eels_gz.rotations import matrix_to_quat, quat_to_matrix
from eels_gz.rotations import quat_from_rpy as _quat_from_rpy


class Vector3d:
    __slots__ = ("_v",)

    def __init__(self, *args):
        # gz-math: Vector3d(), Vector3d(x, y, z) or a copy Vector3d(v)
        if len(args) == 0:
            self._v = np.zeros(3)
        elif len(args) == 3:
            self._v = np.array(args, dtype=float)
        elif len(args) == 1 and isinstance(args[0], Vector3d):
            self._v = args[0]._v.copy()
        else:
            raise TypeError("Vector3d(), Vector3d(x, y, z) or Vector3d(other)")

    def x(self) -> float:
        return float(self._v[0])

    def y(self) -> float:
        return float(self._v[1])

    def z(self) -> float:
        return float(self._v[2])

    def length(self) -> float:
        return float(np.linalg.norm(self._v))

    def dot(self, other: Vector3d, /) -> float:
        return float(self._v @ other._v)

    def cross(self, other: Vector3d, /) -> Vector3d:
        return vector3(np.cross(self._v, other._v))

    def normalized(self) -> Vector3d:
        n = self.length()
        return vector3(self._v / n if n > 0 else self._v)

    def __add__(self, o: Vector3d, /) -> Vector3d:
        return vector3(self._v + o._v)

    def __sub__(self, o: Vector3d, /) -> Vector3d:
        return vector3(self._v - o._v)

    def __neg__(self) -> Vector3d:
        return vector3(-self._v)

    def __mul__(self, s, /) -> Vector3d:
        if isinstance(s, Vector3d):
            return vector3(self._v * s._v)
        return vector3(self._v * float(s))

    def __truediv__(self, s: float, /) -> Vector3d:
        return vector3(self._v / float(s))

    def __eq__(self, o, /) -> bool:
        return isinstance(o, Vector3d) and bool(np.allclose(self._v, o._v, rtol=0, atol=1e-6))

    def __getitem__(self, i: int, /) -> float:
        return float(self._v[i])

    def __repr__(self) -> str:
        return f"Vector3d({self.x():g}, {self.y():g}, {self.z():g})"


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
            q = _quat_from_rpy(*args[0]._v)
        elif len(args) == 1 and isinstance(args[0], Quaterniond):
            q = args[0]._q
        else:
            raise TypeError("Quaterniond(), Quaterniond(w, x, y, z), Quaterniond(roll, pitch, yaw), "
                            "Quaterniond(euler Vector3d) or Quaterniond(other)")
        self._q = np.array(q, dtype=float)

    def w(self) -> float:
        return float(self._q[0])

    def x(self) -> float:
        return float(self._q[1])

    def y(self) -> float:
        return float(self._q[2])

    def z(self) -> float:
        return float(self._q[3])

    def euler(self) -> Vector3d:
        R = quaternion_matrix(self)
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

    def rotate_vector(self, v: Vector3d, /) -> Vector3d:
        return vector3(quaternion_matrix(self) @ v._v)

    def __mul__(self, o: Quaterniond, /) -> Quaterniond:
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
        elif len(args) == 1 and isinstance(args[0], Pose3d):
            self._p, self._q = Vector3d(args[0]._p), Quaterniond(args[0]._q)
        else:
            raise TypeError("Pose3d(), Pose3d(pos, rot), Pose3d(x, y, z, roll, pitch, yaw), "
                            "Pose3d(x, y, z, qw, qx, qy, qz) or Pose3d(other)")

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

    def __repr__(self) -> str:
        e = self._q.euler()
        return f"Pose3d({self.x():g} {self.y():g} {self.z():g} {e.x():g} {e.y():g} {e.z():g})"


class MassMatrix3d:
    """gz-math's mass (kg) and moments of inertia about the centre of mass (kg m^2, in the inertial's
    own frame): diagonal (xx, yy, zz) and off-diagonal (xy, xz, yz) moments."""

    __slots__ = ("_mass", "_diag", "_off")

    def __init__(self, *args):
        if len(args) == 0:
            self._mass, self._diag, self._off = 0.0, Vector3d(), Vector3d()
        elif len(args) == 3 and isinstance(args[1], Vector3d) and isinstance(args[2], Vector3d):
            self._mass, self._diag, self._off = float(args[0]), Vector3d(args[1]), Vector3d(args[2])
        else:
            raise TypeError("MassMatrix3d() or MassMatrix3d(mass, diagonal, off_diagonal)")

    def mass(self) -> float:
        return self._mass

    def diagonal_moments(self) -> Vector3d:
        return Vector3d(self._diag)

    def off_diagonal_moments(self) -> Vector3d:
        return Vector3d(self._off)


class Inertiald:
    """gz-math's inertial: a mass matrix at a pose (the centre of mass frame in its parent)."""

    __slots__ = ("_mm", "_pose")

    def __init__(self, *args):
        if len(args) == 0:
            self._mm, self._pose = MassMatrix3d(), Pose3d()
        elif len(args) == 2 and isinstance(args[0], MassMatrix3d) and isinstance(args[1], Pose3d):
            self._mm, self._pose = args
        else:
            raise TypeError("Inertiald() or Inertiald(mass_matrix, pose)")

    def mass_matrix(self) -> MassMatrix3d:
        return self._mm

    def pose(self) -> Pose3d:
        return self._pose


# --- host-side conversions (not gz-math API) ---------------------------------------------
def vector3(a) -> Vector3d:
    """A Vector3d from any 3-sequence or array."""
    v = Vector3d.__new__(Vector3d)
    v._v = np.array(a, dtype=float).reshape(3)
    return v


def vector_array(v: Vector3d) -> np.ndarray:
    return v._v.copy()


def quaternion_matrix(q: Quaterniond) -> np.ndarray:
    """Rotation matrix of a (normalized) Quaterniond."""
    return quat_to_matrix(q._q / np.linalg.norm(q._q))


def quaternion_from_matrix(R: np.ndarray) -> Quaterniond:
    return Quaterniond(*matrix_to_quat(R))


def pose_from_matrix(T: np.ndarray) -> Pose3d:
    return Pose3d(vector3(T[:3, 3]), quaternion_from_matrix(T[:3, :3]))


def pose_matrix(p: Pose3d) -> np.ndarray:
    """4x4 homogeneous transform of a Pose3d."""
    T = np.eye(4)
    T[:3, :3] = quaternion_matrix(p._q)
    T[:3, 3] = p._p._v
    return T
