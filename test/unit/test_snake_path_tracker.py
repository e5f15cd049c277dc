"""Path tracker (NEO §III-C.2): Horn's quaternion fit and the SVD fit recover
a known random rigid transform and agree; the rotation log; the
proportional correction for a known lateral offset and yaw error; the
feed-forward along a line and a circle (an exact rigid rotation); bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from eels_gz.description.assemble import robot_description
from eels_gz.errors import SnakeModelError
from eels_gz.registry import robot
from eels_gz.snake.chain import SnakeChain, axis_rotation
from eels_gz.snake.shape_on_path import lay_on_path
from eels_gz.snake.params import PathTrackerParams
from eels_gz.snake.path_tracker import (
    PathTracker,
    horn_quaternion,
    horn_svd,
    rotation_vector,
    tracking_stats,
)
from eels_gz.snake.reference_paths import HelixPath, line_path


def random_rotation(rng, angle=None):
    u = rng.normal(size=3)
    u /= np.linalg.norm(u)
    return axis_rotation(u, rng.uniform(-math.pi, math.pi) if angle is None else angle), u


@pytest.mark.parametrize("seed, angle", [(0, None), (1, None), (2, 3.1), (3, 1e-3)])
def test_horn_recovers_a_known_transform(seed, angle):
    rng = np.random.default_rng(seed)
    R, _ = random_rotation(rng, angle)
    t = rng.normal(size=3) * 3.0
    P = rng.normal(size=(12, 3)) * 2.0
    Q = P @ R.T + t
    # exact data: both methods are closed forms, error ~ 1e-15 * |P| per entry
    for fit in (horn_quaternion, horn_svd):
        Rf, tf = fit(P, Q)
        np.testing.assert_allclose(Rf, R, atol=1e-12)
        np.testing.assert_allclose(tf, t, atol=1e-12)
    # noisy data: different algorithms for one least-squares optimum
    Qn = Q + rng.normal(size=Q.shape) * 0.01
    (R1, t1), (R2, t2) = horn_quaternion(P, Qn), horn_svd(P, Qn)
    np.testing.assert_allclose(R1, R2, atol=1e-10)
    np.testing.assert_allclose(t1, t2, atol=1e-10)
    assert np.linalg.det(R1) == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("angle", [0.0, 1e-9, 0.7, 2.5, math.pi - 1e-7, math.pi])
def test_rotation_vector_is_the_log(angle):
    rng = np.random.default_rng(7)
    R, u = random_rotation(rng, angle)
    phi = rotation_vector(R)
    if angle > math.pi - 1e-6:  # u and -u describe the same rotation at pi
        assert np.linalg.norm(phi) == pytest.approx(angle, abs=1e-7)
        np.testing.assert_allclose(axis_rotation(phi / np.linalg.norm(phi), np.linalg.norm(phi)), R, atol=1e-12)
    else:
        np.testing.assert_allclose(phi, angle * u, atol=1e-12)


@pytest.fixture(scope="module")
def chain():
    return SnakeChain.from_urdf(robot_description(robot("eels_1_0_front_only"), gazebo=False).urdf)


def test_lateral_offset_and_yaw_give_proportional_corrections(chain):
    kp, kr = 0.5, 0.8
    path = line_path([0, 0, 0], [1, 0, 0], 8.0)
    tracker = PathTracker(chain, path, PathTrackerParams(kp, kr, 0.0))
    shape = lay_on_path(chain, path, 1.0)
    on = tracker.command(shape.angles, shape.base_pose)
    np.testing.assert_allclose(on.twist, 0.0, atol=1e-12)
    assert on.errors.max() < 1e-10
    # shifted sideways by e: the fit moves it back by -e
    T = shape.base_pose.copy()
    T[:3, 3] += [0.0, 0.07, 0.0]
    off = tracker.command(shape.angles, T)
    np.testing.assert_allclose(off.twist, [0, -kp * 0.07, 0, 0, 0, 0], atol=1e-12)
    np.testing.assert_allclose(off.errors, 0.07, atol=1e-12)
    # yawed by th about the tail point (which stays on the path): turn back at -kr th
    th = 0.05
    T = shape.base_pose.copy()
    T[:3, :3] = axis_rotation(np.array([0.0, 0.0, 1.0]), th) @ T[:3, :3]
    yaw = tracker.command(shape.angles, T)
    np.testing.assert_allclose(yaw.twist, [0, 0, 0, 0, 0, -kr * th], atol=1e-12)


@pytest.mark.parametrize("R", [None, 2.0])
def test_feed_forward_moves_along_the_path(chain, R):
    u = 0.05
    path = line_path([0, 0, 0], [1, 0, 0], 8.0) if R is None else HelixPath(R, 0.0, 10.0)
    tracker = PathTracker(chain, path, PathTrackerParams(0.5, 0.5, u))
    shape = lay_on_path(chain, path, 0.5)
    cmd = tracker.command(shape.angles, shape.base_pose)
    # line: v = u along x. Circle: the chord placements at s and s + ds differ by an
    # exact rotation of ds/R about the centre (a screw motion, which se3_log inverts
    # exactly), so w = u/R about z and the tail point (at s = 0.5 on the circle) moves at
    # u along the circle's tangent there. Rounding in the ds difference: ~1e-16/ds = 1e-12.
    w = 0.0 if R is None else u / R
    Rb = shape.base_pose[:3, :3]
    tangent = np.array([1.0, 0.0, 0.0]) if R is None else np.array([-math.sin(0.5 / R), math.cos(0.5 / R), 0.0])
    np.testing.assert_allclose(cmd.twist[:3], Rb.T @ (u * tangent), atol=1e-10)
    np.testing.assert_allclose(cmd.twist[3:], Rb.T @ [0, 0, w], atol=1e-10)


def test_stats_and_bad_input():
    e = np.array([[0.01, 0.02], [0.03, 0.06]])
    stats = tracking_stats(e)
    np.testing.assert_allclose(stats["mean"], [0.02, 0.04])
    np.testing.assert_allclose(stats["max"], [0.03, 0.06])
    np.testing.assert_allclose(stats["std"], [0.01, 0.02])
    with pytest.raises(SnakeModelError, match=r"\(N >= 3, 3\)"):
        horn_svd(np.zeros((2, 3)), np.zeros((2, 3)))
    with pytest.raises(SnakeModelError, match="non-finite"):
        horn_quaternion(np.full((3, 3), np.nan), np.zeros((3, 3)))
    with pytest.raises(SnakeModelError, match="tracking_stats"):
        tracking_stats(np.zeros(3))


def test_feed_forward_with_shape_rates_moves_every_point_along_an_s_curve(chain):
    """On a path of varying curvature the shape changes as the robot moves, and the
    motion controller takes the shape rates apart from the base twist (Eq. 3): the
    feed-forward must be the twist of the leader-follower base frame itself, so that
    base twist + shape rates move every module point at the path's own rate.

    S-curve y = A sin(2 pi x / lam) (curvature up to A (2 pi / lam)^2 = 1.3 /m), as a
    polyline of 1 mm steps. Over a time h the base moves by the commanded body twist
    and the joints by (d angles / ds) u h; the module points' velocities are compared
    with those of the chord points. Tolerance: the chord points' velocity is piecewise
    constant on a polyline and turns by up to kappa * step = 1.3e-3 rad at a vertex,
    i.e. u * 1.3e-3 = 7e-5 m/s; first-order integration over h adds u^2 h kappa ~ 1e-7.
    So 2e-4 m/s. The rigid fit of Q(s) onto Q(s + ds) (the average motion of the
    whole robot, used before) is off by centimetres per second here.
    """
    from eels_gz.snake.reference_paths import PolylinePath, chord_points

    A, lam, step, u = 0.3, 3.0, 1e-3, 0.05
    x = np.arange(0.0, 8.0, step)
    path = PolylinePath(np.column_stack([x, A * np.sin(2 * math.pi * x / lam), np.zeros_like(x)]))
    tracker = PathTracker(chain, path, PathTrackerParams(0.5, 0.5, u))
    lengths = chain.segment_lengths()
    for s in (0.3, 0.9, 1.6):
        laid = lay_on_path(chain, path, s)
        cmd = tracker.command(laid.angles, laid.base_pose)
        ds, h = 1e-4, 1e-3  # m of arc for the shape rates, s of motion
        ahead = lay_on_path(chain, path, s + ds).angles
        q1 = {k: v + (ahead[k] - v) / ds * u * h for k, v in laid.angles.items()}
        v, w = cmd.twist[:3], cmd.twist[3:]
        T1 = laid.base_pose.copy()
        T1[:3, 3] += laid.base_pose[:3, :3] @ v * h
        T1[:3, :3] = laid.base_pose[:3, :3] @ axis_rotation(w / np.linalg.norm(w), np.linalg.norm(w) * h)
        moved = (chain.module_points(q1, T1) - laid.points) / h
        along = (chord_points(path, s + u * h, lengths)[1] - laid.points) / h
        np.testing.assert_allclose(moved, along, atol=2e-4)
        # the whole-robot rigid fit differs from the base's own motion on this path
        _, Q2 = chord_points(path, s + ds, lengths)
        R_fit, _ = horn_svd(laid.points, Q2)
        assert abs(rotation_vector(R_fit)[2] * u / ds - (laid.base_pose[:3, :3] @ w)[2]) > 5e-3
