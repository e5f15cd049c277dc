"""The RFT wrench on a link, integrated implicitly at velocity level.

Why. RFT is rate-independent: the stress on an element keeps its size whatever
its speed and turns with the velocity's direction, so as a function of the
velocity it is a damper of slope |f| / |v| (and |f| / v_reg at rest, through the
regularisation, ``rft`` module docstring). Held explicitly over a step that is
stable only while dt G / m < 2 for a link of mass m and a slope G (N s/m): a
screw carrying its share of a robot sinks until G passes that bound and then
chatters at the step rate (a 10 kg rig on mars_simulant_mms at dt = 1 ms:
forces between -8 and +300 N around its 103 N weight). Raising v_reg only
delays it: the load creeps deeper until the capacity, hence G, is high again.

The step (after ``eels_gz.contact.implicit``, which does this for the friction
across a screw's thread). Per link, the force f (N) and the moment t (N m) are
solved from the law at the end of the step, linearised on a scalar slope:

    f = (f0 - x E) / (1 + x),   x = G dt / m,

- ``f0``: the explicit wrench (the law at the step's start, what an explicit step applies);
- ``G = sum_i zeta d_i A_i / sqrt(|v_i|^2 + v_reg^2)`` over the link's elements below the surface: each
  element's largest stress (|alpha| <= 1 in the generic fit, at alpha_z(0, pi/2)) over its regularised
  speed; for the moment the same sum weighted by |r_i|^2 (r_i from the link origin), with the link's
  smallest principal moment of inertia in place of m;
- ``m`` and ``I``: the link's own mass and inertia (``Link.world_inertial``): joints only add inertia, so
  the step errs on the soft side;
- ``E``: the rest of the world's force on the link, estimated from its last step,
  ``E_raw = m (v - v_prev) / dt - f_prev``, low-passed with ``EXTERNAL_FORCE_TIME`` (0.1 s) as the screw
  contact does.

Steady states are the law's exactly (``v = v_prev``, ``f = f_prev`` give ``E = -f`` and ``f = f0``); with
x small (fast motion, little sunk) the step is the explicit law. The first step after ``reset`` (no
history) is implicit Euler without E.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from eels_gz.contact.implicit import EXTERNAL_FORCE_TIME

STATE_WIDTH = 19  # v_prev (3), w_prev (3), f_prev (3), t_prev (3), E_f (3), E_t (3), valid (1)


@njit(cache=True)
def link_slopes(link_of, vel, r, depth, areas, zeta, v_reg, n_links, slope_out):  # pragma: no cover - compiled
    """Per link: the force slope G (N s/m) and the moment slope (N m s) into ``slope_out`` (L, 2)."""
    for k in range(n_links):
        slope_out[k, 0] = 0.0
        slope_out[k, 1] = 0.0
    vr2 = v_reg * v_reg
    for i in range(areas.shape[0]):
        d = depth[i]
        if d <= 0.0:
            continue
        v2 = vel[i, 0] ** 2 + vel[i, 1] ** 2 + vel[i, 2] ** 2
        g = zeta * d * areas[i] / math.sqrt(v2 + vr2)
        k = link_of[i]
        slope_out[k, 0] += g
        slope_out[k, 1] += g * (r[i, 0] ** 2 + r[i, 1] ** 2 + r[i, 2] ** 2)


@njit(cache=True)
def implicit_wrench(state, f0, t0, lin, ang, slope, mass, inertia, dt, force_out, torque_out):  # pragma: no cover
    """The implicit step of the module docstring, per link, updating ``state`` (L, STATE_WIDTH)."""
    gain = dt / EXTERNAL_FORCE_TIME
    for k in range(f0.shape[0]):
        xf = slope[k, 0] * dt / mass[k]
        xt = slope[k, 1] * dt / inertia[k]
        valid = state[k, 18] > 0.5
        for a in range(3):
            ef, et = state[k, 12 + a], state[k, 15 + a]
            if valid:
                raw_f = mass[k] * (lin[k, a] - state[k, a]) / dt - state[k, 6 + a]
                raw_t = inertia[k] * (ang[k, a] - state[k, 3 + a]) / dt - state[k, 9 + a]
                ef += gain * (raw_f - ef)
                et += gain * (raw_t - et)
            else:
                ef, et = 0.0, 0.0
            f = (f0[k, a] - xf * ef) / (1.0 + xf)
            t = (t0[k, a] - xt * et) / (1.0 + xt)
            force_out[k, a], torque_out[k, a] = f, t
            state[k, a], state[k, 3 + a] = lin[k, a], ang[k, a]
            state[k, 6 + a], state[k, 9 + a] = f, t
            state[k, 12 + a], state[k, 15 + a] = ef, et
        state[k, 18] = 1.0


def smallest_inertia(moi: np.ndarray) -> np.ndarray:
    """The smallest principal moment (kg m^2) of each inertia matrix (L, 3, 3)."""
    return np.array([float(np.linalg.eigvalsh(0.5 * (m + m.T))[0]) for m in np.asarray(moi, float)])
