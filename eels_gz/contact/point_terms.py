"""Per-point terms of the screw contact's one wrench loop (``screw_wrenches.py``,
shared by its two laws: regulated, and the bristle law of ``stick.py``): the penalty normal force
of each point, the point's slip velocity and across-thread direction in the
contact tangent plane, and the sideways travel of its contact patch, which
the blades' rolling resistance acts on. numba functions, inlined into the
loop.

Rolling resistance of embedded blades. A screw resting on ice touches it
along a line, and for a line contact rolling is a neutral mode: the contact
point of a rolling cylinder does not slip, so no friction law acts on it (a
screw rolling sideways even lays its blade edge down along its own tangent,
like a wheel). Real blades bear on the ice over a finite width (EELS-DARTS
§4.2 lists screw penetration among the effects its friction model leaves
out; §4.3.2: the screws had to penetrate the ice to carry load). A blade
edge of tip radius r sunk a depth delta touches the ice along a chord of
half-width sqrt(2 r delta - delta^2) across the screw, and the normal
pressure may act anywhere on it: its resultant sits at an offset ``rho``,
``|rho| <= b`` (``roll_arm``), from the contact line, a moment ``rho F_n``
about that line, along the screw axis projected into the tangent plane.
To roll, the resultant must reach the edge of the bearing and the screw
climb over it, as a cylinder tips out of its seat: a lone screw of normal
load ``F_n`` starts to roll at the moment ``b F_n``, and rolls on against it
(Coulomb's rolling friction with arm b).

The offset follows the sideways travel of the contact patch over the ice,
``v_side``: the velocity of the point's frame (the link's motion without
its spin about its own axis: a screw spinning in place, or screwing along
its axis, leaves the patch where it is) along ``e_side = n x axis``. Under
the bristle law (``stick.py``) a state ``zeta`` integrates it and saturates
at the bristle length z0, and ``rho = b clip((zeta + tau_r v_side) / z0)``:
an elastic seat that holds any moment below ``b F_n`` without creep, and a
rolling resistance of ``b F_n`` beyond. Under the regulated law
(``screw_wrenches.py``) ``rho = b v_side / sqrt(v_side^2 + v_eps^2)``, which, like
that law's friction, creeps under a held moment.
"""

from __future__ import annotations

import math

from numba import njit


@njit(cache=True)
def screw_normal_forces(s, lin_vel, ang_vel, offsets, signed_distance, normal, k, c,
                        normal_out):  # pragma: no cover - compiled
    """Penalty normal force of each point of screw ``s`` into normal_out[s]
    (N, never pulling); returns the screw's load (N), which sets |e_v|."""
    vx, vy, vz = lin_vel[s, 0], lin_vel[s, 1], lin_vel[s, 2]
    wx, wy, wz = ang_vel[s, 0], ang_vel[s, 1], ang_vel[s, 2]
    load = 0.0
    for p in range(signed_distance.shape[1]):
        depth = -signed_distance[s, p]
        fn = 0.0
        if depth > 0.0:
            rx, ry, rz = offsets[s, p, 0], offsets[s, p, 1], offsets[s, p, 2]
            nx, ny, nz = normal[s, p, 0], normal[s, p, 1], normal[s, p, 2]
            px, py, pz = vx + wy * rz - wz * ry, vy + wz * rx - wx * rz, vz + wx * ry - wy * rx
            fn = k * depth - c * (px * nx + py * ny + pz * nz)
            if fn < 0.0:
                fn = 0.0
        normal_out[s, p] = fn
        load += fn
    return load


@njit(cache=True)
def point_slip_frame(s, p, lin_vel, ang_vel, offsets, normal, ev_dir):  # pragma: no cover - compiled
    """At point p of screw s: the tangential slip velocity (m/s) and the unit
    across-thread direction projected into the contact tangent plane (zero
    if it is normal to it): (tx, ty, tz, ex, ey, ez)."""
    rx, ry, rz = offsets[s, p, 0], offsets[s, p, 1], offsets[s, p, 2]
    nx, ny, nz = normal[s, p, 0], normal[s, p, 1], normal[s, p, 2]
    wx, wy, wz = ang_vel[s, 0], ang_vel[s, 1], ang_vel[s, 2]
    px = lin_vel[s, 0] + wy * rz - wz * ry
    py = lin_vel[s, 1] + wz * rx - wx * rz
    pz = lin_vel[s, 2] + wx * ry - wy * rx
    vn = px * nx + py * ny + pz * nz
    en = ev_dir[s, p, 0] * nx + ev_dir[s, p, 1] * ny + ev_dir[s, p, 2] * nz
    ex, ey, ez = ev_dir[s, p, 0] - en * nx, ev_dir[s, p, 1] - en * ny, ev_dir[s, p, 2] - en * nz
    e_len = math.sqrt(ex * ex + ey * ey + ez * ez)
    if e_len > 1e-12:
        ex, ey, ez = ex / e_len, ey / e_len, ez / e_len
    else:
        ex = ey = ez = 0.0
    return px - vn * nx, py - vn * ny, pz - vn * nz, ex, ey, ez


@njit(cache=True)
def point_patch_frame(s, p, lin_vel, ang_vel, offsets, normal, link_rot):  # pragma: no cover - compiled
    """At point p of screw s: the sideways speed of its contact patch (m/s,
    along ``e_side = n x axis``) and the unit direction of the rolling
    moment ``e_side x n`` (the screw axis in the tangent plane):
    (v_side, mx, my, mz); all zero when the axis is along the normal."""
    ax, ay, az = link_rot[s, 0, 0], link_rot[s, 1, 0], link_rot[s, 2, 0]
    nx, ny, nz = normal[s, p, 0], normal[s, p, 1], normal[s, p, 2]
    sx, sy, sz = ny * az - nz * ay, nz * ax - nx * az, nx * ay - ny * ax
    s_len = math.sqrt(sx * sx + sy * sy + sz * sz)
    if s_len < 1e-9:
        return 0.0, 0.0, 0.0, 0.0
    sx, sy, sz = sx / s_len, sy / s_len, sz / s_len
    # the link's angular velocity without its spin about the axis
    wx, wy, wz = ang_vel[s, 0], ang_vel[s, 1], ang_vel[s, 2]
    spin = wx * ax + wy * ay + wz * az
    wx, wy, wz = wx - spin * ax, wy - spin * ay, wz - spin * az
    rx, ry, rz = offsets[s, p, 0], offsets[s, p, 1], offsets[s, p, 2]
    px = lin_vel[s, 0] + wy * rz - wz * ry
    py = lin_vel[s, 1] + wz * rx - wx * rz
    pz = lin_vel[s, 2] + wx * ry - wy * rx
    v_side = px * sx + py * sy + pz * sz
    return v_side, sy * nz - sz * ny, sz * nx - sx * nz, sx * ny - sy * nx
