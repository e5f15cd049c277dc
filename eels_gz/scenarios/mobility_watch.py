"""The mobility-failure check of a run (EELS-DARTS §4.3.1) in the host: each
step, the angle between the x axis of the watched link and the gravity line
(:func:`eels_gz.snake.mobility.check_mobility`); past the threshold the run
ends with status ``mobility_failure``."""

from __future__ import annotations

import math

import numpy as np

from eels_gz.scenarios import RunEnd
from eels_gz.snake.mobility import MOBILITY_FAILURE, check_mobility
from eels_gz.snake.params import load_snake_params


def threshold_from(params: dict[str, float]) -> float:
    """The scenario's ``mobility_threshold`` (rad), or config/snake.yaml's when it is absent or 0."""
    value = float(params.get("mobility_threshold", 0.0))
    return value if value > 0.0 else load_snake_params().mobility.threshold


class MobilityWatch:
    # the keys of metrics() (a scenario's METRICS includes them when it merges them in)
    METRICS = ("mobility_threshold_deg", "max_axis_gravity_angle_deg")
    """Checks ``link`` (default config/snake.yaml ``mobility.link``) of the robot in ``sim``."""

    def __init__(self, sim, threshold: float, link: str | None = None):
        self.sim = sim
        self.threshold = float(threshold)
        self.link = link or load_snake_params().mobility.link
        self.sim.frame_world_pose(self.link)  # KeyError now for an unknown link
        self.times: list[float] = []
        self.angles: list[float] = []

    def check(self) -> RunEnd | None:
        R = self.sim.frame_world_pose(self.link)[:3, :3]
        status = check_mobility(R, np.asarray(self.sim.world.getGravity(), float), self.threshold)
        self.times.append(self.sim.time)
        self.angles.append(status.angle)
        if status.failed:
            return RunEnd(MOBILITY_FAILURE,
                          f"mobility failure at t = {self.sim.time:.3f} s: the x axis of '{self.link}' is "
                          f"{math.degrees(status.angle):.1f} deg from the gravity line (threshold "
                          f"{math.degrees(self.threshold):.1f} deg, EELS-DARTS §4.3.1)")
        return None

    def metrics(self) -> dict:
        a = np.array([x for x in self.angles if not math.isnan(x)])
        return {"mobility_threshold_deg": math.degrees(self.threshold),
                "max_axis_gravity_angle_deg": float(np.degrees(a.max())) if a.size else None}
