"""gz-sim Python system of the ``screw_spin`` scenario: it only watches.

The screws spin at the set points of config/scenarios/screw_spin.yaml (joint_control); this system
records the world pose of the robot's base (the root link of ``<description_file>``) when the run
starts (before its first step) and after every step, and ``metrics()`` gives eels_gz.scenarios.screw_spin's figures of how
far and where the base went. Parameters: the scenario elements of eels_gz.scenarios.plugin_elements.
"""

from __future__ import annotations

import numpy as np
from gz_compat import MetricsFile, base_link, link_world_states, param, sim

from eels_gz.scenarios.screw_spin import spin_metrics
from eels_gz.steps import step_start

PLUGIN = "screw_spin"


def _matrix(state) -> np.ndarray:
    pos, rot = state
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = rot, pos
    return T


class ScrewSpin:
    def configure(self, entity, sdf, ecm, event_mgr):
        self.metrics_out = MetricsFile(sdf, PLUGIN, self)  # under Gazebo: <metrics_file>, after post_update
        model = sim.Model(entity)
        urdf_file = param(sdf, "get_string", "description_file", PLUGIN)
        with open(urdf_file) as f:
            self.link = base_link(model, ecm, f.read(), urdf_file, PLUGIN)
        self.links = [self.link]
        self.first = self.last = None
        self.t0 = self.t = 0.0

    def _base(self, ecm):
        """The base's world position and rotation now (batched in the embedded host: the step's
        kinematics, which the contact computes anyway), or None before it is reported."""
        states = link_world_states(ecm, self.links)
        return None if states is None else (states[0][0].copy(), states[1][0].copy())

    def pre_update(self, info, ecm):
        if self.first is None:  # the base before the first step moves it (after any placement)
            pose = self._base(ecm)
            if pose is not None:
                self.first = self.last = pose
                self.t0 = self.t = step_start(info)

    def post_update(self, info, ecm):
        if self.first is not None:
            self.last, self.t = self._base(ecm), info.sim_time.total_seconds()

    def metrics(self):
        if self.first is None:
            return {}
        return spin_metrics(_matrix(self.first), _matrix(self.last), self.t - self.t0)


def get_system():
    return ScrewSpin()
