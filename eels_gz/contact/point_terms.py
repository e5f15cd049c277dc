"""Per-point terms shared by the screw contact kernels (``kernel.py``, the
regulated law, and ``stick.py``, the bristle law): the penalty normal force
of each point and the point's slip velocity and across-thread direction in
the contact tangent plane. numba functions, inlined into the kernels."""

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
