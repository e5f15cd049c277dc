"""Friction across the thread, integrated implicitly at velocity level (issue 33).

Why. Across its blades a screw's friction is ``|e_v|`` times stiffer than along them (Eq. 6). The
engine integrates the contact's forces explicitly (they are computed from the state at the start of
a step and held over it), which is stable only while ``dt a G < 2`` for a point of mobility ``a/dt``
and a law of slope ``G`` (N s/m): the bristle's stick spring gives ``G = mu |e_v| F_n (dt + tau) / z0``,
and in steady sliding, with the slip ``v`` mostly along the thread, the across-thread force
``mu |e_v| F_n v_e / |v|`` is a damper of ``G = mu |e_v| F_n / |v|``. At ``|e_v|`` = 300-1000 both are
20-100 times over the bound at dt = 1 ms: the screws chatter and the run blows up.

The step. Per contact point the across-thread force ``f`` (N, along the unit across-thread direction
``e``) is solved from the law evaluated at the end of the step instead of its start, linearised:

    f = f0 - G (v_e' - v_e),      v_e' - v_e = a (f + E),      so   f = (f0 - x E) / (1 + x),   x = G a,

- ``f0 = -mu |e_v| F_n u_e``: the explicit law's across component (``u`` the friction direction of the
  law, ``u_e = u . e``), exactly what the explicit step applies;
- ``G``: the law's slope ``d f0 / d v_e`` (N s/m; ``point_slope`` below);
- ``a = dt n_c w`` (s/kg): how far one step of a force moves the point across the thread. ``w`` is the
  point's mobility along ``e`` from the screw link's own mass ``m`` and inertia ``I`` (about its
  centre of mass, read through the gz-sim API: ``Link.world_inertial``), ``w = 1/m + (c x e) . I^-1
  (c x e)``, ``c`` the point's offset from the centre of mass; ``n_c``, the screw's points in contact,
  because they all push the same few modes of one link (the bound ``W <= n_c diag(W)`` of the
  points' mobility matrix). The link's own inertia is the least the engine can give it (joints only
  add inertia), so ``a`` overestimates the true response: the step then errs on the soft side;
- ``E`` (N): the rest of the world's force on that mode (the motor on the screw's spin, the robot's
  inertia, the other points): the plugin cannot read it, so it is estimated from the point's last
  step, ``E_raw = (v_e - v_e,prev) / a - f_prev`` (what the velocity change says beyond the contact's
  own force), low-passed with the time constant ``EXTERNAL_FORCE_TIME``.

Properties (test/unit/test_contact_implicit.py checks them on the step recursion):

- steady states are those of the explicit law exactly: at a steady slip ``v_e = v_e,prev`` and
  ``f = f_prev``, so ``E = -f`` and ``f = f0``: Eq. 6 while sliding, the bristle's hold at rest;
- without ``E`` (``E = 0``) the step is implicit Euler of the law on a mobility that is at least the
  true one: stable at any ``x`` (the recursion's spectral radius is ``|1 - r x / (1 + x)| < 1`` for a
  true-to-estimated mobility ratio ``0 < r <= 1``), but its steady force is ``f0 / (1 + x)``, a
  softer law; ``E`` removes that bias (with the time constant ``EXTERNAL_FORCE_TIME (1 + x)``), slowly
  enough (a gain of ``dt / EXTERNAL_FORCE_TIME`` = 0.01 per step at 1 ms) to keep the recursion
  stable over ``r`` = 0.03-1.5, stick springs of 1e4-1e8 N/m and
  ``w`` = 0.3-5 1/kg (the eigenvalues of the linearised step, in the test);
- with ``x`` small (a soft law, the point heavy) ``f -> f0``: the explicit law.

Chosen by measurement (the linearised recursion's spectral radius over the range above, and the
runs of test_screw_propulsion.py): ``E = 0`` alone is stable but softens the law while sliding
(an effective ``|e_v|`` of ~40 whatever the set's, 2 % off Eq. 6's speed at ``|e_v|`` = 1000);
``E`` unfiltered is deadbeat on an exact mobility but diverges on the link's overestimate (``r`` <
0.3) under a stick spring; relaxing the force towards ``f0`` (``E = -f_prev``) keeps the steady
state but rings at the step rate (radius ``sqrt(x / (1 + x))``) and diverges with a stick spring.
Sub-stepping the contact state does not help: the links' velocities do not change within a step.

The force stays inside Eq. 6's set at the end of the step (``screw_wrenches``): ``|f| <= mu |e_v| F_n``,
and where the along-thread part of ``u`` and the new across part ``f / (mu |e_v| F_n)`` would leave the
unit circle, the along part gives way. (Bounding ``f`` by the start-of-step along part, ``mu |e_v| F_n
sqrt(1 - |u_a|^2)``, is the explicit force itself for a sliding point: the steady force sat on the bound,
and a push past it was the explicit law again, whose slope is 20-100 times the step's. A screw then
chattered at period 2: test_screw_contact_no_chatter.py.) The along-thread friction, ``|e_v|`` times
softer, stays explicit (``stability.py`` bounds it). A point that leaves contact forgets this state, as it forgets its
bristle.

Per point state (``ACROSS_WIDTH`` values): the last across slip ``v_e,prev`` (m/s), the last force
``f_prev`` (N), the estimate ``E`` (N) and a flag that the other three hold a step.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# Low-pass time of the estimate E of the other forces on a point's across-thread mode (s): the bias
# of the implicit step, f0 x / (1 + x) at first, decays with the time constant
# EXTERNAL_FORCE_TIME (1 + x) under a steady slip. Much shorter and the recursion loses its margin
# on a stiff stick spring (test_contact_implicit.py); a gain scaled by 1 + x is not stable either.
EXTERNAL_FORCE_TIME = 0.1
ACROSS_WIDTH = 4  # v_e,prev (m/s), f_prev (N), E (N), valid (0/1)
MOBILITY_WIDTH = 13  # 1/m (1/kg), centre of mass in the link frame (m, 3), I^-1 in the link frame (row-major, 9)


def link_mobility(mass, com_world, moi_world, link_pos, link_rot) -> np.ndarray:
    """The screw links' mobility record, (S, MOBILITY_WIDTH), from their inertials in the world frame
    (``Link.world_inertial``: mass (S,) kg, centre of mass (S, 3) m, moment of inertia about it (S, 3, 3)
    kg m^2, all in world) and their poses at the same time (link_pos (S, 3) m, link_rot (S, 3, 3)):
    ``[1/m, com (link frame), I^-1 (link frame, row-major)]``. The inertial is fixed in the link, so the
    record holds for every later pose."""
    mass = np.asarray(mass, dtype=float)
    com_world = np.asarray(com_world, dtype=float)
    moi_world = np.asarray(moi_world, dtype=float)
    rot = np.asarray(link_rot, dtype=float)
    out = np.empty((mass.shape[0], MOBILITY_WIDTH))
    for s in range(mass.shape[0]):
        moi_link = rot[s].T @ moi_world[s] @ rot[s]
        out[s, 0] = 1.0 / mass[s]
        out[s, 1:4] = rot[s].T @ (com_world[s] - np.asarray(link_pos, dtype=float)[s])
        out[s, 4:] = np.linalg.inv(moi_link).reshape(9)
    return out


@njit(cache=True)
def point_mobility(s, p, offsets, link_rot, mobility, ex, ey, ez):  # pragma: no cover - compiled
    """Mobility (1/kg) of point p of screw s along the unit direction (ex, ey, ez) (world), from the
    link's own inertia: ``1/m + (c x e) . I^-1 (c x e)``, ``c`` the point's offset from the centre of mass."""
    # centre of mass offset, world: R com_link
    cx = offsets[s, p, 0] - (link_rot[s, 0, 0] * mobility[s, 1] + link_rot[s, 0, 1] * mobility[s, 2]
                             + link_rot[s, 0, 2] * mobility[s, 3])
    cy = offsets[s, p, 1] - (link_rot[s, 1, 0] * mobility[s, 1] + link_rot[s, 1, 1] * mobility[s, 2]
                             + link_rot[s, 1, 2] * mobility[s, 3])
    cz = offsets[s, p, 2] - (link_rot[s, 2, 0] * mobility[s, 1] + link_rot[s, 2, 1] * mobility[s, 2]
                             + link_rot[s, 2, 2] * mobility[s, 3])
    qx, qy, qz = cy * ez - cz * ey, cz * ex - cx * ez, cx * ey - cy * ex
    # into the link frame: R^T q
    lx = link_rot[s, 0, 0] * qx + link_rot[s, 1, 0] * qy + link_rot[s, 2, 0] * qz
    ly = link_rot[s, 0, 1] * qx + link_rot[s, 1, 1] * qy + link_rot[s, 2, 1] * qz
    lz = link_rot[s, 0, 2] * qx + link_rot[s, 1, 2] * qy + link_rot[s, 2, 2] * qz
    m = mobility[s]
    return (m[0] + lx * (m[4] * lx + m[5] * ly + m[6] * lz) + ly * (m[7] * lx + m[8] * ly + m[9] * lz)
            + lz * (m[10] * lx + m[11] * ly + m[12] * lz))


@njit(cache=True)
def implicit_across_force(across, s, p, f0, slope, a, v_e, bound, dt):  # pragma: no cover - compiled
    """The across-thread force (N) at point p of screw s by the implicit step (module docstring):
    explicit force f0 (N), the law's slope (N s/m), the point's response a = dt n_c w (s/kg), its
    across slip v_e (m/s) and the bound of Eq. 6's set (N); the state across[s, p] updated in place."""
    x = slope * a
    ext = across[s, p, 2]
    if across[s, p, 3] > 0.0 and a > 0.0:
        raw = (v_e - across[s, p, 0]) / a - across[s, p, 1]
        ext += min(1.0, dt / EXTERNAL_FORCE_TIME) * (raw - ext)
    else:
        ext = 0.0
    f = (f0 - x * ext) / (1.0 + x)
    if f > bound:
        f = bound
    elif f < -bound:
        f = -bound
    across[s, p, 0], across[s, p, 1], across[s, p, 2], across[s, p, 3] = v_e, f, ext, 1.0
    return f


@njit(cache=True)
def forget(across, s, p):  # pragma: no cover - compiled
    """A point out of contact forgets its implicit step's state."""
    across[s, p, 0] = across[s, p, 1] = across[s, p, 2] = across[s, p, 3] = 0.0


def spectral_radius(stiffness: float, w_est: float, ratio: float, dt: float, tau: float, leak: float = 0.0,
                    external_time: float = EXTERNAL_FORCE_TIME) -> float:
    """Spectral radius of the implicit step's recursion, linearised, on one point: a bristle spring
    ``stiffness`` (N/m, damping time tau s, leaking ``leak`` of its deflection per step as a sliding
    bristle does) on a mode of true mobility ``ratio * w_est`` (1/kg), the step estimating ``w_est``.
    State: the bristle, the velocity now and one step ago, the last force and E. Below 1: stable."""
    a_e = dt * w_est
    a_t = ratio * a_e
    g = stiffness * (dt + tau)
    x = g * a_e
    gamma = min(1.0, dt / external_time)
    z_row = np.array([1.0 - leak, dt, 0.0, 0.0, 0.0])
    f0 = -stiffness * z_row + np.array([0.0, -stiffness * tau, 0.0, 0.0, 0.0])
    raw = np.array([0.0, 1.0 / a_e, -1.0 / a_e, -1.0, 0.0])
    e_row = (1.0 - gamma) * np.array([0.0, 0.0, 0.0, 0.0, 1.0]) + gamma * raw
    f_row = (f0 - x * e_row) / (1.0 + x)
    v_row = np.array([0.0, 1.0, 0.0, 0.0, 0.0]) + a_t * f_row
    step = np.array([z_row, v_row, [0.0, 1.0, 0.0, 0.0, 0.0], f_row, e_row])
    return float(max(abs(np.linalg.eigvals(step))))


