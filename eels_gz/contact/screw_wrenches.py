"""Screw contact wrenches for all points of all screws in one numba call.

Per point (world frame): penetration ``d = -signed_distance``; point velocity
``v = v_link + w_link × r`` (``r`` the offset from the link origin); normal
force ``F_n = max(0, k d - c v.n)`` for ``d > 0``; slip ``v_t = v - (v.n) n``;
``e_v`` projected into the tangent plane and normalised (a thread direction
along the normal leaves no across-thread direction: isotropic friction);
friction by Eq. 6 with the regulator (``laws.py``). ``|e_v| = a + b L`` with
``L`` the screw's total normal load, the quantity the calibration drags
measure, so that the friction law does not depend on how many points share
the load. The blades' rolling resistance (``point_terms.py``) adds a moment
``rho F_n``, ``|rho| <= roll_arm``, about each point's contact line. Each screw gets one world
wrench: the force sum, and the torque about its link origin,
``sum r × F`` plus the rolling moments.

One loop (``wrench_kernel``) computes this for both friction laws: the regulated law above and the
bristle law of ``stick.py``. The law is the only thing that differs, per point: the friction
direction ``u`` in Eq. 6 and the rolling moment, each a small numba function of its law
(``regulated_direction``/``regulated_roll_moment`` here, ``bristle_direction``/``bristle_roll_moment``
in ``stick.py``), chosen by the law flag of the packed parameters (``ContactParams.packed()``, one
float64 record read at the ``PACK_*`` offsets of ``params.py``). ``contact_wrench_kernel`` and
``stick_wrench_kernel`` keep the two kernels' signatures of old over that loop.

Given the screw links' mobility (``implicit.link_mobility``, from their inertials) the friction
across the thread is integrated implicitly (``implicit.py``, issue 33), under either law: each
point's across-thread component of Eq. 6 is replaced by the implicit step's force, its along-thread
component kept. Without it (``NO_MOBILITY``) every force is explicit, bit for bit as before.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numba import njit
from numpy.typing import ArrayLike

from eels_gz.contact.laws import EV_NORM_MIN
from eels_gz.contact.params import (LAW_BRISTLE, LAW_REGULATED, PACK_C, PACK_EV_A, PACK_EV_B, PACK_K, PACK_LAW,
                                    PACK_MU, PACK_ROLL_ARM, PACK_SIZE, PACK_STICK_LENGTH, PACK_V_EPS, ContactParams)
from eels_gz.contact.point_terms import point_patch_frame, point_slip_frame, screw_normal_forces
from eels_gz.contact.screw_points import ScrewPointSet, place_points
from eels_gz.contact.implicit import ACROSS_WIDTH, MOBILITY_WIDTH, forget, implicit_across_force, point_mobility
from eels_gz.contact.stick import STATE_WIDTH, STICK_DAMPING_TIME, bristle_direction, bristle_roll_moment
from eels_gz.errors import ContactError
from eels_gz.terrain.primitives import plane_eval

TerrainQuery = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]
NO_MOBILITY = np.zeros((0, MOBILITY_WIDTH))  # no link inertia given: every force explicit
NO_ACROSS = np.zeros((0, 0, ACROSS_WIDTH))


@njit(cache=True)
def regulated_direction(tx, ty, tz, eps2):  # pragma: no cover - compiled
    """The regulated law's friction direction ``u = v_t / sqrt(|v_t|^2 + v_eps^2)`` for the slip
    (tx, ty, tz) (m/s), ``eps2 = v_eps^2``; zero when both are zero (the unregulated law at rest)."""
    speed2 = tx * tx + ty * ty + tz * tz
    if speed2 + eps2 > 0.0:
        inv = 1.0 / math.sqrt(speed2 + eps2)
        return tx * inv, ty * inv, tz * inv
    return 0.0, 0.0, 0.0


@njit(cache=True)
def regulated_roll_moment(fn, roll_arm, v_side, eps2):  # pragma: no cover - compiled
    """The regulated rolling moment ``F_n b v_side / sqrt(v_side^2 + v_eps^2)`` (N m); zero when the
    patch does not travel sideways."""
    if v_side != 0.0:
        return fn * roll_arm * v_side / math.sqrt(v_side * v_side + eps2)
    return 0.0


@njit(cache=True)
def wrench_kernel(lin_vel, ang_vel, offsets, signed_distance, normal, ev_dir, link_rot, params, dt, state,
                  force_out, torque_out, normal_out, point_force_out, mobility,
                  across):  # pragma: no cover - compiled
    """Wrenches of S screws with N points each, by either friction law; all vectors in the world frame.

    lin_vel, ang_vel (S, 3): link origin velocity (m/s), angular velocity (rad/s).
    offsets (S, N, 3): point minus link origin (m). signed_distance (S, N):
    terrain distance (m, positive outside). normal (S, N, 3): unit outward
    terrain normal. ev_dir (S, N, 3): unit across-thread direction.
    link_rot (S, 3, 3): link rotations (column 0: the screw axis).
    params (PACK_SIZE,): ``ContactParams.packed()``; its PACK_LAW picks the law, the only thing that
    differs between them: the friction direction ``u`` and the rolling moment of each point. The
    loop is inlined into one branch per law (measured: a flag tested per point cost 3-15 % more per
    point in bench/contact_kernel.py; one copy per law costs what the two kernels of old did).
    dt (s) >= 0: the step the slip acts over, and state (S, N, STATE_WIDTH): per point the bristle
    (m, world) and the patch travel (m), read and updated in place (bristle law only; the regulated
    law is stateless and reads neither).
    Writes force_out (S, 3) N, torque_out (S, 3) N m about the link origin,
    normal_out (S, N) N and point_force_out (S, N, 3) N.
    mobility (S, MOBILITY_WIDTH) (``implicit.link_mobility``) and across (S, N, ACROSS_WIDTH), read and
    updated in place: with them (S rows) the friction across the thread is integrated implicitly
    (``implicit.py``); with none (0 rows: ``NO_MOBILITY``, ``NO_ACROSS``) every force is explicit.
    """
    if params[PACK_LAW] == LAW_BRISTLE:
        _wrench_loop(lin_vel, ang_vel, offsets, signed_distance, normal, ev_dir, link_rot, params, dt, state,
                     force_out, torque_out, normal_out, point_force_out, True, mobility, across)
    else:
        _wrench_loop(lin_vel, ang_vel, offsets, signed_distance, normal, ev_dir, link_rot, params, dt, state,
                     force_out, torque_out, normal_out, point_force_out, False, mobility, across)


@njit(cache=True, inline="always")
def _wrench_loop(lin_vel, ang_vel, offsets, signed_distance, normal, ev_dir, link_rot, params, dt, state,
                 force_out, torque_out, normal_out, point_force_out, bristle, mobility,
                 across):  # pragma: no cover - compiled
    """The loop of ``wrench_kernel`` for one law (``bristle``: a compile-time constant at each of
    its two call sites, inlined there: one copy per law, whose other-law branches the compiler can drop)."""
    n_screws, n_points = signed_distance.shape
    mu, ev_a, ev_b, k, c = params[PACK_MU], params[PACK_EV_A], params[PACK_EV_B], params[PACK_K], params[PACK_C]
    v_eps, stick_length, roll_arm = params[PACK_V_EPS], params[PACK_STICK_LENGTH], params[PACK_ROLL_ARM]
    eps2 = v_eps * v_eps
    implicit = mobility.shape[0] == n_screws and n_screws > 0
    for s in range(n_screws):
        load = screw_normal_forces(s, lin_vel, ang_vel, offsets, signed_distance, normal, k, c, normal_out)
        ev_norm = ev_a + ev_b * load
        if ev_norm < EV_NORM_MIN:
            ev_norm = EV_NORM_MIN
        n_contact = 0
        if implicit:
            for p in range(n_points):
                if normal_out[s, p] > 0.0:
                    n_contact += 1
        fx_s = fy_s = fz_s = 0.0
        tx_s = ty_s = tz_s = 0.0
        for p in range(n_points):
            fn = normal_out[s, p]
            if fn <= 0.0:
                point_force_out[s, p, 0] = point_force_out[s, p, 1] = point_force_out[s, p, 2] = 0.0
                if bristle:  # a point that leaves contact forgets its bristle and patch travel
                    state[s, p, 0] = state[s, p, 1] = state[s, p, 2] = state[s, p, 3] = 0.0
                if implicit:
                    forget(across, s, p)
                continue
            rx, ry, rz = offsets[s, p, 0], offsets[s, p, 1], offsets[s, p, 2]
            nx, ny, nz = normal[s, p, 0], normal[s, p, 1], normal[s, p, 2]
            tx, ty, tz, ex, ey, ez = point_slip_frame(s, p, lin_vel, ang_vel, offsets, normal, ev_dir)
            if bristle:
                ux, uy, uz = bristle_direction(state, s, p, tx, ty, tz, nx, ny, nz, stick_length, dt)
            else:
                ux, uy, uz = regulated_direction(tx, ty, tz, eps2)
            # Eq. 6 along u: F_t = -F_n mu (u + (|e_v| - 1)(u . e_v) e_v)
            u_e = ux * ex + uy * ey + uz * ez
            skew = (ev_norm - 1.0) * u_e
            f_t = -fn * mu
            if implicit and (ex != 0.0 or ey != 0.0 or ez != 0.0):
                # across the thread: -F_n mu |e_v| u_e, replaced by the implicit step's force (implicit.py)
                u2 = ux * ux + uy * uy + uz * uz
                if bristle:
                    slope = mu * ev_norm * fn * (dt + STICK_DAMPING_TIME) / stick_length
                    if u2 >= 1.0 - 1e-12:  # sliding: u on the unit circle
                        slope *= 1.0 - u_e * u_e
                else:
                    # d u_e / d v_e of u = v / sqrt(|v|^2 + v_eps^2): (1 - u_e^2) / sqrt(|v|^2 + v_eps^2)
                    speed = math.sqrt(tx * tx + ty * ty + tz * tz + eps2)
                    slope = mu * ev_norm * fn * (1.0 - u_e * u_e) / speed if speed > 0.0 else 0.0
                a = dt * n_contact * point_mobility(s, p, offsets, link_rot, mobility, ex, ey, ez)
                # Eq. 6's set at the end of the step: |u'| <= 1 with u'_e = -f_e / (mu |e_v| F_n). The across
                # force may use the whole ellipse (|u'_e| <= 1); the along part of u gives way where the pair
                # would leave it (below). Bounding f_e by the start-of-step along part instead,
                # sqrt(1 - u_a^2), is |f0| itself for a sliding point (|u| = 1): the steady force sits on that
                # bound and any push past it is the explicit law again, whose slope is 20-100 times over
                # the step's bound (lf_chatter.md)
                cap = mu * ev_norm * fn
                f_e = implicit_across_force(across, s, p, -fn * mu * ev_norm * u_e, slope, a,
                                            tx * ex + ty * ey + tz * ez, cap, dt)
                ua2 = max(0.0, u2 - u_e * u_e)
                ue_new = f_e / cap if cap > 0.0 else 0.0
                if ua2 + ue_new * ue_new > 1.0 and ua2 > 0.0:
                    along = math.sqrt(max(0.0, 1.0 - ue_new * ue_new) / ua2)
                    ux, uy, uz = along * (ux - u_e * ex) + u_e * ex, along * (uy - u_e * ey) + u_e * ey, \
                        along * (uz - u_e * ez) + u_e * ez
                # F_t = -F_n mu (u - u_e e_v) + f_e e_v
                skew = -u_e - f_e / (fn * mu) if fn * mu > 0.0 else -u_e
            fx = fn * nx + f_t * (ux + skew * ex)
            fy = fn * ny + f_t * (uy + skew * ey)
            fz = fn * nz + f_t * (uz + skew * ez)
            point_force_out[s, p, 0], point_force_out[s, p, 1], point_force_out[s, p, 2] = fx, fy, fz
            fx_s += fx
            fy_s += fy
            fz_s += fz
            tx_s += ry * fz - rz * fy
            ty_s += rz * fx - rx * fz
            tz_s += rx * fy - ry * fx
            if roll_arm > 0.0:
                # rolling resistance: the normal force's offset in the embedded chord
                v_side, mx, my, mz = point_patch_frame(s, p, lin_vel, ang_vel, offsets, normal, link_rot)
                if bristle:
                    moment = bristle_roll_moment(state, s, p, fn, roll_arm, v_side, stick_length, dt)
                else:
                    moment = regulated_roll_moment(fn, roll_arm, v_side, eps2)
                tx_s += moment * mx
                ty_s += moment * my
                tz_s += moment * mz
        force_out[s, 0], force_out[s, 1], force_out[s, 2] = fx_s, fy_s, fz_s
        torque_out[s, 0], torque_out[s, 1], torque_out[s, 2] = tx_s, ty_s, tz_s


@njit(cache=True)
def _pack(mu, ev_a, ev_b, k, c, v_eps, stick_length, roll_arm, law):  # pragma: no cover - compiled
    """``ContactParams.packed`` from loose values, for the two kernels' signatures of old below."""
    params = np.empty(PACK_SIZE)
    params[PACK_MU], params[PACK_EV_A], params[PACK_EV_B], params[PACK_K], params[PACK_C] = mu, ev_a, ev_b, k, c
    params[PACK_V_EPS], params[PACK_STICK_LENGTH], params[PACK_ROLL_ARM] = v_eps, stick_length, roll_arm
    params[PACK_LAW] = law
    return params


@njit(cache=True)
def contact_wrench_kernel(lin_vel, ang_vel, offsets, signed_distance, normal, ev_dir, link_rot, roll_arm,
                          mu, ev_a, ev_b, k, c, v_eps,
                          force_out, torque_out, normal_out, point_force_out):  # pragma: no cover - compiled
    """``wrench_kernel`` with the regulated law, its parameters passed loose (v_eps in m/s, the rest as
    in ``wrench_kernel``): the regulated kernel's signature of old, kept for callers of it."""
    wrench_kernel(lin_vel, ang_vel, offsets, signed_distance, normal, ev_dir, link_rot,
                  _pack(mu, ev_a, ev_b, k, c, v_eps, 0.0, roll_arm, LAW_REGULATED), 0.0,
                  np.empty((0, 0, STATE_WIDTH)), force_out, torque_out, normal_out, point_force_out,
                  np.empty((0, MOBILITY_WIDTH)), np.empty((0, 0, ACROSS_WIDTH)))


@njit(cache=True)
def stick_wrench_kernel(lin_vel, ang_vel, offsets, signed_distance, normal, ev_dir, link_rot, roll_arm,
                        mu, ev_a, ev_b, k, c, stick_length, dt, stick,
                        force_out, torque_out, normal_out, point_force_out):  # pragma: no cover - compiled
    """``wrench_kernel`` with the bristle law (``stick.py``), its parameters passed loose
    (stick_length m > 0, dt s, stick the state): the bristle kernel's signature of old."""
    wrench_kernel(lin_vel, ang_vel, offsets, signed_distance, normal, ev_dir, link_rot,
                  _pack(mu, ev_a, ev_b, k, c, 0.0, stick_length, roll_arm, LAW_BRISTLE), dt, stick,
                  force_out, torque_out, normal_out, point_force_out,
                  np.empty((0, MOBILITY_WIDTH)), np.empty((0, 0, ACROSS_WIDTH)))


@dataclass(frozen=True, eq=False)
class ScrewWrenches:
    """Result of ``screw_wrenches``; world frame, S screws, N points each."""

    force: np.ndarray  # (S, 3) N
    torque: np.ndarray  # (S, 3) N m, about each link origin
    normal_force: np.ndarray  # (S, N) N, per point
    point_force: np.ndarray  # (S, N, 3) N, per point (normal + friction)
    points: np.ndarray  # (S, N, 3) m, point positions

    @property
    def points_in_contact(self) -> np.ndarray:
        """Number of points pushing on each screw, (S,)."""
        return np.count_nonzero(self.normal_force > 0.0, axis=1)


class ContactWorkspace:
    """Arrays ``screw_wrenches`` fills instead of allocating new ones every
    call (the contact of 20 screws runs every millisecond); its ``wrenches``
    view is overwritten by the next call."""

    def __init__(self, point_set: ScrewPointSet):
        s, n = point_set.n_screws, point_set.points_per_screw
        self.shape = (s, n)
        self.places = (np.empty((s, n, 3)), np.empty((s, n, 3)), np.empty((s, n, 3)))  # points, offsets, ev
        self.wrenches = ScrewWrenches(np.empty((s, 3)), np.empty((s, 3)), np.empty((s, n)), np.empty((s, n, 3)),
                                      self.places[0])


_NO_STATE = np.zeros((0, 0, STATE_WIDTH))  # the state argument of the stateless regulated law


def new_contact_state(point_set: ScrewPointSet) -> np.ndarray:
    """Zeroed per-point state of the bristle law, (S, N, STATE_WIDTH): keep it
    between ``screw_wrenches`` calls (``stick``); unused by the regulated law."""
    return np.zeros((point_set.n_screws, point_set.points_per_screw, STATE_WIDTH))


def _check_implicit(mobility: np.ndarray, across: np.ndarray | None, s: int, n: int, dt: float, where: str) -> None:
    """The implicit step's arrays: C-ordered float64 of the screws' shapes, and a finite step."""
    for name, value, shape in (("mobility", mobility, (s, MOBILITY_WIDTH)), ("across", across, (s, n, ACROSS_WIDTH))):
        if (not isinstance(value, np.ndarray) or value.shape != shape or value.dtype != np.float64
                or not value.flags.c_contiguous):
            raise ContactError(f"{where}: '{name}' must be a C-ordered float64 array of shape {shape}, got "
                               f"{getattr(value, 'shape', None)} {getattr(value, 'dtype', None)}")
    if not (dt > 0.0 and math.isfinite(dt)):
        raise ContactError(f"{where}: the implicit across-thread friction needs a finite step dt > 0 s, got {dt!r}")


def _vectors(name: str, value: ArrayLike, shape: tuple[int, ...]) -> np.ndarray:
    arr = np.ascontiguousarray(value, dtype=float)
    if arr.shape != shape:
        raise ContactError(f"screw_wrenches: '{name}' has shape {arr.shape}, expected {shape}")
    return arr


def screw_wrenches(
    point_set: ScrewPointSet,
    params: ContactParams,
    link_pos: ArrayLike,
    link_rot: ArrayLike,
    lin_vel: ArrayLike,
    ang_vel: ArrayLike,
    terrain_query: TerrainQuery,
    down: ArrayLike = (0.0, 0.0, -1.0),
    stick: np.ndarray | None = None,
    dt: float = 0.0,
    workspace: ContactWorkspace | None = None,
    mobility: np.ndarray | None = None,
    across: np.ndarray | None = None,
) -> ScrewWrenches:
    """Contact wrenches on S screw links from their poses and twists.

    link_pos (S, 3) m and link_rot (S, 3, 3) (columns: link axes, world);
    lin_vel (S, 3) m/s: velocity of the link origin; ang_vel (S, 3) rad/s;
    terrain_query: ``points (M, 3) -> (signed_distance (M,), normal (M, 3))``,
    e.g. ``DistanceField.query``; down: ring anchor direction ((3,) or (S, 3)).
    The wrench of each screw is applied at its link origin
    (``Link.add_world_wrench(force, torque)``).

    With ``params.stick_length > 0`` friction follows the bristle law of
    ``stick.py``: ``stick`` (S, N, STATE_WIDTH) holds the per-point state
    (``new_contact_state``; bristles and patch travel, m), updated in place,
    and ``dt`` (s) is the step the slip acts over. Otherwise ``stick`` and
    ``dt`` are unused (the regulator is stateless). ``params.roll_arm``
    sets the blades' rolling resistance (``point_terms.py``). With a
    ``workspace`` (``ContactWorkspace(point_set)``) the result is written into
    its arrays and returned as its ``wrenches``.

    With ``mobility`` (S, MOBILITY_WIDTH: ``implicit.link_mobility`` of the screw links' inertials) and
    ``across`` (S, N, ACROSS_WIDTH, zeroed at first and kept between calls) the friction across the
    thread is integrated implicitly over ``dt`` (``implicit.py``), under either law.
    """
    s, n = point_set.n_screws, point_set.points_per_screw
    lin = _vectors("lin_vel", lin_vel, (s, 3))
    ang = _vectors("ang_vel", ang_vel, (s, 3))
    if workspace is not None and workspace.shape != (s, n):
        raise ContactError(f"screw_wrenches: the workspace is for {workspace.shape} screws x points, not {(s, n)}")
    places = workspace.places if workspace is not None else None
    points, offsets, ev = point_set.world_points(link_pos, link_rot, down, places)  # checks the poses' shapes
    rot = np.ascontiguousarray(link_rot, dtype=float)
    dist, nrm = terrain_query(points.reshape(s * n, 3))
    dist = np.asarray(dist, dtype=float)
    nrm = np.asarray(nrm, dtype=float)
    if dist.shape != (s * n,) or nrm.shape != (s * n, 3):
        raise ContactError(
            f"screw_wrenches: terrain query returned shapes {dist.shape} and {nrm.shape} for {s * n} points; "
            f"expected ({s * n},) and ({s * n}, 3)"
        )
    if workspace is not None:
        out = workspace.wrenches
        force, torque, normal_force, point_force = out.force, out.torque, out.normal_force, out.point_force
    else:
        force, torque = np.empty((s, 3)), np.empty((s, 3))
        normal_force, point_force = np.empty((s, n)), np.empty((s, n, 3))
    if params.stick_length > 0.0:
        shape = (s, n, STATE_WIDTH)
        if stick is None or stick.shape != shape or stick.dtype != np.float64 or not stick.flags.c_contiguous:
            raise ContactError(f"screw_wrenches: stick_length = {params.stick_length} m needs 'stick', a C-ordered "
                               f"float64 array of shape {shape} kept between calls (new_contact_state), got "
                               f"{None if stick is None else (stick.shape, stick.dtype)}")
        if not (dt >= 0.0 and math.isfinite(dt)):
            raise ContactError(f"screw_wrenches: 'dt' must be a finite step >= 0 s, got {dt!r}")
    elif mobility is None:
        stick, dt = _NO_STATE, 0.0  # the regulated law reads neither
    else:
        stick = _NO_STATE
    if mobility is None:
        mobility, across = NO_MOBILITY, NO_ACROSS
    else:
        _check_implicit(mobility, across, s, n, dt, "screw_wrenches")
    wrench_kernel(lin, ang, offsets, np.ascontiguousarray(dist.reshape(s, n)),
                  np.ascontiguousarray(nrm.reshape(s, n, 3)), ev, rot, params.packed(), float(dt), stick,
                  force, torque, normal_force, point_force, mobility, across)
    return workspace.wrenches if workspace is not None else ScrewWrenches(force, torque, normal_force, point_force,
                                                                           points)


@njit(cache=True)
def half_space_wrenches(link_pos, link_rot, lin_vel, ang_vel, stations, radius, lead_angle, handedness,
                        ring_angles, n, offset, params, dt, stick, points, offsets, ev, down, dist, normal,
                        force_out, torque_out, normal_out, point_force_out, mobility,
                        across):  # pragma: no cover - compiled
    """``screw_wrenches`` on a half-space terrain (signed distance ``p . n - offset``) in one call: the
    rings anchored on ``-n``, the points placed, the plane queried and the wrenches computed by
    ``wrench_kernel`` (params: ``ContactParams.packed()``; mobility and across as there). False, with
    nothing computed, if a point is not finite."""
    s, m = dist.shape
    down[0, 0], down[0, 1], down[0, 2] = -n[0], -n[1], -n[2]
    place_points(link_pos, link_rot, down, stations, radius, lead_angle, handedness, ring_angles,
                 points, offsets, ev)
    if not plane_eval(points.reshape(s * m, 3), n, offset, dist.reshape(s * m), normal.reshape(s * m, 3)):
        return False
    wrench_kernel(lin_vel, ang_vel, offsets, dist, normal, ev, link_rot, params, dt, stick,
                  force_out, torque_out, normal_out, point_force_out, mobility, across)
    return True


class ScrewContactStep:
    """``screw_wrenches`` bound to one point set, parameter set and terrain, as a plugin calls it every
    step: the rings anchored on the side of the terrain under each screw (``-normal`` at its link
    origin), the per-point state (``stick``) and the workspace kept here. On a half-space terrain
    (``terrain.half_space()``: the ice plane, a slope) one compiled call does it all; on any other it
    is ``screw_wrenches`` with the terrain's ``query``. The result is the same either way.

    ``mobility`` (S, MOBILITY_WIDTH; ``implicit.link_mobility`` of the screw links' inertials, as the
    plugin reads them through the gz-sim API) turns on the implicit step of the friction across the
    thread (``implicit.py``); without it every force is explicit, as before issue 33."""

    def __init__(self, point_set: ScrewPointSet, params: ContactParams, terrain, mobility: np.ndarray | None = None):
        self.point_set, self.params, self.terrain = point_set, params, terrain
        s, m = point_set.n_screws, point_set.points_per_screw
        if mobility is None:
            self.mobility, self.across = NO_MOBILITY, NO_ACROSS
        else:
            self.mobility = np.ascontiguousarray(mobility, dtype=float)
            self.across = np.zeros((s, m, ACROSS_WIDTH))  # the implicit step's state, per point
            _check_implicit(self.mobility, self.across, s, m, 1.0, "ScrewContactStep")
        self.work = ContactWorkspace(point_set)
        self._packed = params.packed()  # the parameters as the compiled kernel reads them, built once
        self.stick = new_contact_state(point_set)  # bristles and rolling seats, per point
        half_space = getattr(terrain, "half_space", None)
        self.half_space = half_space() if half_space is not None else None
        s, m = self.work.shape
        self._down = np.empty((1, 3))
        self._dist, self._normal = np.empty((s, m)), np.empty((s, m, 3))

    def reset(self) -> None:
        """Clear the per-point state (a world reset)."""
        self.stick[:] = 0.0
        self.across[:] = 0.0

    def __call__(self, link_pos: np.ndarray, link_rot: np.ndarray, lin_vel: np.ndarray, ang_vel: np.ndarray,
                 dt: float) -> ScrewWrenches:
        """The wrenches for the links' poses and twists (float64 arrays (S, 3), (S, 3, 3), (S, 3),
        (S, 3)) over a step of ``dt`` s, in the workspace's arrays (overwritten by the next call)."""
        if self.half_space is None:
            _, normal = self.terrain.query(link_pos)
            implicit = self.mobility.shape[0] > 0
            return screw_wrenches(self.point_set, self.params, link_pos, link_rot, lin_vel, ang_vel,
                                  self.terrain.query, -normal, self.stick, dt, self.work,
                                  self.mobility if implicit else None, self.across if implicit else None)
        s = self.work.shape[0]
        for name, value, shape in (("link_pos", link_pos, (s, 3)), ("link_rot", link_rot, (s, 3, 3)),
                                   ("lin_vel", lin_vel, (s, 3)), ("ang_vel", ang_vel, (s, 3))):
            if value.shape != shape or value.dtype != np.float64 or not value.flags.c_contiguous:
                raise ContactError(f"ScrewContactStep: '{name}' must be a C-ordered float64 array of shape {shape}"
                                   f" for screws {', '.join(self.point_set.names)}; got {value.shape} {value.dtype}")
        if not (dt >= 0.0 and math.isfinite(dt)):
            raise ContactError(f"ScrewContactStep: 'dt' must be a finite step >= 0 s, got {dt!r}")
        ps, (n, offset), out = self.point_set, self.half_space, self.work.wrenches
        points, offsets, ev = self.work.places
        if not half_space_wrenches(link_pos, link_rot, lin_vel, ang_vel, ps.stations, ps.radius, ps.lead_angle,
                                   ps.handedness, ps.ring_angles, n, offset, self._packed, float(dt), self.stick,
                                   points, offsets, ev, self._down, self._dist, self._normal, out.force, out.torque,
                                   out.normal_force, out.point_force, self.mobility, self.across):
            self.terrain.query(points.reshape(-1, 3))  # raises the terrain's error naming the point
            raise ContactError(f"ScrewContactStep: a contact point of {', '.join(ps.names)} is not finite")
        return out
