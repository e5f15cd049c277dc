"""Contact laws of EELS-DARTS §2.2.2 (REFERENCE.md §1), written with numpy so
that they broadcast over any leading dimensions.

- Penalty normal force (Eq. 2, made one-sided): ``F_n = max(0, k d - c v_n)``
  for penetration ``d > 0``, zero otherwise; it never pulls.
- Anisotropic friction (Eq. 6):
  ``F_t = -F_n mu (u + (|e_v| - 1)(u . e_v) e_v)``, which for ``|e_v| = 1`` is
  the isotropic law (Eq. 1) exactly.
- The zero-slip regulator replaces the unit slip direction
  ``u = v/|v|`` by ``u = v / sqrt(|v|^2 + v_eps^2)``: continuous at zero slip,
  bounded by 1, and within ``(v_eps/|v|)^2 / 2`` of ``v/|v|`` (because
  ``1 - 1/sqrt(1 + x^2) <= x^2/2``).
- The across-thread ratio grows with load, ``|e_v| = a + b F_n`` (Fig. 6).

The wrench kernel (``screw_wrenches.py``) repeats these formulas inside numba; a test
checks the two against each other.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from eels_gz.errors import ContactError

# Floor on |e_v|. The friction force does work
#   F . v = -F_n mu / s * (|v_perp|^2 + |e_v| (v . e_v)^2),   s = |v| or sqrt(|v|^2 + v_eps^2),
# which is <= 0 for every slip only when |e_v| >= 0, and the across-thread
# coefficient mu |e_v| must stay positive to keep a fitted line physical. The
# floor is not 1: Eq. 6 allows |e_v| < 1 (less friction across the threads),
# and clamping a calibrated line at 1 would silently bias it wherever it dips
# below 1. It only acts when a line a + b F_n with b < 0 (or a < 1e-3) is
# evaluated outside the loads it was fitted on.
EV_NORM_MIN = 1e-3


def normal_force(depth: ArrayLike, v_normal: ArrayLike, k: ArrayLike, c: ArrayLike) -> np.ndarray:
    """Penalty spring–damper normal force magnitude, N.

    depth: penetration ``d`` (m), positive inside the terrain; ``d <= 0`` is out
    of contact and gives exactly 0.
    v_normal: contact-point velocity along the outward terrain normal (m/s),
    positive when separating.
    k: stiffness (N/m); c: damping (N s/m).

    Returns ``max(0, k d - c v_normal)`` where ``d > 0``: the damper may reduce
    the force to zero while the point separates but never makes it pull.
    All arguments broadcast.
    """
    depth = np.asarray(depth, dtype=float)
    v_normal = np.asarray(v_normal, dtype=float)
    force = np.maximum(np.asarray(k, dtype=float) * depth - np.asarray(c, dtype=float) * v_normal, 0.0)
    return np.where(depth > 0.0, force, 0.0)


def _per_point(name: str, value: ArrayLike, lead_shape: tuple[int, ...]) -> np.ndarray:
    """A scalar or per-point coefficient, given a trailing axis to multiply (..., 3) arrays."""
    arr = np.asarray(value, dtype=float)
    try:
        np.broadcast_shapes(arr.shape, lead_shape)
    except ValueError:
        raise ContactError(
            f"friction_force: '{name}' has shape {arr.shape}, expected a scalar or an array "
            f"broadcastable to the points' leading shape {lead_shape}"
        ) from None
    return arr[..., None]


def slip_direction(v_slip: ArrayLike, v_eps: float = 0.0) -> np.ndarray:
    """Unit slip direction (dimensionless), shape of ``v_slip`` (..., 3).

    ``v_eps = 0``: ``v/|v|``, and exactly 0 at zero slip (Eq. 1's v̂_t).
    ``v_eps > 0`` (m/s): the regulator ``v / sqrt(|v|^2 + v_eps^2)``.
    """
    v = np.asarray(v_slip, dtype=float)
    speed2 = np.einsum("...i,...i->...", v, v)[..., None]
    if v_eps > 0.0:
        return v / np.sqrt(speed2 + v_eps * v_eps)
    speed = np.sqrt(speed2)
    return np.divide(v, speed, out=np.zeros_like(v), where=speed > 0.0)


def friction_force(
    v_slip: ArrayLike,
    ev_dir: ArrayLike,
    mu: ArrayLike,
    ev_norm: ArrayLike,
    f_n: ArrayLike,
    v_eps: float = 0.0,
) -> np.ndarray:
    """Anisotropic friction force (EELS-DARTS Eq. 6), N, shape (..., 3).

    v_slip: slip velocity of the contact point in the terrain's tangent plane
    (m/s), shape (..., 3).
    ev_dir: unit across-thread direction ê_v in the same tangent plane, shape
    (..., 3). A zero vector means "no thread direction" and gives the
    isotropic law.
    mu: friction coefficient along the threads; ev_norm: |e_v| = mu_perp / mu;
    f_n: normal force magnitude (N). Each is a scalar or broadcasts against
    the leading dimensions of ``v_slip``.
    v_eps: regulator speed (m/s); 0 gives Eq. 6 exactly, with zero force at
    exactly zero slip.

    ``F = -f_n mu (u + (ev_norm - 1)(u . ê_v) ê_v)``. With ``ev_norm >= 0`` it
    never does positive work, and ``|F| <= mu max(1, ev_norm) f_n``.
    """
    if v_eps < 0.0 or not np.isfinite(v_eps):
        raise ContactError(f"friction_force: 'v_eps' must be a finite speed >= 0 m/s, got {v_eps!r}")
    v = np.asarray(v_slip, dtype=float)
    e = np.asarray(ev_dir, dtype=float)
    if v.ndim == 0 or v.shape[-1] != 3 or e.ndim == 0 or e.shape[-1] != 3:
        raise ContactError(
            f"friction_force: 'v_slip' and 'ev_dir' must have a last dimension of 3, got {v.shape} and {e.shape}"
        )
    try:
        lead = np.broadcast_shapes(v.shape[:-1], e.shape[:-1])
    except ValueError:
        raise ContactError(
            f"friction_force: 'v_slip' {v.shape} and 'ev_dir' {e.shape} do not broadcast"
        ) from None
    mu_a = _per_point("mu", mu, lead)
    ev_a = _per_point("ev_norm", ev_norm, lead)
    fn_a = _per_point("f_n", f_n, lead)
    u = slip_direction(v, v_eps)
    u_along_ev = np.sum(u * e, axis=-1)[..., None]
    return -fn_a * mu_a * (u + (ev_a - 1.0) * u_along_ev * e)


def ev_norm_of_load(f_n: ArrayLike, ev_a: float, ev_b: float) -> np.ndarray:
    """Across-thread ratio |e_v| = a + b F_n (dimensionless) for normal load F_n (N).

    Clamped below at ``EV_NORM_MIN`` (see its comment: keeps friction
    dissipative; not at 1 so that a calibrated line is used as fitted).
    ``F_n`` is the load the calibration drags measure: the total normal force
    on one screw (the kernel sums its contact points).
    """
    return np.maximum(ev_a + ev_b * np.asarray(f_n, dtype=float), EV_NORM_MIN)
