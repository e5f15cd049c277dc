"""Analytic terrain shapes with the :class:`~eels_gz.terrain.fields.DistanceField`
interface: exact signed distances (positive in free space) and outward unit
normals, vectorized with numpy. Tests use them as references for the sampled
fields; the world tools build primitive worlds from them.

``bounds`` is the box of the terrain solid (infinite when the solid is
unbounded); the distance itself is valid everywhere. Where the nearest
surface point is not unique (a tie), the normal picks one of the nearest
features as documented per shape.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
from numba import njit

from eels_gz.errors import TerrainError
from eels_gz.terrain.fields import DistanceField, as_points, refuse_non_finite

_INF3 = (np.full(3, -np.inf), np.full(3, np.inf))


def _unit(value, name: str, who: str) -> np.ndarray:
    arr = np.asarray(value, dtype=np.float64)
    if arr.shape != (3,) or not np.isfinite(arr).all() or not np.linalg.norm(arr) > 0:
        raise TerrainError(f"{who}: {name} must be a non-zero finite 3-vector, got {value!r}")
    return arr / np.linalg.norm(arr)


def _point(value, name: str, who: str) -> np.ndarray:
    arr = np.asarray(value, dtype=np.float64)
    if arr.shape != (3,) or not np.isfinite(arr).all():
        raise TerrainError(f"{who}: {name} must be a finite 3-vector [m], got {value!r}")
    return arr


def _length(value, name: str, who: str, allow_inf: bool = False) -> float:
    v = float(value)
    if not (v > 0) or (math.isinf(v) and not allow_inf) or math.isnan(v):
        raise TerrainError(f"{who}: {name} must be a positive {'' if allow_inf else 'finite '}length [m], "
                           f"got {value!r}")
    return v


def _sign(x: np.ndarray) -> np.ndarray:
    """Sign with sign(0) = +1."""
    return np.where(x < 0.0, -1.0, 1.0)


class _Analytic:
    """Input checking shared by the analytic shapes; subclasses define ``_eval``."""

    kind: str

    def query(self, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Signed distance (N,) [m] and unit outward normal (N, 3) at ``points`` (N, 3) [m]."""
        who = type(self).__name__
        p = as_points(points, who)
        if not np.isfinite(p).all():
            refuse_non_finite(p, who)
        return self._eval(p)

    def _eval(self, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    @property
    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Box of the terrain solid [m]; infinite for unbounded solids."""
        return _INF3[0].copy(), _INF3[1].copy()


@dataclass(frozen=True, eq=False)
class Plane(_Analytic):
    """Half-space terrain below the plane through ``point`` [m] with outward
    (upward) ``normal`` (normalized here): ``d = (p - point) . n``."""

    point: np.ndarray = field(default_factory=lambda: np.zeros(3))
    normal: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, 1.0]))
    kind: ClassVar[str] = "plane"

    def __post_init__(self) -> None:
        object.__setattr__(self, "point", _point(self.point, "point", "Plane"))
        object.__setattr__(self, "normal", _unit(self.normal, "normal", "Plane"))
        object.__setattr__(self, "_offset", float(self.point @ self.normal))  # d = p . n - offset

    def raycast(self, origins: np.ndarray, dirs: np.ndarray, t_min: float, t_max: float
                ) -> tuple[np.ndarray, np.ndarray]:
        """Distance along each ray (unit ``dirs``) from ``origins`` to the plane,
        inf where it is not met within [t_min, t_max] or met from below, and
        the normal there: the closed form of sphere tracing."""
        o = np.ascontiguousarray(origins, dtype=float)
        d = np.ascontiguousarray(dirs, dtype=float)
        t, normal = np.empty(o.shape[0]), np.empty_like(o)
        _plane_raycast(o, d, self.normal, self._offset, float(t_min), float(t_max), t, normal)
        return t, normal

    def half_space(self) -> tuple[np.ndarray, float]:
        """``(n, offset)``: the signed distance is ``p . n - offset`` (``plane_eval`` computes it in
        compiled code, e.g. inside the screw contact's own kernel)."""
        return self.normal, self._offset

    def query(self, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Signed distance (N,) [m] and unit outward normal (N, 3) at ``points`` (N, 3) [m]
        (one compiled pass: the screw contact asks this every step)."""
        p = as_points(points, "Plane")
        d, normal = np.empty(p.shape[0]), np.empty_like(p)
        if not plane_eval(p, self.normal, self._offset, d, normal):
            refuse_non_finite(p, "Plane")
        return d, normal

    def _eval(self, p):
        normal = np.empty_like(p)
        normal[:] = self.normal
        return p @ self.normal - self._offset, normal


@njit(cache=True)
def _plane_raycast(o, d, n, offset, t_min, t_max, t_out, normal_out):  # pragma: no cover - compiled
    """Plane.raycast: t = -height / rate for rays from above (height >= 0) going down (rate < 0), inf
    otherwise or outside [t_min, t_max]; the normal n where met, else 0."""
    for i in range(o.shape[0]):
        height = o[i, 0] * n[0] + o[i, 1] * n[1] + o[i, 2] * n[2] - offset
        rate = d[i, 0] * n[0] + d[i, 1] * n[1] + d[i, 2] * n[2]
        t = -height / rate if rate < 0.0 and height >= 0.0 else np.inf
        if not (t >= t_min and t <= t_max):
            t = np.inf
        t_out[i] = t
        hit = 1.0 if t < np.inf else 0.0
        normal_out[i, 0], normal_out[i, 1], normal_out[i, 2] = hit * n[0], hit * n[1], hit * n[2]


@njit(cache=True)
def plane_eval(p, n, offset, d_out, normal_out):  # pragma: no cover - compiled
    """d = p . n - offset and the normal n for each point; False if a point is not finite."""
    finite = True
    for i in range(p.shape[0]):
        x, y, z = p[i, 0], p[i, 1], p[i, 2]
        if not (math.isfinite(x) and math.isfinite(y) and math.isfinite(z)):
            finite = False
        d_out[i] = x * n[0] + y * n[1] + z * n[2] - offset
        normal_out[i, 0], normal_out[i, 1], normal_out[i, 2] = n[0], n[1], n[2]
    return finite


@dataclass(frozen=True, eq=False)
class Slope(_Analytic):
    """Plane ``z = height + x tan(angle_rad)`` (the flat ground tilted about
    the y axis, rising along +x), terrain below; ``|angle_rad| < pi/2``."""

    angle_rad: float
    height: float = 0.0
    kind: ClassVar[str] = "slope"

    def __post_init__(self) -> None:
        a = float(self.angle_rad)
        if not (abs(a) < math.pi / 2):
            raise TerrainError(f"Slope: angle_rad must lie in (-pi/2, pi/2), got {self.angle_rad!r}")
        if not math.isfinite(float(self.height)):
            raise TerrainError(f"Slope: height must be finite [m], got {self.height!r}")
        object.__setattr__(self, "angle_rad", a)
        object.__setattr__(self, "height", float(self.height))

    @property
    def plane(self) -> Plane:
        """The equivalent :class:`Plane`."""
        a = self.angle_rad
        return Plane(np.array([0.0, 0.0, self.height]), np.array([-math.sin(a), 0.0, math.cos(a)]))

    def _eval(self, p):
        return self.plane._eval(p)


@dataclass(frozen=True, eq=False)
class Tube(_Analytic):
    """Open-ended pipe seen from inside: the solid is every point at radial
    distance ``>= radius`` from the axis (through ``center``, along ``axis``)
    within ``|s| <= length / 2`` of the centre along it (a wall of unbounded
    thickness). ``length`` may be ``inf``.

    In the bore ``d = radius - rho`` (positive); beyond the ends the free
    space continues, with the distance to the end face (``rho >= radius``)
    or to the rim circle (``rho < radius``). On the axis the radial
    direction is undefined and a fixed direction perpendicular to the axis
    is used.
    """

    radius: float
    length: float = math.inf
    center: np.ndarray = field(default_factory=lambda: np.zeros(3))
    axis: np.ndarray = field(default_factory=lambda: np.array([1.0, 0.0, 0.0]))
    kind: ClassVar[str] = "tube"

    def __post_init__(self) -> None:
        object.__setattr__(self, "radius", _length(self.radius, "radius", "Tube"))
        object.__setattr__(self, "length", _length(self.length, "length", "Tube", allow_inf=True))
        object.__setattr__(self, "center", _point(self.center, "center", "Tube"))
        object.__setattr__(self, "axis", _unit(self.axis, "axis", "Tube"))

    def _eval(self, p):
        a, r = self.axis, self.radius
        q = p - self.center
        s = q @ a
        radial = q - s[:, None] * a
        rho = np.linalg.norm(radial, axis=1)
        helper = np.eye(3)[int(np.argmin(np.abs(a)))]
        e_fixed = np.cross(a, helper)
        e_fixed /= np.linalg.norm(e_fixed)
        e_r = np.where(rho[:, None] > 0, radial / np.where(rho > 0, rho, 1.0)[:, None], e_fixed)
        e_s = _sign(s)[:, None] * a
        se = np.abs(s) - self.length / 2  # > 0 beyond the ends
        d = np.empty(len(p))
        n = np.empty_like(p)
        bore = (se <= 0) & (rho <= r)
        d[bore] = r - rho[bore]
        n[bore] = -e_r[bore]
        wall = (se <= 0) & (rho > r)
        to_bore = wall & (rho - r <= -se)
        to_end = wall & ~to_bore
        d[to_bore] = r - rho[to_bore]
        n[to_bore] = -e_r[to_bore]
        d[to_end] = se[to_end]
        n[to_end] = e_s[to_end]
        face = (se > 0) & (rho >= r)
        d[face] = se[face]
        n[face] = e_s[face]
        rim = (se > 0) & (rho < r)
        dr = (rho - r)[rim]
        dist = np.hypot(dr, se[rim])
        d[rim] = dist
        n[rim] = (dr[:, None] * e_r[rim] + se[rim][:, None] * e_s[rim]) / dist[:, None]
        return d, n


@dataclass(frozen=True, eq=False)
class ParallelWalls(_Analytic):
    """Two facing half-space walls normal to y, the free gap ``|y - y_center|
    < gap / 2`` between them: ``d = gap / 2 - |y - y_center|``. On the
    centre plane (a tie) the +y wall is the nearest (normal -y)."""

    gap: float
    y_center: float = 0.0
    kind: ClassVar[str] = "parallel_walls"

    def __post_init__(self) -> None:
        object.__setattr__(self, "gap", _length(self.gap, "gap", "ParallelWalls"))
        if not math.isfinite(float(self.y_center)):
            raise TerrainError(f"ParallelWalls: y_center must be finite [m], got {self.y_center!r}")

    def _eval(self, p):
        dy = p[:, 1] - self.y_center
        n = np.zeros_like(p)
        n[:, 1] = -_sign(dy)
        return self.gap / 2 - np.abs(dy), n


@dataclass(frozen=True, eq=False)
class UChannel(_Analytic):
    """Floor ``z <= floor_z`` plus walls ``|y - y_center| >= width / 2``
    (infinite along x and up); free space is the channel above the floor
    between the walls. Exact inside the solid too (distance to the channel
    corner below the walls); on ties the floor is the nearest feature."""

    width: float
    floor_z: float = 0.0
    y_center: float = 0.0
    kind: ClassVar[str] = "u_channel"

    def __post_init__(self) -> None:
        object.__setattr__(self, "width", _length(self.width, "width", "UChannel"))
        for name in ("floor_z", "y_center"):
            if not math.isfinite(float(getattr(self, name))):
                raise TerrainError(f"UChannel: {name} must be finite [m], got {getattr(self, name)!r}")

    def _eval(self, p):
        dy = p[:, 1] - self.y_center
        above = p[:, 2] - self.floor_z  # > 0 above the floor
        inside = self.width / 2 - np.abs(dy)  # > 0 between the walls
        wall_n = -_sign(dy)
        n = np.zeros_like(p)
        free = (above > 0) & (inside > 0)
        floor_nearer = above <= inside
        d = np.where(free, np.minimum(above, inside), 0.0)
        pa = np.maximum(-above, 0.0)
        pb = np.maximum(-inside, 0.0)
        depth = np.hypot(pa, pb)
        solid = ~free & (depth > 0)
        d[solid] = -depth[solid]
        n[:, 2] = np.where(solid, pa / np.where(solid, depth, 1.0), np.where(floor_nearer, 1.0, 0.0))
        n[:, 1] = np.where(solid, wall_n * pb / np.where(solid, depth, 1.0), np.where(floor_nearer, 0.0, wall_n))
        return d, n


@dataclass(frozen=True, eq=False)
class Sphere(_Analytic):
    """Solid ball: ``d = |p - center| - radius``; at the centre the normal is +z."""

    center: np.ndarray
    radius: float
    kind: ClassVar[str] = "sphere"

    def __post_init__(self) -> None:
        object.__setattr__(self, "center", _point(self.center, "center", "Sphere"))
        object.__setattr__(self, "radius", _length(self.radius, "radius", "Sphere"))

    @property
    def bounds(self):
        return self.center - self.radius, self.center + self.radius

    def _eval(self, p):
        q = p - self.center
        dist = np.linalg.norm(q, axis=1)
        n = np.where(dist[:, None] > 0, q / np.where(dist > 0, dist, 1.0)[:, None], np.array([0.0, 0.0, 1.0]))
        return dist - self.radius, n


@dataclass(frozen=True, eq=False)
class Hemisphere(_Analytic):
    """Upper half-ball (a ROAMS rock, ``z = sqrt(r^2 - rho^2)``) with its flat
    base in the plane ``z = center_z``. Exact distance, base included: below
    the base plane the nearest point is on the disc or its rim."""

    center: np.ndarray
    radius: float
    kind: ClassVar[str] = "hemisphere"

    def __post_init__(self) -> None:
        object.__setattr__(self, "center", _point(self.center, "center", "Hemisphere"))
        object.__setattr__(self, "radius", _length(self.radius, "radius", "Hemisphere"))

    @property
    def bounds(self):
        r = self.radius
        return self.center - np.array([r, r, 0.0]), self.center + r

    def _eval(self, p):
        r = self.radius
        q = p - self.center
        s = q[:, 2]
        rho = np.hypot(q[:, 0], q[:, 1])
        dist = np.linalg.norm(q, axis=1)
        safe = np.where(dist > 0, dist, 1.0)[:, None]
        radial = q / safe  # unit q (unused where dist == 0)
        down = np.array([0.0, 0.0, -1.0])
        d = np.empty(len(p))
        n = np.empty_like(p)
        up = s >= 0
        cap = up & ((dist > r) | (r - dist <= s))  # outside the ball, or inside nearer the cap
        d[cap] = dist[cap] - r
        n[cap] = radial[cap]
        base_in = up & ~cap
        d[base_in] = -s[base_in]
        n[base_in] = down
        below = ~up
        disc = below & (rho <= r)
        d[disc] = -s[disc]
        n[disc] = down
        rim = below & (rho > r)
        dr = rho[rim] - r
        dist_rim = np.hypot(dr, s[rim])
        d[rim] = dist_rim
        e_rho = np.zeros((int(rim.sum()), 3))
        e_rho[:, 0] = q[rim, 0] / rho[rim]
        e_rho[:, 1] = q[rim, 1] / rho[rim]
        n[rim] = (dr[:, None] * e_rho + s[rim][:, None] * np.array([0.0, 0.0, 1.0])) / dist_rim[:, None]
        return d, n


@dataclass(frozen=True, eq=False)
class Box(_Analytic):
    """Axis-aligned solid box of ``half_extents`` [m] about ``center``. Inside,
    the nearest face wins (ties: lowest axis, then the + face)."""

    center: np.ndarray
    half_extents: np.ndarray
    kind: ClassVar[str] = "box"

    def __post_init__(self) -> None:
        object.__setattr__(self, "center", _point(self.center, "center", "Box"))
        he = np.asarray(self.half_extents, dtype=np.float64)
        if he.shape != (3,) or not np.isfinite(he).all() or not (he > 0).all():
            raise TerrainError(f"Box: half_extents must be 3 positive finite lengths [m], got {self.half_extents!r}")
        object.__setattr__(self, "half_extents", he)

    @property
    def bounds(self):
        return self.center - self.half_extents, self.center + self.half_extents

    def _eval(self, p):
        rel = p - self.center
        sgn = _sign(rel)
        q = np.abs(rel) - self.half_extents
        out = np.maximum(q, 0.0)
        out_len = np.linalg.norm(out, axis=1)
        qmax = q.max(axis=1)
        d = out_len + np.minimum(qmax, 0.0)
        n = np.zeros_like(p)
        outside = out_len > 0
        n[outside] = sgn[outside] * out[outside] / out_len[outside, None]
        rows = np.nonzero(~outside)[0]
        axis = np.argmax(q[rows], axis=1)
        n[rows, axis] = sgn[rows, axis]
        return d, n


@dataclass(frozen=True, eq=False)
class Union(_Analytic):
    """Terrain made of several fields: ``d = min_i d_i`` with the normal of
    the nearest member (ties: the first). Exact in free space; inside
    overlapping members ``|d|`` is a lower bound of the true depth."""

    fields: tuple
    kind: ClassVar[str] = "union"

    def __post_init__(self) -> None:
        members = tuple(self.fields)
        if not members:
            raise TerrainError("Union: needs at least one field")
        for i, f in enumerate(members):
            if not isinstance(f, DistanceField):
                raise TerrainError(f"Union: fields[{i}] ({type(f).__name__}) is not a DistanceField "
                                   f"(query, bounds, kind)")
        object.__setattr__(self, "fields", members)

    @property
    def bounds(self):
        lows, highs = zip(*(f.bounds for f in self.fields))
        return np.min(lows, axis=0), np.max(highs, axis=0)

    def query(self, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Signed distance (N,) [m] and unit outward normal (N, 3) at ``points`` (N, 3) [m]."""
        p = as_points(points, "Union")
        d, n = self.fields[0].query(p)
        d, n = d.copy(), n.copy()
        for f in self.fields[1:]:
            di, ni = f.query(p)
            closer = di < d
            d[closer] = di[closer]
            n[closer] = ni[closer]
        return d, n
