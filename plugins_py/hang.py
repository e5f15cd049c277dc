"""gz-sim Python system of the ``hang`` scenario: it watches the robot hang from its tether.

The tethers system (peer ``"tethers"``, plugins_py/tethers.py) carries the robot; after every step
this system records the tethers' forces at the new state and the base's position, and ``metrics()``
gives eels_gz.scenarios.hang's figures. Parameters: the scenario elements of
eels_gz.scenarios.systems; ``settle_time`` (s) from ``<params>``.
"""

from __future__ import annotations

import numpy as np
from gz_compat import MetricsFile, link_world_states, param, peer, scenario_params, sim
from snake_io import world_facts

from eels_gz.description.urdf_tree import root_link, total_mass
from eels_gz.snake.tethers import tether_load_metrics

PLUGIN = "hang"


class Hang:
    def configure(self, entity, sdf, ecm, event_mgr):
        self.metrics_out = MetricsFile(sdf, PLUGIN)  # under Gazebo: <metrics_file>
        params = scenario_params(sdf)
        if "settle_time" not in params:
            raise ValueError(f"{PLUGIN}: <params> has no 'settle_time' (s: the tether's force is averaged after it)")
        self.settle_time = params["settle_time"]
        self.entity = entity
        urdf_file = param(sdf, "get_string", "description_file", PLUGIN)
        with open(urdf_file) as f:
            urdf = f.read()
        self.mass = total_mass(urdf, urdf_file)
        _, self.gravity = world_facts(param(sdf, "get_string", "world_file", PLUGIN))
        model = sim.Model(entity)
        name = root_link(urdf, urdf_file)
        link = model.link_by_name(ecm, name)
        if not link:
            raise ValueError(f"{PLUGIN}: the base link '{name}' is not a link of model '{model.name(ecm)}'")
        self.base = [sim.Link(link)]
        self.base[0].enable_velocity_checks(ecm, True)  # link_world_states reads pose and twist together
        self.tethers = None
        self.t0 = None
        self.t: list[float] = []
        self.forces: list[np.ndarray] = []  # (n_tethers, 3) per step, N, on the robot
        self.final = np.full(3, np.nan)

    def pre_update(self, info, ecm):
        if self.t0 is None:  # the run's first step (after any placement)
            self.t0 = info.sim_time.total_seconds() - info.dt.total_seconds()
            self.tethers = peer(self.entity, "tethers")
            if self.tethers is None:
                raise ValueError(f"{PLUGIN}: the robot has no tethers system (the scenario's systems: must name "
                                 "'tethers')")

    def post_update(self, info, ecm):
        self.metrics_out.post_update(info, self.metrics)
        if info.paused or self.t0 is None or not self.tethers.anchored:
            return
        out = self.tethers.wrenches_at(link_world_states(ecm, self.tethers.links))
        base = link_world_states(ecm, self.base)
        if out is None or base is None:
            return
        self.t.append(info.sim_time.total_seconds() - self.t0)
        self.forces.append(out[0].copy())
        self.final = np.array(base[0][0], float)

    def metrics(self):
        n = len(self.tethers.tethers) if self.tethers is not None else 0
        return {**tether_load_metrics(self.t, self.forces, self.settle_time, self.mass, self.gravity, n),
                "final_base_position": self.final.tolist()}


def get_system():
    return Hang()
