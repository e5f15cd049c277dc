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

The batch kernels work in chunks of ``CHUNK`` points: first they gather the
corner samples of every point of the chunk into a small buffer (a tight loop
of independent loads, so many cache misses are in flight at once), then they
interpolate. On grids larger than the cache this is about twice as fast as
one point at a time.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit


CHUNK = 64


@njit(cache=True)
def _hf_locate(ny, nx, x0, y0, dx, dy, px, py):
    """Cell ``(i, j)``, fractions ``(u, v)`` and whether x, y lie on the raster
    (else the slope across that edge is zero) of the clamped query ``(px, py)``."""
    fx = (px - x0) / dx
    fy = (py - y0) / dy
    in_x = True
    in_y = True
    if not fx >= 0.0:  # also NaN: any in-range cell keeps the loads safe
        fx = 0.0
        in_x = False
    elif fx > nx - 1:
        fx = nx - 1.0
        in_x = False
    if not fy >= 0.0:
        fy = 0.0
        in_y = False
    elif fy > ny - 1:
        fy = ny - 1.0
        in_y = False
    i = min(int(fx), nx - 2)
    j = min(int(fy), ny - 2)
    return i, j, fx - i, fy - j, in_x, in_y


@njit(cache=True)
def _hf_eval(h00, h10, h01, h11, u, v, in_x, in_y, dx, dy, pz):
    """Distance and normal from the four corner heights of a cell."""
    a = h00 + (h10 - h00) * u  # along x at row j
    b = h01 + (h11 - h01) * u  # along x at row j + 1
    h = a + (b - a) * v
    hx = ((h10 - h00) + v * ((h11 - h01) - (h10 - h00))) / dx if in_x else 0.0
    hy = (b - a) / dy if in_y else 0.0
    inv = 1.0 / math.sqrt(1.0 + hx * hx + hy * hy)
    return (pz - h) * inv, -hx * inv, -hy * inv, inv


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
    i, j, u, v, in_x, in_y = _hf_locate(ny, nx, x0, y0, dx, dy, px, py)
    return _hf_eval(heights[j, i], heights[j, i + 1], heights[j + 1, i], heights[j + 1, i + 1],
                    u, v, in_x, in_y, dx, dy, pz)


@njit(cache=True)
def heightfield_query(heights, x0, y0, dx, dy, points, out_d, out_n):
    """Batch :func:`heightfield_point` over ``points`` (N, 3) into ``out_d``
    (N,) and ``out_n`` (N, 3). Returns the number of non-finite points."""
    ny, nx = heights.shape
    corner = np.empty((CHUNK, 4), dtype=heights.dtype)
    frac = np.empty((CHUNK, 2))
    flags = np.empty(CHUNK, dtype=np.int8)  # bit 0: x on raster, bit 1: y on raster, bit 2: non-finite
    n = points.shape[0]
    bad = 0
    for start in range(0, n, CHUNK):
        m = min(CHUNK, n - start)
        for q in range(m):
            px = points[start + q, 0]
            py = points[start + q, 1]
            i, j, u, v, in_x, in_y = _hf_locate(ny, nx, x0, y0, dx, dy, px, py)
            frac[q, 0] = u
            frac[q, 1] = v
            finite = math.isfinite(px) and math.isfinite(py) and math.isfinite(points[start + q, 2])
            flags[q] = (1 if in_x else 0) | (2 if in_y else 0) | (0 if finite else 4)
            corner[q, 0] = heights[j, i]
            corner[q, 1] = heights[j, i + 1]
            corner[q, 2] = heights[j + 1, i]
            corner[q, 3] = heights[j + 1, i + 1]
        for q in range(m):
            p = start + q
            if flags[q] & 4:
                bad += 1
                out_d[p] = np.nan
                out_n[p, 0] = 0.0
                out_n[p, 1] = 0.0
                out_n[p, 2] = 0.0
                continue
            d, nx_, ny_, nz_ = _hf_eval(corner[q, 0], corner[q, 1], corner[q, 2], corner[q, 3], frac[q, 0],
                                        frac[q, 1], (flags[q] & 1) != 0, (flags[q] & 2) != 0, dx, dy,
                                        points[p, 2])
            out_d[p] = d
            out_n[p, 0] = nx_
            out_n[p, 1] = ny_
            out_n[p, 2] = nz_
    return bad


@njit(cache=True)
def _clamp_index(f, n):
    """Clamp a continuous index into [0, n - 1] (NaN goes to 0)."""
    if not f >= 0.0:
        return 0.0
    if f > n - 1:
        return n - 1.0
    return f


@njit(cache=True)
def _sdf_locate(nx, ny, nz, ox, oy, oz, inv_h, px, py, pz):
    """Cell ``(i, j, k)``, fractions ``(u, v, w)`` and offset outside the box
    ``(ex, ey, ez)`` [voxels] of the query point."""
    fx = (px - ox) * inv_h
    fy = (py - oy) * inv_h
    fz = (pz - oz) * inv_h
    cx = _clamp_index(fx, nx)
    cy = _clamp_index(fy, ny)
    cz = _clamp_index(fz, nz)
    i = min(int(cx), nx - 2)
    j = min(int(cy), ny - 2)
    k = min(int(cz), nz - 2)
    return i, j, k, cx - i, cy - j, cz - k, fx - cx, fy - cy, fz - cz


@njit(cache=True)
def _sdf_eval(c000, c001, c010, c011, c100, c101, c110, c111, u, v, w, ex, ey, ez, h):
    """Value [m] and (unnormalized) gradient of the trilinear interpolant
    from the 8 corners, extended outside the box by the distance to it."""
    c00 = c000 + (c001 - c000) * w  # along z first, then y, then x
    c01 = c010 + (c011 - c010) * w
    c10 = c100 + (c101 - c100) * w
    c11 = c110 + (c111 - c110) * w
    c0 = c00 + (c01 - c00) * v
    c1 = c10 + (c11 - c10) * v
    f = c0 + (c1 - c0) * u
    inv_h = 1.0 / h
    gx = (c1 - c0) * inv_h  # per metre, to mix with the outside term below
    gy = ((c01 - c00) + u * ((c11 - c10) - (c01 - c00))) * inv_h
    e0 = (c001 - c000) + ((c011 - c010) - (c001 - c000)) * v
    e1 = (c101 - c100) + ((c111 - c110) - (c101 - c100)) * v
    gz = (e0 + (e1 - e0) * u) * inv_h
    if ex != 0.0 or ey != 0.0 or ez != 0.0:
        r = math.sqrt(ex * ex + ey * ey + ez * ez)
        f += r * h
        # gradient of |p - box(p)| along the clamped axes; the value term
        # varies only along the free axes
        if ex != 0.0:
            gx = ex / r
        if ey != 0.0:
            gy = ey / r
        if ez != 0.0:
            gz = ez / r
    return f, gx, gy, gz


@njit(cache=True)
def _trilinear_value(values, i, j, k, u, v, w):
    return _sdf_eval(values[i, j, k], values[i, j, k + 1], values[i, j + 1, k], values[i, j + 1, k + 1],
                     values[i + 1, j, k], values[i + 1, j, k + 1], values[i + 1, j + 1, k],
                     values[i + 1, j + 1, k + 1], u, v, w, 0.0, 0.0, 0.0, 1.0)[0]


@njit(cache=True)
def _central_difference_normal(values, ox, oy, oz, h, px, py, pz):
    """Normal from central differences of the interpolant one voxel apart
    (clamped to the box); +z when they vanish too."""
    nx, ny, nz = values.shape
    g = np.zeros(3)
    for a in range(3):
        for sgn in (1.0, -1.0):
            qx = px + (sgn * h if a == 0 else 0.0)
            qy = py + (sgn * h if a == 1 else 0.0)
            qz = pz + (sgn * h if a == 2 else 0.0)
            i, j, k, u, v, w, _, _, _ = _sdf_locate(nx, ny, nz, ox, oy, oz, 1.0 / h, qx, qy, qz)
            g[a] += sgn * _trilinear_value(values, i, j, k, u, v, w)
    norm = math.sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2])
    if norm == 0.0:
        return 0.0, 0.0, 1.0
    return g[0] / norm, g[1] / norm, g[2] / norm


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
    i, j, k, u, v, w, ex, ey, ez = _sdf_locate(nx, ny, nz, ox, oy, oz, 1.0 / h, px, py, pz)
    f, gx, gy, gz = _sdf_eval(values[i, j, k], values[i, j, k + 1], values[i, j + 1, k], values[i, j + 1, k + 1],
                              values[i + 1, j, k], values[i + 1, j, k + 1], values[i + 1, j + 1, k],
                              values[i + 1, j + 1, k + 1], u, v, w, ex, ey, ez, h)
    g = math.sqrt(gx * gx + gy * gy + gz * gz)
    if g == 0.0:
        gx, gy, gz = _central_difference_normal(values, ox, oy, oz, h, px, py, pz)
        return f, gx, gy, gz
    inv = 1.0 / g
    return f, gx * inv, gy * inv, gz * inv


@njit(cache=True)
def sdf_grid_query(values, ox, oy, oz, h, points, out_d, out_n):
    """Batch :func:`sdf_grid_point` over ``points`` (N, 3) into ``out_d`` (N,)
    and ``out_n`` (N, 3). Returns the number of non-finite points."""
    nx, ny, nz = values.shape
    inv_h = 1.0 / h
    corner = np.empty((CHUNK, 8), dtype=values.dtype)
    frac = np.empty((CHUNK, 6))
    finite = np.empty(CHUNK, dtype=np.bool_)
    n = points.shape[0]
    bad = 0
    for start in range(0, n, CHUNK):
        m = min(CHUNK, n - start)
        for q in range(m):
            px = points[start + q, 0]
            py = points[start + q, 1]
            pz = points[start + q, 2]
            i, j, k, u, v, w, ex, ey, ez = _sdf_locate(nx, ny, nz, ox, oy, oz, inv_h, px, py, pz)
            finite[q] = math.isfinite(px) and math.isfinite(py) and math.isfinite(pz)
            frac[q, 0] = u
            frac[q, 1] = v
            frac[q, 2] = w
            frac[q, 3] = ex
            frac[q, 4] = ey
            frac[q, 5] = ez
            corner[q, 0] = values[i, j, k]
            corner[q, 1] = values[i, j, k + 1]
            corner[q, 2] = values[i, j + 1, k]
            corner[q, 3] = values[i, j + 1, k + 1]
            corner[q, 4] = values[i + 1, j, k]
            corner[q, 5] = values[i + 1, j, k + 1]
            corner[q, 6] = values[i + 1, j + 1, k]
            corner[q, 7] = values[i + 1, j + 1, k + 1]
        for q in range(m):
            p = start + q
            if not finite[q]:
                bad += 1
                out_d[p] = np.nan
                out_n[p, 0] = 0.0
                out_n[p, 1] = 0.0
                out_n[p, 2] = 0.0
                continue
            f, gx, gy, gz = _sdf_eval(corner[q, 0], corner[q, 1], corner[q, 2], corner[q, 3], corner[q, 4],
                                      corner[q, 5], corner[q, 6], corner[q, 7], frac[q, 0], frac[q, 1],
                                      frac[q, 2], frac[q, 3], frac[q, 4], frac[q, 5], h)
            g = math.sqrt(gx * gx + gy * gy + gz * gz)
            if g == 0.0:
                gx, gy, gz = _central_difference_normal(values, ox, oy, oz, h, points[p, 0], points[p, 1],
                                                        points[p, 2])
            else:
                inv = 1.0 / g
                gx *= inv
                gy *= inv
                gz *= inv
            out_d[p] = f
            out_n[p, 0] = gx
            out_n[p, 1] = gy
            out_n[p, 2] = gz
    return bad
