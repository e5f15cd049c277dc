"""The Wong-Reece integrals of a rigid wheel by adaptive quadrature (scipy.integrate.quad), written
independently of the kernels of eels_gz.soil, for the soil tests (test/plugins, test/scenarios)."""

from __future__ import annotations

import math

from scipy.integrate import quad


def quad_wong_reece(p, r, b, h, s, wheel=(1.0, 0.0, 0.0)):
    """(W, DP, T) of Wong-Reece at sinkage h and textbook slip s (driving or braking), by quad.

    ``wheel`` = (chi, e, N / 2 pi) (eels_gz.soil.grousers): the strength is
    chi (c + sigma tan phi) + (1 - chi) min(c_a + sigma tan delta + p_lug, c + sigma tan phi), with the lugs'
    Rankine thrust p_lug = (N / 2 pi r)[K_p (sigma e + gamma e^2 / 2) + 2 c sqrt(K_p) e]; the normal stress
    takes Ding's slip-sinkage exponent N = n + n1 clip(s, 0, 1) in Reece's form k b^n (z / b)^N. The default
    wheel is the plain Wong-Reece cylinder."""
    chi, e, lugs = wheel
    a_rot, b_lin = (1.0, 1.0 - s) if s >= 0.0 else (1.0 + s, 1.0)
    k = p.k_c / b + p.k_phi
    th1 = math.acos(1.0 - h / r)
    thm = min(max((p.c1 + p.c2 * s) * th1, 0.0), th1)
    phi = math.radians(p.friction_angle_deg)
    delta = p.interface_friction_ratio * phi
    c_a = p.interface_friction_ratio * p.cohesion
    kp = math.tan(math.pi / 4 + phi / 2) ** 2
    gamma = p.density * 9.81
    big_n = p.n + p.slip_sinkage_n1 * min(max(s, 0.0), 1.0)

    def sigma(th):
        eq = th if th >= thm else th1 - th * (th1 - thm) / thm
        z = r * max(math.cos(eq) - math.cos(th1), 0.0)
        return k * b ** p.n * (z / b) ** big_n

    def strength(sg):
        soil = p.cohesion + sg * math.tan(phi)
        lug = lugs / r * (kp * (sg * e + 0.5 * gamma * e * e) + 2.0 * p.cohesion * math.sqrt(kp) * e)
        return chi * soil + (1.0 - chi) * min(c_a + sg * math.tan(delta) + lug, soil)

    def tau(th):
        j = r * (a_rot * (th1 - th) - b_lin * (math.sin(th1) - math.sin(th)))
        return math.copysign(strength(sigma(th)) * (1.0 - math.exp(-abs(j) / p.shear_modulus_K)), j)

    def integ(f):
        return sum(quad(f, lo, hi, epsrel=1e-10)[0] for lo, hi in ((0.0, thm), (thm, th1)) if hi > lo)

    return (r * b * integ(lambda t: sigma(t) * math.cos(t) + tau(t) * math.sin(t)),
            r * b * integ(lambda t: tau(t) * math.cos(t) - sigma(t) * math.sin(t)),
            r * r * b * integ(tau))
