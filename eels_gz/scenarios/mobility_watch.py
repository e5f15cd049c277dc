"""The mobility-failure check of a run (EELS-DARTS §4.3.1), pure: each step, the angle between the x
axis of the watched link and the gravity line (:func:`eels_gz.snake.mobility.check_mobility`); past
the threshold the run ends with status ``mobility_failure`` (the scenario's system asks for it with
``gz_compat.request_run_end``)."""

from __future__ import annotations

import math

import numpy as np

from eels_gz.snake.mobility import MOBILITY_FAILURE, check_mobility
from eels_gz.snake.params import load_snake_params

__all__ = ["MOBILITY_FAILURE", "MobilityWatch", "threshold_from"]


def threshold_from(params: dict[str, float]) -> float:
    """The scenario's ``mobility_threshold`` (rad), or config/snake.yaml's when it is absent or 0."""
    value = float(params.get("mobility_threshold", 0.0))
    return value if value > 0.0 else load_snake_params().mobility.threshold


class MobilityWatch:
    """Checks ``link`` (default config/snake.yaml ``mobility.link``) against ``threshold`` (rad)."""

    # the keys of metrics() (a scenario's METRICS includes them when it merges them in)
    METRICS = ("mobility_threshold_deg", "max_axis_gravity_angle_deg")

    def __init__(self, threshold: float, link: str | None = None):
        self.threshold = float(threshold)
        self.link = link or load_snake_params().mobility.link
        self.times: list[float] = []
        self.angles: list[float] = []

    def check(self, t: float, R_world_link: np.ndarray, gravity: np.ndarray) -> str | None:
        """Record the angle of the link (world rotation ``R_world_link``) at time ``t`` (s); the
        failure's message when it is past the threshold, else None."""
        status = check_mobility(R_world_link, np.asarray(gravity, float), self.threshold)
        self.times.append(t)
        self.angles.append(status.angle)
        if status.failed:
            return (f"mobility failure at t = {t:.3f} s: the x axis of '{self.link}' is "
                    f"{math.degrees(status.angle):.1f} deg from the gravity line (threshold "
                    f"{math.degrees(self.threshold):.1f} deg, EELS-DARTS §4.3.1)")
        return None

    def metrics(self) -> dict:
        a = np.array([x for x in self.angles if not math.isnan(x)])
        return {"mobility_threshold_deg": math.degrees(self.threshold),
                "max_axis_gravity_angle_deg": float(np.degrees(a.max())) if a.size else None}
