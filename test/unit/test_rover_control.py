"""DriveController: saturation at the motor limits, rate limits that keep the
ICR, stop-and-resteer, bad gains."""

from __future__ import annotations

import math

import numpy as np
import pytest

from eels_gz.errors import RoverError
from eels_gz.rover import IcrSteering, Wheel
from eels_gz.rover.control import DriveController, DriveGains, MotorLimits, SteeringGains

WHEELS = [Wheel("fl", 0.36, 0.22, 0.085, -1.62, 0.59), Wheel("fr", 0.36, -0.22, 0.085, -0.59, 1.62),
          Wheel("rl", -0.36, 0.22, 0.085, -0.59, 1.62), Wheel("rr", -0.36, -0.22, 0.085, -1.62, 0.59)]
EFFORT, SPEED, ACC, TOL = 4.8, 5.97, 3.0, 0.05
DT = 1e-3


def controller() -> DriveController:
    return DriveController(IcrSteering(WHEELS), range(4), SteeringGains(20, 20, 0, 1, 0.5), DriveGains(0.5, 10, 4.8),
                           MotorLimits((EFFORT,) * 4, (SPEED,) * 4, (EFFORT,) * 4, (SPEED,) * 4), TOL, ACC)


def test_efforts_saturate_at_the_motor_torque():
    c = controller()
    tau_s, tau_w = c.update((0.0, 0.3, 0.0), np.zeros(4), np.zeros(4), np.full(4, -50.0), DT)
    assert np.all(np.abs(tau_s) <= EFFORT) and np.all(np.abs(tau_w) <= EFFORT)


def test_rates_ramp_and_are_scaled_together_below_the_motor_speed():
    """A turn whose outer wheels would exceed the motor speed: after the ramp
    every set point is scaled by one factor (the ICR is kept), the fastest at
    the limit; the ramp adds at most ACC dt per step."""
    c = controller()
    cmd = (1.0, 0.0, 1.0)  # ICR (0, 1): outer wheels at ~1.25 m/s = 14.7 rad/s > 5.97
    plan = np.array(c.plan(cmd).wheel_rates)
    q = np.array(c.plan(cmd).steer_angles)
    last = np.zeros(4)
    for _ in range(int(SPEED / ACC / DT) + 10):
        c.update(cmd, q, np.zeros(4), c.rate_ref, DT)
        assert np.max(np.abs(c.rate_ref - last)) <= ACC * DT * (1 + 1e-12)
        last = c.rate_ref.copy()
    assert np.max(np.abs(c.rate_ref)) == pytest.approx(SPEED, rel=1e-12)
    np.testing.assert_allclose(c.rate_ref / np.max(np.abs(c.rate_ref)), plan / np.max(np.abs(plan)), atol=1e-12)


def test_stop_then_resteer_then_drive():
    """Driving straight, then a lateral command: wheels ramp to rest with the
    steering set point held, then steer, then drive."""
    c = controller()
    q = np.zeros(4)
    for _ in range(2000):
        c.update((0.2, 0.0, 0.0), q, np.zeros(4), c.rate_ref, DT)
    assert np.all(c.rate_ref > 0)
    held = c.steer_ref.copy()
    c.update((0.0, 0.2, 0.0), q, np.zeros(4), c.rate_ref, DT)
    assert c.resteering and np.array_equal(c.steer_ref, held)
    steps = 0
    while np.any(c.rate_ref != 0.0):
        c.update((0.0, 0.2, 0.0), q, np.zeros(4), c.rate_ref, DT)
        assert np.array_equal(c.steer_ref, held)
        steps += 1
    assert steps == pytest.approx(0.2 / 0.085 / ACC / DT, abs=2)
    # now the set point slews at the motor speed; wheels stay at rest until the joints follow
    c.update((0.0, 0.2, 0.0), q, np.zeros(4), c.rate_ref, DT)
    assert np.max(np.abs(c.steer_ref - held)) == pytest.approx(SPEED * DT, rel=1e-12)
    target = np.array(c.plan((0.0, 0.2, 0.0)).steer_angles)
    c.update((0.0, 0.2, 0.0), target, np.zeros(4), c.rate_ref, DT)
    assert not c.resteering and np.all(np.abs(c.rate_ref) > 0)
    assert np.all(np.abs(np.abs(target) - math.pi / 2) < 1e-12)


def test_bad_gains_and_limits_are_refused():
    with pytest.raises(RoverError, match="steering gains: p must be a finite number >= 0"):
        SteeringGains(-1, 0, 0, 0, 0)
    with pytest.raises(RoverError, match="drive_speed must be a finite number > 0"):
        MotorLimits((1,), (1,), (1,), (0.0,))
    with pytest.raises(RoverError, match="motor limits for 4 steering and 4 drive joints"):
        DriveController(IcrSteering(WHEELS), range(4), SteeringGains(1, 1, 0, 1, 0), DriveGains(1, 1, 1),
                        MotorLimits((1,), (1,), (1,), (1,)), TOL, ACC)
