"""The admissible set S+ of instantaneous centres of rotation (Archimede §2.2.2).

Geometry. Wheel i with steering axis at p_i and steer angle d rolls along
(cos d, sin d); its driving axis (the axle line) is p_i + t (-sin d, cos d).
An ICR q is reachable by wheel i if q lies on that line for some d in
[d_min, d_max], or for d + pi with the wheel rate negated (the same wheel
state). So the direction of q - p_i must lie in [d_min + pi/2, d_max + pi/2]
modulo pi: S_i is a double wedge with apex p_i.

- steering range >= pi: S_i is the whole plane;
- 0 < range < pi: S_i is two opposite convex wedges, each the intersection of
  two half-planes;
- range 0 (a fixed wheel): S_i is the line through p_i along the axle.

S+ = intersection of all S_i is therefore a union of convex polygons
(possibly unbounded), one per choice of wedge half for every wheel: at most
2^N pieces, of which the empty ones are dropped. Two pieces that differ in
wheel i's half can only share the apex p_i, so connected components are
pieces merged through shared apexes.

Projection onto a convex polygon {q : G q <= h} is exact: the nearest point
is the query itself, its projection onto one edge line, or a vertex (two
edge lines), whichever is feasible and nearest. A point counts as inside a
half-plane when it violates it by at most FEAS_TOL (below); that is the
stated tolerance of the projection.

Pure translations are ICRs at infinity: a translation along direction theta
needs every wheel at theta modulo pi, so the admissible directions are an
intersection of arcs on the circle (class DirectionSet).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from eels_gz.rover.wheels import Wheel

TWO_PI = 2.0 * math.pi
# A point q violating a half-plane by at most FEAS_TOL x max(1 m, |q|) is in
# it. Near the rover (|q| ~ 1 m) vertices are intersections of unit-normal
# lines with offsets of order 1 m, with round-off ~1e-15 m; far away (nearly
# parallel axles meet at 1e8 m and more) the round-off grows with |q|, hence
# the relative part. 1e-9 leaves six orders of margin above double round-off
# and is far below any physical scale of a rover (1 nm at 1 m).
FEAS_TOL = 1e-9


def tolerance(q: np.ndarray) -> np.ndarray | float:
    """The feasibility tolerance (m) at point(s) q: FEAS_TOL x max(1, |q|)."""
    return FEAS_TOL * np.maximum(1.0, np.linalg.norm(q, axis=-1))
# rad: a translation direction within this of an admissible arc counts as on
# it. Arc ends are sums of steering limits and pi, exact to ~1e-15 rad; the
# wheel velocity error it allows, speed x 1e-12, stays below the 1e-9 m/s of
# the kinematic-consistency requirement for speeds up to 1000 m/s.
ANGLE_TOL = 1e-12
# |cross| below this: two edge lines are parallel, no vertex.
_PARALLEL = 1e-12


@dataclass(frozen=True)
class ConvexPiece:
    """A convex polygon {q : G q <= h} (G rows are unit normals) of S+;
    ``halves`` records, per wheel, which wedge half made it (+1, -1, or 0
    when the wheel does not split)."""

    G: np.ndarray
    h: np.ndarray
    halves: tuple[int, ...]

    def violation(self, q: np.ndarray) -> float:
        """Largest half-plane violation of point q scaled to unit distance (m / max(1, |q|));
        <= FEAS_TOL means inside."""
        if self.G.size == 0:
            return -math.inf
        return float(np.max(self.G @ q - self.h)) / (tolerance(q) / FEAS_TOL)

    def nearest(self, q: np.ndarray) -> np.ndarray | None:
        """The exact nearest point of the piece to q, or None if the piece is empty."""
        G, h = self.G, self.h
        if G.size == 0:
            return q.copy()
        viol = G @ q - h
        if np.all(viol <= tolerance(q)):
            return q.copy()
        on_line = q[None, :] - viol[:, None] * G  # onto each edge line
        # a second pass removes the cancellation of a far query (|viol| >> |h|)
        on_line -= (np.sum(on_line * G, axis=1) - h)[:, None] * G
        cands = [on_line]
        m = len(h)
        if m > 1:
            k, l = np.triu_indices(m, 1)
            det = G[k, 0] * G[l, 1] - G[k, 1] * G[l, 0]
            ok = np.abs(det) > _PARALLEL
            k, l, det = k[ok], l[ok], det[ok]
            if k.size:
                vx = (h[k] * G[l, 1] - h[l] * G[k, 1]) / det
                vy = (G[k, 0] * h[l] - G[l, 0] * h[k]) / det
                cands.append(np.stack([vx, vy], axis=1))
        c = np.concatenate(cands)
        feas = np.all(c @ G.T - h[None, :] <= tolerance(c)[:, None], axis=1)
        if not np.any(feas):
            return None
        c = c[feas]
        d2 = np.sum((c - q) ** 2, axis=1)
        return c[int(np.argmin(d2))].copy()


def _wedge_halfplanes(p: np.ndarray, start: float, width: float) -> list[tuple[np.ndarray, float]]:
    """Half-planes whose intersection is the wedge of directions [start, start + width]
    (width < pi) from apex p; for width 0 the pair is the full line."""
    # snap round-off (cos(pi/2) = 6e-17) so axis-aligned axles are exact lines
    da = np.array([math.cos(start), math.sin(start)]).round(15)
    db = np.array([math.cos(start + width), math.sin(start + width)]).round(15)
    da, db = da / np.linalg.norm(da), db / np.linalg.norm(db)
    g1 = np.array([da[1], -da[0]])  # cross(da, q - p) >= 0
    g2 = np.array([-db[1], db[0]])  # cross(q - p, db) >= 0
    return [(g1, float(g1 @ p)), (g2, float(g2 @ p))]


def wheel_splits(wheel: Wheel) -> int:
    """How many convex parts S_i has: 0 (whole plane), 1 (a line) or 2 (two wedges)."""
    width = wheel.steer_max - wheel.steer_min
    if width >= math.pi:
        return 0
    return 1 if width == 0.0 else 2


def build_pieces(wheels: Sequence[Wheel], extra: Sequence[tuple[np.ndarray, float]] = ()) -> list[ConvexPiece]:
    """The non-empty convex pieces of S+ for ``wheels``, each also satisfying the
    ``extra`` half-planes (g, h): g . q <= h (a mode's restriction)."""
    options = []
    for w in wheels:
        n = wheel_splits(w)
        p = np.array([w.x, w.y])
        width = w.steer_max - w.steer_min
        if n == 0:
            options.append([(0, [])])
        elif n == 1:
            options.append([(0, _wedge_halfplanes(p, w.steer_min + math.pi / 2, 0.0))])
        else:
            options.append([(+1, _wedge_halfplanes(p, w.steer_min + math.pi / 2, width)),
                            (-1, _wedge_halfplanes(p, w.steer_min - math.pi / 2, width))])
    pieces = []
    for combo in itertools.product(*options):
        planes = [hp for _, hps in combo for hp in hps] + list(extra)
        G = np.array([g for g, _ in planes], dtype=float).reshape(-1, 2)
        h = np.array([v for _, v in planes], dtype=float)
        piece = ConvexPiece(G, h, tuple(s for s, _ in combo))
        # a non-empty polygon has a nearest point to any query, and it is a candidate
        if piece.nearest(np.zeros(2)) is not None:
            pieces.append(piece)
    return pieces


def components(pieces: Sequence[ConvexPiece], wheels: Sequence[Wheel]) -> list[list[int]]:
    """Connected components of the union of ``pieces``: lists of piece indices.
    Pieces meet only at wheel apexes (see the module docstring)."""
    parent = list(range(len(pieces)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for w in wheels:
        p = np.array([w.x, w.y])
        holders = [k for k, pc in enumerate(pieces) if pc.violation(p) <= FEAS_TOL]
        for k in holders[1:]:
            parent[find(k)] = find(holders[0])
    groups: dict[int, list[int]] = {}
    for k in range(len(pieces)):
        groups.setdefault(find(k), []).append(k)
    return list(groups.values())


# --- pure translations -----------------------------------------------------------
def _arc(start: float, width: float) -> list[tuple[float, float]]:
    """The closed arc [start, start + width] as intervals within [0, 2 pi]."""
    if width >= TWO_PI:
        return [(0.0, TWO_PI)]
    a = start % TWO_PI
    if a + width <= TWO_PI:
        return [(a, a + width)]
    return [(a, TWO_PI), (0.0, a + width - TWO_PI)]


def _intersect(a: list[tuple[float, float]], b: list[tuple[float, float]]) -> list[tuple[float, float]]:
    out = []
    for s1, e1 in a:
        for s2, e2 in b:
            s, e = max(s1, s2), min(e1, e2)
            if s <= e + ANGLE_TOL:
                out.append((s, max(s, e)))
    return sorted(out)


@dataclass(frozen=True)
class DirectionSet:
    """Admissible directions of pure translation, as closed arcs in [0, 2 pi]."""

    arcs: tuple[tuple[float, float], ...]

    @classmethod
    def of(cls, wheels: Sequence[Wheel], allowed: list[tuple[float, float]] | None = None) -> "DirectionSet":
        """Directions theta with every wheel able to take theta or theta - pi, within
        ``allowed`` arcs if given (a mode's restriction)."""
        arcs = [(0.0, TWO_PI)] if allowed is None else sorted(allowed)
        for w in wheels:
            width = w.steer_max - w.steer_min
            wheel_arcs = _arc(w.steer_min, width) + _arc(w.steer_min + math.pi, width)
            arcs = _intersect(arcs, wheel_arcs)
        return cls(tuple(arcs))

    @property
    def empty(self) -> bool:
        return not self.arcs

    def contains(self, theta: float) -> bool:
        t = theta % TWO_PI
        return any(s - ANGLE_TOL <= u <= e + ANGLE_TOL for s, e in self.arcs for u in (t - TWO_PI, t, t + TWO_PI))

    def nearest(self, theta: float) -> float | None:
        """The admissible direction nearest to theta (rad, on the circle), or None."""
        if not self.arcs:
            return None
        if self.contains(theta):
            return theta
        t = theta % TWO_PI
        best, best_d = None, math.inf
        for s, e in self.arcs:
            for end in (s, e):
                d = abs((end - t + math.pi) % TWO_PI - math.pi)
                if d < best_d:
                    best, best_d = end, d
        return best + TWO_PI * round((theta - best) / TWO_PI)  # the arc end, on theta's turn
