"""``moulin_descent`` tells a fall from a climb: a tail whose descent speed
over FALL_WINDOW exceeds ``fall_speed`` ends the run with ``slip_failure``.

Closed form, free fall from rest, z = z0 - g t^2 / 2: the mean speed over
the window ending at t is g (t - W/2), so the first step past
t* = fall_speed / g + W/2 ends the run (to one 1 ms step). A steady descent
at the screws' own pace (a tenth of fall_speed) never does. The
FallWatch (what the system asks with each step's tail height) is driven
with the tail's heights alone, so the detection is tested apart from the physics (a full
run falls the same way: README, moulin_descent).
"""

from __future__ import annotations

import pytest

from eels_gz.scenarios.moulin_descent import FALL_WINDOW, FallWatch

G = 9.81
DT = 0.001


def drive(height, fall_speed: float, seconds: float):
    """Feed the tail heights height(t) after each step; the end time and the fall's message (or None)."""
    watch = FallWatch(fall_speed)
    t = 0.0
    for k in range(1, int(round(seconds / DT)) + 1):
        t = k * DT
        end = watch.update(t, height(t))
        if end is not None:
            return t, end
    return t, None


def test_a_free_fall_ends_the_run_once_past_fall_speed():
    fall_speed = 0.5
    t, end = drive(lambda t: -2.0 - 0.5 * G * t * t, fall_speed, 1.0)
    assert end is not None and "fell" in end  # the system ends the run with slip_failure
    t_star = fall_speed / G + FALL_WINDOW / 2
    assert t_star < t <= t_star + DT + 1e-12


def test_a_descent_at_the_screws_pace_is_not_a_fall():
    t, end = drive(lambda t: -2.0 - 0.05 * t, 0.5, 3.0)
    assert end is None and t == pytest.approx(3.0)

