"""ICR steering under steering limits, with the eight drive modes of
Archimede §2.2.3.

``IcrSteering(wheels, mode).command(vx, vy, wz)`` turns a body twist (m/s,
m/s, rad/s; x forward, y left, z up) into steer angles (rad) and wheel rates
(rad/s) with no lateral slip commanded, after projecting the ICR onto the
mode's part of S+ (see ``admissible``).

How a command is projected
- A twist with wz != 0 has its ICR at (-vy/wz, vx/wz). If that point is in
  the mode's set it is kept; otherwise the nearest point of the set is used
  (exact to FEAS_TOL = 1e-9 m x max(1, |ICR| / 1 m)). The sense of rotation (sign of wz) is kept.
- A pure translation (|wz| <= TRANSLATION_RATIO |v|, an ICR farther than
  1e9 m) is kept if its direction is admissible for every wheel (steer
  angle theta or theta - pi within limits) and the mode, else turned to the
  nearest admissible direction.
- A turn in a mode without finite ICRs (lateral, parallel, or a rover whose
  fixed wheels admit none) becomes the translation nearest to the body
  origin's velocity; a translation in a mode without translations
  (in_place, inner_ackermann) stops the rover: there is no nearest ICR to a
  point at infinity, and spinning on a "go straight" command would surprise.

Speed. The projected twist is scaled so that the mean ground speed of the
wheels (the mean |wheel rate| x radius) equals that of the commanded twist:
the paper's campaign commands a mean wheel rate, and this keeps it through
any projection (in-place rotation included, where the body speed is zero).
An admissible command is therefore returned unchanged.

Steering rate and jumps. This model is memoryless apart from the last steer
angles (used to pick between equivalent angles and to hold the wheels when
stopped). Each result names the connected component of S+ (``region``) its
ICR lies in; when it differs from the previous one, the projected ICR jumped
between disconnected regions and some wheel must turn through a large
angle. The rover then stops and re-steers: ``DriveController`` (control.py)
holds the wheel rates at zero until every steering joint is within its
tolerance of the new angles, with the steering motors at their rate limit.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from eels_gz.errors import RoverError
from eels_gz.rover.admissible import FEAS_TOL, ConvexPiece, DirectionSet, build_pieces, components, tolerance
from eels_gz.rover.wheels import Wheel, check_wheels, positions

log = logging.getLogger(__name__)

MODES = ("car_like", "symmetric_ackermann", "in_place", "lateral", "parallel",
         "outer_ackermann", "inner_ackermann", "general_ackermann")
# |wz| <= this x |v|: a pure translation (ICR beyond 1e9 m, where every steer
# angle is within 1e-9 rad of the translation's)
TRANSLATION_RATIO = 1e-9
# m: an ICR beyond this is not projected. Axles more than ANGLE_TOL (1e-12 rad)
# from parallel meet within ~1e12 x the wheel spacing; beyond, a translation is
# the only admissible motion (and squared distances stay far from overflow).
_FAR_ICR = 1e15
# m/s: below this a wheel is at the ICR and keeps its last steer angle
_AT_ICR = 1e-12


@dataclass(frozen=True)
class SteeringCommand:
    """The wheel set points for one body-velocity command.

    steer_angles: rad, within each wheel's limits; wheel_rates: rad/s;
    icr: (x, y) in the body frame (m) or None for a pure translation or a
    stop; twist: (vx, vy, wz) actually commanded (m/s, m/s, rad/s);
    region: index of the S+ component holding the ICR (None for a
    translation or stop); projected: whether the command was changed.
    """

    steer_angles: tuple[float, ...]
    wheel_rates: tuple[float, ...]
    icr: tuple[float, float] | None
    twist: tuple[float, float, float]
    region: int | None
    projected: bool


def _line(axis: int, value: float) -> list[tuple[np.ndarray, float]]:
    """Half-planes whose intersection is the line q[axis] == value."""
    g = np.zeros(2)
    g[axis] = 1.0
    return [(g, value), (-g, -value)]


class IcrSteering:
    """Inverse kinematics with ICR projection for any wheel set and limits."""

    def __init__(self, wheels: Sequence[Wheel], mode: str = "general_ackermann"):
        self.wheels = check_wheels(wheels, "IcrSteering")
        if mode not in MODES:
            raise RoverError(f"unknown drive mode '{mode}'; expected one of: {', '.join(MODES)}")
        self.mode = mode
        self.p = positions(self.wheels)
        self.radius = np.array([w.radius for w in self.wheels])
        self.lo = np.array([w.steer_min for w in self.wheels])
        self.hi = np.array([w.steer_max for w in self.wheels])
        # S+ of the full wheel set and its components (the regions of Fig. 3)
        self.all_pieces = build_pieces(self.wheels)
        self.all_components = components(self.all_pieces, self.wheels)
        self._piece_component = {k: c for c, members in enumerate(self.all_components) for k in members}
        self.pieces, self.directions = self._mode_set(mode)  # may narrow lo/hi (car_like)
        if not self.pieces and self.directions.empty:
            raise RoverError(f"drive mode '{mode}' admits no motion for wheels "
                             f"{', '.join(w.name for w in self.wheels)}: its part of S+ is empty")
        self.last_angles = np.clip(0.0, self.lo, self.hi)
        self.last_region: int | None = None

    # --- the mode's part of S+ ----------------------------------------------------
    def _mode_set(self, mode: str) -> tuple[list[ConvexPiece], DirectionSet]:
        """(convex pieces, translation directions) of the mode's part of S+."""
        wheels = self.wheels
        tagged = list(enumerate(self.all_pieces))
        along_x = [(0.0, 0.0), (math.pi, math.pi)]
        if mode == "general_ackermann":
            return list(self.all_pieces), DirectionSet.of(wheels)
        if mode == "parallel":
            return [], DirectionSet.of(wheels)
        if mode == "lateral":
            return [], DirectionSet.of(wheels, [(math.pi / 2, math.pi / 2), (1.5 * math.pi, 1.5 * math.pi)])
        if mode == "car_like":
            rear_x = min(w.x for w in wheels)
            locked = [Wheel.fixed(w.name, w.x, w.y, w.radius, float(np.clip(0.0, w.steer_min, w.steer_max)))
                      if w.x == rear_x else w for w in wheels]
            if not any(w.steer_min <= 0.0 <= w.steer_max for w in wheels if w.x == rear_x):
                raise RoverError("drive mode 'car_like' locks the rear wheels at 0 rad, outside their limits")
            # the locked wheels' limits collapse to 0, so their angles come out exactly 0
            self.lo = np.array([w.steer_min for w in locked])
            self.hi = np.array([w.steer_max for w in locked])
            return build_pieces(locked), DirectionSet.of(locked)
        if mode == "symmetric_ackermann":
            return build_pieces(wheels, _line(0, 0.0)), DirectionSet.of(wheels, along_x)
        if mode == "in_place":
            pieces = build_pieces(wheels, _line(0, 0.0) + _line(1, 0.0))
            if not pieces:
                raise RoverError("drive mode 'in_place' needs the body origin in S+, and some wheel cannot "
                                 "steer across its radius vector within its limits")
            return pieces, DirectionSet(())
        inner = self._inner_components()
        if mode == "inner_ackermann":
            return [pc for k, pc in tagged if self._piece_component[k] in inner], DirectionSet(())
        # outer_ackermann: components crossing the body's lateral axis outside the footprint
        outer = set()
        for c, members in enumerate(self.all_components):
            if c in inner:
                continue
            if any(build_pieces([], [(pc.G[i], pc.h[i]) for i in range(len(pc.h))] + _line(0, 0.0))
                   for pc in (self.all_pieces[k] for k in members)):
                outer.add(c)
        return [pc for k, pc in tagged if self._piece_component[k] in outer], DirectionSet.of(wheels, along_x)

    def region_of(self, icr) -> int | None:
        """Index of the S+ component holding the point (x, y), or None if it is not in S+."""
        q = np.asarray(icr, dtype=float)
        for k, pc in enumerate(self.all_pieces):
            if pc.violation(q) <= FEAS_TOL:
                return self._piece_component[k]
        return None

    def _inner_components(self) -> set[int]:
        """Components holding a point strictly inside the wheels' footprint (its centroid
        side of every wheel-to-wheel chord of the convex hull): the region under the belly."""
        from scipy.spatial import ConvexHull, QhullError

        try:
            hull = ConvexHull(self.p)
        except (QhullError, ValueError):
            return set()
        out = set()
        for c, members in enumerate(self.all_components):
            for k in members:
                pc = self.all_pieces[k]
                extra = [(eq[:2] / np.linalg.norm(eq[:2]), -eq[2] / np.linalg.norm(eq[:2]) - 1e-6)
                         for eq in hull.equations]
                if build_pieces([], [(pc.G[i], pc.h[i]) for i in range(len(pc.h))] + extra):
                    out.add(c)
                    break
        return out

    # --- membership -----------------------------------------------------------------
    def admissible(self, icr) -> bool:
        """Whether every wheel can take the ICR (x, y) within its limits: the direct
        per-wheel test of S_i, independent of the polygon pieces."""
        q = np.asarray(icr, dtype=float)
        for w in self.wheels:
            d = q - (w.x, w.y)
            dist = math.hypot(*d)
            tol_m = float(tolerance(q))
            if dist <= tol_m:
                continue
            delta = math.atan2(d[1], d[0]) - math.pi / 2  # axle through q: rolling direction
            # tol_m off the axle is tol_m / dist rad; the 1e-6 relative margin (1e-15 m) keeps
            # a point exactly tol_m off, which the polygon pieces accept, in despite round-off
            tol = tol_m / dist * (1.0 + 1e-6)
            if not any(w.steer_min - tol <= delta + k * math.pi <= w.steer_max + tol for k in range(-3, 4)):
                return False
        return True

    def why_not(self, vx: float, vy: float, wz: float) -> str | None:
        """Why the mode's part of S+ does not hold the twist (vx, vy, wz) (m/s, m/s, rad/s), so that
        :meth:`command` would project it onto another motion; None when it is admissible as given.

        The reason names the wheels (steering joints) whose limits exclude it: a translation needs
        every wheel able to take its direction (or the opposite), a turn its ICR in every wheel's
        wedge (see ``admissible``)."""
        v = math.hypot(vx, vy)
        if v == 0.0 and wz == 0.0:
            return None
        deg = math.degrees
        if abs(wz) <= TRANSLATION_RATIO * v:
            theta = math.atan2(vy, vx)
            if self.directions.contains(theta):
                return None
            blocking = [w for w in self.wheels
                        if not DirectionSet.of([w]).contains(theta)]
            arcs = ", ".join(f"{deg(s):.1f}" if e - s < 1e-9 else f"{deg(s):.1f}..{deg(e):.1f}"
                             for s, e in self.directions.arcs) or "none"
            who = "; ".join(f"'{w.name}' steers within [{deg(w.steer_min):.1f}, {deg(w.steer_max):.1f}] deg"
                            for w in blocking)
            what = "crab" if abs(math.sin(theta)) > 1e-9 else "drive straight"
            why = (f"wheel(s) {who}" if blocking else f"drive mode '{self.mode}' excludes it")
            return (f"its steering cannot {what} (translate along {deg(theta):.1f} deg from the body x axis): {why}; "
                    f"the translations it admits in mode '{self.mode}' are along {arcs} deg")
        icr = np.array([-vy / wz, vx / wz])
        if any(pc.violation(icr) <= FEAS_TOL for pc in self.pieces):
            return None
        blocking = [w.name for w in self.wheels if not IcrSteering._wheel_holds(w, icr)]
        return (f"its steering cannot turn about the point ({icr[0]:.3f}, {icr[1]:.3f}) m of the body frame "
                f"in mode '{self.mode}'" + (f": outside the steering range of wheel(s) {', '.join(blocking)}"
                                            if blocking else ""))

    @staticmethod
    def _wheel_holds(w: Wheel, q: np.ndarray) -> bool:
        d = q - (w.x, w.y)
        if math.hypot(*d) <= float(tolerance(q)):
            return True
        delta = math.atan2(d[1], d[0]) - math.pi / 2
        return any(w.steer_min - 1e-9 <= delta + k * math.pi <= w.steer_max + 1e-9 for k in range(-3, 4))

    # --- commands ---------------------------------------------------------------------
    def mean_wheel_speed(self, vx: float, vy: float, wz: float) -> float:
        """Mean ground speed (m/s) of the wheel axes under the twist."""
        v = np.stack([vx - wz * self.p[:, 1], vy + wz * self.p[:, 0]], axis=1)
        return float(np.mean(np.hypot(v[:, 0], v[:, 1])))

    def command(self, vx: float, vy: float, wz: float) -> SteeringCommand:
        """Steer angles and wheel rates for the body twist (vx, vy, wz), projected
        onto the mode's part of S+ (see the module docstring)."""
        try:
            vx, vy, wz = float(vx), float(vy), float(wz)
        except (TypeError, ValueError):
            raise RoverError(f"command must be three numbers (vx, vy, wz), got {(vx, vy, wz)!r}") from None
        if not all(math.isfinite(c) for c in (vx, vy, wz)):
            raise RoverError(f"command (vx, vy, wz) = ({vx}, {vy}, {wz}) is not finite")
        speed = self.mean_wheel_speed(vx, vy, wz)
        if speed == 0.0:
            return self._stop(projected=False)
        v = math.hypot(vx, vy)
        if abs(wz) <= TRANSLATION_RATIO * v:
            theta = math.atan2(vy, vx)
            best = self.directions.nearest(theta)
            if best is not None:
                twist = (speed * math.cos(best), speed * math.sin(best), 0.0)
                return self._finish(twist, None, None, projected=best != theta)
            if wz == 0.0 or v > _FAR_ICR * abs(wz):
                log.info("mode %s admits no translation: stopping", self.mode)
                return self._stop(projected=True)
            # No translation is admitted, but the command has an ICR (beyond 1/TRANSLATION_RATIO
            # m): project it. This method returns such far ICRs for axles within a few
            # ANGLE_TOL of parallel, and a command it returned is then reproduced when re-sent.
        icr = np.array([-vy / wz, vx / wz])
        if not self.pieces:
            best = self.directions.nearest(math.atan2(vy, vx)) if v > 0 else None
            if best is None:
                return self._stop(projected=True)
            return self._finish((speed * math.cos(best), speed * math.sin(best), 0.0), None, None, projected=True)
        best_q, best_d = None, math.inf
        for pc in self.pieces:
            q = pc.nearest(icr)
            if q is None:
                continue
            d = float(np.sum((q - icr) ** 2))
            if d < best_d:
                best_q, best_d = q, d
        projected = best_d > 0.0
        q = best_q if projected else icr
        arm = float(np.mean(np.hypot(self.p[:, 0] - q[0], self.p[:, 1] - q[1])))
        if arm == 0.0:
            return self._stop(projected=True)
        w = math.copysign(speed / arm, wz) if projected else wz
        twist = (w * q[1], -w * q[0], w) if projected else (vx, vy, wz)
        return self._finish(twist, (float(q[0]), float(q[1])), self.region_of(q), projected)

    def _stop(self, projected: bool) -> SteeringCommand:
        n = len(self.wheels)
        self.last_region = None
        return SteeringCommand(tuple(self.last_angles.tolist()), (0.0,) * n, None, (0.0, 0.0, 0.0), None, projected)

    def _finish(self, twist, icr, region, projected: bool) -> SteeringCommand:
        vx, vy, wz = twist
        vel = np.stack([vx - wz * self.p[:, 1], vy + wz * self.p[:, 0]], axis=1)
        angles = self.last_angles.copy()
        rates = np.zeros(len(self.wheels))
        # An ICR counts as admissible within tolerance(icr) metres of each wheel's
        # wedge (as in admissible()), so a wheel's rigid velocity may point off its
        # limits by up to slack = 2 |wz| tolerance m/s (twice: the projection's own
        # round-off at that boundary). Such a wheel is clamped to its limit and rolls
        # at the velocity's component along it; the lateral rest, at most slack, is
        # the only slip commanded: 1e-9 of the wheel speeds' scale |wz| max(1, |icr|).
        slack = 2.0 * abs(wz) * float(tolerance(np.asarray(icr, dtype=float))) if icr is not None else 0.0
        for j, (ux, uy) in enumerate(vel):
            s = math.hypot(ux, uy)
            if s <= _AT_ICR:
                continue  # the wheel is at the ICR: any angle, zero rate
            allowed = max(1e-6, math.asin(slack / s) if slack < s else math.pi)
            base = math.atan2(uy, ux)
            best = None
            for k in (-2, -1, 0, 1, 2):
                a = base + k * math.pi
                out = max(self.lo[j] - a, a - self.hi[j], 0.0)
                key = (out > allowed, out, abs(a - self.last_angles[j]))
                if best is None or key < best[0]:
                    best = (key, a)
            (_, violation, _), a = best
            if violation > allowed:
                raise RoverError(f"internal: wheel '{self.wheels[j].name}' cannot take {a:.6f} rad within "
                                 f"[{self.lo[j]:.6f}, {self.hi[j]:.6f}] for twist {twist}")
            angles[j] = min(max(a, self.lo[j]), self.hi[j])
            rates[j] = (ux * math.cos(angles[j]) + uy * math.sin(angles[j])) / self.radius[j]
        self.last_angles = angles
        self.last_region = region
        return SteeringCommand(tuple(angles.tolist()), tuple(rates.tolist()), icr,
                               (float(vx), float(vy), float(wz)), region, bool(projected))
