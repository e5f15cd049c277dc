"""Rigid wheel on soft soil: Bekker, Wong-Reece, Janosi-Hanamoto, Ishigami, lugs, slip-sinkage (numba kernels).

For a wheel of radius r and width b sunk by h (REFERENCE.md §7), with the
entry angle theta_1 = acos(1 - h / r), the exit angle theta_2 = 0 and the
maximum-stress angle theta_m = (c1 + c2 s) theta_1 (Wong & Reece 1967),
clipped to [theta_2, theta_1]:

- normal stress (Bekker pressure-sinkage along the rim), k = k_c / b + k_phi:
  sigma = k r^n (cos theta - cos theta_1)^n on [theta_m, theta_1], and on
  [theta_2, theta_m] the same at theta_1 - (theta - theta_2)(theta_1 - theta_m)/(theta_m - theta_2);
- shear (Janosi & Hanamoto), odd in j so that it also brakes:
  tau = (c + sigma tan phi) sign(j) (1 - exp(-|j| / K));
- resultants on the wheel, x along its heading, z up, y along the axle:
  W = r b ∫ (sigma cos + tau sin) dtheta, DP = r b ∫ (tau cos - sigma sin) dtheta,
  axle torque T_y = -r^2 b ∫ tau dtheta (the soil's moment on the wheel);
- lateral (Ishigami, Miwa, Nagatani & Yoshida, J. Field Robot. 24(3), 2007,
  Eq. 8-13): tau_y = (c + sigma tan phi)(1 - exp(-|j_y| / K)) against the
  lateral slip, and the bulldozing resistance of the soil pushed sideways,
  F_u = ∫ R_b(h(theta)) (r - h(theta) cos theta) dtheta, with
  h(theta) = r (cos theta - cos theta_1), R_b = D1 (c h + D2 gamma h^2 / 2),
  D1 = cot X + tan(X + phi), D2 = cot X + cot^2 X / cot phi, X = 45 deg - phi / 2.

Lugs and slip-sinkage (issue 44). A lugged wheel's r is the radius its stresses act on, r_rim + lambda
h_g (``eels_gz.soil.grousers``, which also gives its wheel record: the trapped fraction chi, the lugs'
untrapped height e and the lugs per radian N / 2 pi). The shear strength is then

    tau_max = chi (c + sigma tan phi) + (1 - chi) min(c_a + sigma tan delta + p_lug, c + sigma tan phi),
    p_lug = (N / 2 pi r) [K_p (sigma e + gamma e^2 / 2) + 2 c sqrt(K_p) e]

(the soil's own strength where it is trapped between tall lugs; elsewhere the wheel-grain interface
plus the lugs' Rankine passive thrust, smeared over the lug pitch, bounded by the soil's own), and the
lateral strength chi (c + sigma tan phi) + (1 - chi)(c_a + sigma tan delta) (the lug faces do not
resist a sideways slip). The record ``TRAPPED`` (chi = 1, no lugs) is the plain Wong-Reece wheel.
Slip-sinkage after Ding et al. (Intell. Serv. Robot. 4, 2011; not at hand, their form as quoted in
later work): the sinkage exponent grows with the driving slip, N = n + n1 clip(s, 0, 1), written in
Reece's dimensionless form so that the moduli keep their units,
sigma = k b^n (z / b)^N with z = r (cos theta - cos theta_1): Bekker's law at s = 0 (or n1 = 0), and
a softer soil (z / b < 1) the more the wheel slips.

Slip, finite in every regime. The shear displacement of the soil at theta
is its slip velocity integrated over its time under the wheel:
j(theta) = r [A (theta_1 - theta) - B (sin theta_1 - sin theta)] and
j_y(theta) = r C (theta_1 - theta). In steady rolling A = r omega / V,
B = v_x / V, C = v_y / V with V = max(|r omega|, |v_x|), the speed at which
soil passes through the patch; s = A - B is then the standard piecewise slip:
s = (r omega - v) / (r omega) when driving (A = 1, B = 1 - s: Wong's j), and
(r omega - v) / v when braking (B = 1, A = 1 + s). |s| <= 2 always, also
below -1 (a wheel turning against its travel), where the braking form holds
unchanged; and C = (1 - s) tan(beta) gives Ishigami's j_y.

Standstill, without a switch. A, B and C are carried as displacements
(``shear_state_step``): D_a, D_b, D_y (m) integrate r omega, v_x and v_y and
relax at the rate V / L, L = r theta_1 the patch length (the soil they were
stored in leaves the patch), and A = (D_a + t_d dD_a/dt) / L, and likewise B
and C, with t_d the soil's ``shear_damping_time``. In steady motion
D = u L / V exactly, the textbook values above; at rest (V = 0) the
displacements are the wheel's own creep, so the soil holds it on Janosi's
shear spring (stiffness of order the shear capacity / 2K), with a damper
t_d times that stiffness: a continuous function of the state, no velocity set.
A plastic clip (``PLASTIC_K``) bounds what a stopped slip leaves stored.

Direction. The Wong-Reece geometry has a front (entry) and a rear; a wheel
that travels backwards is the mirror image (v_x, omega -> -v_x, -omega, then
DP and T_y change sign). The two are blended with the weight
w = clip(1/2 + v_x / (2 v_reg), 0, 1), continuous through v_x = 0, where the
compaction resistance -∫ sigma sin cancels: a wheel at rest on flat soil is
pushed neither way; moved slowly it meets that resistance in proportion to
its speed (v_reg the soil's ``slip_speed_reg``). The bulldozing resistance
turns with the sign of v_y the same way.

The integrals use Gauss-Legendre nodes after the substitution
theta = theta_end + span u^2 on each region, which removes the
(theta_1 - theta)^n endpoint singularity of sigma (the integrand becomes
u^(2n+1) times a smooth function).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from eels_gz.soil.params import SoilParams

NODES = 16  # Gauss-Legendre nodes per stress region
_X, _W = np.polynomial.legendre.leggauss(NODES)
GL_U = 0.5 * (_X + 1.0)  # nodes on [0, 1]
GL_W = 0.5 * _W

# the packed soil record handed to the kernels (index -> meaning)
SOIL_FIELDS = ("k_c", "k_phi", "n", "cohesion", "tan_phi", "K", "c1", "c2", "gamma", "D1", "D2",
               "v_reg", "alpha", "t_d", "n1", "tan_delta", "c_a", "K_p", "sqrt_K_p")
# the wheel record (eels_gz.soil.grousers.ContactGeometry.record): trapped fraction, lug protrusion (m),
# lugs per radian; TRAPPED is the cylinder with the soil's own strength and no lug thrust
WHEEL_FIELDS = ("chi", "lug_e", "lugs_per_rad")
TRAPPED = np.array([1.0, 0.0, 0.0])


def pack_soil(params: SoilParams, gravity: float = 9.81) -> np.ndarray:
    """The soil record of the kernels, ``SOIL_FIELDS`` in order; ``gravity`` in m/s^2 (soil weight)."""
    phi = params.friction_angle
    x = 0.25 * math.pi - 0.5 * phi
    cot_x = 1.0 / math.tan(x)
    d1 = cot_x + math.tan(x + phi)
    d2 = cot_x + cot_x * cot_x * math.tan(phi)  # cot^2 X / cot phi
    ratio = params.interface_friction_ratio
    kp = math.tan(0.25 * math.pi + 0.5 * phi) ** 2  # Rankine's K_p (eels_gz.soil.grousers)
    return np.array([params.k_c, params.k_phi, params.n, params.cohesion, math.tan(phi),
                     params.shear_modulus_K, params.c1, params.c2, params.density * gravity, d1, d2,
                     params.slip_speed_reg, params.normal_damping, params.shear_damping_time,
                     params.slip_sinkage_n1, math.tan(ratio * phi), ratio * params.cohesion, kp, math.sqrt(kp)],
                    dtype=np.float64)


@njit(cache=True)
def _sigma(theta_eq, cos1, k_rn, n):
    """Bekker's normal stress k r^n (cos theta_eq - cos theta_1)^n, with ``k_rn`` = k r^n and ``cos1`` =
    cos theta_1 given (per wheel, not per point); n = 1 (two of the shipped sets) takes no power."""
    d = math.cos(theta_eq) - cos1
    if d <= 0.0:
        return 0.0
    return k_rn * (d if n == 1.0 else d ** n)


@njit(cache=True)
def _sigma_slip(theta_eq, cos1, k_bn, r_b, big_n):
    """The normal stress with Ding's slip-sinkage exponent: k b^n (z / b)^N, z = r (cos theta_eq - cos theta_1),
    ``k_bn`` = k b^n, ``r_b`` = r / b, ``big_n`` = N = n + n1 s."""
    d = math.cos(theta_eq) - cos1
    if d <= 0.0:
        return 0.0
    return k_bn * (r_b * d) ** big_n


@njit(cache=True)
def _janosi(tau_max, j, big_k):
    """tau_max sign(j)(1 - exp(-|j|/K)), odd and continuous in j."""
    if j >= 0.0:
        return tau_max * -math.expm1(-j / big_k)
    return -tau_max * -math.expm1(j / big_k)


@njit(cache=True)
def wong_reece(r, b, h, a_rot, b_lin, c_lat, s_lat, soil, gl_u, gl_w, wheel=None):
    """Soil forces on one wheel travelling forward (the entry side at +x), N and N m.

    r, b: the radius the stresses act on and the width (m); h: its sinkage (m, <= 0 is off the ground);
    a_rot = r omega / V, b_lin = v_x / V, c_lat = v_y / V (module docstring);
    s_lat in [-1, 1]: the direction of the lateral slip for bulldozing; ``wheel``: the wheel record
    (``WHEEL_FIELDS``: trapped fraction, lug protrusion, lugs per radian), None for ``TRAPPED``.
    Returns (W, DP, T_y, F_y): normal load, drawbar pull, the soil's moment about the axle, and the
    lateral force (shear plus bulldozing), all on the wheel.
    """
    if h <= 0.0:
        return 0.0, 0.0, 0.0, 0.0
    if wheel is None:
        chi, lug_e, lugs = 1.0, 0.0, 0.0
    else:
        chi, lug_e, lugs = wheel[0], wheel[1], wheel[2]
    hh = min(h, r)
    theta1 = math.acos(1.0 - hh / r)
    k_c, k_phi, n, coh, tan_phi, big_k, c1, c2 = soil[0], soil[1], soil[2], soil[3], soil[4], soil[5], soil[6], soil[7]
    gamma, d1, d2 = soil[8], soil[9], soil[10]
    n1, tan_delta, c_a, k_p, sqrt_kp = soil[14], soil[15], soil[16], soil[17], soil[18]
    k = k_c / b + k_phi
    k_rn = k * r ** n
    slip = a_rot - b_lin
    theta_m = min(max((c1 + c2 * slip) * theta1, 0.0), theta1)
    # Ding's slip-sinkage: the exponent grows with the driving slip (clipped to [0, 1])
    big_n = n + n1 * min(max(slip, 0.0), 1.0)
    slip_sinkage = big_n != n
    k_bn = k * b ** n
    r_b = r / b
    # the lugs' passive thrust as a stress on the rim: p_lug = lug_a sigma + lug_b (eels_gz.soil.grousers)
    lug_a = lugs * k_p * lug_e / r
    lug_b = lugs * (0.5 * gamma * k_p * lug_e * lug_e + 2.0 * coh * sqrt_kp * lug_e) / r
    sin1 = math.sin(theta1)
    cos1 = math.cos(theta1)
    w_load = 0.0
    dp = 0.0
    tq = 0.0
    fy = 0.0
    fu = 0.0
    for region in range(2):
        # front [theta_m, theta_1]: theta = theta_1 - span u^2; rear [0, theta_m]: theta = span u^2
        span = theta1 - theta_m if region == 0 else theta_m
        if span <= 0.0:
            continue
        for i in range(gl_u.shape[0]):
            u = gl_u[i]
            dtheta = gl_w[i] * 2.0 * span * u
            if region == 0:
                theta = theta1 - span * u * u
                theta_eq = theta
            else:
                theta = span * u * u
                theta_eq = theta1 - theta * (theta1 - theta_m) / theta_m
            if slip_sinkage:
                sigma = _sigma_slip(theta_eq, cos1, k_bn, r_b, big_n)
            else:
                sigma = _sigma(theta_eq, cos1, k_rn, n)
            tau_soil = coh + sigma * tan_phi
            tau_int = c_a + sigma * tan_delta
            tau_max = chi * tau_soil + (1.0 - chi) * min(tau_int + lug_a * sigma + lug_b, tau_soil)
            tau_lat = chi * tau_soil + (1.0 - chi) * tau_int
            c = math.cos(theta)
            s = math.sin(theta)
            j = r * (a_rot * (theta1 - theta) - b_lin * (sin1 - s))
            tau = _janosi(tau_max, j, big_k)
            jy = r * c_lat * (theta1 - theta)
            tau_y = _janosi(tau_lat, jy, big_k)
            w_load += (sigma * c + tau * s) * dtheta
            dp += (tau * c - sigma * s) * dtheta
            tq += tau * dtheta
            fy += tau_y * dtheta
            hz = r * (c - cos1)
            fu += d1 * (coh * hz + 0.5 * d2 * gamma * hz * hz) * (r - hz * c) * dtheta
    return r * b * w_load, r * b * dp, -r * r * b * tq, -(r * b * fy + fu * s_lat)


@njit(cache=True)
def _clip(x, lo, hi):
    return min(max(x, lo), hi)


@njit(cache=True)
def steady_coefficients(r, v_x, v_y, omega):
    """(A, B, C) of steady motion (module docstring); (0, 0, 0) at rest."""
    big_v = max(abs(r * omega), abs(v_x))
    if big_v <= 0.0:
        return 0.0, 0.0, 0.0
    return r * omega / big_v, v_x / big_v, v_y / big_v


PLASTIC_K = 3.0  # the shear displacement a wheel keeps when its slip stops, in units of K (see shear_state_step)


@njit(cache=True)
def shear_state_step(state, r, h, v_x, v_y, omega, dt, t_d, big_k, v_reg):
    """Advance one wheel's shear displacements ``state`` = (D_a, D_b, D_y) (m) by ``dt`` (s), in place,
    and return the (A, B, C) they give (module docstring). Off the ground the state is cleared.

    Each D follows dD/dt = u - (V / L) D (u = r omega, v_x, v_y), updated exactly over the step
    (unconditionally stable), then clipped to |D| <= PLASTIC_K K + |u| L / max(V, v_reg): a plastic
    slider that never binds in steady motion faster than v_reg (|D| = |u| L / V there) and, when a
    slip stops, keeps at most 3 K of it (Janosi's law has no unloading branch: without the clip a
    wheel that slid sideways at rest would be pushed back along its whole slide). 3 K lets a wheel
    at rest hold half and more of its skid force (mean j ~ 1.5 K); the price is a spring-back of
    about 3 K after a slide at rest, against the ~2 K of an elastic unloading at Janosi's initial
    stiffness (tau_max / K): an elasto-plastic unloading branch would shorten it. The damper uses
    the rate u - (V / L) D_old, zero in steady motion.
    """
    if h <= 0.0:
        state[0] = 0.0
        state[1] = 0.0
        state[2] = 0.0
        return 0.0, 0.0, 0.0
    theta1 = math.acos(1.0 - min(h, r) / r)
    length = max(r * theta1, 1e-12)
    big_v = max(abs(r * omega), abs(v_x))
    x = big_v * dt / length
    decay = math.exp(-x)
    gain = dt if x < 1e-12 else length / big_v * (1.0 - decay)
    out0 = 0.0
    out1 = 0.0
    out2 = 0.0
    for k in range(3):
        u = r * omega if k == 0 else (v_x if k == 1 else v_y)
        old = state[k]
        rate = u - big_v * old / length
        cap = PLASTIC_K * big_k + abs(u) * length / max(big_v, v_reg)
        new = min(max(old * decay + u * gain, -cap), cap)
        state[k] = new
        coeff = (new + t_d * rate) / length
        if k == 0:
            out0 = coeff
        elif k == 1:
            out1 = coeff
        else:
            out2 = coeff
    return out0, out1, out2


@njit(cache=True)
def wheel_forces(r, b, h, a_rot, b_lin, c_lat, v_x, v_y, soil, gl_u, gl_w, wheel=None):
    """Forces on one wheel in any direction of travel (module docstring: direction), N and N m.

    a_rot, b_lin, c_lat: the shear coefficients (A, B, C) for the wheel's own forward
    direction, from ``shear_state_step`` or ``steady_coefficients``; v_x, v_y: the wheel
    centre's velocity along its heading and its axle (m/s), which blend the two directions
    and turn the bulldozing resistance; ``wheel``: the wheel record (``wong_reece``).
    Returns (F_x, F_y, W, T_y) in the wheel's ground frame (x heading, y axle, z normal).
    """
    if h <= 0.0:
        return 0.0, 0.0, 0.0, 0.0
    v_reg = soil[11]
    s_lat = _clip(v_y / v_reg, -1.0, 1.0)
    w = _clip(0.5 + 0.5 * v_x / v_reg, 0.0, 1.0)
    fx = 0.0
    fy = 0.0
    fz = 0.0
    ty = 0.0
    if w > 0.0:
        load, dp, tq, lat = wong_reece(r, b, h, a_rot, b_lin, c_lat, s_lat, soil, gl_u, gl_w, wheel)
        fx += w * dp
        fz += w * load
        ty += w * tq
        fy += w * lat
    if w < 1.0:
        load, dp, tq, lat = wong_reece(r, b, h, -a_rot, -b_lin, c_lat, s_lat, soil, gl_u, gl_w, wheel)
        fx -= (1.0 - w) * dp
        fz += (1.0 - w) * load
        ty -= (1.0 - w) * tq
        fy += (1.0 - w) * lat
    return fx, fy, fz, ty


@njit(cache=True)
def soil_wrenches(radius, width, sinkage, v_x, v_y, v_z, omega, state, dt, soil, wheels, gl_u, gl_w, out):
    """One step over wheels: advance each wheel's shear state (``state`` (n, 3), in place, over
    ``dt`` s), then ``wheel_forces`` with the normal load's Hunt-Crossley damping.

    All other inputs are arrays of one entry per wheel (v_z: the centre's velocity along the
    soil normal, m/s, positive rising; ``wheels`` (n, 3) their wheel records). ``out`` (n, 5)
    receives F_x, F_y, F_z, T_y and M_x:
    F_z = W max(0, 1 - alpha v_z) (alpha = soil normal_damping: a sinking wheel meets more,
    a rising one less, never a pull), and M_x = (r - h / 2) F_y, the moment about the heading
    of the lateral force acting at the contact patch, taken at mid-sinkage.
    """
    alpha = soil[12]
    t_d = soil[13]
    for i in range(radius.shape[0]):
        a_rot, b_lin, c_lat = shear_state_step(state[i], radius[i], sinkage[i], v_x[i], v_y[i], omega[i], dt, t_d,
                                               soil[5], soil[11])
        fx, fy, fz, ty = wheel_forces(radius[i], width[i], sinkage[i], a_rot, b_lin, c_lat, v_x[i], v_y[i],
                                      soil, gl_u, gl_w, wheels[i])
        out[i, 0] = fx
        out[i, 1] = fy
        out[i, 2] = fz * max(0.0, 1.0 - alpha * v_z[i])
        out[i, 3] = ty
        out[i, 4] = (radius[i] - 0.5 * min(max(sinkage[i], 0.0), radius[i])) * fy
    return out


@njit(cache=True)
def soil_world_wrenches(radius, width, dist, normal, rot, lin, ang, state, dt, soil, wheels, gl_u, gl_w,
                        local, force, torque, sinkage):
    """``soil_wrenches`` from world data, in one compiled pass (``eels_gz.soil.contact`` explains the frames).

    dist (n,), normal (n, 3): the terrain's signed distance and outward normal at each wheel centre;
    rot (n, 3, 3), lin, ang (n, 3): the wheel links' world orientation and velocities; wheels (n, 3):
    their wheel records (``WHEEL_FIELDS``). Writes
    ``local`` (n, 5: F_x, F_y, F_z, T_y, M_x), the world ``force`` and ``torque`` (n, 3) about the
    wheel centres, and ``sinkage`` (n,).
    """
    n = radius.shape[0]
    v_x = np.empty(n)
    v_y = np.empty(n)
    v_z = np.empty(n)
    omega = np.empty(n)
    frames = np.zeros((n, 3, 3))  # heading, lateral, axle
    for i in range(n):
        ax = rot[i, 0, 1]
        ay = rot[i, 1, 1]
        az = rot[i, 2, 1]
        nx = normal[i, 0]
        ny = normal[i, 1]
        nz = normal[i, 2]
        hx = ay * nz - az * ny
        hy = az * nx - ax * nz
        hz = ax * ny - ay * nx
        norm = math.sqrt(hx * hx + hy * hy + hz * hz)
        if norm > 1e-9:
            hx /= norm
            hy /= norm
            hz /= norm
            sinkage[i] = radius[i] - dist[i]
        else:  # a wheel lying on its side (axle along the normal) rolls nowhere: no soil force
            sinkage[i] = 0.0
        lx = ny * hz - nz * hy
        ly = nz * hx - nx * hz
        lz = nx * hy - ny * hx
        frames[i, 0, 0] = hx
        frames[i, 0, 1] = hy
        frames[i, 0, 2] = hz
        frames[i, 1, 0] = lx
        frames[i, 1, 1] = ly
        frames[i, 1, 2] = lz
        frames[i, 2, 0] = ax
        frames[i, 2, 1] = ay
        frames[i, 2, 2] = az
        v_x[i] = lin[i, 0] * hx + lin[i, 1] * hy + lin[i, 2] * hz
        v_y[i] = lin[i, 0] * lx + lin[i, 1] * ly + lin[i, 2] * lz
        v_z[i] = lin[i, 0] * nx + lin[i, 1] * ny + lin[i, 2] * nz
        omega[i] = ang[i, 0] * ax + ang[i, 1] * ay + ang[i, 2] * az
    soil_wrenches(radius, width, sinkage, v_x, v_y, v_z, omega, state, dt, soil, wheels, gl_u, gl_w, local)
    for i in range(n):
        for k in range(3):
            force[i, k] = local[i, 0] * frames[i, 0, k] + local[i, 1] * frames[i, 1, k] + local[i, 2] * normal[i, k]
            torque[i, k] = local[i, 3] * frames[i, 2, k] + local[i, 4] * frames[i, 0, k]
    return force


@njit(cache=True)
def solve_sinkage(load, r, b, a_rot, b_lin, soil, gl_u, gl_w, wheel=None):
    """The sinkage h (m) at which W(h) = load (N) for a forward-travelling wheel (``wheel`` its record,
    ``wong_reece``), by bisection.

    W grows with h; if even h = r cannot carry the load, returns r (the wheel is
    buried to its axle). load <= 0 gives 0.
    """
    if load <= 0.0:
        return 0.0
    lo = 0.0
    hi = r
    if wong_reece(r, b, hi, a_rot, b_lin, 0.0, 0.0, soil, gl_u, gl_w, wheel)[0] < load:
        return r
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if wong_reece(r, b, mid, a_rot, b_lin, 0.0, 0.0, soil, gl_u, gl_w, wheel)[0] < load:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)
