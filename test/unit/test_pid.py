"""PidArray against closed-form results: one-step output, set-point holding
against a constant disturbance on first- and second-order plants, the
integral clamp, conditional integration while saturated, and recovery after
the error reverses compared with a naive integrator."""

from __future__ import annotations

import math

import numpy as np
import pytest

from eels_gz.control.pid import PidArray, PidGains

DT = 0.001  # s


def gains(p=0.0, i=0.0, d=0.0, i_max=1e9, effort_max=1e9) -> PidGains:
    return PidGains(p=p, i=i, d=d, i_max=i_max, effort_max=effort_max)


def test_one_step_output():
    pid = PidArray([gains(p=2.0, i=3.0, d=4.0), gains(p=2.0, i=3.0, d=4.0, effort_max=0.1)])
    u = pid.update(np.array([0.5, 0.5]), np.array([-0.2, -0.2]), 0.01)
    # u = p e + (i e dt) + d de/dt, the integral updated before the output is formed
    expected = 2.0 * 0.5 + 3.0 * 0.5 * 0.01 + 4.0 * -0.2
    assert u[0] == pytest.approx(expected, rel=1e-15)
    assert u[1] == pytest.approx(0.1, rel=1e-15)  # clipped to effort_max
    pid.reset()
    np.testing.assert_array_equal(pid.integral, [0.0, 0.0])


# --- holding a set point ----------------------------------------------------------
# Loop 0: position PID on J q'' = u - b q' + w (second order).
# Loop 1: velocity PI on J v' = u - b v + w (first order).
J, B = 1.0, 0.5  # kg m^2, N m s
W = np.array([-2.0, -1.0])  # N m, constant disturbance torques
TARGET = np.array([0.3, 2.0])  # rad, rad/s
G_POS = gains(p=100.0, i=200.0, d=20.0, i_max=10.0, effort_max=50.0)
G_VEL = gains(p=5.0, i=50.0, d=0.0, i_max=10.0, effort_max=50.0)


def simulate_hold(g_pos: PidGains, g_vel: PidGains, t_end: float):
    pid = PidArray([g_pos, g_vel])
    q, v = 0.0, np.zeros(2)  # v[0] = q', v[1] = the velocity plant's state
    max_u = 0.0
    for _ in range(int(round(t_end / DT))):
        err = np.array([TARGET[0] - q, TARGET[1] - v[1]])
        rate = np.array([-v[0], 0.0])  # constant targets
        u = pid.update(err, rate, DT)
        max_u = max(max_u, float(np.abs(u).max()))
        v = v + DT * (u - B * v + W) / J  # semi-implicit Euler, as DART
        q += DT * v[0]
    return q, v, pid, max_u


def slowest_decay(coefficients) -> float:
    return float(-np.roots(coefficients).real.max())


def test_holds_set_point_against_disturbance():
    # Closed-loop characteristic polynomials (continuous time):
    #   position: J s^3 + (b + d) s^2 + p s + i,   velocity: J s^2 + (b + p) s + i.
    sigma = min(slowest_decay([J, B + G_POS.d, G_POS.p, G_POS.i]), slowest_decay([J, B + G_VEL.p, G_VEL.i]))
    assert sigma > 2.5  # 1/s; the 1 ms discretization moves these poles by O(dt |s|^2) ~ 1 %
    t_end = 12.0  # s: exp(-sigma t_end) < 1e-13 of the initial error
    q, v, pid, max_u = simulate_hold(G_POS, G_VEL, t_end)
    assert max_u < 50.0  # never saturated: this is the linear closed loop analysed above
    # integral action: zero steady-state error; residual e0 exp(-sigma t) << 1e-9
    assert abs(TARGET[0] - q) < 1e-9
    assert abs(TARGET[1] - v[1]) < 1e-9
    assert abs(v[0]) < 1e-9
    # at rest the integral alone balances the plant: I = b v* - w
    np.testing.assert_allclose(pid.integral, [-W[0], B * TARGET[1] - W[1]], rtol=0, atol=1e-8)


def test_without_integral_the_error_stays_w_over_p():
    """Contrast: with i = 0 the loop settles at the proportional droop e = -w/p
    (position) and e = (b v* - w)/(b + p) (velocity; from p e = b (v* - e) - w)."""
    g_pos = gains(p=100.0, d=20.0, effort_max=50.0)
    g_vel = gains(p=5.0, effort_max=50.0)
    q, v, _, _ = simulate_hold(g_pos, g_vel, 6.0)  # poles: -6.7, -13.8 and -5.5 1/s
    assert TARGET[0] - q == pytest.approx(-W[0] / g_pos.p, rel=1e-9)
    assert TARGET[1] - v[1] == pytest.approx((B * TARGET[1] - W[1]) / (B + g_vel.p), rel=1e-9)


# --- anti-windup -------------------------------------------------------------------------
def test_integral_is_clamped_to_i_max():
    i_max, i, e = 5.0, 100.0, 1.0
    pid = PidArray([gains(p=0.1, i=i, i_max=i_max), gains(p=0.1, i=i, i_max=i_max)])
    history = []
    for _ in range(1000):
        pid.update(np.array([e, -e]), np.zeros(2), DT)
        history.append(pid.integral.copy())
    history = np.array(history)
    assert np.abs(history).max() <= i_max
    # it reaches the clamp after i_max / (i e dt) = 50 steps (+1 for rounding) and stays there
    first = int(np.argmax(history[:, 0] >= i_max))
    assert first + 1 in (math.ceil(i_max / (i * e * DT)), math.ceil(i_max / (i * e * DT)) + 1)
    np.testing.assert_array_equal(history[first:, 0], i_max)
    np.testing.assert_array_equal(history[first:, 1], -i_max)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_integral_frozen_while_saturated_in_pushing_direction(sign):
    p, i, effort_max, e = 0.1, 100.0, 1.0, sign * 1.0
    pid = PidArray([gains(p=p, i=i, i_max=5.0, effort_max=effort_max)])
    integral, out = [], []
    for _ in range(2000):
        out.append(pid.update(np.array([e]), np.zeros(1), DT)[0])
        integral.append(pid.integral[0])
    integral = np.array(integral)
    # integrates i e dt = 0.1 per step until |p e + I| >= effort_max, then freezes:
    # the frozen value lies in [effort_max - p|e|, effort_max - p|e| + i|e| dt]
    frozen = abs(integral[-1])
    assert effort_max - p * abs(e) - 1e-12 <= frozen <= effort_max - p * abs(e) + i * abs(e) * DT + 1e-12
    # charging takes (effort_max - p|e|) / (i|e| dt) = 9 steps (+1: the saturation
    # test uses the integral before this step's increment, +1 for rounding)
    n_charge = int(np.argmax(np.diff(integral) == 0.0))
    assert 9 <= n_charge <= 11
    np.testing.assert_array_equal(integral[n_charge:], integral[-1])  # exactly frozen
    assert out[-1] == sign * effort_max
    # the opposite error is still integrated (unwinding is never frozen)
    before = pid.integral[0]
    pid.update(np.array([-e]), np.zeros(1), DT)
    assert pid.integral[0] == pytest.approx(before - i * e * DT, rel=1e-12)


def leave_saturation_time(update, e1: float, t1: float, e2: float, effort_max: float) -> float:
    """Drive ``update(e) -> u`` with e1 for t1 s, then e2; return the time after
    the reversal at which u first drops below effort_max."""
    for _ in range(int(round(t1 / DT))):
        assert update(e1) == pytest.approx(effort_max)  # saturated throughout phase 1
    for k in range(1, 10**6):
        if update(e2) < effort_max:
            return k * DT
    raise AssertionError("never left saturation")


def test_recovery_after_reversal_much_faster_than_naive():
    p, i, i_max, effort_max = 1.0, 10.0, 50.0, 2.0
    e1, t1, e2 = 3.0, 10.0, -0.5  # a large error held for 10 s, then reversed

    pid = PidArray([gains(p=p, i=i, i_max=i_max, effort_max=effort_max)])
    t_aw = leave_saturation_time(lambda e: pid.update(np.array([e]), np.zeros(1), DT)[0], e1, t1, e2, effort_max)

    def naive(clamp: float | None):
        state = {"I": 0.0}

        def update(e: float) -> float:
            state["I"] += i * e * DT
            if clamp is not None:
                state["I"] = min(max(state["I"], -clamp), clamp)
            return min(max(p * e + state["I"], -effort_max), effort_max)

        return update

    t_naive = leave_saturation_time(naive(None), e1, t1, e2, effort_max)
    t_clamped = leave_saturation_time(naive(i_max), e1, t1, e2, effort_max)

    # Closed forms. Anti-windup: p e1 = 3 >= effort_max from the first step, so the
    # integral never moves from 0, and after the reversal u = p e2 = -0.5 < 2 at once.
    assert t_aw == pytest.approx(DT)
    # Naive: I = i e1 t1 = 300 unwinds at i |e2| = 5 /s until p e2 + I < effort_max,
    # i.e. I < 2.5: (300 - 2.5) / 5 = 59.5 s. With the i_max clamp only: (50 - 2.5) / 5 = 9.5 s.
    # (+-1 step for rounding of the crossing.)
    assert t_naive == pytest.approx((i * e1 * t1 - (effort_max - p * e2)) / (i * -e2), abs=1.5 * DT)
    assert t_clamped == pytest.approx((i_max - (effort_max - p * e2)) / (i * -e2), abs=1.5 * DT)
    assert t_naive / t_aw > 1e4
    assert t_clamped / t_aw > 1e3


# --- bad gains ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["p", "i", "d", "i_max", "effort_max"])
@pytest.mark.parametrize("value", [-1.0, float("nan"), float("inf")])
def test_bad_gain_is_named(name, value):
    kwargs = dict(p=1.0, i=1.0, d=1.0, i_max=1.0, effort_max=1.0)
    kwargs[name] = value
    with pytest.raises(ValueError, match=rf"PID gain '{name}' must be finite and non-negative, got {value}"):
        PidGains(**kwargs)
