"""The soil model (eels_gz.soil.wong_reece) against the Wong-Reece integrals
computed here, independently, by adaptive quadrature (scipy.integrate.quad),
and its behaviour in every regime a rover meets: continuity through s = 0,
finite forces below s = -1, zero force off the ground, a wheel at rest held
by a force against its motion, slip angles up to 90 deg.

Tolerance of the comparisons (TOL_REL, of the load W): the kernel integrates
each stress region with N = 16 Gauss-Legendre nodes after the substitution
theta = end + span u^2, which turns the (theta_1 - theta)^n edge of sigma
into u^(2n+1) times a smooth function. Gauss-Legendre on u^a g(u) errs by
O(N^-(2a+2)) = O(N^-(4n+4)): 16^-8.4 = 7.6e-11 for the roughest soil here
(n = 1.1, dry sand; 16^-8 = 2.3e-10 for n = 1). TOL_REL = 1e-8 is 40 times
the larger. (A braking wheel whose shear displacement changes sign inside a
region would converge only like N^-3; none of the cases below does, since
cos theta_1 > 1 + s for the slips and sinkages here.) quad itself is asked
for 1e-10 relative.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.integrate import quad

from eels_gz.soil.params import load_soil_params, soil_names
from eels_gz.soil.wong_reece import GL_U, GL_W, pack_soil, solve_sinkage, wheel_forces, wong_reece

TOL_REL = 1e-8
R, B = 0.085, 0.07  # Archimede's low-grouser wheel (urdf/archimede.urdf.xacro)
G = 9.81


# --- the reference: Wong & Reece 1967 / Ishigami et al. 2007, written out again ---

def reference(p, h, j_coeffs, tan_beta_term=0.0, v_lat_sign=0.0):
    """(W, DP, T, F_lat_shear, F_bulldozing) by quad, for a forward wheel.

    j_coeffs = (A, B): j = R [A (theta1 - theta) - B (sin theta1 - sin theta)];
    tan_beta_term = C: j_y = R C (theta1 - theta)."""
    a_rot, b_lin = j_coeffs
    phi = math.radians(p.friction_angle_deg)
    k = p.k_c / B + p.k_phi
    th1 = math.acos(1.0 - h / R)
    s = a_rot - b_lin
    thm = min(max((p.c1 + p.c2 * s) * th1, 0.0), th1)

    def sigma(th):
        eq = th if th >= thm else th1 - th * (th1 - thm) / thm
        return k * R ** p.n * max(math.cos(eq) - math.cos(th1), 0.0) ** p.n

    def janosi(tmax, j):
        return math.copysign(tmax * (1.0 - math.exp(-abs(j) / p.shear_modulus_K)), j)

    def tau(th):
        j = R * (a_rot * (th1 - th) - b_lin * (math.sin(th1) - math.sin(th)))
        return janosi(p.cohesion + sigma(th) * math.tan(phi), j)

    def tau_y(th):
        return janosi(p.cohesion + sigma(th) * math.tan(phi), R * tan_beta_term * (th1 - th))

    x = math.pi / 4 - phi / 2
    d1 = 1 / math.tan(x) + math.tan(x + phi)
    d2 = 1 / math.tan(x) + (1 / math.tan(x)) ** 2 * math.tan(phi)
    gamma = p.density * G

    def bulldoze(th):
        hz = R * (math.cos(th) - math.cos(th1))
        return d1 * (p.cohesion * hz + 0.5 * d2 * gamma * hz * hz) * (R - hz * math.cos(th))

    def integ(f):
        pts = [0.0, thm, th1] if 0.0 < thm < th1 else [0.0, th1]
        return sum(quad(f, lo, hi, epsabs=0.0, epsrel=1e-10, limit=200)[0] for lo, hi in zip(pts, pts[1:]))

    w = R * B * integ(lambda t: sigma(t) * math.cos(t) + tau(t) * math.sin(t))
    dp = R * B * integ(lambda t: tau(t) * math.cos(t) - sigma(t) * math.sin(t))
    torque = R * R * B * integ(tau)
    lat = R * B * integ(tau_y)
    return w, dp, torque, lat, integ(bulldoze)


def soil(name):
    p = load_soil_params(name)
    return p, pack_soil(p, G)


SLIPS = (-0.5, 0.0, 0.05, 0.3, 0.9)  # braking, free rolling, the paper's flat slip, driving, near-spinning
LOADS = (5.0, 16.1, 40.0)           # N: a light wheel, Archimede's 6.57 kg / 4, a loaded rig


def textbook(s):
    """(A, B) of the standard piecewise slip: driving (A = 1, B = 1 - s), braking (A = 1 + s, B = 1)."""
    return (1.0, 1.0 - s) if s >= 0.0 else (1.0 + s, 1.0)


@pytest.mark.parametrize("name", soil_names())
@pytest.mark.parametrize("s", SLIPS)
@pytest.mark.parametrize("load", LOADS)
def test_sinkage_drawbar_pull_and_torque_match_quadrature(name, s, load):
    p, packed = soil(name)
    a_rot, b_lin = textbook(s)
    h = solve_sinkage(load, R, B, a_rot, b_lin, packed, GL_U, GL_W)
    assert 0.0 < h < R
    w_ref, dp_ref, t_ref, _, _ = reference(p, h, (a_rot, b_lin))
    tol = TOL_REL * load
    # the vertical balance, checked by the independent integral at the solved sinkage
    assert w_ref == pytest.approx(load, abs=tol)
    w, dp, ty, _ = wong_reece(R, B, h, a_rot, b_lin, 0.0, 0.0, packed, GL_U, GL_W)
    assert dp == pytest.approx(dp_ref, abs=tol)
    assert -ty == pytest.approx(t_ref, abs=tol * R)  # T_y is the soil's moment on the wheel: -T


@pytest.mark.parametrize("name", soil_names())
@pytest.mark.parametrize("beta_deg", (5.0, 30.0, 60.0))
def test_lateral_shear_and_bulldozing_match_quadrature(name, beta_deg):
    """Ishigami 2007: j_y = r (1 - s)(theta1 - theta) tan(beta), plus the bulldozing F_u, against the lateral slip."""
    p, packed = soil(name)
    s, load = 0.2, 16.1
    h = solve_sinkage(load, R, B, 1.0, 1.0 - s, packed, GL_U, GL_W)
    c_lat = (1.0 - s) * math.tan(math.radians(beta_deg))
    *_, lat_ref, bull_ref = reference(p, h, (1.0, 1.0 - s), c_lat)
    fy = wong_reece(R, B, h, 1.0, 1.0 - s, c_lat, 1.0, packed, GL_U, GL_W)[3]
    assert fy == pytest.approx(-(lat_ref + bull_ref), abs=TOL_REL * load)
    assert fy < 0.0  # against a slip to +y


def forces(packed, h, v_x, v_y, omega):
    return np.array(wheel_forces(R, B, h, v_x, v_y, omega, packed, GL_U, GL_W))


def test_velocity_form_is_the_textbook_slip_above_the_regularisation_speed():
    """Driving and braking wheels at speeds above v_reg get exactly the textbook piecewise slip."""
    p, packed = soil("eac1a")
    h, omega = 0.01, 1.2  # rad/s: the paper's omega_1
    for s in (0.3, -0.4):
        v = R * omega * (1.0 - s) if s >= 0.0 else R * omega / (1.0 + s)
        fx, fy, w, ty = forces(packed, h, v, 0.0, omega)
        w_ref, dp_ref, t_ref, _, _ = reference(p, h, textbook(s))
        assert (fx, w, -ty) == pytest.approx((dp_ref, w_ref, t_ref), abs=TOL_REL * w_ref)
        assert fy == 0.0


@pytest.mark.parametrize("name", soil_names())
def test_continuous_through_zero_slip_and_through_zero_speed(name):
    """No jump anywhere: sweeping v_x through r omega (s = 0) and through 0 (the direction blend),
    neighbouring samples differ by no more than a Lipschitz bound (the largest of the coarse slopes)."""
    _, packed = soil(name)
    h, omega = 0.01, 1.2
    for centre in (R * omega, 0.0):
        v = centre + np.linspace(-0.02, 0.02, 4001)
        f = np.array([forces(packed, h, vx, 0.0, omega) for vx in v])
        jumps = np.abs(np.diff(f, axis=0)).max(axis=0)
        coarse = np.abs(np.diff(f[::200], axis=0)).max(axis=0) / 200
        assert np.all(jumps <= 3.0 * coarse + 1e-9), (centre, jumps, coarse)


def test_finite_below_minus_one():
    """A wheel turning backwards while it travels forwards: s = (r omega - v) / v < -1, finite, |s| <= 2,
    and the soil brakes its travel and drives its spin forward."""
    _, packed = soil("dry_sand")
    h, v = 0.01, 0.1
    for omega in (-0.5, -2.0, -50.0, -1e6):
        s = (R * omega - v) / max(abs(R * omega), abs(v))
        assert -2.0 <= s < -1.0
        fx, fy, w, ty = forces(packed, h, v, 0.0, omega)
        assert np.all(np.isfinite((fx, fy, w, ty)))
        assert fx < 0.0 and ty > 0.0 and w > 0.0


def test_zero_off_the_ground_and_continuous_at_touchdown():
    _, packed = soil("eac1a")
    for state in ((0.1, 0.02, 1.0), (0.0, 0.0, 0.0), (-0.3, 0.1, 5.0)):
        assert np.all(forces(packed, 0.0, *state) == 0.0)
        assert np.all(forces(packed, -0.01, *state) == 0.0)
        near = np.abs(forces(packed, 1e-7, *state))
        assert np.all(near < 1e-3), near  # N: the load and the shear area both vanish with h


@pytest.mark.parametrize("name", soil_names())
def test_standstill_no_push_and_held_against_motion(name):
    """At rest the soil pushes the wheel neither way; moved slowly, the force opposes the motion,
    grows with the speed (a continuous, dissipative holding force) and is odd in it."""
    p, packed = soil(name)
    h = 0.01
    fx0, fy0, w0, ty0 = forces(packed, h, 0.0, 0.0, 0.0)
    assert (fx0, fy0, ty0) == (0.0, 0.0, 0.0) and w0 > 0.0
    eps = np.array([0.01, 0.1, 0.5]) * p.slip_speed_reg
    for i, axis in ((0, "x"), (1, "y")):
        pushes = []
        for e in eps:
            plus = forces(packed, h, e if axis == "x" else 0.0, e if axis == "y" else 0.0, 0.0)[i]
            minus = forces(packed, h, -e if axis == "x" else 0.0, -e if axis == "y" else 0.0, 0.0)[i]
            assert plus < 0.0 and minus == pytest.approx(-plus, rel=1e-9)
            pushes.append(-plus)
        assert pushes[0] < pushes[1] < pushes[2]
    # a wheel turned slowly in place: the soil's moment resists the spin
    assert forces(packed, h, 0.0, 0.0, 1e-4)[3] < 0.0 < forces(packed, h, 0.0, 0.0, -1e-4)[3]


@pytest.mark.parametrize("name", soil_names())
def test_slip_angle_90_degrees(name):
    """A wheel sliding straight along its axle: the lateral force opposes the slide and equals the full
    lateral shear plus bulldozing (quad, with j_y = r (theta1 - theta) v_y / V at V = v_reg); no x force."""
    p, packed = soil(name)
    h, v_y = 0.01, 0.05
    fx, fy, w, ty = forces(packed, h, 0.0, v_y, 0.0)
    *_, lat_ref, bull_ref = reference(p, h, (0.0, 0.0), v_y / p.slip_speed_reg)
    assert fx == pytest.approx(0.0, abs=1e-12) and ty == pytest.approx(0.0, abs=1e-12)
    assert fy == pytest.approx(-(lat_ref + bull_ref), abs=TOL_REL * w)
    assert forces(packed, h, 0.0, -v_y, 0.0)[1] == pytest.approx(-fy)


def test_travelling_backwards_is_the_mirror_image():
    _, packed = soil("lava_gravel")
    h = 0.008
    for v, omega in ((0.1, 1.5), (0.1, 0.8), (0.2, 0.0)):
        fwd = forces(packed, h, v, 0.01, omega)
        back = forces(packed, h, -v, 0.01, -omega)
        assert back == pytest.approx(fwd * np.array([-1.0, 1.0, 1.0, -1.0]), rel=1e-12, abs=1e-12)
