"""gz-sim Python system of the ``sidewind`` scenario (eels_gz.scenarios.sidewind: the gait, the
placement, the metrics and the plot).

Every ``pre_update`` it commands the serpenoid gait of the run's time ``t`` (s from its first step)
through the joint_control peer: bend and twist position set points with their rates as feed-forward,
every screw held at 0 rad/s. Every ``sample_period`` s, after the step, it samples the module points
(plugins_py/snake_io.py). ``metrics()``: eels_gz.scenarios.sidewind.sidewind_metrics. Parameters: the
scenario elements of eels_gz.scenarios.plugin_elements (``<params>``: ``warmup``, ``sample_period``).
"""

from __future__ import annotations

import numpy as np
from gz_compat import MetricsFile, scenario_params
from snake_io import SnakeIO

from eels_gz.scenarios import sidewind
from eels_gz.steps import step_start

PLUGIN = "sidewind"


class Sidewind:
    def configure(self, entity, sdf, ecm, event_mgr):
        self.metrics_out = MetricsFile(sdf, PLUGIN, self)  # under Gazebo: <metrics_file>, after post_update
        self.warmup, self.sample_period = sidewind.check_params(scenario_params(sdf), PLUGIN)
        self.snake = SnakeIO(entity, sdf, ecm, PLUGIN)
        self.gait = sidewind.gait_for(self.snake.chain, PLUGIN)
        self.screws = {j: 0.0 for j in self.snake.screw_actuators}
        self.world = self.snake.world_name
        self.t0 = None
        self.next_sample = -np.inf
        self.t: list[float] = []
        self.centroid: list[np.ndarray] = []
        self.traces: list[np.ndarray] = []

    def pre_update(self, info, ecm):
        if info.paused:
            return
        now = step_start(info)  # the time this step starts from
        if self.t0 is None:
            self.t0 = self.next_sample = now
        t = now - self.t0
        self.snake.command(positions=self.gait.setpoints(t), velocities={**self.gait.rates(t), **self.screws})

    def post_update(self, info, ecm):
        now = info.sim_time.total_seconds()
        if info.paused or self.t0 is None or now + 1e-12 < self.next_sample:
            return
        if not self.snake.read(ecm):
            return
        self.next_sample = now + self.sample_period
        points = self.snake.module_points()
        self.t.append(now - self.t0)
        self.centroid.append(points.mean(axis=0))
        self.traces.append(points)

    def metrics(self):
        return sidewind.sidewind_metrics(self.t, self.centroid, self.traces, self.gait, self.warmup, self.world)

    def plot(self, path):
        sidewind.plot(path, self.centroid, self.traces)


def get_system():
    return Sidewind()
