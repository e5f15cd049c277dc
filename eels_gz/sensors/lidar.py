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

import numba
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
    grid: tuple | None = None  # (azimuths, elevations) of a grid from the sensor origin, for culling

    def __post_init__(self) -> None:
        for name in ("origins", "directions"):  # as the compiled caster takes them
            object.__setattr__(self, name, np.ascontiguousarray(getattr(self, name), dtype=float))
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
    return BeamPattern(np.zeros_like(d), d, float(range_min), float(range_max), rows=int(rows), grid=(az, el))


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
    if hasattr(field, "raycast"):  # closed form (eels_gz.terrain.primitives.Plane)
        return field.raycast(origins, dirs, t_min, t_max)
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


_KINDS = {"box": 0, "sphere": 1, "cylinder": 2}


@numba.njit(cache=True)
def _local_hit(kind, size, ox, oy, oz, dx, dy, dz):
    """Nearest positive intersection of a ray (local frame, unit d) with a
    shape centred at the origin: (t, nx, ny, nz) with t = inf for none.
    box: size = edges; sphere: radius; cylinder: radius, length along z."""
    inf = np.inf
    if kind == 1:  # sphere
        r = size[0]
        b = ox * dx + oy * dy + oz * dz
        disc = b * b - (ox * ox + oy * oy + oz * oz - r * r)
        if disc < 0.0:
            return inf, 0.0, 0.0, 0.0
        t = -b - np.sqrt(disc)
        if t <= 0.0:
            return inf, 0.0, 0.0, 0.0
        return t, (ox + t * dx) / r, (oy + t * dy) / r, (oz + t * dz) / r
    if kind == 0:  # box, slab method
        o = (ox, oy, oz)
        d = (dx, dy, dz)
        t_near, t_far = -inf, inf
        for a in range(3):
            h = 0.5 * size[a]
            if d[a] == 0.0:
                if abs(o[a]) > h:
                    return inf, 0.0, 0.0, 0.0
                continue
            t1, t2 = (-h - o[a]) / d[a], (h - o[a]) / d[a]
            t_near = max(t_near, min(t1, t2))
            t_far = min(t_far, max(t1, t2))
        if not (t_near > 0.0 and t_near <= t_far):
            return inf, 0.0, 0.0, 0.0
        p = (ox + t_near * dx, oy + t_near * dy, oz + t_near * dz)
        best, axis = -1.0, 0
        for a in range(3):
            v = abs(p[a]) / (0.5 * size[a])
            if v > best:
                best, axis = v, a
        n = [0.0, 0.0, 0.0]
        n[axis] = 1.0 if p[axis] >= 0.0 else -1.0
        return t_near, n[0], n[1], n[2]
    # cylinder along z
    r, h = size[0], 0.5 * size[1]
    t_best, nx, ny, nz = inf, 0.0, 0.0, 0.0
    a = dx * dx + dy * dy
    if a > 1e-15:
        b = ox * dx + oy * dy
        disc = b * b - a * (ox * ox + oy * oy - r * r)
        if disc >= 0.0:
            t = (-b - np.sqrt(disc)) / a
            if t > 0.0 and abs(oz + t * dz) <= h:
                t_best, nx, ny, nz = t, (ox + t * dx) / r, (oy + t * dy) / r, 0.0
    if dz != 0.0:
        for zc in (-h, h):
            t = (zc - oz) / dz
            if 0.0 < t < t_best:
                px, py = ox + t * dx, oy + t * dy
                if px * px + py * py <= r * r:
                    t_best, nx, ny, nz = t, 0.0, 0.0, (1.0 if zc > 0 else -1.0)
    return t_best, nx, ny, nz


@numba.njit(cache=True)
def _ray_shapes(kind, size, R, p, radius, origins, dirs, best, normals):
    for i in range(origins.shape[0]):
        ow, dw = origins[i], dirs[i]
        for k in range(kind.shape[0]):
            # bounding-sphere cull in the world
            cx, cy, cz = ow[0] - p[k, 0], ow[1] - p[k, 1], ow[2] - p[k, 2]
            b = cx * dw[0] + cy * dw[1] + cz * dw[2]
            c = cx * cx + cy * cy + cz * cz - radius[k] * radius[k]
            if c > 0.0 and (b > 0.0 or b * b < c):
                continue
            _hit_one(k, kind, size, R, p, ow, dw, i, best, normals)  # in the shape frame: x_local = R^T (x - p)


@numba.njit(cache=True)
def _hit_one(k, kind, size, R, p, ow, dw, i, best, normals):
    cx, cy, cz = ow[0] - p[k, 0], ow[1] - p[k, 1], ow[2] - p[k, 2]
    ox = R[k, 0, 0] * cx + R[k, 1, 0] * cy + R[k, 2, 0] * cz
    oy = R[k, 0, 1] * cx + R[k, 1, 1] * cy + R[k, 2, 1] * cz
    oz = R[k, 0, 2] * cx + R[k, 1, 2] * cy + R[k, 2, 2] * cz
    dx = R[k, 0, 0] * dw[0] + R[k, 1, 0] * dw[1] + R[k, 2, 0] * dw[2]
    dy = R[k, 0, 1] * dw[0] + R[k, 1, 1] * dw[1] + R[k, 2, 1] * dw[2]
    dz = R[k, 0, 2] * dw[0] + R[k, 1, 2] * dw[1] + R[k, 2, 2] * dw[2]
    t, nx, ny, nz = _local_hit(kind[k], size[k], ox, oy, oz, dx, dy, dz)
    if t < best[i]:
        best[i] = t
        for a in range(3):
            normals[i, a] = R[k, a, 0] * nx + R[k, a, 1] * ny + R[k, a, 2] * nz


@numba.njit(cache=True)
def _ray_shapes_grid(kind, size, R, p, radius, origin, R_ws, az, el, dirs, best, normals):
    """``_ray_shapes`` for a grid of beams from one origin (azimuth ``az`` from x about z, elevation ``el``
    from the x-y plane, in the sensor frame rotated by ``R_ws``; ``dirs`` their world directions, row-major):
    each shape is tested only against the beams within the cone its bounding sphere subtends, found from
    the grid's angles, instead of against every beam."""
    n_rows, n_cols = el.shape[0], az.shape[0]
    dh = (az[-1] - az[0]) / (n_cols - 1) if n_cols > 1 else 1.0
    dv = (el[-1] - el[0]) / (n_rows - 1) if n_rows > 1 else 1.0
    two_pi = 2.0 * np.pi
    for k in range(kind.shape[0]):
        wx, wy, wz = p[k, 0] - origin[0], p[k, 1] - origin[1], p[k, 2] - origin[2]
        cx = R_ws[0, 0] * wx + R_ws[1, 0] * wy + R_ws[2, 0] * wz
        cy = R_ws[0, 1] * wx + R_ws[1, 1] * wy + R_ws[2, 1] * wz
        cz = R_ws[0, 2] * wx + R_ws[1, 2] * wy + R_ws[2, 2] * wz
        dist = np.sqrt(cx * cx + cy * cy + cz * cz)
        if dist <= radius[k] * (1.0 + 1e-9) + 1e-12:  # the sensor is inside the bounding sphere: every beam
            for i in range(n_rows * n_cols):
                _hit_one(k, kind, size, R, p, origin, dirs[i], i, best, normals)
            continue
        alpha = np.arcsin(min(1.0, radius[k] / dist)) + 1e-9
        el_c = np.arcsin(max(-1.0, min(1.0, cz / dist)))
        az_c = np.arctan2(cy, cx)
        if n_rows > 1:
            r0 = max(0, int(np.ceil((el_c - alpha - el[0]) / dv - 1e-9)))
            r1 = min(n_rows - 1, int(np.floor((el_c + alpha - el[0]) / dv + 1e-9)))
        else:
            r0, r1 = (0, 0) if abs(el[0] - el_c) <= alpha else (1, 0)
        for r in range(r0, r1 + 1):
            e = el[r]
            den = np.cos(e) * np.cos(el_c)
            if den < 1e-12:
                lo_d = np.pi
            else:
                ratio = (np.cos(alpha) - np.sin(e) * np.sin(el_c)) / den
                if ratio > 1.0:
                    continue  # this row's cone of directions misses the sphere
                lo_d = np.pi if ratio <= -1.0 else np.arccos(ratio) + 1e-9
            if lo_d >= np.pi or n_cols == 1:
                for c in range(n_cols):
                    _hit_one(k, kind, size, R, p, origin, dirs[r * n_cols + c], r * n_cols + c, best, normals)
                continue
            for shift in (-two_pi, 0.0, two_pi):
                a0 = az_c - lo_d + shift
                a1 = az_c + lo_d + shift
                c0 = max(0, int(np.ceil((a0 - az[0]) / dh - 1e-9)))
                c1 = min(n_cols - 1, int(np.floor((a1 - az[0]) / dh + 1e-9)))
                for c in range(c0, c1 + 1):
                    _hit_one(k, kind, size, R, p, origin, dirs[r * n_cols + c], r * n_cols + c, best, normals)


@dataclass(frozen=True)
class ShapeArrays:
    """Shapes as the ray casters take them: ``kind`` (M,) codes, ``size`` (M, 3), the world rotation ``R``
    (M, 3, 3) and centre ``p`` (M, 3), and each one's bounding-sphere ``radius`` (M,)."""

    kind: np.ndarray
    size: np.ndarray
    R: np.ndarray
    p: np.ndarray
    radius: np.ndarray

    def __len__(self) -> int:
        return len(self.kind)

    def moved(self, T: np.ndarray) -> ShapeArrays:
        """The same shapes at the world poses ``T`` (M, 4, 4)."""
        return ShapeArrays(self.kind, self.size, np.ascontiguousarray(T[:, :3, :3]),
                           np.ascontiguousarray(T[:, :3, 3]), self.radius)


def shape_arrays(shapes: list[Shape] | ShapeArrays) -> ShapeArrays:
    """``shapes`` as arrays (given arrays are returned as they are)."""
    if isinstance(shapes, ShapeArrays):
        return shapes
    m = len(shapes)
    kind, size = np.zeros(m, np.int64), np.zeros((m, 3))
    R, p, radius = np.zeros((m, 3, 3)), np.zeros((m, 3)), np.zeros(m)
    for k, s in enumerate(shapes):
        if s.kind not in _KINDS:
            raise ConfigError(f"lidar ray casting supports box, sphere and cylinder shapes, got '{s.kind}'")
        kind[k] = _KINDS[s.kind]
        dims = np.asarray(s.size, dtype=float)
        size[k, :dims.size] = dims
        R[k], p[k] = s.T[:3, :3], s.T[:3, 3]
        radius[k] = (0.5 * np.linalg.norm(dims) if kind[k] == 0 else dims[0] if kind[k] == 1
                     else np.hypot(dims[0], 0.5 * dims[1]))
    return ShapeArrays(kind, size, R, p, radius)


def ray_shapes_grid(shapes: list[Shape] | ShapeArrays, pattern: BeamPattern, T_world_sensor: np.ndarray,
                    dirs_world: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``ray_shapes`` for a grid pattern (``pattern.grid``): the same hits, found from the grid's angles."""
    n = pattern.size
    best, normals = np.full(n, np.inf), np.zeros((n, 3))
    if not shapes:
        return best, normals
    a = shape_arrays(shapes)
    az, el = pattern.grid
    _ray_shapes_grid(a.kind, a.size, a.R, a.p, a.radius, np.ascontiguousarray(T_world_sensor[:3, 3], float),
                     np.ascontiguousarray(T_world_sensor[:3, :3], float), az, el,
                     np.ascontiguousarray(dirs_world, float), best, normals)
    return best, normals


def ray_shapes(shapes: list[Shape] | ShapeArrays, origins: np.ndarray, dirs: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
    """Nearest intersection (t, world normal) of each ray (unit directions) with the shapes; inf where none."""
    n, m = len(origins), len(shapes)
    best = np.full(n, np.inf)
    normals = np.zeros((n, 3))
    if m == 0:
        return best, normals
    a = shape_arrays(shapes)
    _ray_shapes(a.kind, a.size, a.R, a.p, a.radius, np.ascontiguousarray(origins, float), np.ascontiguousarray(dirs, float),
                best, normals)
    return best, normals


@numba.njit(cache=True)
def _lambert(normals, i, dirs, j, albedo):  # pragma: no cover - compiled
    """albedo x cos(angle between beam j and the surface normal i), clipped to [0, albedo]."""
    c = -(normals[i, 0] * dirs[j, 0] + normals[i, 1] * dirs[j, 1] + normals[i, 2] * dirs[j, 2])
    return albedo * min(1.0, max(0.0, c))


@numba.njit(cache=True)
def _diffuse(normals, dirs, albedo, out):  # pragma: no cover - compiled
    for i in range(out.shape[0]):
        out[i] = _lambert(normals, i, dirs, i, albedo)


def diffuse_intensity(normals: np.ndarray, dirs: np.ndarray, albedo: float = 1.0) -> np.ndarray:
    """Lambertian return: albedo x cos(angle between the beam and the surface normal), >= 0."""
    normals = np.ascontiguousarray(normals, dtype=float)
    out = np.empty(len(normals))
    _diffuse(normals, np.ascontiguousarray(dirs, dtype=float), float(albedo), out)
    return out


@dataclass(frozen=True)
class Scan:
    """One sweep: ranges (N,) m (NaN: no return), points (N, 3) in the sensor frame (NaN rows: none),
    intensity (N,)."""

    ranges: np.ndarray
    points: np.ndarray
    intensity: np.ndarray


def cast(pattern: BeamPattern, T_world_sensor: np.ndarray, field=None, shapes: list[Shape] | ShapeArrays = (),
         albedo: float = 1.0) -> Scan:
    """Cast every beam of ``pattern`` from the sensor pose against the terrain field and the shapes."""
    R = np.ascontiguousarray(T_world_sensor[:3, :3], dtype=float)
    p = np.ascontiguousarray(T_world_sensor[:3, 3], dtype=float)
    n = pattern.size
    o_w, d_w = np.empty((n, 3)), np.empty((n, 3))
    _to_world(pattern.origins, pattern.directions, R, p, o_w, d_w)
    if field is not None:
        t, normals = sphere_trace(field, o_w, d_w, pattern.range_min, pattern.range_max)
    else:
        t, normals = np.full(n, np.inf), np.zeros((n, 3))
    if shapes:
        shapes = shape_arrays(shapes)
        ts, ns = (ray_shapes_grid(shapes, pattern, T_world_sensor, d_w) if pattern.grid is not None
                  else ray_shapes(shapes, o_w, d_w))
    else:
        ts, ns = t, normals  # never closer
    ranges, points, intensity = np.empty(n), np.empty((n, 3)), np.empty(n)
    _returns(t, normals, ts, ns, pattern.origins, pattern.directions, d_w, pattern.range_min, pattern.range_max,
             float(albedo), ranges, points, intensity)
    return Scan(ranges, points, intensity)


@numba.njit(cache=True)
def _to_world(origins, directions, R, p, o_out, d_out):  # pragma: no cover - compiled
    """The beams' origins and directions from the sensor frame into the world: R x + p, R d."""
    for i in range(origins.shape[0]):
        for a in range(3):
            o_out[i, a] = R[a, 0] * origins[i, 0] + R[a, 1] * origins[i, 1] + R[a, 2] * origins[i, 2] + p[a]
            d_out[i, a] = R[a, 0] * directions[i, 0] + R[a, 1] * directions[i, 1] + R[a, 2] * directions[i, 2]


@numba.njit(cache=True)
def _returns(t, normals, ts, ns, origins, directions, d_w, r_min, r_max, albedo,
             ranges, points, intensity):  # pragma: no cover - compiled
    """Each beam's return: the nearer of the terrain's hit ``t`` and the shapes' ``ts`` (a shape's only
    from ``r_min`` on), kept within [r_min, r_max]: its range, its point in the sensor frame and its
    diffuse intensity (``diffuse_intensity``); NaN where there is none."""
    for i in range(t.shape[0]):
        hit, shape = t[i], False
        if ts[i] < hit and ts[i] >= r_min:
            hit, shape = ts[i], True
        if hit >= r_min and hit <= r_max:
            ranges[i] = hit
            for a in range(3):
                points[i, a] = origins[i, a] + hit * directions[i, a]
            intensity[i] = _lambert(ns if shape else normals, i, d_w, i, albedo)
        else:
            ranges[i] = np.nan
            points[i, 0] = points[i, 1] = points[i, 2] = np.nan
            intensity[i] = np.nan


@numba.njit(cache=True)
def pack_xyzi(points, intensity, out):  # pragma: no cover - compiled
    """A scan as PointCloud2 rows x, y, z, intensity into ``out`` (N, 4) float32; True when every value is
    finite (the cloud's ``is_dense``)."""
    dense = True
    for i in range(points.shape[0]):
        for a in range(3):
            out[i, a] = points[i, a]
        out[i, 3] = intensity[i]
        if not (np.isfinite(points[i, 0]) and np.isfinite(points[i, 1]) and np.isfinite(points[i, 2])
                and np.isfinite(intensity[i])):
            dense = False
    return dense
