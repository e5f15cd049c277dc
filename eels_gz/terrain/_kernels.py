"""Numba kernels of the distance-field queries (the contact hot path).

Every kernel is a module-level ``@njit(cache=True)`` function on plain arrays
and floats, so another numba kernel (e.g. the screw-contact force loop) can
call the per-point functions directly without going through Python:

- :func:`heightfield_point` / :func:`heightfield_query`: bilinear heightfield;
- :func:`sdf_grid_point` / :func:`sdf_grid_query`: trilinear signed distance
  grid.

A per-point function returns ``(d, nx, ny, nz)``: the signed distance in
metres (positive in free space, outside the terrain solid) and the unit
outward normal. A non-finite query point gives ``d = nan`` and a zero normal;
the batch kernels count such points so the Python wrapper can refuse them.
No kernel ever reads outside its array, whatever the input.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True)
def heightfield_point(heights, x0, y0, dx, dy, px, py, pz):
    """Signed distance and outward normal of point ``(px, py, pz)`` [m] above
    the bilinear surface through ``heights[j, i]`` at ``(x0 + i dx, y0 + j dy)``.

    ``d = (pz - h) / sqrt(1 + |grad h|^2)`` (exact for a planar patch) and
    ``n = (-h_x, -h_y, 1) / sqrt(1 + |grad h|^2)``. Beyond the raster the
    edge heights are held constant (the query is clamped onto the raster), so
    the slope component across the edge is zero there.
    """
    if not (math.isfinite(px) and math.isfinite(py) and math.isfinite(pz)):
        return np.nan, 0.0, 0.0, 0.0
    ny, nx = heights.shape
    fx = (px - x0) / dx
    fy = (py - y0) / dy
    in_x = True
    in_y = True
    if fx < 0.0:
        fx = 0.0
        in_x = False
    elif fx > nx - 1:
        fx = nx - 1.0
        in_x = False
    if fy < 0.0:
        fy = 0.0
        in_y = False
    elif fy > ny - 1:
        fy = ny - 1.0
        in_y = False
    i = int(fx)
    if i > nx - 2:
        i = nx - 2
    j = int(fy)
    if j > ny - 2:
        j = ny - 2
    u = fx - i
    v = fy - j
    h00 = heights[j, i]
    h10 = heights[j, i + 1]
    h01 = heights[j + 1, i]
    h11 = heights[j + 1, i + 1]
    a = h00 + (h10 - h00) * u  # along x at row j
    b = h01 + (h11 - h01) * u  # along x at row j + 1
    h = a + (b - a) * v
    hx = 0.0
    hy = 0.0
    if in_x:
        hx = ((h10 - h00) + v * ((h11 - h01) - (h10 - h00))) / dx
    if in_y:
        hy = (b - a) / dy
    inv = 1.0 / math.sqrt(1.0 + hx * hx + hy * hy)
    return (pz - h) * inv, -hx * inv, -hy * inv, inv


@njit(cache=True)
def heightfield_query(heights, x0, y0, dx, dy, points, out_d, out_n):
    """Batch :func:`heightfield_point` over ``points`` (N, 3) into ``out_d``
    (N,) and ``out_n`` (N, 3). Returns the number of non-finite points."""
    bad = 0
    for p in range(points.shape[0]):
        d, nx, ny, nz = heightfield_point(heights, x0, y0, dx, dy, points[p, 0], points[p, 1], points[p, 2])
        if d != d:
            bad += 1
        out_d[p] = d
        out_n[p, 0] = nx
        out_n[p, 1] = ny
        out_n[p, 2] = nz
    return bad


@njit(cache=True)
def _trilinear(values, cx, cy, cz):
    """Trilinear value and gradient (per voxel, i.e. d/d index) at the
    in-box index coordinates ``(cx, cy, cz)`` (already clamped to the box)."""
    nx, ny, nz = values.shape
    i = int(cx)
    if i > nx - 2:
        i = nx - 2
    j = int(cy)
    if j > ny - 2:
        j = ny - 2
    k = int(cz)
    if k > nz - 2:
        k = nz - 2
    u = cx - i
    v = cy - j
    w = cz - k
    c000 = values[i, j, k]
    c001 = values[i, j, k + 1]
    c010 = values[i, j + 1, k]
    c011 = values[i, j + 1, k + 1]
    c100 = values[i + 1, j, k]
    c101 = values[i + 1, j, k + 1]
    c110 = values[i + 1, j + 1, k]
    c111 = values[i + 1, j + 1, k + 1]
    # interpolate along z first, then y, then x
    c00 = c000 + (c001 - c000) * w
    c01 = c010 + (c011 - c010) * w
    c10 = c100 + (c101 - c100) * w
    c11 = c110 + (c111 - c110) * w
    c0 = c00 + (c01 - c00) * v
    c1 = c10 + (c11 - c10) * v
    f = c0 + (c1 - c0) * u
    gx = c1 - c0
    gy = (c01 - c00) + u * ((c11 - c10) - (c01 - c00))
    # d/dw of the bilinear-in-(u, v) blend of the four z-edges
    e00 = c001 - c000
    e01 = c011 - c010
    e10 = c101 - c100
    e11 = c111 - c110
    e0 = e00 + (e01 - e00) * v
    e1 = e10 + (e11 - e10) * v
    gz = e0 + (e1 - e0) * u
    return f, gx, gy, gz


@njit(cache=True)
def _clamp_index(f, n):
    """Clamp a continuous index into [0, n - 1]."""
    if f < 0.0:
        return 0.0
    if f > n - 1:
        return n - 1.0
    return f


@njit(cache=True)
def sdf_grid_point(values, ox, oy, oz, h, px, py, pz):
    """Signed distance and outward normal of ``(px, py, pz)`` [m] in the grid
    ``values[i, j, k]`` sampled at ``(ox, oy, oz) + h (i, j, k)``.

    Inside the grid box: trilinear interpolation; the normal is the
    normalized gradient of the interpolant (central differences one voxel
    apart if that gradient is zero, +z if that is zero too). Outside the box:
    the value at the nearest box point plus the distance to the box, whose
    gradient is used as normal; it grows without bound, so far outside the
    box the field is never negative.
    """
    if not (math.isfinite(px) and math.isfinite(py) and math.isfinite(pz)):
        return np.nan, 0.0, 0.0, 0.0
    nx, ny, nz = values.shape
    inv_h = 1.0 / h
    fx = (px - ox) * inv_h
    fy = (py - oy) * inv_h
    fz = (pz - oz) * inv_h
    cx = _clamp_index(fx, nx)
    cy = _clamp_index(fy, ny)
    cz = _clamp_index(fz, nz)
    f, gx, gy, gz = _trilinear(values, cx, cy, cz)
    gx *= inv_h  # per voxel -> per metre, to mix with the outside term below
    gy *= inv_h
    gz *= inv_h
    ex = fx - cx  # offset outside the box, in voxels
    ey = fy - cy
    ez = fz - cz
    if ex != 0.0 or ey != 0.0 or ez != 0.0:
        r = math.sqrt(ex * ex + ey * ey + ez * ez)
        f += r * h
        # gradient of |p - box(p)|: along the clamped axes only; the value
        # term varies only along the free axes
        gx = ex / r if ex != 0.0 else gx
        gy = ey / r if ey != 0.0 else gy
        gz = ez / r if ez != 0.0 else gz
    g = math.sqrt(gx * gx + gy * gy + gz * gz)
    if g == 0.0:
        gx = (_trilinear(values, _clamp_index(cx + 1.0, nx), cy, cz)[0]
              - _trilinear(values, _clamp_index(cx - 1.0, nx), cy, cz)[0])
        gy = (_trilinear(values, cx, _clamp_index(cy + 1.0, ny), cz)[0]
              - _trilinear(values, cx, _clamp_index(cy - 1.0, ny), cz)[0])
        gz = (_trilinear(values, cx, cy, _clamp_index(cz + 1.0, nz))[0]
              - _trilinear(values, cx, cy, _clamp_index(cz - 1.0, nz))[0])
        g = math.sqrt(gx * gx + gy * gy + gz * gz)
        if g == 0.0:
            return f, 0.0, 0.0, 1.0
    return f, gx / g, gy / g, gz / g


@njit(cache=True)
def sdf_grid_query(values, ox, oy, oz, h, points, out_d, out_n):
    """Batch :func:`sdf_grid_point` over ``points`` (N, 3) into ``out_d`` (N,)
    and ``out_n`` (N, 3). Returns the number of non-finite points."""
    bad = 0
    for p in range(points.shape[0]):
        d, nx, ny, nz = sdf_grid_point(values, ox, oy, oz, h, points[p, 0], points[p, 1], points[p, 2])
        if d != d:
            bad += 1
        out_d[p] = d
        out_n[p, 0] = nx
        out_n[p, 1] = ny
        out_n[p, 2] = nz
    return bad
