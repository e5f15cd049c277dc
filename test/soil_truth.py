"""The Wong-Reece integrals of a rigid wheel by adaptive quadrature (scipy.integrate.quad), written
independently of the kernels of eels_gz.soil, for the soil tests (test/plugins, test/scenarios)."""

from __future__ import annotations

import math

from scipy.integrate import quad


def quad_wong_reece(p, r, b, h, s):
    """(W, DP, T) of Wong-Reece at sinkage h and textbook slip s (driving or braking), by quad."""
    a_rot, b_lin = (1.0, 1.0 - s) if s >= 0.0 else (1.0 + s, 1.0)
    k = p.k_c / b + p.k_phi
    th1 = math.acos(1.0 - h / r)
    thm = min(max((p.c1 + p.c2 * s) * th1, 0.0), th1)
    tan_phi = math.tan(math.radians(p.friction_angle_deg))

    def sigma(th):
        eq = th if th >= thm else th1 - th * (th1 - thm) / thm
        return k * r ** p.n * max(math.cos(eq) - math.cos(th1), 0.0) ** p.n

    def tau(th):
        j = r * (a_rot * (th1 - th) - b_lin * (math.sin(th1) - math.sin(th)))
        return math.copysign((p.cohesion + sigma(th) * tan_phi) * (1.0 - math.exp(-abs(j) / p.shear_modulus_K)), j)

    def integ(f):
        return sum(quad(f, lo, hi, epsrel=1e-10)[0] for lo, hi in ((0.0, thm), (thm, th1)) if hi > lo)

    return (r * b * integ(lambda t: sigma(t) * math.cos(t) + tau(t) * math.sin(t)),
            r * b * integ(lambda t: tau(t) * math.cos(t) - sigma(t) * math.sin(t)),
            r * r * b * integ(tau))
