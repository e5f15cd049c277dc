"""The rover_drive scenario's pure part (eels_gz/scenarios/rover_drive.py): the drive plan's clock and
commands, and the slip of one sample, against closed forms."""

from __future__ import annotations

import math

import numpy as np
import pytest

from eels_gz.errors import ConfigError
from eels_gz.rover.steering import IcrSteering
from eels_gz.rover.wheels import Wheel
from eels_gz.scenarios.rover_drive import (PATHS, DrivePlan, path_index, path_name, path_segments, planar_pose,
                                           slip_sample, slope_of)

R = 0.085  # m, a wheel radius
RATE = 1.2  # rad/s
ACC = 4.0  # rad/s^2
DT = 1e-3


def rover() -> IcrSteering:
    """Four steerable corner wheels of +-100 deg, 0.3 m ahead/behind and 0.25 m to the sides."""
    lim = math.radians(100.0)
    return IcrSteering([Wheel(f"w{x:+}{y:+}", x, y, R, -lim, lim) for x in (0.3, -0.3) for y in (0.25, -0.25)])


def drive(plan: DrivePlan, resteer_until: float = 0.0) -> list[tuple[float, tuple]]:
    """Step the plan at DT (re-steering while t < resteer_until); the command held at each step."""
    t, out = 0.0, []
    while not plan.done:
        out.append((t, plan.command))
        plan.advance(DT, resteering=t < resteer_until)
        t += DT
        assert t < 1e3
    return out


def test_a_straight_is_held_for_its_length_at_the_mean_wheel_speed_then_stopped():
    """A translation at mean wheel ground speed v = rate R is held for L / v, then the stop for
    rate / a + settle (1 s): the plan's clock in closed form, to one step."""
    plan = DrivePlan(path_segments("straight", 0.25), RATE, R, rover(), np.full(4, 6.0), ACC)
    v = RATE * R
    assert plan.speed == pytest.approx(v, rel=1e-12)
    steps = drive(plan)
    moving = [t for t, c in steps if c != (0.0, 0.0, 0.0)]
    assert steps[0][1] == pytest.approx((v, 0.0, 0.0), rel=1e-12)
    assert len(moving) * DT == pytest.approx(0.5 / v, abs=DT)
    assert (len(steps) - len(moving)) * DT == pytest.approx(RATE / ACC + 1.0, abs=DT)
    assert plan.saturated == []


def test_the_segment_clock_stops_while_the_rover_re_steers():
    """Re-steering for 0.7 s lengthens the drive by 0.7 s, so the whole segment is still driven."""
    plain = len(drive(DrivePlan(path_segments("lateral", 0.25), RATE, R, rover(), np.full(4, 6.0), ACC)))
    held = len(drive(DrivePlan(path_segments("lateral", 0.25), RATE, R, rover(), np.full(4, 6.0), ACC), 0.7))
    assert (held - plain) * DT == pytest.approx(0.7, abs=2 * DT)


def test_a_turn_beyond_the_motor_limit_is_scaled_down_keeping_its_icr():
    """A quarter circle of radius 1.5 m at a mean wheel rate near the motors' limit: the outer wheels
    would pass it, so the twist is scaled by limit / peak rate (factor < 1), the ICR kept."""
    limit = 1.05 * RATE  # the outer wheels turn about 16 % faster than the mean
    plan = DrivePlan(path_segments("quarter_circle"), RATE, R, rover(), np.full(4, limit), ACC)
    (vx, vy, wz), _, _ = plan.steps[0]
    assert plan.saturated and 0 < plan.saturated[0]["factor"] < 1
    assert vx / wz == pytest.approx(1.5, rel=1e-9) and vy == 0.0
    peak = np.max(np.abs(rover().command(vx, vy, wz).wheel_rates))
    assert peak == pytest.approx(limit, rel=1e-9)


def test_slip_of_a_sample_is_one_minus_true_over_wheel_speed():
    """A body moving along its x at 0.08 m/s while the encoders say 0.1 m/s slips 20 %; the same seen
    from a start frame yawed by 0.4 rad (rotations cancel); below half the nominal speed: no sample."""
    yaw = 0.4
    c, s = math.cos(yaw), math.sin(yaw)
    rot = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    v_world = rot @ np.array([0.08, 0.0, 0.0])
    # the nominal speed (0.12 m/s, what was commanded) only gates the sample: the encoders' speed divides
    assert slip_sample(np.eye(3), rot, (0.1, 0.0), v_world, 0.12) == pytest.approx(0.2, abs=1e-12)
    assert slip_sample(rot, rot, (0.1, 0.0), v_world, 0.12) == pytest.approx(0.2, abs=1e-12)
    assert slip_sample(np.eye(3), np.eye(3), (0.04, 0.0), np.zeros(3), 0.1) is None
    # skidding: the body faster than its wheels, negative slip
    assert slip_sample(np.eye(3), np.eye(3), (0.1, 0.0), np.array([0.125, 0.0, 0.0]), 0.1) == pytest.approx(-0.25)


def test_pose_slope_and_path_index():
    T0, T = np.eye(4), np.eye(4)
    T0[:3, 3] = (1.0, 2.0, 0.0)
    T[:3, 3] = (1.0, 2.5, 0.3)
    assert planar_pose(T0, T) == pytest.approx((0.0, 0.5, 0.0))
    a = math.radians(15.0)
    assert slope_of(np.array([-math.sin(a), 0.0, math.cos(a)])) == pytest.approx(15.0, abs=1e-9)
    assert [path_name(path_index(p)) for p in PATHS] == list(PATHS)
    with pytest.raises(ConfigError, match="parameter 'path' = 7.0 is not a path index"):
        path_name(7.0)
    with pytest.raises(ConfigError, match="is not a path index"):
        path_name(0.5)
