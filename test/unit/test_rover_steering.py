"""ICR steering: projection properties over random wheel sets and commands,
kinematic consistency, Archimede's S+ and drive modes, bad input.

S+ membership is checked here by an independent, vectorized test of the
definition (REFERENCE §4, Eq. 8): a point q is admissible for wheel j if
the rolling direction perpendicular to q - p_j, or its opposite, is within
[steer_min, steer_max]. The model builds S+ as convex polygons instead.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st
from scipy import ndimage

from eels_gz import registry
from eels_gz.description.xacro_loader import load_description
from eels_gz.errors import ConfigError, RoverError
from eels_gz.rover import MODES, IcrSteering, Wheel
from eels_gz.rover.admissible import ANGLE_TOL, FEAS_TOL, tolerance
from eels_gz.rover.from_urdf import wheels_from_urdf

# Kinematic consistency (issue 6): wheel velocity vs rigid-body velocity,
# m/s. The twist and the wheel velocities are a few float operations on
# numbers of order 1-100: round-off ~1e-14, far inside 1e-9.
KIN_TOL = 1e-9
# Projection is exact up to the half-plane tolerance FEAS_TOL x max(1, |q|)
# (1e-9 m near the rover); an admissible point found by sampling may be
# nearer than the returned one by at most that much; twice that for margin.
NEAR_TOL = 2 * FEAS_TOL


def admissible_mask(wheels, Q: np.ndarray, tol: float = 0.0) -> np.ndarray:
    """Definition of S+ applied to points Q (M, 2); tol x max(1, |q|) in m at the point."""
    ok = np.ones(len(Q), dtype=bool)
    for w in wheels:
        d = Q - (w.x, w.y)
        dist = np.hypot(d[:, 0], d[:, 1])
        width = w.steer_max - w.steer_min
        if width >= math.pi:
            continue
        delta = np.arctan2(d[:, 1], d[:, 0]) - math.pi / 2
        off = np.mod(delta - w.steer_min, math.pi)  # in [0, pi)
        tol_q = tol * np.maximum(1.0, np.hypot(Q[:, 0], Q[:, 1]))
        slack = tol_q / np.maximum(dist, 1e-300)
        inside = (off <= width + slack) | (off >= math.pi - slack)
        ok &= inside | (dist <= tol_q)
    return ok


def wheel_velocities(wheels, twist) -> np.ndarray:
    vx, vy, wz = twist
    return np.array([[vx - wz * w.y, vy + wz * w.x] for w in wheels])


@functools.cache
def archimede_wheels() -> tuple[Wheel, ...]:
    entry = registry.robot("archimede")
    return tuple(wheels_from_urdf(load_description(entry.path).urdf, str(entry.path)))


# --- random wheel sets --------------------------------------------------------
coord = st.floats(-1.0, 1.0, allow_nan=False)
angle = st.floats(-math.pi, math.pi, allow_nan=False)


@st.composite
def wheel_sets(draw):
    n = draw(st.integers(2, 5))
    wheels = []
    for j in range(n):
        x, y = draw(coord), draw(coord)
        assume(all(math.hypot(x - w.x, y - w.y) > 0.05 for w in wheels))
        lo = draw(angle)
        kind = draw(st.sampled_from(["fixed", "narrow", "wide"]))
        if kind == "fixed":
            wheels.append(Wheel.fixed(f"w{j}", x, y, 0.1, lo))
        else:
            width = draw(st.floats(0.05, 1.5) if kind == "narrow" else st.floats(1.5, 2 * math.pi))
            wheels.append(Wheel(f"w{j}", x, y, draw(st.floats(0.05, 0.3)), lo, lo + width))
    return wheels


commands = st.tuples(st.floats(-2, 2), st.floats(-2, 2), st.floats(-3, 3))


def steering(wheels, mode="general_ackermann"):
    try:
        return IcrSteering(wheels, mode)
    except RoverError:
        assume(False)  # no admissible motion at all for this wheel set


def check_consistent(wheels, result):
    """R rate (cos d, sin d) equals the rigid velocity of each axis; angles in limits."""
    v = wheel_velocities(wheels, result.twist)
    # The returned ICR is admissible to tolerance(icr) m, which moves a wheel's
    # rigid velocity off its limits by |wz| x that; twice for the projection's
    # round-off at the boundary (1e-9 of the speed scale |wz| max(1, |icr|)).
    slack = 2 * abs(result.twist[2]) * float(tolerance(np.array(result.icr))) if result.icr is not None else 0.0
    for w, d, rate, vj in zip(wheels, result.steer_angles, result.wheel_rates, v):
        assert w.steer_min <= d <= w.steer_max
        np.testing.assert_allclose(w.radius * rate * np.array([math.cos(d), math.sin(d)]), vj, atol=KIN_TOL + slack)


SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.filter_too_much,
                                                                           HealthCheck.too_slow])


@SETTINGS
@given(wheel_sets(), commands)
def test_projected_icr_is_admissible_and_consistent(wheels, cmd):
    s = steering(wheels)
    r = s.command(*cmd)
    if r.icr is not None:
        assert admissible_mask(wheels, np.array([r.icr]), tol=NEAR_TOL)[0]
        assert s.admissible(r.icr)
    check_consistent(wheels, r)


@SETTINGS
@given(wheel_sets(), commands)
# Found by exploring: two fixed axles 1e-9 rad from parallel meet 1e9 m away, at
# the translation threshold; the re-sent twist was taken for a translation that
# no wheel admits, and stopped.
@example([Wheel("w0", 0.0, 0.0, 0.1, 0.0, 0.0, False), Wheel("w1", 1.0, 0.0, 0.1, 1e-9, 1e-9, False)], (0.0, 1.0, 1.0))
def test_projection_is_idempotent(wheels, cmd):
    s = steering(wheels)
    r = s.command(*cmd)
    again = s.command(*r.twist)
    scale = 1.0 + max(abs(c) for c in r.twist)
    np.testing.assert_allclose(again.twist, r.twist, atol=1e-9 * scale)
    assert not again.projected or np.allclose(again.twist, r.twist, atol=1e-9 * scale)


@st.composite
def admissible_setups(draw):
    """A wheel set built around a chosen ICR so that the ICR is admissible."""
    icr = np.array([draw(st.floats(-3, 3)), draw(st.floats(-3, 3))])
    n = draw(st.integers(2, 5))
    wheels = []
    for j in range(n):
        x, y = draw(coord), draw(coord)
        assume(math.hypot(x - icr[0], y - icr[1]) > 0.05)
        assume(all(math.hypot(x - w.x, y - w.y) > 0.05 for w in wheels))
        need = math.atan2(icr[1] - y, icr[0] - x) - math.pi / 2 + draw(st.sampled_from([0.0, math.pi]))
        below, above = draw(st.floats(0.0, 1.0)), draw(st.floats(0.0, 1.0))
        wheels.append(Wheel(f"w{j}", x, y, 0.1, need - below, need + above))
    wz = draw(st.floats(0.1, 2.0)) * draw(st.sampled_from([-1.0, 1.0]))
    return wheels, (wz * icr[1], -wz * icr[0], wz)


@SETTINGS
@given(admissible_setups())
def test_admissible_command_is_unchanged(setup):
    wheels, cmd = setup
    r = IcrSteering(wheels).command(*cmd)
    assert not r.projected
    assert r.twist == pytest.approx(cmd, abs=0.0)
    check_consistent(wheels, r)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(wheel_sets(), st.tuples(st.floats(-3, 3), st.floats(-3, 3)))
# Found by CI: two fixed wheels whose axles meet 1e-12 m from w1, so the
# projected ICR sits on w1 and its heading is the round-off of a 1e-12 m/s
# velocity; it used to be refused as outside w1's (zero-width) limits.
@example([Wheel("w0", 1e-12, 0.0, 0.1, 0.0, 0.0, False), Wheel("w1", 0.0, 1.0, 0.1, 1.0, 1.0, False)], (0.0, 0.0))
def test_no_sampled_admissible_point_is_nearer(wheels, icr):
    """Dense polar sampling (240 radii x 720 angles) of the disc around the
    commanded ICR up to the returned distance finds no admissible point
    nearer than the returned one."""
    s = steering(wheels)
    assume(s.pieces)
    q = np.array(icr)
    r = s.command(q[1], -q[0], 1.0)
    assume(r.icr is not None)
    d = math.hypot(r.icr[0] - q[0], r.icr[1] - q[1])
    assume(d > 1e-6)
    radii = np.linspace(0.0, d - NEAR_TOL * (1 + d + math.hypot(*r.icr)), 240)
    phi = np.linspace(0, 2 * math.pi, 720, endpoint=False)
    R, P = np.meshgrid(radii, phi)
    Q = q + np.stack([(R * np.cos(P)).ravel(), (R * np.sin(P)).ravel()], axis=1)
    assert not np.any(admissible_mask(wheels, Q))


@SETTINGS
@given(wheel_sets(), commands, st.sampled_from(MODES))
def test_every_mode_commands_rolling_without_slip(wheels, cmd, mode):
    try:
        s = IcrSteering(wheels, mode)
    except RoverError:
        return  # the mode needs geometry this wheel set lacks (e.g. in_place)
    r = s.command(*cmd)
    check_consistent(wheels, r)


# --- speed preservation ----------------------------------------------------------
def test_projection_keeps_the_mean_wheel_speed():
    """A spin about a point outside S+ (between Archimede's side and central
    regions) is projected; the mean wheel ground speed is kept."""
    s = IcrSteering(archimede_wheels())
    cmd = (0.5 * 0.5, 0.0, 0.5)  # ICR (0, 0.5): in no region (see regions test)
    r = s.command(*cmd)
    assert r.projected
    assert s.mean_wheel_speed(*r.twist) == pytest.approx(s.mean_wheel_speed(*cmd), rel=1e-12)
    assert math.copysign(1, r.twist[2]) == 1


# --- Archimede --------------------------------------------------------------------
def grid_components(wheels, half=6.0, h=0.01) -> int:
    """Connected components of S+ on a grid (8-connectivity), parts that meet
    at a wheel's steering axis counted as one (they touch at that point)."""
    xs = np.arange(-half, half + h / 2, h)
    X, Y = np.meshgrid(xs, xs, indexing="ij")
    Q = np.stack([X.ravel(), Y.ravel()], axis=1)
    mask = admissible_mask(wheels, Q).reshape(X.shape)
    labels, n = ndimage.label(mask, structure=np.ones((3, 3)))
    parent = list(range(n + 1))

    def find(i):
        while parent[i] != i:
            i = parent[i]
        return i

    for w in wheels:
        i, j = int(round((w.x + half) / h)), int(round((w.y + half) / h))
        near = {int(v) for v in labels[i - 3:i + 4, j - 3:j + 4].ravel() if v}
        near = sorted(find(v) for v in near)
        for v in near[1:]:
            parent[v] = near[0]
    return len({find(v) for v in range(1, n + 1)})


def test_archimede_s_plus_has_five_regions():
    """Archimede §2.2.2: five disconnected regions, in the model and on a
    0.01 m grid of the definition over [-6, 6]^2 m (the two far regions
    start 4.6 m ahead of and behind the body)."""
    wheels = archimede_wheels()
    s = IcrSteering(wheels)
    assert len(s.all_components) == 5
    assert grid_components(wheels) == 5


def test_archimede_regions_in_place():
    """The central region holds the body origin; the two side regions hold
    the points 1 m to the left and right; (0, 0.5) lies in none."""
    s = IcrSteering(archimede_wheels())
    centre, left, right = s.region_of((0, 0)), s.region_of((0, 1)), s.region_of((0, -1))
    assert len({centre, left, right}) == 3 and None not in (centre, left, right)
    assert s.region_of((0, 0.5)) is None


def along(twist, axis: int) -> bool:
    """A translation along body axis 0 (x) or 1 (y), to the direction
    tolerance ANGLE_TOL (a direction that close counts as admissible) plus
    the round-off of sin/cos near pi (1.2e-16 from pi's own rounding)."""
    return twist[2] == 0.0 and abs(twist[1 - axis]) <= (ANGLE_TOL + 1e-15) * abs(twist[axis])


@functools.cache
def archimede_mode(mode: str) -> IcrSteering:
    return IcrSteering(archimede_wheels(), mode)


@settings(max_examples=80, deadline=None)
@given(commands)
def test_archimede_modes_stay_in_their_part(cmd):
    wheels = archimede_wheels()
    ref = IcrSteering(wheels)
    centre, left, right = ref.region_of((0, 0)), ref.region_of((0, 1)), ref.region_of((0, -1))
    rear_x = min(w.x for w in wheels)
    for mode in MODES:
        r = archimede_mode(mode).command(*cmd)
        check_consistent(wheels, r)
        if r.twist == (0.0, 0.0, 0.0):
            continue
        if r.icr is not None:
            assert ref.admissible(r.icr)
        if mode == "inner_ackermann":
            assert r.icr is not None and r.region == centre
        elif mode == "outer_ackermann":
            assert r.icr is None and along(r.twist, 0) or r.region in (left, right)
        elif mode == "in_place":
            # an ICR within the tolerance of the origin is kept: |v| <= FEAS_TOL |wz|
            assert r.icr == pytest.approx((0.0, 0.0), abs=FEAS_TOL)
            assert r.twist[:2] == pytest.approx((0, 0), abs=FEAS_TOL * abs(r.twist[2]))
        elif mode == "symmetric_ackermann":
            assert r.icr is None and along(r.twist, 0) or abs(r.icr[0]) <= tolerance(r.icr)
        elif mode == "car_like":
            assert r.icr is None and along(r.twist, 0) or abs(r.icr[0] - rear_x) <= tolerance(r.icr)
            assert all(d == 0.0 for w, d in zip(wheels, r.steer_angles) if w.x == rear_x)
        elif mode == "lateral":
            assert r.icr is None and along(r.twist, 1)
        elif mode == "parallel":
            assert r.icr is None and r.twist[2] == 0.0
            ref_angle = r.steer_angles[0]
            assert all(abs((d - ref_angle + math.pi / 2) % math.pi - math.pi / 2) < 1e-12 for d in r.steer_angles)


def test_archimede_in_place_wheels_across_radius_vectors():
    """In place: each wheel rolls perpendicular to its position vector."""
    wheels = archimede_wheels()
    r = IcrSteering(wheels, "in_place").command(0.0, 0.0, 0.5)
    for w, d in zip(wheels, r.steer_angles):
        assert math.cos(d) * w.x + math.sin(d) * w.y == pytest.approx(0.0, abs=1e-12)


# --- fixed wheels -------------------------------------------------------------------
def msl_like_wheels() -> list[Wheel]:
    """MSL-like: steered front and rear corners, fixed middle wheels."""
    lim = math.radians(90)
    return [Wheel("fl", 0.6, 0.5, 0.25, -lim, lim), Wheel("fr", 0.6, -0.5, 0.25, -lim, lim),
            Wheel.fixed("ml", 0.0, 0.55, 0.25), Wheel.fixed("mr", 0.0, -0.55, 0.25),
            Wheel("rl", -0.6, 0.5, 0.25, -lim, lim), Wheel("rr", -0.6, -0.5, 0.25, -lim, lim)]


@settings(max_examples=60, deadline=None)
@given(commands)
def test_fixed_middle_wheels_collapse_s_plus_to_their_axle(cmd):
    """Archimede §2.2.2: with fixed middle wheels S+ is the middle axle line
    (x = 0) and only symmetric Ackermann remains; translations only along x."""
    s = IcrSteering(msl_like_wheels())
    r = s.command(*cmd)
    check_consistent(s.wheels, r)
    if r.icr is not None:
        assert abs(r.icr[0]) <= tolerance(r.icr)
    elif r.twist != (0.0, 0.0, 0.0):
        assert along(r.twist, 0)


def test_two_fixed_axles_admit_only_straight_driving():
    """Rocky 7 (fixed middle and rear wheels on a bogie, from the URDF): two
    parallel fixed axles share no finite ICR, so every command becomes a
    straight drive along x at the commanded mean wheel speed."""
    entry = registry.robot("rocky7")
    wheels = wheels_from_urdf(load_description(entry.path).urdf)
    s = IcrSteering(wheels)
    assert not s.pieces
    r = s.command(0.1, 0.05, 0.3)
    assert r.twist[1:] == (0.0, 0.0) and r.twist[0] == pytest.approx(s.mean_wheel_speed(0.1, 0.05, 0.3))
    check_consistent(wheels, r)


# --- bad input ---------------------------------------------------------------------------
def test_bad_wheels_and_modes_are_refused_clearly():
    w = list(archimede_wheels())
    with pytest.raises(RoverError, match="wheel list is empty"):
        IcrSteering([])
    with pytest.raises(RoverError, match="steer_min .* greater than"):
        Wheel("fl", 0, 0, 0.1, 0.5, -0.5)
    with pytest.raises(RoverError, match="radius must be positive"):
        Wheel("fl", 0, 0, 0.0, -0.5, 0.5)
    with pytest.raises(RoverError, match="'fl': x must be a finite"):
        Wheel("fl", float("nan"), 0, 0.1, -0.5, 0.5)
    with pytest.raises(RoverError, match="fixed .* single angle"):
        Wheel("fl", 0, 0, 0.1, -0.5, 0.5, steerable=False)
    with pytest.raises(RoverError, match="unknown drive mode 'crab'.*general_ackermann"):
        IcrSteering(w, "crab")
    with pytest.raises(RoverError, match="not finite"):
        IcrSteering(w).command(float("nan"), 0, 0)
    with pytest.raises(RoverError, match="unique"):
        IcrSteering([w[0], w[0]])
    with pytest.raises(RoverError, match="in_place"):
        IcrSteering([Wheel.fixed("a", 1, 0, 0.1), Wheel.fixed("b", -1, 0, 0.1)], "in_place")
    assert issubclass(RoverError, ConfigError) and issubclass(RoverError, ValueError)
