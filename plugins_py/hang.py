"""gz-sim Python system of the ``hang`` scenario: it watches the robot hang from its tether.

The tethers system (plugins_py/tethers.py) carries the robot; after every step this system records
the tethers' forces at the new state (``tethers.TetherWatch``) and the base's position, and
``metrics()`` gives eels_gz.scenarios.hang's figures. Parameters: the scenario elements of
eels_gz.scenarios.plugin_elements; ``settle_time`` (s) from ``<params>``.
"""

from __future__ import annotations

import numpy as np
from gz_compat import MetricsFile, base_link, link_world_states, param, scenario_params, sim
from snake_io import world_facts
from tethers import TetherWatch

from eels_gz.description.urdf_tree import total_mass
from eels_gz.snake.tethers import tether_load_metrics

PLUGIN = "hang"


class Hang:
    def configure(self, entity, sdf, ecm, event_mgr):
        self.metrics_out = MetricsFile(sdf, PLUGIN, self)  # under Gazebo: <metrics_file>, after post_update
        params = scenario_params(sdf)
        if "settle_time" not in params:
            raise ValueError(f"{PLUGIN}: <params> has no 'settle_time' (s: the tether's force is averaged after it)")
        self.settle_time = params["settle_time"]
        urdf_file = param(sdf, "get_string", "description_file", PLUGIN)
        with open(urdf_file) as f:
            urdf = f.read()
        self.mass = total_mass(urdf, urdf_file)
        _, self.gravity = world_facts(param(sdf, "get_string", "world_file", PLUGIN))
        self.base = [base_link(sim.Model(entity), ecm, urdf, urdf_file, PLUGIN)]
        self.watch = TetherWatch(entity, PLUGIN)
        self.final = np.full(3, np.nan)

    def pre_update(self, info, ecm):
        self.watch.start(info, ecm)

    def post_update(self, info, ecm):
        if self.watch.record(info, ecm) is not None:
            base = link_world_states(ecm, self.base)
            if base is not None:
                self.final = np.array(base[0][0], float)

    def metrics(self):
        w = self.watch
        return {**tether_load_metrics(w.t, w.forces, self.settle_time, self.mass, self.gravity, w.count),
                "final_base_position": self.final.tolist()}


def get_system():
    return Hang()
