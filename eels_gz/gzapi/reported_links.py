"""The link states gz-sim's ECM holds: reported by physics only when a link has moved.

gz-sim 8 does not copy every link's state into the ECM after a step. gz-physics' dartsim plugin lists a
link as changed only when its world pose moved by more than 1e-6 in a coordinate of its position (m) or
of its quaternion since the pose it last listed for that link (``ChangedWorldPoses``,
gz-physics 7 ``dartsim/src/SimulationFeatures.cc``, ``SimulationFeatures::Write``). gz-sim's Physics
system writes pose, velocities and accelerations of the listed links only (``Physics.cc``,
``PhysicsPrivate::ChangedLinks`` and ``UpdateSim``), and of every link of a model whose canonical link
is listed (``UpdateModelPose``: link poses are kept relative to the model). A link that moved less keeps
its older pose *and* velocities. So a box settling on a plane at under 1 mm/s is seen up to 1 µm below
where DART has it, and a screw turning slowly reads a velocity of some steps ago.

This module is the rule alone (no engine): ``ReportedLinks`` keeps what gz-sim's ECM would hold of one
model's bodies, given their states after each step. The embedded host's engine side holds one per model
(``eels_gz/dart/skeleton_state.py``, updated after each step, forgotten after a reset or a placement) and
exposes it through ``ModelState.reported_link`` (``eels_gz/gzapi/engine.py``), from which the Link API,
the batch helpers, the OdometryPublisher and the run's ground truth answer. Body 0 of a skeleton is its
model's canonical link.
"""

from __future__ import annotations

import numba
import numpy as np

TOLERANCE = 1e-6  # gz-physics' per-coordinate tolerance (``Pos().Equal(.., 1e-6)``, ``Rot().Equal(.., 1e-6)``)


@numba.njit(cache=True)
def _quaternion(T, out):
    """(w, x, y, z) of the rotation T[:3, :3] as Eigen's ``Quaterniond(Matrix3d)`` computes it (gz-physics
    converts a link's world transform with it before it compares), so the signs agree with gz-physics'."""
    t = T[0, 0] + T[1, 1] + T[2, 2]
    if t > 0.0:
        t = np.sqrt(t + 1.0)
        out[0] = 0.5 * t
        t = 0.5 / t
        out[1] = (T[2, 1] - T[1, 2]) * t
        out[2] = (T[0, 2] - T[2, 0]) * t
        out[3] = (T[1, 0] - T[0, 1]) * t
    else:
        i = 0
        if T[1, 1] > T[0, 0]:
            i = 1
        if T[2, 2] > T[i, i]:
            i = 2
        j = (i + 1) % 3
        k = (j + 1) % 3
        t = np.sqrt(T[i, i] - T[j, j] - T[k, k] + 1.0)
        out[1 + i] = 0.5 * t
        t = 0.5 / t
        out[0] = (T[k, j] - T[j, k]) * t
        out[1 + j] = (T[j, i] + T[i, j]) * t
        out[1 + k] = (T[k, i] + T[i, k]) * t


@numba.njit(cache=True)
def _report(T, v, w, first, listed, rep_T, rep_v, rep_w, moved):
    """One step's report: ``moved[b]`` whether body b moved beyond the tolerance since ``listed[b]`` (its
    position and quaternion when last listed; every body on the ``first`` report), ``listed`` updated; the
    moved bodies' states (all bodies' when body 0 moved) copied into ``rep_*``. Returns how many were."""
    n = T.shape[0]
    q = np.empty(4)
    for b in range(n):
        _quaternion(T[b], q)
        m = first
        for i in range(3):
            m = m or abs(T[b, i, 3] - listed[b, i]) > TOLERANCE
        for i in range(4):
            m = m or abs(q[i] - listed[b, 3 + i]) > TOLERANCE
        moved[b] = m
        if m:
            for i in range(3):
                listed[b, i] = T[b, i, 3]
            for i in range(4):
                listed[b, 3 + i] = q[i]
    everything = n > 0 and moved[0]
    count = 0
    for b in range(n):
        if everything or moved[b]:
            rep_T[b] = T[b]
            rep_v[b] = v[b]
            rep_w[b] = w[b]
            count += 1
    return count


class ReportedLinks:
    """What gz-sim's ECM holds of one model's links: world pose ``T`` (B, 4, 4), linear velocity of the
    link origin ``v`` and angular velocity ``w`` (B, 3, world), indexed like the skeleton's bodies.
    ``valid`` is False until the first report after the start, a reset or a placement; until then the
    ECM holds the state set (the host reads it from DART)."""

    __slots__ = ("T", "v", "w", "valid", "_listed", "_moved")

    def __init__(self, n_bodies: int) -> None:
        self.T = np.zeros((n_bodies, 4, 4))
        self.v, self.w = np.zeros((n_bodies, 3)), np.zeros((n_bodies, 3))
        self._listed = np.zeros((n_bodies, 7))
        self._moved = np.zeros(n_bodies, dtype=np.bool_)
        self.valid = False

    def update(self, T: np.ndarray, v: np.ndarray, w: np.ndarray) -> int:
        """Report the bodies' states after a step (world poses and twists of their origins); returns how
        many bodies' reported states were refreshed."""
        count = _report(T, v, w, not self.valid, self._listed, self.T, self.v, self.w, self._moved)
        self.valid = True
        return count

    def forget(self) -> None:
        """A reset or a placement: gz-sim starts again from the world's state, every link listed anew."""
        self.valid = False
