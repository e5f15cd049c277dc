"""The ``wheel_rig`` scenario (issue 34) in the runner.

The rig's drives and measurements are the gz-sim system
``plugins_py/wheel_rig.py``, which the rig's description
(``urdf/wheel_rig.urdf.xacro``) loads with the scenario's ``slip``, ``load``
and ``grousers``; in Gazebo the same system runs alone. This controller only
collects: it ends the run once the system's measuring window is over and hands
its steady-state figures to ``metrics.json`` (drawbar_pull_N, sinkage_m,
wheel_torque_Nm, normal_load_N, slip, wheel_radius_m, wheel_width_m).
"""

from __future__ import annotations

from eels_gz.errors import ConfigError
from eels_gz.scenarios import RunEnd, ScenarioController
from eels_gz.soil.rig import METRIC_KEYS

SYSTEM = "wheel_rig"


class WheelRigMetrics(ScenarioController):
    METRICS = (*METRIC_KEYS, "message")

    def __init__(self):
        self.system = None
        self.end = None

    def setup(self, sim, params: dict[str, float]) -> None:
        self.system = next((s.system for s in sim.systems if s.module == SYSTEM), None)
        if self.system is None:
            raise ConfigError(f"scenario wheel_rig: the robot's description loads no '{SYSTEM}' system "
                              "(run it with robot wheel_rig, urdf/wheel_rig.urdf.xacro)")
        self.end = self.system.window_end()

    def post_step(self, sim) -> RunEnd | None:
        if sim.time >= self.end - 0.5 * sim.dt:
            return RunEnd("ok", f"the rig's measuring window ended at t = {self.end:g} s (config/soil_rig.yaml)")
        return None

    def metrics(self) -> dict:
        out = self.system.metrics() if self.system is not None else {}
        if not out:
            out = {"message": "the run ended before the rig's measuring window (settle_s + measure_s, "
                              "config/soil_rig.yaml) had a sample: no steady-state figures"}
        return out


def make_controller(scenario: dict) -> WheelRigMetrics:
    return WheelRigMetrics()
