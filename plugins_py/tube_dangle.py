"""gz-sim Python system of the ``tube_dangle`` scenario: it watches the robot hang.

The tethers system (plugins_py/tethers.py) carries the robot; after every step this system records
the tethers' forces at the new state (``tethers.TetherWatch``), the base pose and, every
``CLEARANCE_EVERY`` steps, the clearance to the ice (eels_gz.scenarios.tube_dangle, which also gives
the placement, the metrics and the plot). Parameters: the scenario elements of
eels_gz.scenarios.plugin_elements; ``settle_time`` (s) from ``<params>``.
"""

from __future__ import annotations

import numpy as np
from gz_compat import MetricsFile, link_world_states, scenario_params
from snake_io import SnakeIO
from tethers import TetherWatch

from eels_gz.scenarios.tube_dangle import CLEARANCE_EVERY, SAMPLES_PER_LINK, dangle_metrics, plot_dangle
from eels_gz.snake.settling import sample_points
from eels_gz.terrain.world_terrain import find_terrain_field

PLUGIN = "tube_dangle"


class TubeDangle:
    def configure(self, entity, sdf, ecm, event_mgr):
        self.metrics_out = MetricsFile(sdf, PLUGIN, self)  # under Gazebo: <metrics_file>, after post_update
        params = scenario_params(sdf)
        if "settle_time" not in params:
            raise ValueError(f"{PLUGIN}: <params> has no 'settle_time' (s: tether forces are averaged after it)")
        self.settle_time = params["settle_time"]
        self.snake = SnakeIO(entity, sdf, ecm, PLUGIN)
        world_file, _ = sdf.get_string("world_file", "")
        self.terrain = find_terrain_field(world_file)
        if self.terrain is None:
            raise ValueError(f"{PLUGIN}: the world '{world_file}' has no terrain distance field to measure clearance to")
        self.mass = self.snake.robot_model.total_mass
        self.watch = TetherWatch(entity, PLUGIN)
        self.clear_t: list[float] = []
        self.clearance: list[float] = []
        self.steps = 0
        self.final = np.eye(4)

    def pre_update(self, info, ecm):
        self.watch.start(info, ecm)

    def post_update(self, info, ecm):
        t = self.watch.record(info, ecm)
        if t is None:
            return
        base = link_world_states(ecm, self.snake.base_links)
        self.final = np.eye(4)
        self.final[:3, :3], self.final[:3, 3] = base[1][0], base[0][0]
        if self.steps % CLEARANCE_EVERY == 0 and self.snake.read(ecm):
            sp = sample_points(self.snake.chain, self.snake.angles(), self.snake.base_pose(), self.terrain,
                               SAMPLES_PER_LINK)
            self.clear_t.append(t)
            self.clearance.append(float(self.terrain.query(sp.points)[0].min()))
        self.steps += 1

    def metrics(self):
        w = self.watch
        return dangle_metrics(w.t, w.forces, self.clear_t, self.clearance, self.settle_time, self.mass,
                              self.snake.gravity, self.final, w.count)

    def plot(self, path):
        w = self.watch
        if w.tethers is None or not w.t:
            return
        plot_dangle(path, w.t, w.forces, self.clear_t, self.clearance, [t.link for t in w.tethers.tethers],
                    self.mass * float(np.linalg.norm(self.snake.gravity)))


def get_system():
    return TubeDangle()
