"""The soil model (eels_gz.soil.wong_reece) against the Wong-Reece integrals
computed here, independently, by adaptive quadrature (scipy.integrate.quad),
for the plain wheel (the soil's own strength: the kernel's TRAPPED record;
issue 44's lug terms are test_soil_grousers.py's) with the soils' slip-sinkage,
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
from eels_gz.soil.wong_reece import (GL_U, GL_W, PLASTIC_K, pack_soil, shear_state_step, solve_sinkage,
                                    steady_coefficients, wheel_forces, wong_reece)

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
    big_n = p.n + p.slip_sinkage_n1 * min(max(s, 0.0), 1.0)  # Ding's slip-sinkage (test_soil_grousers.py)

    def sigma(th):
        eq = th if th >= thm else th1 - th * (th1 - thm) / thm
        return k * B ** p.n * (R * max(math.cos(eq) - math.cos(th1), 0.0) / B) ** big_n

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
    """(F_x, F_y, W, T_y) in steady motion (the shear state relaxed to its steady value)."""
    coeffs = steady_coefficients(R, v_x, v_y, omega)
    return np.array(wheel_forces(R, B, h, *coeffs, v_x, v_y, packed, GL_U, GL_W))


def test_shear_state_relaxes_to_the_steady_coefficients():
    """The stateful step, run long enough at constant velocities, gives the textbook (A, B, C)."""
    p, packed = soil("dry_sand")
    h, dt = 0.012, 1e-3
    length = R * math.acos(1.0 - h / R)
    for v_x, v_y, omega in ((0.08, 0.01, 1.2), (0.12, -0.02, 0.9), (0.1, 0.0, -0.4)):
        state = np.zeros(3)
        big_v = max(abs(R * omega), abs(v_x))
        steps = int(12 * length / big_v / dt)  # 12 relaxation times: e^-12 = 6e-6
        for _ in range(steps):
            got = shear_state_step(state, R, h, v_x, v_y, omega, dt, p.shear_damping_time,
                                   p.shear_modulus_K, p.slip_speed_reg)
        assert got == pytest.approx(steady_coefficients(R, v_x, v_y, omega), abs=1e-5)


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


def carriage(name, push, steps, h=0.01, dt=1e-3, mass=1.64):
    """A wheel of sinkage h, its spin locked, on a carriage of ``mass`` kg pushed along x by ``push`` N
    (semi-implicit Euler at dt, the host's step); returns the positions and the soil forces."""
    p, packed = soil(name)
    state, x, v = np.zeros(3), 0.0, 0.0
    xs, fs = [], []
    for _ in range(steps):
        coeffs = shear_state_step(state, R, h, v, 0.0, 0.0, dt, p.shear_damping_time, p.shear_modulus_K,
                                  p.slip_speed_reg)
        fx = wheel_forces(R, B, h, *coeffs, v, 0.0, packed, GL_U, GL_W)[0]
        v += dt * (push + fx) / mass
        x += dt * v
        xs.append(x)
        fs.append(fx)
    return np.array(xs), np.array(fs)


@pytest.mark.parametrize("name", soil_names())
def test_standstill_is_held_by_the_soil(name):
    """At rest the soil pushes the wheel neither way. Pushed with half of what the locked wheel can
    bear, it moves onto Janosi's shear spring and settles there (a hold, not a steady slide), the soil
    force equal and opposite to the push; pushed with twice that, it slides away."""
    p, packed = soil(name)
    h = 0.01
    fx0, fy0, w0, ty0 = wheel_forces(R, B, h, 0.0, 0.0, 0.0, 0.0, 0.0, packed, GL_U, GL_W)
    assert (fx0, fy0, ty0) == (0.0, 0.0, 0.0) and w0 > 0.0
    # the locked wheel's shear capacity: its skid force (at 1 m/s) less the compaction resistance
    # -r b ∫ sigma sin (the drawbar pull of a wheel whose soil is not sheared, A = B = 0), which
    # acts only while the wheel moves
    theta1 = math.acos(1.0 - h / R)
    resistance = -wong_reece(R, B, h, 0.0, 0.0, 0.0, 0.0, packed, GL_U, GL_W)[1]
    capacity = -forces(packed, h, 1.0, 0.0, 0.0)[0] - resistance
    assert capacity > 0.0 and resistance > 0.0
    xs, fs = carriage(name, 0.5 * capacity, 10000)
    assert np.all(np.isfinite(xs))
    assert abs(xs[-1]) < PLASTIC_K * p.shear_modulus_K + R * theta1  # held within the shear range
    # it settles: the last second's travel is under a tenth of the first second's, and under 1 mm
    first, last = xs[999] - xs[0], xs[-1] - xs[-1001]
    assert 0.0 <= last < 0.1 * first and last < 1e-3
    assert fs[-1] == pytest.approx(-0.5 * capacity, rel=1e-3)
    xs, _ = carriage(name, 2.0 * capacity, 2000)
    assert xs[-1] > 0.2  # m in 2 s: sliding


@pytest.mark.parametrize("name", soil_names())
def test_a_stopped_slide_springs_back_by_a_few_k_not_the_whole_slide(name):
    """A wheel dragged sideways across the soil at rest for 20 cm, then let go, keeps at most PLASTIC_K K of
    shear displacement; Janosi's law alone, with no unloading branch, would push it back along the whole
    slide. Bound: 2 PLASTIC_K K + 2 K = 8 K (at most 12 cm here): the stored 3 K given back under a
    nearly saturated force, then an overshoot of the same order onto the reverse shear spring before it
    stops (measured 3.1-3.3 K on dry_sand and eac1a, 6.5 K on lava_gravel)."""
    p, packed = soil(name)
    h, dt, mass = 0.01, 1e-3, 1.64
    state, y, v = np.zeros(3), 0.0, 0.0
    ys = []
    for k in range(7000):
        coeffs = shear_state_step(state, R, h, 0.0, v, 0.0, dt, p.shear_damping_time, p.shear_modulus_K,
                                  p.slip_speed_reg)
        fy = wheel_forces(R, B, h, *coeffs, 0.0, v, packed, GL_U, GL_W)[1]
        v = 0.05 if k < 4000 else v + dt * fy / mass  # dragged at 5 cm/s for 4 s, then free
        y += dt * v
        ys.append(y)
    ys = np.array(ys)
    assert ys[3999] == pytest.approx(0.2, abs=1e-3)
    back = ys.max() - ys[-1]
    assert 0.0 < back < (2 * PLASTIC_K + 2) * p.shear_modulus_K < ys[3999]
    assert abs(ys[-1] - ys[-501]) < 1e-6  # at rest in the last half second


@pytest.mark.parametrize("name", soil_names())
def test_slip_angle_90_degrees(name):
    """A wheel sliding straight along its axle, not rolling (slip angle 90 deg): its lateral shear
    displacement builds up until the plastic clip, the lateral force opposes the slide and equals the
    lateral shear plus bulldozing (quad, with j_y = r C (theta1 - theta), C from the state); no x force
    and no moment about the axle; sliding the other way mirrors it."""
    p, packed = soil(name)
    h, v_y, dt = 0.01, 0.05, 1e-3
    out = []
    for sign in (1.0, -1.0):
        state = np.zeros(3)
        for _ in range(2000):
            coeffs = shear_state_step(state, R, h, 0.0, sign * v_y, 0.0, dt, p.shear_damping_time,
                                      p.shear_modulus_K, p.slip_speed_reg)
        assert coeffs[0] == 0.0 and coeffs[1] == 0.0 and sign * coeffs[2] > 0.0
        out.append((coeffs, np.array(wheel_forces(R, B, h, *coeffs, 0.0, sign * v_y, packed, GL_U, GL_W))))
    (coeffs, (fx, fy, w, ty)), (_, back) = out
    *_, lat_ref, bull_ref = reference(p, h, (0.0, 0.0), coeffs[2])
    assert fx == 0.0 and ty == 0.0
    assert fy == pytest.approx(-(lat_ref + bull_ref), abs=TOL_REL * w)
    assert back[1] == pytest.approx(-fy, rel=1e-12)


def test_travelling_backwards_is_the_mirror_image():
    _, packed = soil("lava_gravel")
    h = 0.008
    for v, omega in ((0.1, 1.5), (0.1, 0.8), (0.2, 0.0)):
        fwd = forces(packed, h, v, 0.01, omega)
        back = forces(packed, h, -v, 0.01, -omega)
        assert back == pytest.approx(fwd * np.array([-1.0, 1.0, 1.0, -1.0]), rel=1e-12, abs=1e-12)


def test_world_wrench_is_the_local_one_in_the_wheel_frame():
    """SoilContactStep: a yawed, cambered wheel on a tilted plane. Its world wrench, turned into the frame
    the test builds (heading = axle x normal, lateral = normal x heading), is the kernel's local
    (F_x, F_y, W, T_y, M_x), with M_x = (r - h/2) F_y about the heading; the sinkage is r - d along the normal."""
    from eels_gz.soil.contact import SoilContactStep
    from eels_gz.terrain.primitives import Plane

    p, _ = soil("eac1a")
    normal = np.array([0.1, -0.05, 1.0]) / np.linalg.norm([0.1, -0.05, 1.0])
    plane = Plane(point=np.zeros(3), normal=normal)
    yaw, camber = 0.4, 0.05
    cz, sz, cc, sc = math.cos(yaw), math.sin(yaw), math.cos(camber), math.sin(camber)
    rot = np.array([[cz, -sz, 0.0], [sz, cz, 0.0], [0.0, 0.0, 1.0]]) @ np.array([[1, 0, 0], [0, cc, -sc], [0, sc, cc]])
    centre = normal * (R - 0.01)
    lin, ang = np.array([0.08, 0.03, -0.01]), rot @ np.array([0.0, 1.3, 0.0])
    step = SoilContactStep([R], [B], p, G)
    out = step(plane, centre[None], rot[None], lin[None], ang[None], 1e-3)
    axle = rot[:, 1]
    heading = np.cross(axle, normal)
    heading /= np.linalg.norm(heading)
    lateral = np.cross(normal, heading)
    assert out.sinkage[0] == pytest.approx(0.01, abs=1e-12)
    fx, fy, fz, ty, mx = out.local[0]
    np.testing.assert_allclose(out.force[0], fx * heading + fy * lateral + fz * normal, atol=1e-12)
    np.testing.assert_allclose(out.torque[0], ty * axle + mx * heading, atol=1e-12)
    assert mx == pytest.approx((R - 0.005) * fy, rel=1e-12)
    assert fz > 0.0 and fy != 0.0 and fx != 0.0
