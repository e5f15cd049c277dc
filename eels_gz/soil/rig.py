"""The single-wheel soil rig's kinematics and bookkeeping (plugins_py/wheel_rig.py): pure."""

from __future__ import annotations

from dataclasses import dataclass, field


def carriage_speed(radius: float, wheel_rate: float, slip: float) -> float:
    """Carriage speed (m/s) that gives the standard piecewise slip ``slip`` at ``wheel_rate`` (rad/s):
    r omega (1 - s) when driving (s >= 0), r omega / (1 + s) when braking (-1 < s < 0)."""
    if slip <= -1.0:
        raise ValueError(f"wheel rig: slip must be > -1 for a wheel turning with its travel, got {slip}")
    v = radius * wheel_rate
    return v * (1.0 - slip) if slip >= 0.0 else v / (1.0 + slip)


# the wheel_rig scenario's metrics.json keys (issue 34's contract), in RigAverages.metrics' order
METRIC_KEYS = ("drawbar_pull_N", "sinkage_m", "wheel_torque_Nm", "normal_load_N", "slip", "wheel_radius_m",
               "wheel_width_m")


@dataclass
class RigAverages:
    """Running sums of the rig's measured drawbar pull (N), wheel torque (N m) and sinkage (m)."""

    n: int = 0
    sums: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0])

    def add(self, drawbar_pull: float, torque: float, sinkage: float) -> None:
        self.n += 1
        for k, value in enumerate((drawbar_pull, torque, sinkage)):
            self.sums[k] += value

    def metrics(self, slip: float, normal_load: float, radius: float, width: float) -> dict:
        """The contract keys of the wheel_rig scenario's metrics.json ({} before any sample)."""
        if self.n == 0:
            return {}
        pull, torque, sinkage = (s / self.n for s in self.sums)
        return dict(zip(METRIC_KEYS, (pull, sinkage, torque, normal_load, slip, radius, width), strict=True))
