"""gz-math conventions of eels_gz.gzapi.gzmath: quaternions (w, x, y, z),
roll-pitch-yaw as extrinsic x-y-z rotations (R = Rz(yaw) Ry(pitch) Rx(roll)),
checked against independently built rotation matrices. Tolerance 1e-12: every
operation here is a handful of double-precision products of unit-magnitude
numbers (rounding ~1e-16 each); 1e-12 leaves a 1e3-1e4 margin and still
catches any convention error, which shows up at O(1)."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from eels_gz.gzapi.gzmath import (Pose3d, Quaterniond, Vector3d, matrix_to_quat, pose_from_matrix, pose_matrix,
                                 quat_to_matrix, quaternion_from_matrix, quaternion_matrix, vector_array)

TOL = 1e-12
RNG = np.random.default_rng(20240531)


def rx(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def ry(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def rz(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def rpy_matrix(r, p, y):
    return rz(y) @ ry(p) @ rx(r)


def random_rpy(n=200):
    # pitch strictly inside (-pi/2, pi/2): away from gimbal lock, rpy is unique
    return np.column_stack([RNG.uniform(-math.pi, math.pi, n), RNG.uniform(-1.5, 1.5, n),
                            RNG.uniform(-math.pi, math.pi, n)])


def test_axis_conventions():
    # yaw pi/2 takes x to y; roll pi/2 takes y to z; pitch pi/2 takes z to x
    cases = [((0, 0, math.pi / 2), (1, 0, 0), (0, 1, 0)),
             ((math.pi / 2, 0, 0), (0, 1, 0), (0, 0, 1)),
             ((0, math.pi / 2, 0), (0, 0, 1), (1, 0, 0))]
    for rpy, v, expected in cases:
        out = vector_array(Quaterniond(*rpy).rotate_vector(Vector3d(*v)))
        np.testing.assert_allclose(out, expected, rtol=0, atol=TOL)


def test_rpy_round_trip():
    for r, p, y in random_rpy():
        q = Quaterniond(r, p, y)
        assert math.hypot(math.hypot(q.w(), q.x()), math.hypot(q.y(), q.z())) == pytest.approx(1.0, abs=TOL)
        e = q.euler()
        np.testing.assert_allclose([e.x(), e.y(), e.z()], [r, p, y], rtol=0, atol=TOL)
        assert (q.roll(), q.pitch(), q.yaw()) == pytest.approx((r, p, y), abs=TOL)


def test_quaternion_from_rpy_matches_matrix():
    for r, p, y in random_rpy():
        np.testing.assert_allclose(quaternion_matrix(Quaterniond(r, p, y)), rpy_matrix(r, p, y), rtol=0, atol=TOL)
        # the Vector3d constructor is the same rotation
        np.testing.assert_allclose(quaternion_matrix(Quaterniond(Vector3d(r, p, y))), rpy_matrix(r, p, y), rtol=0, atol=TOL)


def test_rotate_vector_matches_matrix():
    for (r, p, y), v in zip(random_rpy(), RNG.normal(size=(200, 3))):
        out = vector_array(Quaterniond(r, p, y).rotate_vector(Vector3d(*v)))
        np.testing.assert_allclose(out, rpy_matrix(r, p, y) @ v, rtol=0, atol=TOL)


def test_product_and_inverse():
    angles = random_rpy(100)
    for a, b in zip(angles[:50], angles[50:]):
        qa, qb = Quaterniond(*a), Quaterniond(*b)
        np.testing.assert_allclose(quaternion_matrix(qa * qb), rpy_matrix(*a) @ rpy_matrix(*b), rtol=0, atol=TOL)
        np.testing.assert_allclose(quaternion_matrix(qa * qa.inverse()), np.eye(3), rtol=0, atol=TOL)
        np.testing.assert_allclose(quaternion_matrix(qa.inverse()), rpy_matrix(*a).T, rtol=0, atol=TOL)


@pytest.mark.parametrize("R", [
    np.eye(3), rx(math.pi), ry(math.pi), rz(math.pi),  # trace -1: each branch of matrix_to_quat
    rx(math.pi - 1e-9), rpy_matrix(3.0, 0.1, -3.0), rpy_matrix(0.2, -1.4, 2.9),
    rz(math.pi / 2) @ rx(math.pi),  # a half turn about a diagonal axis
])
def test_matrix_quaternion_round_trip(R):
    q = matrix_to_quat(R)
    assert np.linalg.norm(q) == pytest.approx(1.0, abs=TOL)
    assert q[0] >= 0
    np.testing.assert_allclose(quat_to_matrix(q), R, rtol=0, atol=TOL)
    np.testing.assert_allclose(quaternion_matrix(quaternion_from_matrix(R)), R, rtol=0, atol=TOL)


@pytest.mark.parametrize("R", [np.eye(3), rx(math.pi), ry(math.pi), rz(math.pi), rpy_matrix(0.2, -1.4, 2.9)])
def test_base_odometry_is_the_pose_and_the_twist_in_the_body_frame(R):
    """The Recorder's ground-truth odometry kernel: position, a quaternion of R (w >= 0) and the world
    velocities rotated into the body (REP-105's child frame)."""
    from eels_gz.dart.step_kernels import base_odometry

    T = np.eye(4)
    T[:3, :3], T[:3, 3] = R, (1.0, -2.0, 3.0)
    v, w = np.array([0.3, -0.2, 0.7]), np.array([-1.1, 0.4, 2.0])
    out = np.full(13, np.nan)
    base_odometry(T, v, w, out)
    np.testing.assert_array_equal(out[:3], T[:3, 3])
    assert out[3] >= 0
    np.testing.assert_allclose(quat_to_matrix(out[3:7]), R, rtol=0, atol=TOL)
    np.testing.assert_allclose(out[7:10], R.T @ v, rtol=0, atol=TOL)
    np.testing.assert_allclose(out[10:13], R.T @ w, rtol=0, atol=TOL)


def test_pose_matrix_round_trip():
    positions = RNG.uniform(-10, 10, size=(200, 3))
    for (r, p, y), t in zip(random_rpy(), positions):
        pose = Pose3d(*t, r, p, y)
        T = pose_matrix(pose)
        expected = np.eye(4)
        expected[:3, :3], expected[:3, 3] = rpy_matrix(r, p, y), t
        np.testing.assert_allclose(T, expected, rtol=0, atol=TOL)
        back = pose_from_matrix(T)
        np.testing.assert_allclose(pose_matrix(back), T, rtol=0, atol=TOL)
        assert (back.x(), back.y(), back.z()) == pytest.approx(tuple(t), abs=TOL)
        assert (back.roll(), back.pitch(), back.yaw()) == pytest.approx((r, p, y), abs=TOL)


def test_pose_constructors_agree():
    q = Quaterniond(0.3, -0.2, 1.1)
    a = Pose3d(1.0, 2.0, 3.0, 0.3, -0.2, 1.1)
    b = Pose3d(1.0, 2.0, 3.0, q.w(), q.x(), q.y(), q.z())
    c = Pose3d(Vector3d(1.0, 2.0, 3.0), q)
    for other in (b, c):
        np.testing.assert_allclose(pose_matrix(other), pose_matrix(a), rtol=0, atol=TOL)
    np.testing.assert_array_equal(pose_matrix(Pose3d()), np.eye(4))


def test_wrong_constructor_arguments_raise_type_error():
    with pytest.raises(TypeError, match=re.escape("Quaterniond(), Quaterniond(w, x, y, z), Quaterniond(roll, pitch, yaw)")):
        Quaterniond(1.0, 2.0)
    with pytest.raises(TypeError, match=re.escape("Vector3d(), Vector3d(x, y, z) or Vector3d(other)")):
        Vector3d(1.0)  # gz-math has no one- or two-number constructor
    with pytest.raises(TypeError, match=re.escape("Pose3d(), Pose3d(pos, rot)")):
        Pose3d(1.0, 2.0, 3.0, 4.0)
    # two numbers are not (Vector3d, Quaterniond): gz-math raises TypeError here too,
    # instead of building a Pose3d that fails later on first use
    with pytest.raises(TypeError, match=re.escape("Pose3d(pos, rot)")):
        Pose3d(1.0, 2.0)


def test_vector3d_algebra():
    a, b = Vector3d(1.0, 2.0, 3.0), Vector3d(-2.0, 0.5, 4.0)
    assert a.dot(b) == 1 * -2 + 2 * 0.5 + 3 * 4
    np.testing.assert_array_equal(vector_array(a.cross(b)), np.cross(vector_array(a), vector_array(b)))
    np.testing.assert_array_equal(vector_array(a + b), [-1.0, 2.5, 7.0])
    np.testing.assert_array_equal(vector_array(a - b), [3.0, 1.5, -1.0])
    with pytest.raises(TypeError):  # gz-math binds Vector3d * scalar, not scalar * Vector3d
        2 * a
    np.testing.assert_array_equal(vector_array(a * 2), [2.0, 4.0, 6.0])
    np.testing.assert_array_equal(vector_array(a / 2), [0.5, 1.0, 1.5])
    np.testing.assert_array_equal(vector_array(-a), [-1.0, -2.0, -3.0])
    assert a.length() == pytest.approx(math.sqrt(14), abs=TOL)
    assert a.normalized().length() == pytest.approx(1.0, abs=TOL)
    assert (a[0], a[1], a[2]) == (1.0, 2.0, 3.0)
    # the stored array is not shared with callers
    arr = vector_array(a)
    arr[0] = 99.0
    assert a.x() == 1.0
