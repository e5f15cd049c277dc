"""Vectorized PID with output saturation and anti-windup.

For N joints at once: ``u = p e + I + d ė``, where the integral term
``I = ∫ i e dt`` is

- clamped to ``±i_max`` (bounded integral), and
- frozen while the output is saturated in the direction the error pushes
  (conditional integration), so it does not wind up against a limit.

The output is clipped to ``±effort_max``. Units follow the joint: N·m for
revolute joints, N for prismatic ones.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np


@dataclass(frozen=True)
class PidGains:
    p: float
    i: float
    d: float
    i_max: float
    effort_max: float

    def __post_init__(self) -> None:
        for name in ("p", "i", "d", "i_max", "effort_max"):
            v = getattr(self, name)
            if not np.isfinite(v) or v < 0:
                raise ValueError(f"PID gain '{name}' must be finite and non-negative, got {v}")


@numba.njit(cache=True)
def _pid_step(p, i, d, i_max, effort_max, integral, error, error_rate, dt, out):
    """One step of every loop in place (the class docstring's law); the
    numpy form costs ~10 array operations per call, this one call."""
    for k in range(p.shape[0]):
        e = error[k]
        unsat = p[k] * e + integral[k] + d[k] * error_rate[k]
        pushing_out = (unsat >= effort_max[k] and e > 0.0) or (unsat <= -effort_max[k] and e < 0.0)
        if not pushing_out:
            integral[k] = min(max(integral[k] + i[k] * e * dt, -i_max[k]), i_max[k])
        u = p[k] * e + integral[k] + d[k] * error_rate[k]
        out[k] = min(max(u, -effort_max[k]), effort_max[k])


class PidArray:
    """N independent PID loops evaluated with numpy."""

    def __init__(self, gains: list[PidGains]):
        self.p = np.array([g.p for g in gains], dtype=float)
        self.i = np.array([g.i for g in gains], dtype=float)
        self.d = np.array([g.d for g in gains], dtype=float)
        self.i_max = np.array([g.i_max for g in gains], dtype=float)
        self.effort_max = np.array([g.effort_max for g in gains], dtype=float)
        self.integral = np.zeros(len(gains))

    def reset(self) -> None:
        self.integral[:] = 0.0

    def update(self, error: np.ndarray, error_rate: np.ndarray, dt: float) -> np.ndarray:
        """Effort for this step from the error and its time derivative (target − measured)."""
        # conditional integration: integrate unless saturated and the error drives further out
        out = np.empty(self.p.shape[0])
        _pid_step(self.p, self.i, self.d, self.i_max, self.effort_max, self.integral,
                  np.ascontiguousarray(error, dtype=float), np.ascontiguousarray(error_rate, dtype=float),
                  float(dt), out)
        return out
