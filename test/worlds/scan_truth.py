"""Synthetic scans of analytic surfaces, and their exact geometry, for the scan tests and bench/terrain_scans.py.

The shaft: a vertical bore ``r = R(theta, z)`` (radius varying with depth and
angle, as the issue's test input), open at the top and bottom; the ice is
``r > R``, free space ``r < R``. A scan samples it uniformly in (theta, z), or
with density varying 4:1 around the bore; holes are discs of the wall left
unsampled; noise is Gaussian along the radius; outliers are uniform in the
scan's box.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree


def shaft_radius(theta: np.ndarray, z: np.ndarray, depth: float = 10.0) -> np.ndarray:
    """Bore radius (m) at angle ``theta`` (rad) and height ``z`` (m, 0 at the top)."""
    return (0.85 + 0.25 * np.sin(2.6 * np.pi * z / depth) + 0.1 * np.cos(2 * theta + z)
            + 0.05 * np.sin(3 * theta - 0.7 * z))


def shaft_scan(n: int, z_range: tuple[float, float] = (-10.0, 0.0), noise: float = 0.01,
               holes: list[tuple[float, float]] = (), hole_radius: float = 0.15, outliers: float = 0.0,
               varying_density: bool = False, seed: int = 0, depth: float = 10.0) -> np.ndarray:
    """About ``n`` points on the bore wall over ``z_range`` (the scan's open ends), with holes centred at
    ``(theta, z)`` of ``hole_radius`` (m, along the wall), ``noise`` (m rms, radial) and a share
    ``outliers`` of stray points."""
    rng = np.random.default_rng(seed)
    m = int(3 * n)
    th, z = rng.uniform(0, 2 * np.pi, m), rng.uniform(*z_range, m)
    if varying_density:  # 4:1 from the +x side to the -x side
        keep = rng.uniform(size=m) < 0.25 + 0.75 * (0.5 + 0.5 * np.cos(th))
        th, z = th[keep], z[keep]
    ok = np.ones(len(th), bool)
    for t0, z0 in holes:
        arc = np.angle(np.exp(1j * (th - t0))) * shaft_radius(np.array(t0), np.array(z0), depth)
        ok &= arc**2 + (z - z0) ** 2 > hole_radius**2
    th, z = th[ok][:n], z[ok][:n]
    r = shaft_radius(th, z, depth) + rng.normal(0.0, noise, len(th))
    pts = np.column_stack([r * np.cos(th), r * np.sin(th), z])
    if outliers:
        k = int(outliers * len(pts))
        pts = np.concatenate([pts, rng.uniform(pts.min(axis=0) - 0.3, pts.max(axis=0) + 0.3, (k, 3))])
    return pts


class ShaftTruth:
    """Exact signed distance of the bore wall (positive in the bore), from a dense sampling of the
    surface (``step`` m apart: the nearest sample is within ``step / sqrt 2`` along the wall, so the
    distance is exact to ``step^2 / d`` away from it and to ``0.71 step`` on it)."""

    def __init__(self, z_range: tuple[float, float], depth: float = 10.0, step: float = 0.005):
        self.depth, self.step = depth, step
        z = np.arange(z_range[0], z_range[1] + step / 2, step)
        th = np.arange(0, 2 * np.pi, step / 1.2)
        T, Z = np.meshgrid(th, z)
        R = shaft_radius(T, Z, depth)
        self.tree = cKDTree(np.column_stack([(R * np.cos(T)).ravel(), (R * np.sin(T)).ravel(), Z.ravel()]))

    def sign(self, p: np.ndarray) -> np.ndarray:
        return np.where(np.hypot(p[:, 0], p[:, 1]) < shaft_radius(np.arctan2(p[:, 1], p[:, 0]), p[:, 2],
                                                                   self.depth), 1.0, -1.0)

    def distance(self, p: np.ndarray) -> np.ndarray:
        d, _ = self.tree.query(p, workers=-1)
        return self.sign(p) * d

    def wall_points(self, n: int, z_range: tuple[float, float], offset: np.ndarray | float = 0.0,
                    seed: int = 3) -> np.ndarray:
        """Points ``offset`` (m) inward (positive) or outward from the wall along the radius."""
        rng = np.random.default_rng(seed)
        th, z = rng.uniform(0, 2 * np.pi, n), rng.uniform(*z_range, n)
        r = shaft_radius(th, z, self.depth) - offset
        return np.column_stack([r * np.cos(th), r * np.sin(th), z])
