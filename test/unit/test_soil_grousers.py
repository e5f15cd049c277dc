"""Issue 44's terms against closed forms: the lugs' Rankine passive thrust (against Coulomb's trial wedge
minimised here), the kernel's rim and lug stresses (against the integrals of a linear soil written out
by hand), the surface the soil shears on (lug height against grain size), the radius the stresses act
on, and Ding's slip-sinkage (against the integral of its quadratic case).

The kernel cases use a soil whose integrals are elementary: n = 1, theta_m = 0 (c1 = c2 = 0), so
sigma = k r (cos theta - cos theta_1) on [0, theta_1], and Janosi's shear saturated (K = 1e-7 m), so
tau = tau_max wherever j > 0 (all of (0, theta_1) for a driven wheel). With a strength
tau_max = mu sigma + t0, where mu and t0 are what the case's terms add up to,

    W  = r b [k r (theta_1 - sin theta_1 cos theta_1)/2 + mu k r (1 - cos theta_1)^2/2 + t0 (1 - cos theta_1)]
    DP = r b [mu k r (theta_1 - sin theta_1 cos theta_1)/2 - k r (1 - cos theta_1)^2/2 + t0 sin theta_1]
    T  = r^2 b [mu k r (sin theta_1 - theta_1 cos theta_1) + t0 theta_1]

Tolerance (``saturation_bound``): the kernel's Gauss-Legendre quadrature of these polynomials in
cos and sin after theta = theta_1 - span u^2 is exact to rounding (1e-13 relative); what differs is
Janosi's 1 - exp(-j/K) next to theta_1, where j ~ r s' x (x = theta_1 - theta,
s' = 1 - (1 - s) cos theta_1): the shear misses at most
    r b [mu k r sin theta_1 (K / r s')^2 + t0 K / (r s')]
of each resultant (r times that for T), a bound the test computes and doubles.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import replace

import numpy as np
import pytest
from scipy.optimize import brentq, minimize_scalar

from eels_gz.soil.grousers import (
    LUG_TRAP_MIN,
    WheelGeometry,
    contact_geometry,
    passive_force,
    rankine_passive_coefficient,
    trap_fraction,
)
from eels_gz.soil.params import SoilParams
from eels_gz.soil.wong_reece import GL_U, GL_W, TRAPPED, pack_soil, solve_sinkage, wong_reece

R, B, H, S = 0.085, 0.085, 0.012, 0.3  # m, m, m (sinkage), driving slip
G = 9.81


def coulomb_trial_wedge(gamma, c, q, phi, height):
    """Coulomb's passive force (N/m) on a vertical smooth wall: the least, over planar failure surfaces
    rising from the wall's foot at alpha to the horizontal, of the force that pushes the wedge up that
    plane. Forces on the wedge: the wall's P (horizontal), its weight and surcharge
    V = (gamma H / 2 + q) H cot(alpha), and along the plane (length L = H / sin alpha) the normal
    reaction N and the resistance N tan(phi) + c L against the wedge's motion up the plane:
        vertical:   N (cos alpha - tan(phi) sin alpha) = V + c L sin alpha
        horizontal: P = N (sin alpha + tan(phi) cos alpha) + c L cos alpha."""

    def push(alpha):
        v = (0.5 * gamma * height + q) * height / math.tan(alpha)
        cl = c * height / math.sin(alpha)
        n = (v + cl * math.sin(alpha)) / (math.cos(alpha) - math.tan(phi) * math.sin(alpha))
        return n * (math.sin(alpha) + math.tan(phi) * math.cos(alpha)) + cl * math.cos(alpha)

    top = 0.5 * math.pi - phi - 1e-6  # the wedge cannot rise on a plane steeper than 90 deg - phi
    best = minimize_scalar(push, bounds=(1e-4, top), method="bounded", options={"xatol": 1e-11})
    return best.fun, best.x


@pytest.mark.parametrize("phi_deg, c, q, gamma", [(40.0, 0.0, 0.0, 14000.0), (35.0, 1420.0, 0.0, 15700.0),
                                                   (30.0, 500.0, 8000.0, 16000.0), (45.0, 0.0, 20000.0, 0.0)])
def test_rankine_passive_force_is_coulombs_least_wedge(phi_deg, c, q, gamma):
    """For a smooth vertical wall and level ground Coulomb's least planar wedge is Rankine's (with Bell's
    cohesion and the surcharge), at alpha = 45 deg - phi / 2. The minimiser stops within 1e-11 rad of a
    quadratic minimum: the force is then within P'' (1e-11)^2 / 2 of it, far below rel = 1e-9."""
    phi, height = math.radians(phi_deg), 0.004
    wedge, alpha = coulomb_trial_wedge(gamma, c, q, phi, height)
    assert passive_force(gamma, c, q, phi, height) == pytest.approx(wedge, rel=1e-9)
    assert alpha == pytest.approx(0.25 * math.pi - 0.5 * phi, abs=1e-5)
    assert rankine_passive_coefficient(phi) == pytest.approx((1 + math.sin(phi)) / (1 - math.sin(phi)), rel=1e-12)


def linear_soil(**keys) -> SoilParams:
    base = {"k_c": 0.0, "k_phi": 2.0e6, "n": 1.0, "cohesion": 0.0, "friction_angle_deg": 60.0,
            "shear_modulus_K": 1e-7, "c1": 0.0, "c2": 0.0, "density": 0.0, "interface_friction_ratio": 1e-12}
    base.update(keys)
    return SoilParams(**base)


def closed_form(p: SoilParams, mu: float, t0: float, r=R, b=B, h=H):
    k = p.k_c / b + p.k_phi
    th1 = math.acos(1.0 - h / r)
    sc, omc = th1 - math.sin(th1) * math.cos(th1), 1.0 - math.cos(th1)
    w = r * b * (k * r * sc / 2 + mu * k * r * omc ** 2 / 2 + t0 * omc)
    dp = r * b * (mu * k * r * sc / 2 - k * r * omc ** 2 / 2 + t0 * math.sin(th1))
    torque = r * r * b * (mu * k * r * (math.sin(th1) - th1 * math.cos(th1)) + t0 * th1)
    return w, dp, torque


def saturation_bound(p: SoilParams, mu: float, t0: float, r=R, b=B, h=H, s=S) -> float:
    """Twice the most Janosi's unsaturated edge can take off a resultant (module docstring), N."""
    k = p.k_c / b + p.k_phi
    th1 = math.acos(1.0 - h / r)
    scale = p.shear_modulus_K / (r * (1.0 - (1.0 - s) * math.cos(th1)))
    return 2.0 * r * b * (mu * k * r * math.sin(th1) * scale ** 2 + t0 * scale) + 1e-12


def kernel(p: SoilParams, wheel, r=R, b=B, h=H, s=S):
    w, dp, ty, _ = wong_reece(r, b, h, 1.0, 1.0 - s, 0.0, 0.0, pack_soil(p, G), GL_U, GL_W, wheel)
    return w, dp, -ty


def assert_close(got, ref, tol):
    """(W, DP, T) within tol (N) and, for T, R tol (N m)."""
    assert got[:2] == pytest.approx(ref[:2], abs=tol)
    assert got[2] == pytest.approx(ref[2], abs=tol * R)


def test_the_interface_alone_shears_with_its_own_friction():
    """No lugs, no trapped soil (chi = 0): the rim shears at the wheel-grain interface, mu = tan(delta)."""
    p = linear_soil(friction_angle_deg=40.0, interface_friction_ratio=0.6)
    mu = math.tan(0.6 * math.radians(40.0))
    tol = saturation_bound(p, mu, 0.0)
    assert_close(kernel(p, np.array([0.0, 0.0, 0.0])), closed_form(p, mu, 0.0), tol)


@pytest.mark.parametrize("cohesion, density", [(0.0, 0.0), (800.0, 1500.0)])
def test_the_lugs_add_their_smeared_rankine_thrust(cohesion, density):
    """chi = 0, a frictionless interface: the strength is the lugs' thrust alone, per unit rim length
    p_lug = (N / 2 pi r) [K_p (sigma e + gamma e^2 / 2) + 2 c sqrt(K_p) e], i.e. mu = N K_p e / (2 pi r) and
    t0 = (N / 2 pi r)(K_p gamma e^2 / 2 + 2 c sqrt(K_p) e), below the soil's own (tan 60 deg, c)."""
    p = linear_soil(cohesion=cohesion, density=density)
    e, lugs = 0.002, 16 / (2 * math.pi)
    kp = rankine_passive_coefficient(math.radians(60.0))
    mu = lugs * kp * e / R
    t0 = lugs * passive_force(density * G, cohesion, 0.0, math.radians(60.0), e) / R
    assert mu < math.tan(math.radians(60.0)) and t0 < cohesion or cohesion == 0.0
    tol = saturation_bound(p, mu, t0)
    assert_close(kernel(p, np.array([0.0, e, lugs])), closed_form(p, mu, t0), tol)


def test_the_lugs_never_transmit_more_than_the_soil_through_their_tips():
    """Tall untrapped lugs (their thrust alone would exceed the soil's strength): the strength is the
    soil's own, c + sigma tan(phi), as for trapped soil (chi = 1, TRAPPED)."""
    p = linear_soil(friction_angle_deg=35.0, cohesion=300.0, interface_friction_ratio=0.5)
    mu, t0 = math.tan(math.radians(35.0)), 300.0
    tol = saturation_bound(p, mu, t0)
    assert_close(kernel(p, np.array([0.0, 0.02, 16 / (2 * math.pi)])), closed_form(p, mu, t0), tol)
    assert_close(kernel(p, TRAPPED), closed_form(p, mu, t0), tol)
    assert kernel(p, None) == kernel(p, TRAPPED)


def test_a_part_trapped_wheel_blends_the_two_surfaces():
    """chi of the strength is the soil's own, 1 - chi the interface plus the lugs."""
    p = linear_soil(friction_angle_deg=40.0, interface_friction_ratio=0.7)
    chi, e, lugs = 0.3, 0.001, 16 / (2 * math.pi)
    phi = math.radians(40.0)
    mu = chi * math.tan(phi) + (1 - chi) * (math.tan(0.7 * phi) + lugs * rankine_passive_coefficient(phi) * e / R)
    tol = saturation_bound(p, mu, 0.0)
    assert_close(kernel(p, np.array([chi, e, lugs])), closed_form(p, mu, 0.0), tol)


def test_which_surface_shears_follows_lug_height_over_grain_size():
    """chi = clip((h_g / d50 - 1) / (rho_1 - 1), 0, 1): none at or below a grain's height, all from rho_1."""
    d = 0.003
    assert trap_fraction(0.0, d, 10.0) == 0.0  # a smooth rim
    assert trap_fraction(0.0018, d, 10.0) == 0.0  # Archimede's low lugs in 1-5 mm lava
    assert trap_fraction(LUG_TRAP_MIN * d, d, 10.0) == 0.0
    assert trap_fraction(5.5 * d, d, 10.0) == pytest.approx(0.5, rel=1e-12)
    assert trap_fraction(10.0 * d, d, 10.0) == 1.0 and trap_fraction(0.0125, 1e-4, 10.0) == 1.0
    assert trap_fraction(0.002, 0.0, 10.0) == 1.0  # a soil finer than any lug


def test_the_radius_the_stresses_act_on():
    """lambda = chi + (1 - chi) A / (tan(delta) + A), A = min(N K_p e / (2 pi r_rim), tan(phi) - tan(delta)),
    computed here by hand for the low-grouser wheel in a coarse soil; trapped lugs roll on their tips; a
    smooth rim on its rim; grousers off on the tips."""
    p = linear_soil(friction_angle_deg=40.0, interface_friction_ratio=0.7, grain_size=0.003)
    wheel = WheelGeometry(radius=0.0823, width=0.085, lug_height=0.0018, lug_count=16)
    phi = math.radians(40.0)
    a = 16 / (2 * math.pi) * math.tan(math.pi / 4 + phi / 2) ** 2 * 0.0018 / 0.0805
    a = min(a, math.tan(phi) - math.tan(0.7 * phi))
    lam = a / (math.tan(0.7 * phi) + a)
    g = contact_geometry(wheel, p)
    assert (g.chi, g.lug_protrusion, g.lugs_per_radian) == (0.0, 0.0018, pytest.approx(16 / (2 * math.pi)))
    assert g.lug_effect == pytest.approx(lam, rel=1e-12)
    assert g.radius == pytest.approx(0.0805 + lam * 0.0018, rel=1e-12)
    fine = contact_geometry(wheel, replace(p, grain_size=1e-4))
    assert (fine.radius, fine.chi, fine.lug_protrusion, fine.lug_effect) == (pytest.approx(0.0823), 1.0, 0.0, 1.0)
    smooth = contact_geometry(WheelGeometry(radius=0.0805, width=0.085), p)
    assert (smooth.radius, smooth.lug_effect, smooth.lugs_per_radian) == (0.0805, 0.0, 0.0)
    off = contact_geometry(wheel, p, grousers=False)
    assert (off.radius, off.chi, off.lug_protrusion) == (0.0823, 1.0, 0.0)
    assert np.array_equal(off.record(), TRAPPED)
    with pytest.raises(ValueError, match="lug_count 0 and lug_height 0.002"):
        WheelGeometry(radius=0.08, width=0.08, lug_height=0.002)


def slip_sinkage_load(k, r, b, h):
    """W of the quadratic case n = 1, N = 2 with no shear (phi = 0, c = 0): sigma = k b (z / b)^2, so
    W = r b ∫ sigma cos = k r^3 ∫ (cos - c1)^2 cos over [0, theta_1], c1 = cos theta_1."""
    th1 = math.acos(1.0 - h / r)
    c1, s1 = math.cos(th1), math.sin(th1)
    return k * r ** 3 * ((s1 - s1 ** 3 / 3) - 2 * c1 * (th1 / 2 + math.sin(2 * th1) / 4) + c1 * c1 * s1)


def test_slip_sinkage_against_its_quadratic_case():
    """Ding's exponent N = n + n1 clip(s, 0, 1): n = 1, n1 = 2 at s = 0.5 gives N = 2, whose load integral is
    elementary; the kernel's load and its sinkage under 16 N (bisected to r / 2^60) against it. The
    integrand is a polynomial in cos and sin after the substitution: Gauss-Legendre's 16 nodes are exact to
    rounding (rel 1e-12); the sinkage to the bisection's r 2^-60 and brentq's xtol 1e-15 m."""
    p = linear_soil(friction_angle_deg=0.0, slip_sinkage_n1=2.0, k_phi=1.0e6)
    soil = pack_soil(p, G)
    k = p.k_phi
    w = wong_reece(R, B, H, 1.0, 0.5, 0.0, 0.0, soil, GL_U, GL_W)[0]
    assert w == pytest.approx(slip_sinkage_load(k, R, B, H), rel=1e-12)
    h = solve_sinkage(16.0, R, B, 1.0, 0.5, soil, GL_U, GL_W)
    assert h == pytest.approx(brentq(lambda x: slip_sinkage_load(k, R, B, x) - 16.0, 1e-6, R, xtol=1e-15),
                              abs=1e-12)
    # no slip-sinkage when braking or at rest, and more slip sinks deeper under the same load
    bekker = replace(p, slip_sinkage_n1=0.0)
    for a_rot, b_lin in ((1.0, 1.0), (0.6, 1.0)):
        assert wong_reece(R, B, H, a_rot, b_lin, 0.0, 0.0, soil, GL_U, GL_W)[0] == \
            wong_reece(R, B, H, a_rot, b_lin, 0.0, 0.0, pack_soil(bekker, G), GL_U, GL_W)[0]
    sinkages = [solve_sinkage(16.0, R, B, 1.0, 1.0 - s, pack_soil(replace(p, slip_sinkage_n1=0.5), G), GL_U, GL_W)
                for s in (0.0, 0.2, 0.5, 0.9)]
    assert all(x < y for x, y in itertools.pairwise(sinkages)), sinkages
