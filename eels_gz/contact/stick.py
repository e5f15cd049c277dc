"""Stick-slip friction for the screw contact: a bristle per contact point.

Why. The regulator ``u = v / sqrt(|v|^2 + v_eps^2)`` (``laws.py``) makes
friction a viscous damper near zero slip: a screw that holds a load at rest
must creep at ``v = v_eps * load / capacity``; with ``v_eps = 0.05 m/s`` a
robot holding its weight between walls with twice the needed friction slides
at about 3 cm/s. Making ``v_eps`` small does not help: the damper
``mu |e_v| F_n / v_eps`` is integrated explicitly and exceeds the step's
stability bound on the light screw spin DOF (``dt c / I > 2``), the chatter
seen under large normal loads.

The bristle. Each point in contact carries a tangential displacement ``z``
(world, m), the elastic deflection of the blade-ice contact. Every step

1. ``z`` is carried into the current tangent plane (its normal part removed)
   and advanced by the point's slip: ``z <- z + v_t dt``;
2. if ``|z| > z0`` (``stick_length``) the point slides: ``z <- z0 z / |z|``;
3. friction is Eq. 6 with the unit slip direction replaced by
   ``u = (z + tau v_t) / z0`` (a damper of time ``tau`` =
   ``STICK_DAMPING_TIME`` beside the spring), scaled back to ``|u| = 1``
   when longer: ``F_t = -F_n mu (u + (|e_v| - 1)(u . e_v) e_v)``.

While sliding steadily, ``z`` lines up with the slip and ``|u| = 1``: the
force is Eq. 6 exactly, unregulated. At rest ``|u| < 1`` and the force is a
spring ``-(mu F_n / z0)(z + (|e_v| - 1)(z . e_v) e_v)``: it holds any load
within the friction limit with a deflection below ``z0`` and no creep (an
elasto-plastic, Dahl-type law). The set of forces it can give is exactly the
set Eq. 6 gives, so ``|e_v| = 1`` is still the isotropic law. The force is
bounded by Eq. 6 whatever the slip speed, so there is no ``1/v_eps`` gain;
the stick spring's stability bound is ``dt^2 k_t / m < 4`` with
``k_t = mu |e_v| F_n / z0`` per point (config/contact/ice.yaml sizes it).

The blades' rolling resistance (``point_terms.py``) keeps a second state per
point, the sideways travel ``zeta`` of its contact patch (m), saturated at
the same z0: the normal force sits at ``rho = b clip((zeta + tau_r v_side) / z0)``
from the contact line (``b = roll_arm``) and adds the moment ``rho F_n``.
Rolling stiffness about the contact line per point: ``F_n b r / z0``
(N m/rad), r the blade-tip radius; tau_r = ``ROLL_DAMPING_TIME``.

A point that leaves contact forgets its bristle and its patch travel.

The law is two per-point numba functions (``bristle_direction``, ``bristle_roll_moment``) that the
one wrench loop of ``screw_wrenches.py`` calls when the packed parameters say LAW_BRISTLE.
"""

from __future__ import annotations

import math

from numba import njit


# Damping time of the bristle (s): u = (z + tau v) / z0, a damper tau k_t beside the
# stick spring k_t, so that a held load does not ring on it for ever. With tau = 2 ms
# a 5 kg screw on its four points' spring (k_t ~ 5e4 N/m) gets zeta ~ 0.1 and
# the explicit step stays far inside its bound (dt tau k_t / m ~ 0.02 << 2);
# the screw spin (I ~ 4e-3 kg m^2, k ~ 300 N m/rad): dt tau k / I ~ 0.15.
STICK_DAMPING_TIME = 0.002
# Damping time of the rolling seat (s): rho = b clip((zeta + tau_roll v_side) / z0). The seat's
# stiffness is far below the bristle's, so the bristle's 2 ms would leave a screw rocking on it
# for ever: about its contact line a screw of load F_n = m g has the stiffness m g b r / z0 and the
# inertia m r^2 (1 + I / (m r^2)), a natural frequency sqrt(g b / (r z0 (1 + I / (m r^2)))) that
# does not depend on the load: 6.6 rad/s for the default b = 0.5 mm, z0 = 1 mm, r = 0.09 m and
# I / (m r^2) = 0.26 (a solid root of 0.065 m), critically damped by tau = 2 / 6.6 = 0.30 s.
# 0.25 s (damping ratio 0.8); the explicit step sees dt tau (m g b r / z0) / (m r^2) = 0.011 << 2.
# Above z0 / tau = 4 mm/s of patch travel the damper saturates: rolling meets the full b F_n.
ROLL_DAMPING_TIME = 0.25
# Per point state: the bristle z (m, world, 3 components) and the patch travel zeta (m).
STATE_WIDTH = 4


@njit(cache=True)
def bristle_direction(stick, s, p, tx, ty, tz, nx, ny, nz, stick_length, dt):  # pragma: no cover - compiled
    """The bristle law's friction direction ``u`` (|u| <= 1) at point p of screw s, slip (tx, ty, tz)
    (m/s) in the tangent plane of unit normal (nx, ny, nz), bristle length ``stick_length`` (m) and
    step ``dt`` (s): the bristle stick[s, p, :3] (m, world) carried into the tangent plane, advanced
    by the slip and saturated at z0, updated in place; then ``u = (z + tau v_t) / z0``."""
    # bristle: into the tangent plane, advanced by the slip, saturated at z0
    zx, zy, zz = stick[s, p, 0], stick[s, p, 1], stick[s, p, 2]
    zn = zx * nx + zy * ny + zz * nz
    zx, zy, zz = zx - zn * nx + tx * dt, zy - zn * ny + ty * dt, zz - zn * nz + tz * dt
    z_len = math.sqrt(zx * zx + zy * zy + zz * zz)
    if z_len > stick_length:
        scale = stick_length / z_len
        zx, zy, zz = zx * scale, zy * scale, zz * scale
    stick[s, p, 0], stick[s, p, 1], stick[s, p, 2] = zx, zy, zz
    # the bristle's damper: u = (z + tau v_t) / z0, never past |u| = 1 (Eq. 6's bound)
    ux = (zx + STICK_DAMPING_TIME * tx) / stick_length
    uy = (zy + STICK_DAMPING_TIME * ty) / stick_length
    uz = (zz + STICK_DAMPING_TIME * tz) / stick_length
    u_len = math.sqrt(ux * ux + uy * uy + uz * uz)
    if u_len > 1.0:
        ux, uy, uz = ux / u_len, uy / u_len, uz / u_len
    return ux, uy, uz


@njit(cache=True)
def bristle_roll_moment(stick, s, p, fn, roll_arm, v_side, stick_length, dt):  # pragma: no cover - compiled
    """The rolling seat's moment (N m, along the patch frame's moment direction) at point p of screw
    s, normal force fn (N), arm ``roll_arm`` (m), patch speed ``v_side`` (m/s): the patch travel
    stick[s, p, 3] (m) advanced and saturated at z0, updated in place; ``rho = b clip((zeta + tau_r
    v_side) / z0)``; the moment ``rho F_n``."""
    zeta = stick[s, p, 3] + v_side * dt
    if zeta > stick_length:
        zeta = stick_length
    elif zeta < -stick_length:
        zeta = -stick_length
    stick[s, p, 3] = zeta
    u = (zeta + ROLL_DAMPING_TIME * v_side) / stick_length
    if u > 1.0:
        u = 1.0
    elif u < -1.0:
        u = -1.0
    return fn * roll_arm * u

