"""numba kernels of the host's per-step bookkeeping, so that the step around
DART's own costs a handful of calls instead of dozens of small numpy
operations (bench/host_step.py measures the step against DART's)."""

from __future__ import annotations

import numba
import numpy as np

from eels_gz.rotations import quat_from_matrix


@numba.njit(cache=True)
def compose_forces(tau, lo, hi, ext, use_ext, extra, use_extra, base, applied, total):
    """``applied`` = the joint force commands ``tau`` (NaN: none -> 0) clipped to the DOFs' effort
    limits ``lo``, ``hi`` (gz-physics commands them through DART's ``setCommand``, which clips), ``total`` =
    ``base`` + applied + batched link wrenches ``ext`` (when ``use_ext``) + ``extra``
    (when ``use_extra``, e.g. coupling torques); then ``tau`` is reset to NaN and ``ext`` to 0."""
    for k in range(tau.shape[0]):
        a = tau[k]
        if np.isnan(a):
            a = 0.0
        elif a > hi[k]:
            a = hi[k]
        elif a < lo[k]:
            a = lo[k]
        applied[k] = a
        t = a + base[k]
        if use_ext:
            t += ext[k]
            ext[k] = 0.0
        if use_extra:
            t += extra[k]
        total[k] = t
        tau[k] = np.nan


@numba.njit(cache=True)
def first_bad(dq, bound):
    """Index of the first generalized velocity that is not finite or beyond ``bound``, else -1."""
    for k in range(dq.shape[0]):
        v = dq[k]
        if not (abs(v) <= bound):  # also true for NaN
            return k
    return -1


@numba.njit(cache=True)
def same_values(a, b):
    """Whether two 1-D arrays hold the same numbers, bit for bit (NaN never equals)."""
    if a.shape[0] != b.shape[0]:
        return False
    for k in range(a.shape[0]):
        if a[k] != b[k]:
            return False
    return True


@numba.njit(cache=True)
def base_odometry(T, v, w, out):  # pragma: no cover - compiled
    """A body's ground-truth odometry into ``out`` (13,): position (m), orientation quaternion w, x, y,
    z (w >= 0), then its linear (m/s) and angular (rad/s) velocity in its own frame (REP-105's child
    frame), from its world transform ``T`` (4, 4) and world velocities ``v``, ``w`` (3,)."""
    for i in range(3):
        out[i] = T[i, 3]
    quat_from_matrix(T, out, 3)  # reads T's rotation block
    for j in range(3):  # R^T v, R^T w
        out[7 + j] = T[0, j] * v[0] + T[1, j] * v[1] + T[2, j] * v[2]
        out[10 + j] = T[0, j] * w[0] + T[1, j] * w[1] + T[2, j] * w[2]
