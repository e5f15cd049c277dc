"""gz-sim Python system of the ``surface_traverse`` scenario: it only watches.

The joint set points stay those of config/scenarios/surface_traverse.yaml (joint_control); this system
records the world pose of the robot's base, the tail (the root link of ``<description_file>``), when
the run starts (before its first step) and after every step, and the times of the scenario's keyframes
(from the joint_control peer's schedule, i.e. the set points the robot runs); ``metrics()`` and
``plot(path)`` are eels_gz.scenarios.surface_traverse's. Parameters: the scenario elements of
eels_gz.scenarios.plugin_elements.
"""

from __future__ import annotations

import numpy as np
from gz_compat import MetricsFile, base_link, link_world_states, param, peer, sim

from eels_gz.scenarios import surface_traverse
from eels_gz.steps import step_start

PLUGIN = "surface_traverse"


class SurfaceTraverse:
    def configure(self, entity, sdf, ecm, event_mgr):
        self.metrics_out = MetricsFile(sdf, PLUGIN, self)  # under Gazebo: <metrics_file>, after post_update
        self.entity = entity
        model = sim.Model(entity)
        urdf_file = param(sdf, "get_string", "description_file", PLUGIN)
        with open(urdf_file) as f:
            self.links = [base_link(model, ecm, f.read(), urdf_file, PLUGIN)]
        self.t: list[float] = []
        self.poses: list[np.ndarray] = []
        self.keyframes: list[float] = []
        self.t0 = None

    def _sample(self, t: float, ecm) -> None:
        states = link_world_states(ecm, self.links)
        if states is None:
            return
        pos, rot = states[0], states[1]
        T = np.eye(4)
        T[:3, :3], T[:3, 3] = rot[0], pos[0]
        self.t.append(t)
        self.poses.append(T)

    def pre_update(self, info, ecm):
        if self.t0 is None:  # the base before the first step moves it (after any placement)
            jc = peer(self.entity, "joint_control", ecm)
            self.keyframes = sorted({float(f.t) for f in jc.schedule.frames}) if jc is not None else []
            self.t0 = step_start(info)
            self._sample(self.t0, ecm)

    def post_update(self, info, ecm):
        if not info.paused:
            self._sample(info.sim_time.total_seconds(), ecm)

    def metrics(self):
        if not self.poses:
            return {}
        return surface_traverse.traverse_metrics(self.t, self.poses, self.keyframes)

    def plot(self, path):
        if self.poses:
            surface_traverse.plot(path, self.t, np.array(self.poses)[:, :3, 3], self.keyframes)


def get_system():
    return SurfaceTraverse()
