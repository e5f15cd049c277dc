"""Lidar beam patterns and ray casting.

Patterns (beam origins and unit directions in the sensor frame, range limits):

- ``grid_pattern``: rows x columns, angles spread evenly from min to max as
  Gazebo's ``<scan><horizontal|vertical>`` do (azimuth about z from x, elevation
  from the x-y plane);
- ``load_pattern``: a user file of beams, one per row ``ox oy oz dx dy dz``
  (m; the direction is normalized), ``.csv`` (comma or whitespace separated,
  ``#`` comments) or ``.npy`` (N x 6), which is how EELS-DARTS matches a real
  unit's beam layout.

Ray casting (``cast``): sphere tracing against a terrain distance field
(any object with ``query(points) -> (distance, normal)`` whose distance does
not overestimate, e.g. eels_gz.terrain fields), plus exact intersections with
the robot's own shapes (boxes, spheres, cylinders); the nearest hit within
the range limits wins. Intensity is diffuse (Lambert): albedo x cos(incidence).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from eels_gz.errors import ConfigError

TRACE_TOLERANCE = 1e-5  # m: a ray has hit when the field distance is below this
MAX_TRACE_STEPS = 512


@dataclass(frozen=True)
class BeamPattern:
    """Beams in the sensor frame: origins (N, 3) m, unit directions (N, 3); ranges in m."""

    origins: np.ndarray
    directions: np.ndarray
    range_min: float
    range_max: float
    rows: int = 1  # an organized grid has rows x columns beams, row-major

    def __post_init__(self) -> None:
        if not 0 <= self.range_min < self.range_max or not np.isfinite(self.range_max):
            raise ConfigError(f"lidar range limits must satisfy 0 <= min < max < inf, got "
                              f"{self.range_min}, {self.range_max}")

    @property
    def size(self) -> int:
        return len(self.directions)


def _angles(samples: int, lo: float, hi: float, what: str) -> np.ndarray:
    if samples < 1 or int(samples) != samples:
        raise ConfigError(f"lidar {what} samples must be a positive integer, got {samples}")
    if not hi >= lo:
        raise ConfigError(f"lidar {what} max_angle {hi} is below min_angle {lo}")
    return np.linspace(lo, hi, int(samples)) if samples > 1 else np.array([0.5 * (lo + hi)])


def grid_pattern(rows: int, columns: int, h_min: float, h_max: float, v_min: float, v_max: float,
                 range_min: float, range_max: float) -> BeamPattern:
    """A rows x columns grid from the sensor origin; angles in rad."""
    az = _angles(columns, h_min, h_max, "horizontal")
    el = _angles(rows, v_min, v_max, "vertical")
    E, A = np.meshgrid(el, az, indexing="ij")
    d = np.stack([np.cos(E) * np.cos(A), np.cos(E) * np.sin(A), np.sin(E)], axis=-1).reshape(-1, 3)
    return BeamPattern(np.zeros_like(d), d, float(range_min), float(range_max), rows=int(rows))


def load_pattern(path: str | Path, range_min: float, range_max: float) -> BeamPattern:
    """Beams from a user file (see the module docstring)."""
    path = Path(path)
    try:
        data = np.load(path) if path.suffix == ".npy" else np.loadtxt(
            [line.replace(",", " ") for line in path.read_text().splitlines()], ndmin=2)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: cannot read the lidar beam pattern: {exc}") from exc
    data = np.asarray(data, dtype=float)
    if data.ndim != 2 or data.shape[1] != 6 or len(data) == 0:
        raise ConfigError(f"{path}: a lidar beam pattern has one beam per row, 'ox oy oz dx dy dz'; "
                          f"got an array of shape {data.shape}")
    if not np.all(np.isfinite(data)):
        raise ConfigError(f"{path}: beam {int(np.flatnonzero(~np.isfinite(data).all(axis=1))[0])} is not finite")
    norms = np.linalg.norm(data[:, 3:], axis=1)
    if np.any(norms < 1e-12):
        raise ConfigError(f"{path}: beam {int(np.flatnonzero(norms < 1e-12)[0])} has a zero direction")
    return BeamPattern(data[:, :3].copy(), data[:, 3:] / norms[:, None], float(range_min), float(range_max))


# --- ray casting -------------------------------------------------------------------------
def sphere_trace(field, origins: np.ndarray, dirs: np.ndarray, t_min: float, t_max: float,
                 tol: float = TRACE_TOLERANCE) -> tuple[np.ndarray, np.ndarray]:
    """Distance along each ray to the field's surface (inf where none within t_max) and the normal there."""
    n = len(origins)
    t = np.full(n, float(t_min))
    hit_t = np.full(n, np.inf)
    normals = np.zeros((n, 3))
    active = np.arange(n)
    for _ in range(MAX_TRACE_STEPS):
        if active.size == 0:
            break
        p = origins[active] + t[active, None] * dirs[active]
        d, nrm = field.query(np.ascontiguousarray(p))
        done = d < tol
        hit = active[done]
        hit_t[hit], normals[hit] = t[hit], nrm[done]
        t[active] += np.maximum(d, tol)
        active = active[~done & (t[active] <= t_max)]
    return hit_t, normals


@dataclass(frozen=True)
class Shape:
    """A collision primitive in the world: kind box|sphere|cylinder, size (box: 3 edges; sphere: radius;
    cylinder: radius, length along local z), pose T (4x4) of its centre."""

    kind: str
    size: tuple[float, ...]
    T: np.ndarray


def _ray_box(o, d, half):
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = 1.0 / d
        t1, t2 = (-half - o) * inv, (half - o) * inv
    t_near = np.nanmax(np.minimum(t1, t2), axis=1)
    t_far = np.nanmin(np.maximum(t1, t2), axis=1)
    t = np.where(t_near > 0, t_near, np.inf)
    t = np.where(t_near <= t_far, t, np.inf)
    p = o + np.where(np.isfinite(t), t, 0)[:, None] * d
    axis = np.argmax(np.abs(p) / half, axis=1)
    n = np.zeros_like(p)
    n[np.arange(len(p)), axis] = np.sign(p[np.arange(len(p)), axis])
    return t, n


def _ray_sphere(o, d, r):
    b = np.einsum("ij,ij->i", o, d)
    c = np.einsum("ij,ij->i", o, o) - r * r
    disc = b * b - c
    root = np.sqrt(np.maximum(disc, 0))
    t = np.where(disc >= 0, -b - root, np.inf)
    t = np.where(t > 0, t, np.inf)
    p = o + np.where(np.isfinite(t), t, 0)[:, None] * d
    return t, p / r


def _ray_cylinder(o, d, r, length):
    h = 0.5 * length
    a = d[:, 0] ** 2 + d[:, 1] ** 2
    b = o[:, 0] * d[:, 0] + o[:, 1] * d[:, 1]
    c = o[:, 0] ** 2 + o[:, 1] ** 2 - r * r
    disc = b * b - a * c
    with np.errstate(divide="ignore", invalid="ignore"):
        t_side = np.where((disc >= 0) & (a > 1e-15), (-b - np.sqrt(np.maximum(disc, 0))) / a, np.inf)
        z_side = o[:, 2] + t_side * d[:, 2]
        t_side = np.where((t_side > 0) & (np.abs(z_side) <= h), t_side, np.inf)
        t_caps = []
        for zc in (-h, h):
            tc = (zc - o[:, 2]) / d[:, 2]
            pc = o + np.where(np.isfinite(tc), tc, 0)[:, None] * d
            ok = (tc > 0) & (pc[:, 0] ** 2 + pc[:, 1] ** 2 <= r * r)
            t_caps.append(np.where(ok, tc, np.inf))
    t = np.minimum(t_side, np.minimum(*t_caps))
    p = o + np.where(np.isfinite(t), t, 0)[:, None] * d
    n = np.zeros_like(p)
    side = t == t_side
    n[side, :2] = p[side, :2] / r
    n[~side, 2] = np.sign(p[~side, 2])
    return t, n


def ray_shapes(shapes: list[Shape], origins: np.ndarray, dirs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Nearest intersection (t, world normal) of each ray with the shapes; inf where none."""
    best = np.full(len(origins), np.inf)
    normals = np.zeros((len(origins), 3))
    for s in shapes:
        R, p = s.T[:3, :3], s.T[:3, 3]
        o, d = (origins - p) @ R, dirs @ R  # into the shape frame
        if s.kind == "box":
            t, n = _ray_box(o, d, 0.5 * np.asarray(s.size, dtype=float))
        elif s.kind == "sphere":
            t, n = _ray_sphere(o, d, s.size[0])
        elif s.kind == "cylinder":
            t, n = _ray_cylinder(o, d, s.size[0], s.size[1])
        else:
            raise ConfigError(f"lidar ray casting supports box, sphere and cylinder shapes, got '{s.kind}'")
        closer = t < best
        best[closer] = t[closer]
        normals[closer] = n[closer] @ R.T
    return best, normals


def diffuse_intensity(normals: np.ndarray, dirs: np.ndarray, albedo: float = 1.0) -> np.ndarray:
    """Lambertian return: albedo x cos(angle between the beam and the surface normal), >= 0."""
    return albedo * np.clip(-np.einsum("ij,ij->i", normals, dirs), 0.0, 1.0)


@dataclass(frozen=True)
class Scan:
    """One sweep: ranges (N,) m (NaN: no return), points (N, 3) in the sensor frame (NaN rows: none),
    intensity (N,)."""

    ranges: np.ndarray
    points: np.ndarray
    intensity: np.ndarray


def cast(pattern: BeamPattern, T_world_sensor: np.ndarray, field=None, shapes: list[Shape] = (),
         albedo: float = 1.0) -> Scan:
    """Cast every beam of ``pattern`` from the sensor pose against the terrain field and the shapes."""
    R, p = T_world_sensor[:3, :3], T_world_sensor[:3, 3]
    o_w = pattern.origins @ R.T + p
    d_w = pattern.directions @ R.T
    t = np.full(pattern.size, np.inf)
    normals = np.zeros((pattern.size, 3))
    if field is not None:
        t, normals = sphere_trace(field, o_w, d_w, pattern.range_min, pattern.range_max)
    if shapes:
        ts, ns = ray_shapes(list(shapes), o_w, d_w)
        closer = (ts < t) & (ts >= pattern.range_min)
        t[closer], normals[closer] = ts[closer], ns[closer]
    ok = (t >= pattern.range_min) & (t <= pattern.range_max)
    ranges = np.where(ok, t, np.nan)
    points = pattern.origins + ranges[:, None] * pattern.directions
    intensity = np.where(ok, diffuse_intensity(normals, d_w, albedo), np.nan)
    return Scan(ranges, points, intensity)
