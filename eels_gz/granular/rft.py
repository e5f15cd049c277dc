"""Granular resistive force theory (RFT) on sets of surface elements.

Li, Zhang & Goldman, "A terradynamics of legged locomotion on granular media",
Science 339, 1408 (2013), and its supplement: a surface element of area dA at
depth |z| below the granular surface, with orientation angle beta and velocity
angle gamma, feels the stresses

    sigma_z = alpha_z(beta, gamma) |z|,   sigma_x = alpha_x(beta, gamma) |z|

(zero above the surface), with alpha = zeta * alpha^generic and the generic
alpha the discrete Fourier fit of the paper (its nine coefficients,
:data:`GENERIC`, normalised so that alpha_z^generic(0, pi/2) = 1: a horizontal
plate pushed straight down feels zeta |z| dA).

Angles, in the vertical plane of the element (unit horizontal axis e2, z up):
the element's outward normal is n = sin(beta) e2 - cos(beta) z (beta = 0: a
face looking down; pi/2: a face looking along e2; beta enters only as 2 beta,
so a plate and its flipped self are the same), and its velocity is
|v| (cos(gamma) e2 - sin(gamma) z) (gamma = pi/2: moving straight down). The
stress on the element is zeta |z| (-alpha_x e2 + alpha_z z): with these signs
a plate pushed down is pushed up, one dragged along e2 is pushed back.
The fit satisfies the mirror symmetry alpha_z(-beta, pi - gamma) = alpha_z,
alpha_x(-beta, pi - gamma) = -alpha_x exactly, so the stress does not depend
on which way e2 points.

Three dimensions (the choice made here, after Treers, Cao & Stuart, "Granular
resistive force theory implementation for three-dimensional trajectories",
IEEE RA-L 6(2), 2021, and their code, github.com/embodied-dexterity-group/
granular_rft_3D, rft_3D_body.m): the plane of each element is the vertical
plane through its normal (e2 = the normal's horizontal direction; for a
horizontal face, the velocity's). beta comes from the normal, which lies in
that plane; gamma from the velocity's component in it. The velocity across
the plane (along e1 = e2 x z: the element sliding along its own horizontal
line) meets the lateral stress alpha_y = alpha_x(0, 0) (their "simplest
form") against it. The in-plane and lateral stresses are weighted by the
(regularised) velocity's components in and across the plane, |u_23| and
|u_1|; Treers et al. weight them by fitted functions of those components
instead, which are not used. Leading elements are loaded (n . v > 0 in their
code); here also tangential ones (n . v = 0: the core of a screw spinning in
place), as a plate moving in its own plane is (alpha(0, 0) of the fit), and
the leading test is ramped; trailing elements (moving away from the grains)
feel nothing.

Regimes, without a special case that sets a velocity: above the surface
(depth <= 0) exactly zero; at rest RFT has no direction, so the velocity is
regularised, u = v / sqrt(|v|^2 + v_reg^2), and the stress is scaled by the
in-plane part of |u|: it goes to zero continuously at rest, and a load held
still creeps at about v_reg times load over capacity (RFT is rate-independent
above v_reg); the leading test is ramped over n . u in [-band, 0] so that an
element turning from trailing to leading loads continuously.

Units: SI (zeta in N/m^3, depths and positions m, areas m^2, forces N). The
model is quasi-static (slow intrusion, dry media) and has no memory of the
surface it disturbed. No engine imports here.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

# Li, Zhang & Goldman 2013 (supplement), the generic fit: A00, A10, B11, B01, B-11 (alpha_z) and
# C11, C01, C-11, D10 (alpha_x), dimensionless (the paper's N/cm^3 with zeta = 1)
GENERIC = np.array([0.206, 0.169, 0.212, 0.358, 0.055, -0.124, 0.253, 0.007, 0.088])


@njit(cache=True)
def alpha_generic(beta: float, gamma: float, c: np.ndarray) -> tuple[float, float]:  # pragma: no cover - compiled
    """(alpha_z, alpha_x) of the Fourier fit ``c`` (:data:`GENERIC` order) at beta, gamma (rad)."""
    b2 = 2.0 * beta
    az = (c[0] + c[1] * math.cos(b2) + c[2] * math.sin(b2 + gamma) + c[3] * math.sin(gamma)
          + c[4] * math.sin(-b2 + gamma))
    ax = c[5] * math.cos(b2 + gamma) + c[6] * math.cos(gamma) + c[7] * math.cos(-b2 + gamma) + c[8] * math.sin(b2)
    return az, ax


def alpha(beta, gamma, coefficients: np.ndarray = GENERIC) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised (alpha_z, alpha_x) of the generic fit (dimensionless; times zeta in N/m^3)."""
    beta, gamma = np.broadcast_arrays(np.asarray(beta, float), np.asarray(gamma, float))
    az, ax = np.empty(beta.shape), np.empty(beta.shape)
    for i, (b, g) in enumerate(zip(beta.ravel(), gamma.ravel())):
        az.flat[i], ax.flat[i] = alpha_generic(float(b), float(g), coefficients)
    return az, ax


@njit(cache=True)
def rft_element_forces(normals, areas, vel, depth, zeta, v_reg, band, coef, force_out):  # pragma: no cover
    """World forces (M, 3) on M surface elements (outward unit ``normals`` (M, 3), ``areas`` (M,) m^2,
    velocities ``vel`` (M, 3) m/s, ``depth`` (M,) m below the surface, <= 0 above) into ``force_out``.
    ``zeta`` N/m^3, ``v_reg`` m/s, ``band`` the leading ramp's width in n . u; see the module docstring."""
    vr2 = v_reg * v_reg
    for i in range(normals.shape[0]):
        force_out[i, 0] = 0.0
        force_out[i, 1] = 0.0
        force_out[i, 2] = 0.0
        d = depth[i]
        if d <= 0.0:
            continue
        n0, n1, n2 = normals[i, 0], normals[i, 1], normals[i, 2]
        v0, v1, v2 = vel[i, 0], vel[i, 1], vel[i, 2]
        s = 1.0 / math.sqrt(v0 * v0 + v1 * v1 + v2 * v2 + vr2)
        u0, u1, u2 = v0 * s, v1 * s, v2 * s
        lead = n0 * u0 + n1 * u1 + n2 * u2
        gate = 1.0 + lead / band if lead < 0.0 else 1.0
        if gate <= 0.0:
            continue
        # the element's vertical plane: e2 along the normal's horizontal part (the velocity's for a flat face)
        h = math.sqrt(n0 * n0 + n1 * n1)
        if h > 1e-9:
            e0, e1 = n0 / h, n1 / h
        else:
            hu = math.sqrt(u0 * u0 + u1 * u1)
            if hu > 0.0:
                e0, e1 = u0 / hu, u1 / hu
            else:
                e0, e1 = 1.0, 0.0
        ux = u0 * e0 + u1 * e1  # in-plane velocity (regularised): along e2 and z
        ul = u0 * e1 - u1 * e0  # across the plane, along e1 = e2 x z = (e2y, -e2x, 0)
        s23 = math.sqrt(ux * ux + u2 * u2)
        scale = zeta * d * areas[i] * gate
        # lateral: alpha_y = alpha_x(0, 0) against the sliding along e1 (Treers et al.'s simplest form)
        ay = coef[5] + coef[6] + coef[7]
        fl = -scale * ay * ul
        force_out[i, 0] = fl * e1
        force_out[i, 1] = -fl * e0
        if s23 <= 0.0:
            continue
        beta = math.atan2(n2, n0 * e0 + n1 * e1) + 0.5 * math.pi
        gamma = math.atan2(-u2, ux)
        az, ax = alpha_generic(beta, gamma, coef)
        mag = scale * s23
        force_out[i, 0] += -mag * ax * e0
        force_out[i, 1] += -mag * ax * e1
        force_out[i, 2] = mag * az


def element_forces(normals, areas, vel, depth, zeta: float, v_reg: float, band: float = 0.05,
                   coefficients: np.ndarray = GENERIC) -> np.ndarray:
    """:func:`rft_element_forces` on arrays (M, 3), (M,), (M, 3), (M,): the forces (M, 3) in N."""
    normals = np.ascontiguousarray(normals, dtype=float).reshape(-1, 3)
    m = normals.shape[0]
    areas = np.ascontiguousarray(np.broadcast_to(np.asarray(areas, float), (m,)))
    vel = np.ascontiguousarray(np.broadcast_to(np.asarray(vel, float), (m, 3)))
    depth = np.ascontiguousarray(np.broadcast_to(np.asarray(depth, float), (m,)))
    out = np.empty((m, 3))
    rft_element_forces(normals, areas, vel, depth, float(zeta), float(v_reg), float(band),
                       np.ascontiguousarray(coefficients, dtype=float), out)
    return out


@njit(cache=True)
def body_elements_world(link_pos, link_rot, lin, ang, link_of, p_link, n_link,
                        p_out, n_out, v_out, r_out):  # pragma: no cover - compiled
    """Elements given in their links' frames (``p_link``, ``n_link`` (M, 3), link index ``link_of``) to
    the world: positions, normals, rigid-body velocities and offsets from the link origins (M, 3)."""
    for i in range(p_link.shape[0]):
        k = link_of[i]
        for a in range(3):
            r = link_rot[k, a, 0] * p_link[i, 0] + link_rot[k, a, 1] * p_link[i, 1] + link_rot[k, a, 2] * p_link[i, 2]
            r_out[i, a] = r
            p_out[i, a] = link_pos[k, a] + r
            n_out[i, a] = (link_rot[k, a, 0] * n_link[i, 0] + link_rot[k, a, 1] * n_link[i, 1]
                           + link_rot[k, a, 2] * n_link[i, 2])
        w0, w1, w2 = ang[k, 0], ang[k, 1], ang[k, 2]
        r0, r1, r2 = r_out[i, 0], r_out[i, 1], r_out[i, 2]
        v_out[i, 0] = lin[k, 0] + w1 * r2 - w2 * r1
        v_out[i, 1] = lin[k, 1] + w2 * r0 - w0 * r2
        v_out[i, 2] = lin[k, 2] + w0 * r1 - w1 * r0


@njit(cache=True)
def sum_wrenches(link_of, r, f, depth, areas, n_links, force_out, torque_out, immersed_out):  # pragma: no cover
    """Per link: the sum of the element forces ``f`` and of their moments ``r x f`` about the link origin, and
    the area of its elements below the surface (``depth`` > 0)."""
    for k in range(n_links):
        immersed_out[k] = 0.0
        for a in range(3):
            force_out[k, a] = 0.0
            torque_out[k, a] = 0.0
    for i in range(f.shape[0]):
        k = link_of[i]
        if depth[i] > 0.0:
            immersed_out[k] += areas[i]
        force_out[k, 0] += f[i, 0]
        force_out[k, 1] += f[i, 1]
        force_out[k, 2] += f[i, 2]
        torque_out[k, 0] += r[i, 1] * f[i, 2] - r[i, 2] * f[i, 1]
        torque_out[k, 1] += r[i, 2] * f[i, 0] - r[i, 0] * f[i, 2]
        torque_out[k, 2] += r[i, 0] * f[i, 1] - r[i, 1] * f[i, 0]


def plane_wrench(points, normals, areas, vel, surface_height: float, zeta: float, v_reg: float,
                 about=(0.0, 0.0, 0.0), band: float = 0.05,
                 coefficients: np.ndarray = GENERIC) -> tuple[np.ndarray, np.ndarray]:
    """The RFT force (N) and moment (N m, about the point ``about``) on surface elements at ``points`` (M, 3) m
    with outward unit ``normals`` (M, 3), ``areas`` (M,) m^2 and velocities ``vel`` (M, 3) m/s, under a
    horizontal granular surface at z = ``surface_height`` m (depth = height - z); world axes, z up."""
    points = np.ascontiguousarray(points, dtype=float).reshape(-1, 3)
    f = element_forces(normals, areas, vel, surface_height - points[:, 2], zeta, v_reg, band, coefficients)
    r = points - np.asarray(about, dtype=float)
    return f.sum(axis=0), np.cross(r, f).sum(axis=0)
