"""Signed distance grid and wall mesh of oriented points (:mod:`eels_gz.terrain.pointcloud`, steps 6-7).

The points p_i (unit normals n_i toward free space) are binned to their nearest grid node; per-node
sums of 1, n_i, p_i.n_i, p_i and p_i.p_i are convolved with Gaussians (``scipy.ndimage.gaussian_filter``),
so every weighted sum below costs a few filter passes over the grid, whatever the point count:

- near the scan, the IMLS distance with narrow weights (sigma the smoothing radius): the weighted
  mean distance to the points' tangent planes, ``f = (x.A - B) / W`` with ``W = sum w_i``,
  ``A = sum w_i n_i``, ``B = sum w_i p_i.n_i``; it averages the noise down;
- from two smoothing radii out, the distance to an algebraic sphere fitted to the points and normals
  under wide weights (sigma a quarter of the fill radius ``R``; APSS, Guennebaud and Gross 2007), as
  the algebraic distance over its gradient's length. A node facing a hole hears the whole rim, and the
  sphere's curvature carries a curved wall across it: tangent planes alone would leave it off by
  distance^2 / (2 x the wall's radius of curvature). An ill-conditioned fit falls back to the mean
  tangent plane;
- beyond 0.9 R from the scan, a blend into ``sign x r`` (r the distance to the point binned at the
  nearest occupied node, ``scipy.ndimage.distance_transform_edt``): the distance to the scan, which is
  the distance to the wall away from holes. Where no weight reaches, the sign is the side of the
  nearest patch's mean tangent plane, so inside and outside continue beyond the open ends.

The wall mesh is the zero level of the grid (marching cubes, scikit-image) over the cells within ``R``
of the scan: one-sided, its faces wound with the normal toward free space.
"""

from __future__ import annotations

import logging

import numpy as np
import trimesh
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from eels_gz.errors import TerrainError

log = logging.getLogger(__name__)

MIN_PIECE_FACES = 200
MIN_PIECE_SHARE = 0.002
TINY = 1e-250  # W below this: no weight reaches the node (f is taken from the nearest point)


def grid_field(points: np.ndarray, normals: np.ndarray, origin: np.ndarray, h: float, shape: tuple[int, int, int],
               fill_radius: float, smoothing: float, steps=None):
    """The :class:`~eels_gz.terrain.fields.SdfGrid` of oriented points (float32 values), and the mask
    (nx, ny, nz) of nodes within ``fill_radius`` of the scan."""
    from scipy import ndimage

    from eels_gz.terrain.fields import SdfGrid

    shape = tuple(int(s) for s in shape)
    ijk = np.rint((points - origin) / h).astype(np.int64)
    if (ijk < 0).any() or (ijk >= np.array(shape)).any():
        raise TerrainError("internal: scan points outside the distance grid")
    flat = np.ravel_multi_index(ijk.T, shape)
    n_nodes = int(np.prod(shape))
    # per-node sums, then the Gaussian convolutions (float64: the weights span many decades): narrow
    # (the smoothing radius) near the scan, wide (half the fill radius) farther, where a node faces a
    # hole and the whole rim should speak, not its nearest side
    centre = origin + 0.5 * h * (np.array(shape) - 1)  # coordinates about the grid's centre: smaller sums
    q = points - centre
    pn = np.einsum("ni,ni->n", q, normals)
    pp = np.einsum("ni,ni->n", q, q)
    channels = (None, normals[:, 0], normals[:, 1], normals[:, 2], pn)  # W, A, B
    channels_wide = channels + (q[:, 0], q[:, 1], q[:, 2], pp)  # and the sphere fit's sum w p, sum w p.p
    narrow, wide = [], []
    for k, weights in enumerate(channels_wide):
        b = np.bincount(flat, weights, minlength=n_nodes).astype(np.float64).reshape(shape)
        if k < len(channels):
            narrow.append(ndimage.gaussian_filter(b, smoothing / h, mode="constant",
                                                  truncate=max(4.0, fill_radius / smoothing)).reshape(-1))
        wide.append(ndimage.gaussian_filter(b, 0.25 * fill_radius / h, mode="constant", truncate=5.5).reshape(-1))
        if steps is not None:
            steps.fraction(k + 1, len(channels_wide) + 1)
        del b
    # the nearest occupied node n*, the point binned there (clustering leaves about one per node), and the
    # IMLS plane of n*'s patch, (A*, B*) / W*: beyond the weights' reach the sign is the side of that plane
    occupied = np.zeros(n_nodes, bool)
    occupied[flat] = True
    owner = np.full(n_nodes, -1, np.int64)
    owner[flat] = np.arange(len(points))
    nearest = ndimage.distance_transform_edt(~occupied.reshape(shape), return_distances=False,
                                             return_indices=True)
    node_near = np.ravel_multi_index(tuple(nearest), shape).reshape(-1)
    del nearest
    axes = [origin[k] - centre[k] + h * np.arange(shape[k]) for k in range(3)]  # about the centre, as q
    values = np.empty(n_nodes, np.float32)
    near = np.empty(n_nodes, bool)
    W, A0, A1, A2, B = narrow
    step = shape[1] * shape[2]
    Y, Z = (a.ravel() for a in np.meshgrid(axes[1], axes[2], indexing="ij"))

    def imls(sums, s, X):
        """Distance to the weighted mean of the tangent planes (narrow kernel)."""
        w = sums[0][s]
        ok = w > TINY
        f = (X * sums[1][s] + Y * sums[2][s] + Z * sums[3][s] - sums[4][s]) / np.where(ok, w, 1.0)
        return np.where(ok, f, 0.0), ok

    spread = 0.25 * fill_radius  # the wide kernel's sigma

    def apss(sums, s, X, r1):
        """Distance to the algebraic sphere fitted to the points and their normals (wide kernel; APSS,
        Guennebaud and Gross 2007): second order, so a curved wall is carried across a hole without the
        tangent planes' bias (their distance^2 / (2 x the wall's radius of curvature))."""
        w = sums[0][s]
        ok = w > TINY
        inv = 1.0 / np.where(ok, w, 1.0)
        n_bar = np.column_stack([sums[1][s], sums[2][s], sums[3][s]]) * inv[:, None]
        p_bar = np.column_stack([sums[5][s], sums[6][s], sums[7][s]]) * inv[:, None]
        pn_bar, pp_bar = sums[4][s] * inv, sums[8][s] * inv
        var = pp_bar - np.einsum("ni,ni->n", p_bar, p_bar)
        u4 = 0.5 * (pn_bar - np.einsum("ni,ni->n", p_bar, n_bar)) / np.where(var > 1e-12, var, 1.0)
        u4 = np.where(var > 1e-12, u4, 0.0)
        u = n_bar - 2 * u4[:, None] * p_bar
        u0 = -np.einsum("ni,ni->n", u, p_bar) - u4 * pp_bar
        x = np.column_stack([X, Y, Z])
        # the algebraic distance over its gradient's length: the distance to the sphere to first order
        # about it, without the cancellation of a nearly flat sphere's huge radius
        value = u0 + np.einsum("ni,ni->n", u, x) + u4 * np.einsum("ni,ni->n", x, x)
        grad = np.linalg.norm(u + 2 * u4[:, None] * x, axis=1)
        f = value / np.maximum(grad, 1e-12)
        # an ill-conditioned fit (points spread along a line, or too few) falls back to the mean tangent
        # plane: the second-order term is a correction, never larger than a quarter of the gap to the scan
        flat = (x[:, 0] * n_bar[:, 0] + x[:, 1] * n_bar[:, 1] + x[:, 2] * n_bar[:, 2] - pn_bar)
        good = (var > (0.25 * spread) ** 2) & (np.abs(f - flat) <= 0.25 * r1) & (grad > 0.5)
        f = np.where(good, f, flat)
        return np.where(ok, f, 0.0), ok

    for i in range(shape[0]):  # one x-slab at a time keeps the temporaries small
        s = slice(i * step, (i + 1) * step)
        X = np.full(step, axes[0][i])
        m = node_near[s]
        r1 = np.linalg.norm(np.column_stack([X, Y, Z]) - q[owner[m]], axis=1)
        patch = X * A0[m] + Y * A1[m] + Z * A2[m] - B[m]  # W* times the distance to n*'s plane
        f_narrow, ok_narrow = imls(narrow, s, X)
        f_wide, ok_wide = apss(wide, s, X, r1)
        u = np.clip((r1 - smoothing) / smoothing, 0.0, 1.0)
        u = np.where(ok_wide, np.where(ok_narrow, u * u * (3 - 2 * u), 1.0), 0.0)
        f = (1 - u) * f_narrow + u * f_wide
        ok = ok_narrow | ok_wide
        sign = np.where(ok, f >= 0, patch >= 0) * 2.0 - 1.0
        t = np.clip((r1 - 0.9 * fill_radius) / (0.35 * fill_radius), 0.0, 1.0)
        t = np.where(ok, t * t * (3 - 2 * t), 1.0)
        values[s] = (1 - t) * f + t * sign * r1
        near[s] = r1 < fill_radius
    if steps is not None:
        steps.fraction(1, 1)
    values = values.reshape(shape)
    return SdfGrid(values, tuple(float(c) for c in origin), float(h)), near.reshape(shape)


def wall_meshes(grid, near: np.ndarray, source: str) -> trimesh.Trimesh:
    """The zero level of ``grid`` over the ``near`` nodes, faces toward free space, small pieces dropped."""
    from skimage.measure import marching_cubes

    values = np.array(grid.values)  # a writable copy (scikit-image's buffers)
    if not (values[near].min() < 0 < values[near].max()):
        raise TerrainError(f"{source}: the distance grid does not change sign near the scan; no wall found")
    verts, faces, _, _ = marching_cubes(values, level=0.0, spacing=(grid.spacing,) * 3, mask=near,
                                        allow_degenerate=False)
    mesh = trimesh.Trimesh(verts + np.asarray(grid.origin), faces, process=True)
    if len(mesh.faces) == 0:
        raise TerrainError(f"{source}: marching cubes found no wall")
    # wind each face with its normal up the field's gradient (toward free space)
    _, grad = grid.query(mesh.triangles_center)
    if np.mean(np.einsum("ni,ni->n", mesh.face_normals, grad) < 0) > 0.5:
        mesh.invert()
    return drop_small_pieces(mesh, source)


def drop_small_pieces(mesh: trimesh.Trimesh, source: str) -> trimesh.Trimesh:
    """Remove connected pieces with fewer than MIN_PIECE_FACES faces and MIN_PIECE_SHARE of the mesh
    (blobs around stray points)."""
    adj = mesh.face_adjacency
    n = len(mesh.faces)
    graph = coo_matrix((np.ones(len(adj)), (adj[:, 0], adj[:, 1])), shape=(n, n))
    count, label = connected_components(graph, directed=False)
    sizes = np.bincount(label, minlength=count)
    small = sizes < max(MIN_PIECE_FACES, MIN_PIECE_SHARE * n)
    if small.any() and not small.all():
        keep = ~small[label]
        log.info("%s: dropped %d small mesh pieces (%d faces)", source, int(small.sum()), int((~keep).sum()))
        mesh = mesh.submesh([np.flatnonzero(keep)], append=True)
    return mesh
