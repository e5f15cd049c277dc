"""Contact-point sets on screws, and the thread directions at those points.

Screw frame: the screw axis is the link's x axis, the screw spans
``x_center ± length/2``; ``radius`` is the blade-tip radius (the envelope the
terrain touches). At a point with outward radial unit vector ``e_r`` let
``e_theta = e_x × e_r`` (the direction of positive spin). The blade edge is a
helix of lead angle ``alpha`` measured from the circumferential direction,
with thread tangent

    t = cos(alpha) e_theta + h sin(alpha) e_x,     h = +1 right-handed, -1 left,

and the across-thread direction, in the envelope's tangent plane and
perpendicular to ``t``, is

    e_v = cos(alpha) e_x - h sin(alpha) e_theta.

Kinematics: a screw spinning at ``omega`` about x and moving at ``v`` along x
has, at any envelope point, velocity ``v e_x + omega r e_theta``, whose
component along ``e_v`` is ``v cos(alpha) - h omega r sin(alpha)``. It is zero
(no slip across the blade) for ``v = h omega r tan(alpha)``: one lead
``2 pi r tan(alpha)`` per revolution.

Why the points do not spin with the screw. Points fixed in the spinning link
would pass in and out of contact every revolution: the contact set would
chatter at the spin frequency, and with few points the load would jump
between them. A helix is invariant under the screw motion it defines, so the
blade envelope and its thread direction at a given place are the same at
every spin angle; only the location of the blade crossing moves along the
contact line. The points are therefore placed in a frame that follows the
screw axis but not its spin angle: rings at ``points_axial`` equally spaced
stations (midpoints of equal axial segments, each standing for that length of
the line contact), each with ``points_ring`` points equally spaced around the
envelope, the first facing a "down" direction the caller supplies (gravity,
or the terrain normal reversed), so that on a flat surface the first point of
every ring is the lowest point of the envelope. The velocity used at a point
is that of the link's material point there (rigid-body velocity), which is
the velocity the blade has as it passes; ``e_v`` there comes from the thread
angle. The other ring points catch walls (tubes, channels) and roll-over.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numba import njit
from numpy.typing import ArrayLike

from eels_gz.errors import ContactError


@dataclass(frozen=True)
class ScrewGeometry:
    """One screw: blade-tip radius (m), length (m), lead angle from the
    circumferential direction (rad, in (0, pi/2)), handedness (+1 right,
    -1 left) and the axial position of its centre in the link frame (m)."""

    radius: float
    length: float
    lead_angle: float
    handedness: int
    x_center: float = 0.0
    name: str = "screw"

    def __post_init__(self) -> None:
        checks = {
            "radius": (self.radius > 0.0, "a blade-tip radius > 0 m"),
            "length": (self.length > 0.0, "a length > 0 m"),
            "lead_angle": (0.0 < self.lead_angle < 0.5 * math.pi, "a lead angle in (0, pi/2) rad"),
            "x_center": (math.isfinite(self.x_center), "a finite axial offset in m"),
        }
        for key, (ok, meaning) in checks.items():
            if not ok:
                raise ContactError(f"screw '{self.name}': '{key}' = {getattr(self, key)!r}; expected {meaning}")
        if self.handedness not in (1, -1) or isinstance(self.handedness, bool):
            raise ContactError(
                f"screw '{self.name}': 'handedness' = {self.handedness!r}; expected +1 (right) or -1 (left)"
            )

    @property
    def lead(self) -> float:
        """Axial advance per revolution without slip across the blade, m."""
        return 2.0 * math.pi * self.radius * math.tan(self.lead_angle)

    def advance_speed(self, omega: float) -> float:
        """No-slip axial speed (m/s) for spin rate ``omega`` (rad/s) about +x."""
        return self.handedness * omega * self.radius * math.tan(self.lead_angle)


def thread_tangent(axis: ArrayLike, radial: ArrayLike, lead_angle: ArrayLike, handedness: ArrayLike) -> np.ndarray:
    """Unit blade tangent ``cos(a) e_theta + h sin(a) axis`` (..., 3); axis and radial unit, orthogonal."""
    axis, radial = np.asarray(axis, float), np.asarray(radial, float)
    a, h = np.asarray(lead_angle, float)[..., None], np.asarray(handedness, float)[..., None]
    return np.cos(a) * np.cross(axis, radial) + h * np.sin(a) * axis


def across_thread_direction(
    axis: ArrayLike, radial: ArrayLike, lead_angle: ArrayLike, handedness: ArrayLike
) -> np.ndarray:
    """Unit across-thread direction ``cos(a) axis - h sin(a) e_theta`` (..., 3)."""
    axis, radial = np.asarray(axis, float), np.asarray(radial, float)
    a, h = np.asarray(lead_angle, float)[..., None], np.asarray(handedness, float)[..., None]
    return np.cos(a) * axis - h * np.sin(a) * np.cross(axis, radial)


@njit(cache=True)
def place_points(link_pos, link_rot, down, stations, radius, lead_angle, handedness, ring_angles,
                  points_out, offsets_out, ev_out):  # pragma: no cover - compiled
    """``ScrewPointSet.world_points`` on its arrays: the points, their offsets from the link origins and
    their across-thread directions into the three (S, N, 3) outputs; ``down`` (1, 3) or (S, 3)."""
    n_screws = link_pos.shape[0]
    n_axial = stations.shape[1]
    n_ring = ring_angles.shape[0]
    for s in range(n_screws):
        ax0, ax1, ax2 = link_rot[s, 0, 0], link_rot[s, 1, 0], link_rot[s, 2, 0]
        row = s if down.shape[0] > 1 else 0
        d0, d1, d2 = down[row, 0], down[row, 1], down[row, 2]
        dot = d0 * ax0 + d1 * ax1 + d2 * ax2
        e0, e1_, e2_ = d0 - dot * ax0, d1 - dot * ax1, d2 - dot * ax2
        norm = math.sqrt(e0 * e0 + e1_ * e1_ + e2_ * e2_)
        if norm < 1e-9:  # axis along "down": anchor the ring on the link's -z axis
            e0, e1_, e2_ = -link_rot[s, 0, 2], -link_rot[s, 1, 2], -link_rot[s, 2, 2]
            norm = 1.0
        e0, e1_, e2_ = e0 / norm, e1_ / norm, e2_ / norm
        # second ring axis: axis x e1
        f0 = ax1 * e2_ - ax2 * e1_
        f1 = ax2 * e0 - ax0 * e2_
        f2 = ax0 * e1_ - ax1 * e0
        ca, sa, h, r = math.cos(lead_angle[s]), math.sin(lead_angle[s]), handedness[s], radius[s]
        for j in range(n_ring):
            cp, sp = math.cos(ring_angles[j]), math.sin(ring_angles[j])
            r0, r1, r2 = cp * e0 + sp * f0, cp * e1_ + sp * f1, cp * e2_ + sp * f2
            t0, t1, t2 = ax1 * r2 - ax2 * r1, ax2 * r0 - ax0 * r2, ax0 * r1 - ax1 * r0  # e_theta
            v0, v1, v2 = ca * ax0 - h * sa * t0, ca * ax1 - h * sa * t1, ca * ax2 - h * sa * t2
            for i in range(n_axial):
                p = i * n_ring + j
                x = stations[s, i]
                o0, o1, o2 = x * ax0 + r * r0, x * ax1 + r * r1, x * ax2 + r * r2
                offsets_out[s, p, 0], offsets_out[s, p, 1], offsets_out[s, p, 2] = o0, o1, o2
                points_out[s, p, 0] = link_pos[s, 0] + o0
                points_out[s, p, 1] = link_pos[s, 1] + o1
                points_out[s, p, 2] = link_pos[s, 2] + o2
                ev_out[s, p, 0], ev_out[s, p, 1], ev_out[s, p, 2] = v0, v1, v2


@dataclass(frozen=True, eq=False)
class ScrewPointSet:
    """Contact-point layout of S screws: ``points_axial`` stations × ``points_ring``
    ring angles per screw, point index ``i * points_ring + j`` (station i, ring j)."""

    names: tuple[str, ...]
    stations: np.ndarray  # (S, A) axial positions in the link frame, m
    radius: np.ndarray  # (S,) m
    lead_angle: np.ndarray  # (S,) rad
    handedness: np.ndarray  # (S,) +1 / -1 as float
    ring_angles: np.ndarray  # (R,) rad from "down", positive about the screw axis

    @classmethod
    def from_geometries(cls, geometries: Sequence[ScrewGeometry], points_axial: int,
                        points_ring: int) -> ScrewPointSet:
        if not geometries:
            raise ContactError("ScrewPointSet: no screws given; expected at least one ScrewGeometry")
        for key, n in (("points_axial", points_axial), ("points_ring", points_ring)):
            if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
                raise ContactError(f"ScrewPointSet: '{key}' = {n!r}; expected an integer >= 1")
        segment = (np.arange(points_axial) + 0.5) / points_axial - 0.5  # midpoints of equal segments
        stations = np.array([g.x_center + g.length * segment for g in geometries])
        return cls(
            names=tuple(g.name for g in geometries),
            stations=stations,
            radius=np.array([g.radius for g in geometries], float),
            lead_angle=np.array([g.lead_angle for g in geometries], float),
            handedness=np.array([g.handedness for g in geometries], float),
            ring_angles=2.0 * np.pi * np.arange(points_ring) / points_ring,
        )

    @property
    def n_screws(self) -> int:
        return self.stations.shape[0]

    @property
    def points_per_screw(self) -> int:
        return self.stations.shape[1] * self.ring_angles.shape[0]

    def world_points(self, link_pos: ArrayLike, link_rot: ArrayLike,
                     down: ArrayLike = (0.0, 0.0, -1.0),
                     out: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Place the points for link poses ``link_pos`` (S, 3) m and rotation
        matrices ``link_rot`` (S, 3, 3) (columns = link axes in the world),
        with the rings anchored on ``down`` ((3,) or (S, 3), world).

        Returns ``(points, offsets, ev)``, each (S, N, 3) in the world frame:
        point positions (m), offsets from the link origin (m), and unit
        across-thread directions. They do not depend on the spin angle.
        ``out``: three such arrays to fill instead of new ones.
        """
        s, n = self.n_screws, self.points_per_screw
        pos = np.ascontiguousarray(link_pos, dtype=float)
        rot = np.ascontiguousarray(link_rot, dtype=float)
        if pos.shape != (s, 3) or rot.shape != (s, 3, 3):
            raise ContactError(
                f"world_points: expected link_pos ({s}, 3) and link_rot ({s}, 3, 3) for screws "
                f"{', '.join(self.names)}; got {pos.shape} and {rot.shape}"
            )
        dn = np.ascontiguousarray(down, dtype=float)
        if dn.shape not in ((3,), (s, 3)):
            raise ContactError(f"world_points: 'down' must have shape (3,) or ({s}, 3), got {dn.shape}")
        dn = dn.reshape(-1, 3)  # one row for all screws, or one per screw
        points, offsets, ev = out if out is not None else (np.empty((s, n, 3)), np.empty((s, n, 3)),
                                                             np.empty((s, n, 3)))
        place_points(pos, rot, dn, self.stations, self.radius, self.lead_angle, self.handedness,
                      self.ring_angles, points, offsets, ev)
        return points, offsets, ev
