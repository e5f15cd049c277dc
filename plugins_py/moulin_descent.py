"""gz-sim Python system of the ``moulin_descent`` scenario.

The placement before the run (eels_gz.scenarios.moulin_descent.place: laid out, then settled against
the ice with gravity off) is in ``<placement_file>``. With ``helix`` = 0 (the slot) the run is
wall_climb's (plugins_py/wall_climb.py: push on the rope, release, hold, down-climb) with this
scenario's figures added; with ``helix`` = 1 every screw is driven at ``screw_rate`` rad/s, and after
every step the tail's height is recorded, a fall (``slip_failure``, eels_gz.scenarios.moulin_descent's
FallWatch) or a tipped tail (``mobility_failure``) ends the run. The hold analysis is taken when the
hold begins (the slot) or on the first step whose state is reported (the helix: in the embedded host,
where the settling stepped the robot, the settled state before the first step).
"""

from __future__ import annotations

import json

from gz_compat import MetricsFile, param, request_run_end, scenario_params
from snake_io import SnakeIO
from wall_climb import WallClimb

from eels_gz.scenarios import SLIP_FAILURE
from eels_gz.scenarios.hold_analysis import hold_analysis
from eels_gz.scenarios.mobility_watch import MOBILITY_FAILURE, MobilityWatch, threshold_from
from eels_gz.scenarios.moulin_descent import (NAME, FallWatch, helix_metrics, placement_metrics, plot_helix,
                                              stemming_metrics, stemming_params)
from eels_gz.steps import step_start
from eels_gz.terrain.world_terrain import find_terrain_field


def _placement(path: str) -> dict:
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as exc:
        raise ValueError(f"{NAME}: cannot read <placement_file> '{path}': {exc}") from None


class MoulinDescent(WallClimb):
    """The slot (wall_climb's run on the parameters merged with wall_climb's) or, with ``<params><helix>``
    1, the helix: every screw at ``screw_rate``, the fall and mobility checks."""

    NAME = NAME
    # the slot's callbacks: wall_climb's (their gz calls are checked in plugins_py/wall_climb.py)
    _slot_configure, _slot_pre_update, _slot_post_update = WallClimb.configure, WallClimb.pre_update, \
        WallClimb.post_update

    def stemming_params(self, params: dict) -> dict:
        return stemming_params(params)

    def configure(self, entity, sdf, ecm, event_mgr):
        self.metrics_out = MetricsFile(sdf, self.NAME, self)  # under Gazebo: <metrics_file>, after post_update
        self.helix = bool(scenario_params(sdf).get("helix", 0.0))
        if not self.helix:
            self._slot_configure(entity, sdf, ecm, event_mgr)
            return
        params = scenario_params(sdf)
        for key in ("screw_rate", "fall_speed"):
            if key not in params:
                raise ValueError(f"{NAME}: <params> has no '{key}' (config/scenarios/moulin_descent.yaml)")
        self.rate = params["screw_rate"]
        self.fall = FallWatch(params["fall_speed"])
        self.watch = MobilityWatch(threshold_from(params))
        self.snake = SnakeIO(entity, sdf, ecm, NAME)
        if self.watch.link != self.snake.chain.root:
            raise ValueError(f"{NAME}: the mobility check watches '{self.watch.link}', not the tail "
                             f"'{self.snake.chain.root}' this system reads")
        self.placement_file = param(sdf, "get_string", "placement_file", NAME)
        world_file = param(sdf, "get_string", "world_file", NAME)
        self.terrain = find_terrain_field(world_file)
        self.mass = self.snake.robot_model.total_mass
        self.placed = None
        self.hold: dict | None = None
        self.t: list[float] = []
        self.z: list[float] = []
        self.t0 = self.z0 = None

    def started(self) -> None:  # the slot's hold begins: its hold analysis
        self.hold = self.record.hold_statics

    def _hold_analysis(self) -> dict:
        contact = self.snake.screw_contact
        return hold_analysis(self.snake.chain, self.snake.angles(), self.snake.base_pose(), self.terrain,
                             self.snake.screw_geometry(), self.snake.gravity, self.snake.screw_loads(), self.mass,
                             contact.params.mu if contact is not None else None)

    def pre_update(self, info, ecm):
        if not self.helix:
            self._slot_pre_update(info, ecm)
            return
        if info.paused:
            return
        if self.placed is None:  # the first step: the run starts where placement left the robot
            self.placed = _placement(self.placement_file)
            self.t0 = step_start(info)
            self.z0 = float(self.placed["base_pose"]["position"][2])
            if self.snake.read(ecm):
                self.hold = self._hold_analysis()
            self.snake.command(velocities={j: self.rate for j in self.snake.screw_actuators})  # held from now on

    def post_update(self, info, ecm):
        if not self.helix:
            self._slot_post_update(info, ecm)
            return
        if info.paused or self.placed is None or not self.snake.read(ecm):
            return
        if self.hold is None:
            self.hold = self._hold_analysis()
        now = info.sim_time.total_seconds()
        t, z = now - self.t0, float(self.snake.base_pose()[2, 3])
        self.t.append(t)
        self.z.append(z)
        fell = self.fall.update(t, z)
        if fell is not None:
            request_run_end(SLIP_FAILURE, fell, ecm)
            return
        failed = self.watch.check(now, self.snake.base_pose()[:3, :3], self.snake.gravity)
        if failed is not None:
            request_run_end(MOBILITY_FAILURE, failed, ecm)

    def metrics(self):
        placed = self.placed or _placement(self.placement_file)
        settle = placement_metrics(placed["report"]["settle"])
        if not self.helix:
            return stemming_metrics(settle, getattr(self, "hold", None) or {}, self.record)
        z0 = self.z0 if self.z0 is not None else float(placed["base_pose"]["position"][2])
        return helix_metrics(settle, self.hold or {}, self.t, self.z, z0, self.watch)

    def plot(self, path):
        if not self.helix:
            super().plot(path)
        elif self.t:
            plot_helix(path, self.t, self.z, self.watch, self.t0)


def get_system():
    return MoulinDescent()
