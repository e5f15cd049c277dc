"""Placement, pure parts (EELS-DARTS §2.2.6): initial shapes, the settling
force law and the convergence / timeout report.

1. Initial shape guess: straight, crescent (on a surface) or helix (in a
   tube), as joint angles and, for the helix, a base pose.
2. Settling, run by a host with gravity off: every sample point on the robot
   is pulled toward its nearest terrain point by a spring proportional to
   the distance, ``F = k (x_nearest - x) = -k d grad(d)``, ``d`` the signed
   distance of the terrain field (positive in free space) and ``grad(d)`` its
   unit outward normal. The force vanishes at the surface, so the settled
   robot rests in contact without the springs pressing it in; a point
   already inside (``d < 0``) is pushed out.
3. The host steps until every sample point moves slower than
   ``speed_threshold`` for ``hold_time`` (:class:`SettlingMonitor`), or
   reports a timeout; then gravity comes back on with joint control holding
   the shape.

Sample points. On each collision cylinder of the robot, ``samples_per_link``
stations along its axis; at each, the point of the cylinder's surface that
faces the terrain (axis point minus radius along the terrain normal
projected off the axis). Points on the far side of a body would be pulled
across the body toward the far wall of a tube; facing points are not.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from eels_gz.errors import SnakeModelError
from eels_gz.snake.chain import SnakeChain
from eels_gz.snake.reference_paths import HelixPath
from eels_gz.snake.shape_on_path import LaidShape, lay_on_path
from eels_gz.terrain.fields import DistanceField


# --- initial shapes -----------------------------------------------------------------------
def straight_shape(chain: SnakeChain) -> dict[str, float]:
    """All bend and twist joints at 0 rad."""
    return {n: 0.0 for n in chain.bend_joints() + chain.twist_joints()}


def crescent_shape(chain: SnakeChain, total_bend: float) -> dict[str, float]:
    """Equal bends summing to ``total_bend`` (rad), twists 0: an arc in the
    plane of the first bend axis (the ground plane for EELS 1.0 upright)."""
    each = total_bend / chain.n_modules
    out = straight_shape(chain)
    for name in chain.bend_joints():
        j = chain.joint(name)
        if not j.lower <= each <= j.upper:
            raise SnakeModelError(f"crescent: bend {each:.4g} rad per module ({total_bend:.4g} rad over "
                                  f"{chain.n_modules}) is outside '{name}' limits [{j.lower:.4g}, {j.upper:.4g}] rad")
        out[name] = each
    return out


def helix_shape(chain: SnakeChain, radius: float, pitch: float, center=(0.0, 0.0, 0.0),
                axis=(0.0, 0.0, 1.0), ref=(1.0, 0.0, 0.0)) -> LaidShape:
    """Module points on a helix of ``radius`` and ``pitch`` (m) about ``axis``
    through ``center`` (leader-follower), tail at the helix start. Raises
    SnakeModelError naming the joints if the helix needs angles past limits."""
    length = 1.5 * float(chain.segment_lengths().sum()) + 1.0
    shape = lay_on_path(chain, HelixPath(radius, pitch, length, center, axis, ref), 0.0)
    if shape.violations:
        raise SnakeModelError(f"helix (radius {radius} m, pitch {pitch} m) needs joint angles past the limits of "
                              f"{', '.join(shape.violations)}; use a larger radius")
    return shape


# --- sample points and forces -------------------------------------------------------------
@dataclass(frozen=True)
class SamplePoints:
    """Settling sample points: world positions (N, 3), the link each belongs
    to and its position in that link's frame (N, 3), m."""

    points: np.ndarray
    links: tuple[str, ...]
    offsets: np.ndarray


def sample_points(chain: SnakeChain, q: Mapping[str, float] | None, base_pose: np.ndarray,
                  terrain: DistanceField, per_link: int) -> SamplePoints:
    """Terrain-facing surface points of every collision cylinder (module docstring)."""
    if per_link < 1:
        raise SnakeModelError(f"sample_points: per_link = {per_link!r}; expected an integer >= 1")
    poses = chain.link_poses(q, base_pose)
    stations = (np.arange(per_link) + 0.5) / per_link - 0.5
    axis_pts, axes, radii, owners = [], [], [], []
    for c in chain.cylinders:
        T = poses[c.link] @ c.pose
        for f in stations:
            axis_pts.append(T[:3, 3] + f * c.length * T[:3, 2])
            axes.append(T[:3, 2])
            radii.append(c.radius)
            owners.append(c.link)
    if not axis_pts:
        raise SnakeModelError(f"sample_points: {chain.source} has no collision cylinders to sample")
    axis_pts, axes, radii = np.array(axis_pts), np.array(axes), np.array(radii)
    _, normal = terrain.query(axis_pts)
    side = normal - np.sum(normal * axes, axis=1)[:, None] * axes
    norm = np.linalg.norm(side, axis=1)
    side = np.where(norm[:, None] > 1e-9, side / np.where(norm > 1e-9, norm, 1.0)[:, None], 0.0)
    pts = axis_pts - radii[:, None] * side
    # each point in its link's frame: R^T (p - t), the rigid pose's inverse
    T_own = np.array([poses[link] for link in owners])
    offsets = np.einsum("nji,nj->ni", T_own[:, :3, :3], pts - T_own[:, :3, 3])
    return SamplePoints(pts, tuple(owners), offsets)


def settling_forces(points: np.ndarray, terrain: DistanceField, stiffness: float) -> tuple[np.ndarray, np.ndarray]:
    """Spring forces (N, 3), N, toward the nearest terrain point, and the signed distances (N,), m.

    ``F = -k d n`` with ``n`` the field's outward normal (the distance gradient).
    """
    if not stiffness > 0.0 or not math.isfinite(stiffness):
        raise SnakeModelError(f"settling_forces: stiffness = {stiffness!r}; expected a finite value > 0 N/m")
    d, n = terrain.query(np.asarray(points, float))
    return -stiffness * d[:, None] * n, d


def distance_gradient(terrain: DistanceField, points: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """Central-difference gradient (N, 3) of the terrain distance; for fields
    without reliable normals, and to check the ones that have them."""
    p = np.asarray(points, float)
    g = np.empty_like(p)
    for k in range(3):
        e = np.zeros(3)
        e[k] = h
        g[:, k] = (terrain.query(p + e)[0] - terrain.query(p - e)[0]) / (2.0 * h)
    return g


# --- convergence --------------------------------------------------------------------------
@dataclass(frozen=True)
class PlacementReport:
    """Outcome of settling: ``converged``, simulated ``time`` (s), last max
    point speed (m/s), largest penetration seen at the end (m, >= 0) and a
    message for people."""

    converged: bool
    timed_out: bool
    time: float
    max_speed: float
    penetration: float
    message: str


@dataclass
class SettlingMonitor:
    """Feed it ``update(t, points, distances)`` every step; it answers a
    :class:`PlacementReport` once settled (every point slower than
    ``speed_threshold`` m/s for ``hold_time`` s) or at ``timeout`` s, and
    None while settling goes on."""

    speed_threshold: float
    hold_time: float
    timeout: float
    _last: tuple[float, np.ndarray] | None = field(default=None, repr=False)
    _calm_since: float | None = field(default=None, repr=False)

    def update(self, t: float, points: np.ndarray, distances: np.ndarray | None = None) -> PlacementReport | None:
        pts = np.asarray(points, float)
        pen = 0.0 if distances is None or len(distances) == 0 else max(0.0, -float(np.min(distances)))
        speed = math.inf
        if self._last is not None:
            t0, p0 = self._last
            if not t > t0:
                raise SnakeModelError(f"SettlingMonitor: time must increase, got {t} after {t0}")
            if p0.shape != pts.shape:
                raise SnakeModelError(f"SettlingMonitor: got {pts.shape} points after {p0.shape}")
            speed = float(np.max(np.linalg.norm(pts - p0, axis=1)) / (t - t0))
        self._last = (float(t), pts.copy())
        if speed < self.speed_threshold:
            self._calm_since = t if self._calm_since is None else self._calm_since
            if t - self._calm_since >= self.hold_time:
                return PlacementReport(True, False, t, speed, pen,
                                       f"placement settled at t = {t:.3f} s (max point speed {speed:.3g} m/s, "
                                       f"penetration {pen * 1e3:.2f} mm)")
        else:
            self._calm_since = None
        if t >= self.timeout:
            return PlacementReport(False, True, t, speed, pen,
                                   f"placement did not converge within the {self.timeout:.3g} s timeout: points "
                                   f"still move at up to {speed:.3g} m/s (threshold {self.speed_threshold:.3g} "
                                   f"m/s held for {self.hold_time:.3g} s); penetration {pen * 1e3:.2f} mm")
        return None
