"""``screw_spin`` metrics (pure; the system is plugins_py/screw_spin.py, which only watches: the set
points stay those of config/scenarios/screw_spin.yaml). It reports how the robot moved while its screws spun, from the
base link (the tail) at the start of the run and at its end:

- ``advance_m``: the base's horizontal displacement along its initial heading (the tail link's x
  axis, the body axis, projected on the horizontal plane), ``lateral_m`` across it (to the left) and
  ``displacement_m`` in all;
- ``advance_speed_m_s = advance_m / duration_s``, ``speed_m_s = displacement_m / duration_s``;
- ``yaw_change_rad`` (about the vertical) and ``roll_change_rad`` (about the body axis), wrapped to
  (-pi, pi].

A straight robot on flat ice hardly advances in this scenario (docs/contact.md: it yaws and rolls);
the advance speed is the figure a campaign over the contact parameters spreads.
"""

from __future__ import annotations

import math

import numpy as np



def _heading(T: np.ndarray) -> float:
    return math.atan2(T[1, 0], T[0, 0])


def _roll(T: np.ndarray) -> float:
    """Rotation about the body x axis: the angle of the body's z axis about x, from the vertical plane."""
    x = T[:3, 0] / np.linalg.norm(T[:3, 0])
    up = np.array([0.0, 0.0, 1.0]) - x[2] * x  # the vertical, across the body axis
    if np.linalg.norm(up) < 1e-9:
        return 0.0
    up /= np.linalg.norm(up)
    return math.atan2(float(np.cross(up, T[:3, 2]) @ x), float(up @ T[:3, 2]))


METRICS = ("duration_s", "advance_m", "lateral_m", "displacement_m", "advance_speed_m_s", "speed_m_s",
           "yaw_change_rad", "roll_change_rad")


def spin_metrics(T0: np.ndarray, T: np.ndarray, duration: float) -> dict:
    """The metrics of a run whose base went from world pose ``T0`` to ``T`` (4x4) in ``duration`` s."""
    d = T[:2, 3] - T0[:2, 3]
    h = _heading(T0)
    along = np.array([math.cos(h), math.sin(h)])
    left = np.array([-along[1], along[0]])
    advance, lateral, moved = float(d @ along), float(d @ left), float(np.linalg.norm(d))
    return {
        "duration_s": duration,
        "advance_m": advance,
        "lateral_m": lateral,
        "displacement_m": moved,
        "advance_speed_m_s": advance / duration if duration > 0 else None,
        "speed_m_s": moved / duration if duration > 0 else None,
        "yaw_change_rad": math.remainder(_heading(T) - h, 2 * math.pi),
        "roll_change_rad": math.remainder(_roll(T) - _roll(T0), 2 * math.pi),
    }
