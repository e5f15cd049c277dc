"""3D reference paths parametrized by arc length ``s`` (m): polylines and
helices (a circle is a helix of zero pitch, a line a two-point polyline).

Each path gives ``point(s)``, ``length``, the closest point to a query point,
and :func:`chord_points`, the follow-the-leader placement of rigid segments
with both ends on the path (NEO Fig. 4 assumes "both ends of a module are
perfectly on the reference path").
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numba import njit

from eels_gz.errors import SnakeModelError


class Path3:
    """Base class: subclasses define ``length`` (m) and ``point(s)``."""

    length: float

    def point(self, s: float) -> np.ndarray:
        raise NotImplementedError

    def points(self, s: np.ndarray) -> np.ndarray:
        """Points (k, 3) at arc lengths ``s`` (k,); subclasses may vectorize."""
        return np.array([self.point(x) for x in np.asarray(s, float)])

    def tangent(self, s: float, h: float = 1e-6) -> np.ndarray:
        """Unit tangent at ``s`` (central difference, one-sided at the ends)."""
        a, b = max(0.0, s - h), min(self.length, s + h)
        d = self.point(b) - self.point(a)
        return d / np.linalg.norm(d)

    def closest(self, p: np.ndarray, samples: int = 400) -> tuple[float, np.ndarray, float]:
        """(s, point, distance) of the path point nearest to ``p``: dense
        sampling, then a bounded 1D refinement around the best sample."""
        p = np.asarray(p, float)
        s = np.linspace(0.0, self.length, samples)
        d = np.linalg.norm(self.points(s) - p, axis=1)
        k = int(np.argmin(d))
        lo, hi = s[max(k - 1, 0)], s[min(k + 1, samples - 1)]
        from scipy.optimize import minimize_scalar  # here: scipy.optimize's import is 0.4 s of every run's start

        res = minimize_scalar(lambda x: float(np.sum((self.point(x) - p) ** 2)), bounds=(lo, hi),
                              method="bounded", options={"xatol": 1e-12})
        best = float(res.x) if res.fun <= d[k] ** 2 else float(s[k])
        q = self.point(best)
        return best, q, float(np.linalg.norm(q - p))


class PolylinePath(Path3):
    """Straight segments through ``vertices`` (N >= 2, (N, 3), m)."""

    def __init__(self, vertices: Sequence[Sequence[float]] | np.ndarray):
        v = np.asarray(vertices, float)
        if v.ndim != 2 or v.shape[1] != 3 or len(v) < 2 or not np.isfinite(v).all():
            raise SnakeModelError(f"PolylinePath: vertices must be a finite (N >= 2, 3) array, got shape {v.shape}")
        seg = np.linalg.norm(np.diff(v, axis=0), axis=1)
        if not (seg > 0).all():
            raise SnakeModelError(f"PolylinePath: vertices {np.flatnonzero(seg <= 0).tolist()} repeat the next one")
        self.vertices = v
        self.cumulative = np.concatenate([[0.0], np.cumsum(seg)])
        self.length = float(self.cumulative[-1])

    def point(self, s: float) -> np.ndarray:
        s = min(max(float(s), 0.0), self.length)
        k = min(int(np.searchsorted(self.cumulative, s, side="right")) - 1, len(self.vertices) - 2)
        f = (s - self.cumulative[k]) / (self.cumulative[k + 1] - self.cumulative[k])
        return self.vertices[k] + f * (self.vertices[k + 1] - self.vertices[k])

    def closest(self, p: np.ndarray, samples: int = 0) -> tuple[float, np.ndarray, float]:
        """Exact: projection on every segment, clamped, nearest kept."""
        p = np.asarray(p, float)
        a, b = self.vertices[:-1], self.vertices[1:]
        ab = b - a
        f = np.clip(np.einsum("ij,ij->i", p - a, ab) / np.einsum("ij,ij->i", ab, ab), 0.0, 1.0)
        q = a + f[:, None] * ab
        d = np.linalg.norm(q - p, axis=1)
        k = int(np.argmin(d))
        return float(self.cumulative[k] + f[k] * (self.cumulative[k + 1] - self.cumulative[k])), q[k], float(d[k])


def line_path(start: Sequence[float], direction: Sequence[float], length: float) -> PolylinePath:
    """Straight path of ``length`` (m) from ``start`` along ``direction``."""
    d = np.asarray(direction, float)
    return PolylinePath([np.asarray(start, float), np.asarray(start, float) + length * d / np.linalg.norm(d)])


class HelixPath(Path3):
    """Helix of ``radius`` (m) and ``pitch`` (m per turn) about the line through
    ``center`` along ``axis``, turning right-handed about ``axis``, starting at
    ``center + radius * ref`` (``ref`` is made perpendicular to ``axis``) and
    ``length`` (m) long. Arc-length parametrization: with ``h = pitch/(2 pi)``
    and ``c = sqrt(radius^2 + h^2)``, the angle is ``phi = s / c``."""

    def __init__(self, radius: float, pitch: float, length: float, center=(0.0, 0.0, 0.0),
                 axis=(0.0, 0.0, 1.0), ref=(1.0, 0.0, 0.0)):
        if not (radius > 0 and math.isfinite(radius)) or not math.isfinite(pitch) or not length > 0:
            raise SnakeModelError(f"HelixPath: need radius > 0, finite pitch, length > 0; got "
                                  f"radius={radius!r}, pitch={pitch!r}, length={length!r}")
        a = np.asarray(axis, float)
        a = a / np.linalg.norm(a)
        e1 = np.asarray(ref, float) - (np.asarray(ref, float) @ a) * a
        if not np.linalg.norm(e1) > 1e-9:
            raise SnakeModelError("HelixPath: 'ref' must not be parallel to 'axis'")
        self.e1 = e1 / np.linalg.norm(e1)
        self.e2 = np.cross(a, self.e1)
        self.axis, self.center = a, np.asarray(center, float)
        self.radius, self.pitch, self.length = float(radius), float(pitch), float(length)
        self.h = self.pitch / (2.0 * math.pi)
        self.c = math.hypot(self.radius, self.h)

    def points(self, s: np.ndarray) -> np.ndarray:
        phi = np.asarray(s, float)[:, None] / self.c
        return self.center + self.radius * (np.cos(phi) * self.e1 + np.sin(phi) * self.e2) + self.h * phi * self.axis

    def point(self, s: float) -> np.ndarray:
        phi = float(s) / self.c
        radial = math.cos(phi) * self.e1 + math.sin(phi) * self.e2
        return self.center + self.radius * radial + self.h * phi * self.axis


def chord_points(path: Path3, s0: float, lengths: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """Arc lengths (k + 1,) and points (k + 1, 3) with point 0 at ``s0`` and
    each next point the first one further along the path at straight-line
    distance ``lengths[i]`` (m) from the previous (a sphere-path intersection:
    in closed form on a polyline, else found by marching ``length/16`` steps
    and refined with Brent's method to 1e-13 m)."""
    if not 0.0 <= s0 <= path.length:
        raise SnakeModelError(f"chord_points: start s0 = {s0!r} is outside the path [0, {path.length:.6g}] m")
    if isinstance(path, PolylinePath):
        return _polyline_chords(path, float(s0), lengths)
    s_out, pts = [float(s0)], [path.point(s0)]
    for i, ell in enumerate(lengths):
        p0, s_prev = pts[-1], s_out[-1]
        f = lambda s: float(np.linalg.norm(path.point(s) - p0)) - ell  # noqa: E731
        step = ell / 16.0
        a = s_prev
        while True:
            b = min(a + step, path.length)
            if f(b) >= 0.0:
                break
            if b >= path.length:
                raise _path_ends(path, s_prev, i, ell)
            a = b
        from scipy.optimize import brentq

        s = brentq(f, a, b, xtol=1e-13, rtol=4 * np.finfo(float).eps) if f(a) < 0.0 else a
        s_out.append(float(s))
        pts.append(path.point(s))
    return np.array(s_out), np.array(pts)


def _path_ends(path: Path3, s_prev: float, i: int, ell: float) -> SnakeModelError:
    return SnakeModelError(f"chord_points: the path ends {path.length - s_prev:.4g} m after point {i}; segment {i} "
                           f"needs a chord of {ell:.4g} m (start the robot earlier or extend the path)")


def _polyline_chords(path: PolylinePath, s0: float, lengths: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """:func:`chord_points` on a polyline, in closed form (:func:`_polyline_chord_kernel`)."""
    ell = np.asarray(lengths, dtype=float)
    s, pts, failed = _polyline_chord_kernel(path.vertices, path.cumulative, s0, ell)
    if failed >= 0:
        raise _path_ends(path, s[failed], failed, ell[failed])
    return s, pts


@njit(cache=True)
def _polyline_chord_kernel(V: np.ndarray, cum: np.ndarray, s0: float, lengths: np.ndarray):
    """From the previous point ``p0`` (inside the sphere of radius ``ell`` about it) the chord ends where
    the path leaves that sphere: the larger root of ``|A + t (B - A) - p0|^2 = ell^2`` on the first segment
    ``AB`` on which it lies in [t_start, 1]. Returns (s, points, the chord that ran off the end or -1)."""
    last = V.shape[0] - 2
    n = lengths.shape[0]
    s_out, pts = np.zeros(n + 1), np.zeros((n + 1, 3))
    j = min(np.searchsorted(cum, s0, side="right") - 1, last)
    f = (s0 - cum[j]) / (cum[j + 1] - cum[j])
    s_out[0] = s0
    pts[0] = V[j] + f * (V[j + 1] - V[j])  # as PolylinePath.point
    for i in range(n):
        ell = lengths[i]
        t_lo = (s_out[i] - cum[j]) / (cum[j + 1] - cum[j])
        while True:
            d0, d1, d2 = V[j + 1, 0] - V[j, 0], V[j + 1, 1] - V[j, 1], V[j + 1, 2] - V[j, 2]
            r0, r1, r2 = V[j, 0] - pts[i, 0], V[j, 1] - pts[i, 1], V[j, 2] - pts[i, 2]
            a = d0 * d0 + d1 * d1 + d2 * d2
            b = 2.0 * (d0 * r0 + d1 * r1 + d2 * r2)
            c = r0 * r0 + r1 * r1 + r2 * r2 - ell * ell
            disc = b * b - 4.0 * a * c
            t = -1.0
            if disc >= 0.0:
                q = -0.5 * (b + math.copysign(math.sqrt(disc), b))  # the roots q/a and c/q, without cancellation
                t = max(q / a, c / q) if q != 0.0 else q / a
            if t_lo <= t <= 1.0:
                break
            if j == last:
                return s_out, pts, i
            j, t_lo = j + 1, 0.0
        s_out[i + 1] = cum[j] + t * (cum[j + 1] - cum[j])
        pts[i + 1, 0], pts[i + 1, 1], pts[i + 1, 2] = V[j, 0] + t * d0, V[j, 1] + t * d1, V[j, 2] + t * d2
    return s_out, pts, -1
