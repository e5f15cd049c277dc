"""Mobility failure (EELS-DARTS §4.3.1): triggers past the threshold and not
before, head up or head down, independent of rotations about the gravity
line; gravity off is not a failure; bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from eels_gz.errors import SnakeModelError
from eels_gz.snake.chain import axis_rotation
from eels_gz.snake.mobility import MOBILITY_FAILURE, axis_gravity_angle, check_mobility
from eels_gz.snake.params import load_snake_params

G = np.array([0.0, 0.0, -9.81])
THRESHOLD = load_snake_params().mobility.threshold  # 60 deg, the paper's value
# The angle is an atan2 of O(1) quantities computed with a few products:
# error ~1e-16 rad. Probing 1e-9 rad on either side of the threshold is
# therefore unambiguous.
EPS = 1e-9


def tilted(theta: float, head_up: bool = True, spin: float = 0.0) -> np.ndarray:
    """Body x axis along -g (head up) or +g, tilted by theta about a horizontal axis,
    then turned by spin about the vertical."""
    up = axis_rotation(np.array([0.0, 1.0, 0.0]), -math.pi / 2 if head_up else math.pi / 2)  # x -> +z or -z
    tilt = axis_rotation(np.array([0.0, 1.0, 0.0]), theta)
    return axis_rotation(np.array([0.0, 0.0, 1.0]), spin) @ tilt @ up


@pytest.mark.parametrize("head_up", [True, False])
@pytest.mark.parametrize("spin", [0.0, 1.3])
def test_triggers_past_threshold_and_not_before(head_up, spin):
    assert THRESHOLD == pytest.approx(math.radians(60.0), abs=1e-15)
    for theta in (0.0, 0.5, THRESHOLD - EPS):
        s = check_mobility(tilted(theta, head_up, spin), G, THRESHOLD)
        assert s.status == "ok" and s.angle == pytest.approx(theta, abs=1e-14)
    for theta in (THRESHOLD + EPS, 1.2, math.pi / 2):
        s = check_mobility(tilted(theta, head_up, spin), G, THRESHOLD)
        assert s.status == MOBILITY_FAILURE and s.failed
        assert s.angle == pytest.approx(theta, abs=1e-14)


def test_configurable_threshold_and_axis():
    R = tilted(0.4)
    assert not check_mobility(R, G, 0.5).failed and check_mobility(R, G, 0.3).failed
    # a body whose long axis is z instead of x: upright body is 0 from the line
    assert axis_gravity_angle(np.eye(3), G, axis=(0.0, 0.0, 1.0)) == 0.0


def test_gravity_off_and_bad_input():
    s = check_mobility(np.eye(3), np.zeros(3), THRESHOLD)
    assert s.status == "ok" and math.isnan(s.angle)
    with pytest.raises(SnakeModelError, match="threshold"):
        check_mobility(np.eye(3), G, 2.0)
    with pytest.raises(SnakeModelError, match="3x3 rotation"):
        check_mobility(np.eye(2), G, THRESHOLD)
    bad = np.eye(3)
    bad[1, 2] = np.nan
    with pytest.raises(SnakeModelError, match="finite 3x3 rotation"):
        check_mobility(bad, G, THRESHOLD)
    with pytest.raises(SnakeModelError, match="finite 3x3 rotation"):
        check_mobility(np.eye(3), np.array([0.0, np.inf, -9.81]), THRESHOLD)
