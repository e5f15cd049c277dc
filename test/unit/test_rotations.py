"""eels_gz.rotations against scipy's Rotation as the oracle.

Each conversion is checked on 200 random rotations plus the cases that pick the other branches
(each of Shepperd's four, the gimbal lock of roll-pitch-yaw). Tolerance 1e-12: every conversion is a
few tens of floating-point operations on unit-sized numbers (round-off ~1e-15) and the angles'
arctan2/arcsin are well conditioned away from the gimbal lock (there the roll is set to 0 and only
the matrix is compared). scipy's Euler "xyz" (lower case: extrinsic, fixed axes) is URDF's rpy; its
quaternions are (x, y, z, w)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from eels_gz.contact import frames
from eels_gz.rotations import (matrix_rpy, matrix_to_quat, quat_from_rpy, quat_rpy, quat_to_matrix, quat_yaw,
                               rotation_matrix, rpy_matrix)

TOL = 1e-12
RNG = np.random.default_rng(7)
RANDOM = Rotation.random(200, random_state=7)
# trace > 0, then the largest diagonal term on x, y, z (rotations by ~pi about each axis)
BRANCHES = Rotation.from_rotvec([[0.1, 0.2, -0.3], [3.1, 0.2, 0.1], [0.1, -3.1, 0.2], [0.2, 0.1, 3.1]])


def wxyz(r: Rotation) -> np.ndarray:
    """scipy's quaternion as (w, x, y, z) with w >= 0."""
    x, y, z, w = r.as_quat()
    q = np.array([w, x, y, z])
    return q if w >= 0 else -q


def rotations():
    return [RANDOM[i] for i in range(len(RANDOM))] + [BRANCHES[i] for i in range(len(BRANCHES))]


def test_rpy_matrix_is_fixed_axis_xyz():
    for roll, pitch, yaw in RNG.uniform(-np.pi, np.pi, (200, 3)) * [1.0, 0.5, 1.0]:
        expected = Rotation.from_euler("xyz", [roll, pitch, yaw]).as_matrix()
        np.testing.assert_allclose(rpy_matrix(roll, pitch, yaw), expected, rtol=0, atol=TOL)


def test_matrix_rpy_inverts_it():
    for r in rotations():
        rpy = matrix_rpy(r.as_matrix())
        np.testing.assert_allclose(rpy, r.as_euler("xyz"), rtol=0, atol=TOL)
        np.testing.assert_allclose(rpy_matrix(*rpy), r.as_matrix(), rtol=0, atol=TOL)


@pytest.mark.parametrize("pitch", [np.pi / 2, -np.pi / 2])
def test_matrix_rpy_at_the_gimbal_lock_keeps_the_rotation_with_roll_zero(pitch):
    R = Rotation.from_euler("xyz", [0.3, pitch, -0.7]).as_matrix()
    roll, p, yaw = matrix_rpy(R)
    assert roll == 0.0 and abs(p - pitch) < 1e-7  # arctan2 of a 1e-17 hypot: pitch to sqrt(eps)
    np.testing.assert_allclose(rpy_matrix(roll, p, yaw), R, rtol=0, atol=1e-7)


def test_quat_from_rpy_and_back():
    for roll, pitch, yaw in RNG.uniform(-np.pi, np.pi, (200, 3)) * [1.0, 0.5, 1.0]:
        r = Rotation.from_euler("xyz", [roll, pitch, yaw])
        q = quat_from_rpy(roll, pitch, yaw)
        np.testing.assert_allclose(q * np.sign(q[0]), wxyz(r), rtol=0, atol=TOL)
        np.testing.assert_allclose(quat_rpy(q), [roll, pitch, yaw], rtol=0, atol=TOL)
        assert abs(quat_yaw(q) - yaw) < TOL


def test_quaternion_to_matrix_and_back():
    for r in rotations():
        q = wxyz(r)
        np.testing.assert_allclose(quat_to_matrix(q), r.as_matrix(), rtol=0, atol=TOL)
        np.testing.assert_allclose(rotation_matrix(*(3.0 * q)), r.as_matrix(), rtol=0, atol=TOL)  # normalizes
        np.testing.assert_allclose(matrix_to_quat(r.as_matrix()), q, rtol=0, atol=TOL)


def test_compiled_quat_from_matrix_writes_at_its_offset():
    out = np.full(9, np.nan)
    frames.quat_from_matrix(BRANCHES[1].as_matrix(), out, 3)  # the old import path still works
    np.testing.assert_allclose(out[3:7], wxyz(BRANCHES[1]), rtol=0, atol=TOL)
    assert np.isnan(out[:3]).all() and np.isnan(out[7:]).all()


@pytest.mark.parametrize("q", [(0.0, 0.0, 0.0, 0.0), (np.nan, 0.0, 0.0, 1.0)])
def test_rotation_matrix_refuses_a_quaternion_without_rotation(q):
    with pytest.raises(ValueError, match="no rotation"):
        rotation_matrix(*q)
