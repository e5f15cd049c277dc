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
        unsat = self.p * error + self.integral + self.d * error_rate
        # conditional integration: integrate unless saturated and the error drives further out
        pushing_out = ((unsat >= self.effort_max) & (error > 0)) | ((unsat <= -self.effort_max) & (error < 0))
        step = np.where(pushing_out, 0.0, self.i * error * dt)
        self.integral = np.clip(self.integral + step, -self.i_max, self.i_max)
        u = self.p * error + self.integral + self.d * error_rate
        return np.clip(u, -self.effort_max, self.effort_max)
