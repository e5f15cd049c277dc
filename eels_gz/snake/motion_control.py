"""Screw motion control (NEO §III-B.2, Eq. 2-5): screw rates for a desired
body twist of the floating base (the tail).

Frames and conventions. Everything is expressed in the base (tail) frame.
The body twist is ``xi = (v, w)`` (m/s, rad/s): ``v`` the velocity of the
base origin, ``w`` the angular velocity. A point ``p`` of the body moves at
``v + w x p``.

Contact frame (NEO Fig. 5). Screw ``k`` touches the terrain on its blade
envelope at the middle of its length, on the side given by a "down"
direction ``d`` (gravity or the reversed terrain normal, in the base frame):
``e_r = unit(d - (d.a) a)``, ``p_k = c_k + r e_r`` with ``c_k`` the screw
centre and ``a`` its unit spin axis. The thread geometry is that of
:mod:`eels_gz.contact.screw_points`: ``e_theta = a x e_r``, across-blade
direction ``e_v = cos(alpha) a - h sin(alpha) e_theta``.

No slip across the blade (Eq. 2, 3): the contact point's velocity
``v + w x p_k + J_k theta_dot + omega_k r e_theta`` has no component along
``e_v``. With ``e_v . e_theta = -h sin(alpha)`` this is one row

    [e_v^T, (p_k x e_v)^T] xi + e_v^T J_k theta_dot = h r sin(alpha) omega_k,

and ``omega_k = m_k omega_J`` for the actuated joint ``J`` (``m_k = -1`` for
the rear screw of a counter-rotating pair). Stacked over the screws in
contact: ``A xi + c = B omega`` (Eq. 4), solved ``omega = B^+ (A xi + c)``
(Eq. 5, pseudo-inverse because a pair gives two rows per actuated joint).
For one screw moving along its axis this is ``v = h omega r tan(alpha)``,
the contact model's kinematic limit.

Controllability. The rates produce the commanded twist only if ``A`` has
full column rank on the commanded directions ``S`` (``planar``: vx, vy, wz;
``se3``: all six): otherwise some commanded motion leaves every no-slip
constraint untouched and no screw rates can drive it. This is the "pencil"
of NEO §V: a straight robot with parallel, collinear screw axes cannot yaw
and translate sideways independently. The check uses the condition number
of ``A S D``, where ``D`` scales the angular columns by the robot's length
``L`` (so both kinds of column are velocities in m/s; the number is then
independent of the unit of length). Above ``condition_max`` (or rank
deficient), the result is flagged not ``ok``, the rates are zero (screws
stopped rather than driven by a near-singular inverse), and
:meth:`MotionControlResult.require` raises :class:`SingularContactError`.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass

import numpy as np

from eels_gz.contact.screw_points import ScrewGeometry
from eels_gz.errors import SingularContactError, SnakeModelError
from eels_gz.snake.chain import SnakeChain, cross3

PLANAR_BASIS = np.eye(6)[:, [0, 1, 5]]  # vx, vy, wz
SE3_BASIS = np.eye(6)
SUBSPACES = {"planar": PLANAR_BASIS, "se3": SE3_BASIS}


@dataclass(frozen=True)
class ContactRow:
    """One screw's no-slip row: contact point ``point`` (m), unit ``e_v``, both
    in the base frame; ``a_row`` (6,), ``b`` = h r sin(alpha) m_k (m), and the
    actuated joint."""

    link: str
    point: np.ndarray
    e_v: np.ndarray
    a_row: np.ndarray
    b: float
    actuated: str
    shape_term: float


@dataclass(frozen=True)
class MotionControlResult:
    """Screw rates (actuated joint -> rad/s) and the conditioning report."""

    rates: dict[str, float]
    ok: bool
    condition: float
    rank: int
    residual: float
    contact: tuple[str, ...]
    message: str

    def require(self) -> MotionControlResult:
        """Self if ``ok``, else raise :class:`SingularContactError` with the message."""
        if not self.ok:
            raise SingularContactError(self.message)
        return self


def _unit(v: np.ndarray, what: str) -> np.ndarray:
    n = float(np.linalg.norm(v))
    if not n > 1e-12 or not math.isfinite(n):
        raise SnakeModelError(f"motion control: {what} is {v.tolist()}, expected a non-zero finite vector")
    return v / n


class ScrewMotionController:
    """NEO Eq. 5 for one robot (see the module docstring).

    chain: the robot's :class:`SnakeChain`; screws: screw link name ->
    :class:`ScrewGeometry` (radius, lead angle, handedness as the xacro writes
    them, see :func:`~eels_gz.snake.chain.screw_geometries`); condition_max:
    largest accepted condition number; subspace: ``planar``, ``se3`` or a
    (6, m) basis of the commanded twist directions; length_scale (m): the
    angular-column scale, default the robot's length.
    """

    def __init__(self, chain: SnakeChain, screws: Mapping[str, ScrewGeometry], condition_max: float,
                 subspace: str | np.ndarray = "planar", length_scale: float | None = None):
        self.chain = chain
        axes = chain.screw_axes()
        unknown = [s for s in screws if s not in axes]
        if unknown:
            raise SnakeModelError(f"motion control: {', '.join(unknown)} are not screw links of the chain; "
                                  f"screw links: {', '.join(axes)}")
        if not screws:
            raise SnakeModelError("motion control: no screws given")
        self.screws = dict(screws)
        if not condition_max > 1.0:
            raise SnakeModelError(f"motion control: condition_max = {condition_max!r}; expected > 1")
        self.condition_max = float(condition_max)
        if isinstance(subspace, str):
            if subspace not in SUBSPACES:
                raise SnakeModelError(f"motion control: subspace '{subspace}'; expected one of {', '.join(SUBSPACES)}")
            basis = SUBSPACES[subspace]
        else:
            basis = np.asarray(subspace, float)
            if basis.ndim != 2 or basis.shape[0] != 6 or basis.shape[1] < 1 \
                    or np.linalg.matrix_rank(basis) != basis.shape[1]:
                raise SnakeModelError(f"motion control: subspace basis has shape {basis.shape}; expected (6, m) "
                                      "with independent columns")
        self.basis = basis
        self.length_scale = float(length_scale if length_scale is not None else chain.segment_lengths().sum())
        self.actuated = sorted({axes[s].actuated for s in self.screws})

    # --- rows -------------------------------------------------------------------------------
    def rows(self, q: Mapping[str, float] | None, down: np.ndarray | Mapping[str, np.ndarray] = (0.0, 0.0, -1.0),
             theta_dot: Mapping[str, float] | None = None) -> dict[str, ContactRow]:
        """No-slip rows of every screw (link -> :class:`ContactRow`), base frame."""
        axes = self.chain.screw_axes(q)
        frames = self.chain.joint_frames(q) if theta_dot else {}
        theta_dot = dict(theta_dot or {})
        for name in theta_dot:
            self.chain.joint(name)
        out = {}
        for link, g in self.screws.items():
            ax = axes[link]
            d = np.asarray(down[link] if isinstance(down, Mapping) else down, float)
            a = _unit(ax.axis, f"screw '{link}' axis")
            e_r = _unit(d - (d @ a) * a, f"'down' at screw '{link}' (perpendicular to its axis)")
            centre = ax.origin + g.x_center * a
            p = centre + g.radius * e_r
            e_theta = cross3(a, e_r)
            e_v = math.cos(g.lead_angle) * a - g.handedness * math.sin(g.lead_angle) * e_theta
            shape = 0.0
            for j in self.chain.ancestors(link):
                if j in theta_dot:
                    o, u = frames[j]
                    shape += theta_dot[j] * float(e_v @ cross3(u, p - o))
            b = g.handedness * g.radius * math.sin(g.lead_angle) * ax.multiplier
            out[link] = ContactRow(link, p, e_v, np.concatenate([e_v, cross3(p, e_v)]), b, ax.actuated, shape)
        return out

    def _contact(self, contact: Collection[str]) -> tuple[str, ...]:
        bad = [c for c in contact if c not in self.screws]
        if bad:
            raise SnakeModelError(f"motion control: contact names {', '.join(bad)} are not screws of the "
                                  f"controller; screws: {', '.join(self.screws)}")
        return tuple(s for s in self.screws if s in set(contact))

    def conditioning(self, rows: Mapping[str, ContactRow], contact: tuple[str, ...]) -> tuple[float, int]:
        """Condition number and rank of ``A S D`` over the contact rows."""
        m = self.basis.shape[1]
        if not contact:
            return math.inf, 0
        A = np.array([rows[c].a_row for c in contact])
        D = np.diag([1.0, 1.0, 1.0] + [self.length_scale] * 3)
        s = np.linalg.svd(A @ D @ self.basis, compute_uv=False)
        rank = int(np.sum(s > s[0] * 1e-12)) if s[0] > 0 else 0
        if len(s) < m or rank < m:
            return math.inf, rank
        return float(s[0] / s[-1]), rank

    # --- Eq. 5 ------------------------------------------------------------------------------
    def solve(self, q: Mapping[str, float] | None, contact: Collection[str], twist: np.ndarray,
              down: np.ndarray | Mapping[str, np.ndarray] = (0.0, 0.0, -1.0),
              theta_dot: Mapping[str, float] | None = None) -> MotionControlResult:
        """Screw rates for the body twist ``twist`` (6,) of the base.

        ``contact``: screw links in contact; ``q``: joint angles (rad);
        ``theta_dot``: shape joint rates (rad/s) for Eq. 3's middle term. An
        actuated screw with no screw in contact gets the rate its own rows ask
        for (free-running, so it meets the ground already turning right).
        """
        xi = np.asarray(twist, float)
        if xi.shape != (6,) or not np.isfinite(xi).all():
            raise SnakeModelError(f"motion control: twist must be 6 finite numbers (v, w), got {twist!r}")
        coeffs = np.linalg.lstsq(self.basis, xi, rcond=None)[0]
        outside = xi - self.basis @ coeffs
        if np.linalg.norm(outside) > 1e-12 * max(1.0, np.linalg.norm(xi)):
            raise SnakeModelError(f"motion control: twist {xi.tolist()} has components outside the commanded "
                                  f"subspace (off by {outside.tolist()})")
        contact = self._contact(contact)
        rows = self.rows(q, down, theta_dot)
        cond, rank = self.conditioning(rows, contact)
        m = self.basis.shape[1]
        ok = cond <= self.condition_max
        if not ok:
            what = "rank deficient" if math.isinf(cond) else \
                f"ill-conditioned (condition {cond:.3g} > {self.condition_max:.3g})"
            message = (f"motion control: the {len(contact)} screw(s) in contact give a constraint matrix of rank "
                       f"{rank} for {m} commanded twist directions, {what}: the contact set cannot drive the "
                       "commanded motion (pencil-like shape or too few contacts); screws stopped")
            return MotionControlResult({j: 0.0 for j in self.actuated}, False, cond, rank, math.nan, contact, message)
        rates = {}
        for joint in self.actuated:
            own = [r for r in rows.values() if r.actuated == joint]
            used = [r for r in own if r.link in contact] or own
            b = np.array([r.b for r in used])
            y = np.array([r.a_row @ xi + r.shape_term for r in used])
            rates[joint] = float(b @ y / (b @ b))
        residual = float(np.sqrt(sum((rows[c].b * rates[rows[c].actuated] - rows[c].a_row @ xi
                                      - rows[c].shape_term) ** 2 for c in contact)))
        return MotionControlResult(rates, True, cond, rank, residual, contact, "ok")

    def forward_twist(self, q: Mapping[str, float] | None, contact: Collection[str], rates: Mapping[str, float],
                      down: np.ndarray | Mapping[str, np.ndarray] = (0.0, 0.0, -1.0),
                      theta_dot: Mapping[str, float] | None = None) -> np.ndarray:
        """The base twist (6,) in the commanded subspace that screw ``rates``
        produce without slip across the blades (least squares over the contact
        rows); raises SingularContactError when that twist is not determined."""
        contact = self._contact(contact)
        rows = self.rows(q, down, theta_dot)
        cond, rank = self.conditioning(rows, contact)
        if cond > self.condition_max:
            raise SingularContactError(f"forward twist: contact set of rank {rank} (condition {cond:.3g}) does "
                                       "not determine the commanded twist directions")
        A = np.array([rows[c].a_row for c in contact]) @ self.basis
        y = np.array([rows[c].b * rates[rows[c].actuated] - rows[c].shape_term for c in contact])
        return self.basis @ np.linalg.lstsq(A, y, rcond=None)[0]
