"""Least-squares wheel odometry (Archimede Eq. 5-7) on exact synthetic encoder
data from known rigid motions, the slip residual, and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from eels_gz.errors import RoverError
from eels_gz.rover import Wheel, WheelOdometry
from eels_gz.rover.odometry import se2_step

# Per-step tolerance (issue 6: 1e-9 per step). Encoder data here is exact
# to double round-off (~1e-16 relative on angles and rates of order 1), the
# least squares on a well-conditioned 8x3 system keeps that to ~1e-15 m/s,
# and 1000 steps of pose integration accumulate ~1e-13 m: far inside 1e-9.
STEP_TOL = 1e-9

WHEELS = [Wheel("fl", 0.36, 0.2215, 0.085, -1.62, 0.59), Wheel("fr", 0.36, -0.2215, 0.085, -0.59, 1.62),
          Wheel("rl", -0.36, 0.2215, 0.085, -0.59, 1.62), Wheel("rr", -0.36, -0.2215, 0.085, -1.62, 0.59)]


def encoders(twist):
    """Exact steer angles and wheel rates of a rigid twist (rolling without slip)."""
    vx, vy, wz = twist
    angles, rates = [], []
    for w in WHEELS:
        ux, uy = vx - wz * w.y, vy + wz * w.x
        angles.append(math.atan2(uy, ux))
        rates.append(math.hypot(ux, uy) / w.radius)
    return angles, rates


def exact_pose(twist, t):
    """Closed-form pose after time t at a constant body twist, from (0, 0, 0)."""
    vx, vy, wz = twist
    if wz == 0:
        return vx * t, vy * t, 0.0
    a = wz * t
    return ((vx * math.sin(a) - vy * (1 - math.cos(a))) / wz,
            (vx * (1 - math.cos(a)) + vy * math.sin(a)) / wz, a)


@pytest.mark.parametrize("twist", [
    (0.3, 0.0, 0.0),     # straight
    (0.0, -0.2, 0.0),    # lateral
    (0.2, 0.1, 0.0),     # diagonal
    (0.3, 0.0, 0.2),     # arc, radius 1.5 m
    (0.1, 0.05, -0.4),   # general arc
    (0.0, 0.0, 0.7),     # spin in place
])
def test_exact_rigid_motion_is_recovered_every_step(twist):
    odo = WheelOdometry(WHEELS)
    dt = 0.01
    for k in range(1, 1001):
        d, r = encoders(twist)
        pose = odo.update(d, r, dt)
        np.testing.assert_allclose(odo.twist, twist, atol=STEP_TOL)
        np.testing.assert_allclose(pose, exact_pose(twist, k * dt), atol=STEP_TOL)
        assert odo.residual < STEP_TOL


def test_equivalent_wheel_states_give_the_same_twist():
    """delta + pi with the rate negated is the same wheel state."""
    twist = (0.2, 0.1, 0.3)
    d, r = encoders(twist)
    d2 = [a + math.pi if k % 2 else a for k, a in enumerate(d)]
    r2 = [-v if k % 2 else v for k, v in enumerate(r)]
    x, res = WheelOdometry(WHEELS).body_twist(d2, r2)
    np.testing.assert_allclose(x, twist, atol=STEP_TOL)
    assert res < STEP_TOL


def test_residual_rises_with_one_slipping_wheel():
    """A wheel that spins faster than the ground moves under it (rate x (1 + s))
    puts an error of size R rate s into B; the residual is the part of that
    error no rigid motion explains, so it is zero without slip and exactly
    proportional to s (the map B -> residual vector is linear)."""
    twist = (0.3, 0.0, 0.1)
    d, r = encoders(twist)
    odo = WheelOdometry(WHEELS)
    residuals = []
    for s in (0.0, 0.1, 0.2, 0.4):
        slipping = list(r)
        slipping[0] *= 1 + s
        residuals.append(odo.body_twist(d, slipping)[1])
    assert residuals[0] < STEP_TOL
    assert residuals[1] > 1e-3 * WHEELS[0].radius * r[0]
    assert residuals[2] == pytest.approx(2 * residuals[1], rel=1e-9)
    assert residuals[3] == pytest.approx(4 * residuals[1], rel=1e-9)


def test_se2_step_matches_closed_form_across_the_series_switch():
    """The small-angle series and the closed form agree at the switch (1e-6 rad)."""
    for a in (0.999e-6, 1.001e-6):
        x, y, yaw = se2_step(0, 0, 0, 1.0, 0.5, a, 1.0)
        ex = exact_pose((1.0, 0.5, a), 1.0)
        np.testing.assert_allclose((x, y, yaw), ex, atol=1e-15)


def test_bad_input_is_refused_clearly():
    with pytest.raises(RoverError, match="wheel list is empty"):
        WheelOdometry([])
    with pytest.raises(RoverError, match="do not determine the body rotation"):
        WheelOdometry([WHEELS[0]])
    odo = WheelOdometry(WHEELS)
    with pytest.raises(RoverError, match="expected 4 steer angles and 4 wheel rates, got 3 and 4"):
        odo.update([0, 0, 0], [0, 0, 0, 0], 0.01)
    with pytest.raises(RoverError, match="finite"):
        odo.update([0, 0, float("nan"), 0], [0, 0, 0, 0], 0.01)
    with pytest.raises(RoverError, match="dt must be finite"):
        odo.update([0] * 4, [0] * 4, -0.01)
