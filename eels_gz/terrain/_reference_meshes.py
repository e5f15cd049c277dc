"""Closed meshes of analytic solids, used as inputs with known exact
distances by the distance-field tests and ``bench/terrain_fields.py``."""

from __future__ import annotations

import numpy as np


def tube_solid_mesh(r_in: float, r_out: float, length: float, n_theta: int, n_len: int
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Watertight annular solid ``r_in <= rho <= r_out``, ``|x| <= length / 2``
    about the x axis (a tube wall seen from inside: the bore is free space),
    outward oriented. ``n_theta`` segments around, ``n_len`` along;
    ``4 n_theta (n_len + 1)`` faces. Returns vertices [m] (n, 3) and faces (m, 3)."""
    theta = 2 * np.pi * np.arange(n_theta) / n_theta
    xs = np.linspace(-length / 2, length / 2, n_len + 1)
    ring = np.stack([np.cos(theta), np.sin(theta)], axis=1)

    def shell(r: float) -> np.ndarray:
        pts = np.empty((n_len + 1, n_theta, 3))
        pts[:, :, 0] = xs[:, None]
        pts[:, :, 1:] = r * ring[None]
        return pts.reshape(-1, 3)

    vertices = np.concatenate([shell(r_in), shell(r_out)])
    outer0 = (n_len + 1) * n_theta
    m = np.arange(n_theta)
    m1 = (m + 1) % n_theta
    faces = []
    for lo_ring, hi_ring, base, outward in [(np.arange(n_len), np.arange(1, n_len + 1), 0, False),
                                            (np.arange(n_len), np.arange(1, n_len + 1), outer0, True)]:
        a = base + lo_ring[:, None] * n_theta + m[None]
        b = base + hi_ring[:, None] * n_theta + m[None]
        c = base + hi_ring[:, None] * n_theta + m1[None]
        d = base + lo_ring[:, None] * n_theta + m1[None]
        # (a, b, c) has normal -e_rho: keep it for the inner wall (facing the bore)
        t1, t2 = (np.stack([a, c, b], -1), np.stack([a, d, c], -1)) if outward else \
            (np.stack([a, b, c], -1), np.stack([a, c, d], -1))
        faces += [t1.reshape(-1, 3), t2.reshape(-1, 3)]
    for ring_index, facing_plus_x in [(0, False), (n_len, True)]:
        i0 = ring_index * n_theta + m
        i1 = ring_index * n_theta + m1
        o0, o1 = outer0 + i0, outer0 + i1
        # (i0, o0, o1) has normal +x when theta increases counter-clockwise about x
        t1, t2 = (np.stack([i0, o0, o1], -1), np.stack([i0, o1, i1], -1)) if facing_plus_x else \
            (np.stack([i0, o1, o0], -1), np.stack([i0, i1, o1], -1))
        faces += [t1, t2]
    return vertices, np.concatenate(faces).astype(np.int64)


def tube_solid_distance(points: np.ndarray, r_in: float, r_out: float, length: float) -> np.ndarray:
    """Exact signed distance [m] to the solid of :func:`tube_solid_mesh`
    (positive outside): the 2D distance, in the (rho, x) half-plane, to the
    rectangle ``[r_in, r_out] x [-length / 2, length / 2]``."""
    rho = np.hypot(points[:, 1], points[:, 2])
    q = np.stack([np.abs(rho - (r_in + r_out) / 2) - (r_out - r_in) / 2,
                  np.abs(points[:, 0]) - length / 2], axis=1)
    return np.linalg.norm(np.maximum(q, 0.0), axis=1) + np.minimum(q.max(axis=1), 0.0)
