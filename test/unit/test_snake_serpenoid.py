"""Serpenoid gait (NEO Eq. 1): angles equal the equation written out here for
given parameters, sidewinding's fixed values, twist offsets that make adjacent
bend axes orthogonal, rates as the time derivative, and limit checks."""

from __future__ import annotations

import math

import numpy as np
import pytest

from eels_gz.description.assemble import robot_description
from eels_gz.errors import SnakeModelError
from eels_gz.registry import robot
from eels_gz.snake.chain import SnakeChain
from eels_gz.snake.params import SerpenoidParams, load_snake_params
from eels_gz.snake.serpenoid import SerpenoidGait, bend_angle, sidewinding

# Eq. 1 is evaluated by the same float operations in a different order:
# |error| <= a few ulp of O(1) angles; 1e-14 rad.
TOL = 1e-14


@pytest.fixture(scope="module")
def chain():
    return SnakeChain.from_urdf(robot_description(robot("eels_1_0_front_only"), gazebo=False).urdf)


def eq1(n, t, be, bo, ae, ao, ws, wt, d):
    if n % 2 == 0:
        return be + ae * math.sin(ws * n + wt * t)
    return bo + ao * math.sin(ws * n + wt * t + d)


P = SerpenoidParams(beta_even=0.1, beta_odd=-0.05, amplitude_even=0.3, amplitude_odd=0.45,
                    omega_s=0.8, omega_t=2.1, delta=0.6, twist_offset=math.pi / 2)


@pytest.mark.parametrize("t", [0.0, 0.37, 5.0, 123.4])
def test_bend_angles_match_eq1(chain, t):
    sp = SerpenoidGait(P, chain).setpoints(t)
    for n in range(1, chain.n_modules + 1):
        expected = eq1(n, t, 0.1, -0.05, 0.3, 0.45, 0.8, 2.1, 0.6)
        assert bend_angle(P, n, t) == pytest.approx(expected, abs=TOL)
        assert sp[f"module_{n}_bend"] == pytest.approx(expected, abs=TOL)


def test_sidewinding_values():
    p = sidewinding(0.4, 1.0, 2.0)
    assert (p.beta_even, p.beta_odd, p.delta) == (0.0, 0.0, math.pi / 4)
    assert p.amplitude_even == p.amplitude_odd == 0.4
    # odd module n leads even module n by delta at equal phase arguments
    t = 0.3
    assert bend_angle(p, 3, t) == pytest.approx(0.4 * math.sin(3 + 2 * t + math.pi / 4), abs=TOL)


def test_shipped_config_is_sidewinding():
    p = load_snake_params().serpenoid
    assert (p.beta_even, p.beta_odd) == (0.0, 0.0)
    assert p.delta == pytest.approx(math.pi / 4, abs=1e-15)
    assert p.twist_offset == pytest.approx(math.pi / 2, abs=1e-15)


def test_twist_offsets_make_adjacent_bend_axes_orthogonal(chain):
    sp = SerpenoidGait(sidewinding(0.4, 1.0, 1.0), chain).setpoints(0.0)
    straight = {k: v for k, v in sp.items() if k.endswith("twist")}  # bends at zero
    frames = chain.joint_frames(straight)
    axes = np.array([frames[f"module_{n}_bend"][1] for n in range(1, chain.n_modules + 1)])
    # odd bends about the tail's z, even ones about Rx(pi/2) z = -y; products of
    # ~10 rotations: 1e-12
    np.testing.assert_allclose(axes[0::2], np.tile([0, 0, 1], (len(axes[0::2]), 1)), atol=1e-12)
    np.testing.assert_allclose(axes[1::2], np.tile([0, -1, 0], (len(axes[1::2]), 1)), atol=1e-12)
    np.testing.assert_allclose(np.sum(axes[:-1] * axes[1:], axis=1), 0.0, atol=1e-12)


def test_rates_are_the_time_derivative(chain):
    gait = SerpenoidGait(P, chain)
    t, h = 1.3, 1e-5
    # central difference error ~ A omega_t^3 h^2 / 6 ~ 1e-10; rounding ~1e-16/h = 1e-11
    fd = {k: (gait.setpoints(t + h)[k] - gait.setpoints(t - h)[k]) / (2 * h) for k in gait.setpoints(t)}
    for k, v in gait.rates(t).items():
        assert v == pytest.approx(fd[k], abs=1e-8)


def test_gait_outside_joint_limits_is_refused(chain):
    limit = chain.joint("module_1_bend").upper
    with pytest.raises(SnakeModelError, match="module_1_bend.*outside its limits"):
        SerpenoidGait(sidewinding(limit + 0.01, 1.0, 1.0), chain)
    with pytest.raises(SnakeModelError, match="module_2_bend"):
        SerpenoidGait(SerpenoidParams(0.5, 0.0, limit - 0.4, 0.1, 1.0, 1.0, 0.0, 0.0), chain)
