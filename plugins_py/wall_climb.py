"""gz-sim Python system of the ``wall_climb`` scenario (and of ``moulin_descent``'s slot, which
subclasses it): the push on a rope, the rope's release, the hold and the climb.

The placement before the run (eels_gz.scenarios.wall_climb.place; ``<placement_file>``, read on the
first step) gives the press set points, the screws' locked angles and the rope. Step by step, from
the run's first step (priority before joint control, so its set points act in the same step):

1. the first ``engage_time`` s: every joint held (bends at the press set points, screws locked at
   their placed angles by a position loop around their velocity control) while the rope (the tether
   law of eels_gz.snake.tethers, applied with ``Link.add_world_wrench``) carries the weight;
2. the next ``release_time`` s: the rope's pull scaled down linearly to zero; these two phases are
   the system's ``lead_in_s``, which the embedded host's runner steps as setup;
3. the hold, ``hold_time`` s, then the climb: each screw at the rate that advances it at
   ``climb_speed`` straight up, updated every ``RATE_EVERY`` steps; after every step the tail is
   recorded, a slip (``slip_failure``) or a tipped tail (``mobility_failure``) ends the run
   (``request_run_end``).

Reads the joints and the base once per step (SnakeIO, batched), after the step; the commands of the
next step use that state (the state before it). Metrics and plot: eels_gz.scenarios.wall_climb.
"""

from __future__ import annotations

import json

import numpy as np
from gz_compat import (MetricsFile, add_link_world_wrenches_each, link_world_states, param, request_run_end,
                        scenario_params, sim)
from snake_io import SnakeIO

from eels_gz.scenarios import SLIP_FAILURE
from eels_gz.scenarios.hold_analysis import hold_analysis
from eels_gz.scenarios.mobility_watch import MOBILITY_FAILURE, MobilityWatch, threshold_from
from eels_gz.scenarios.wall_climb import RATE_EVERY, WallClimb as ClimbRecord, climb_rates, lead_in_s
from eels_gz.snake.tethers import tether_wrenches
from eels_gz.terrain.world_terrain import find_terrain_field


class WallClimb:
    NAME = "wall_climb"

    def configure(self, entity, sdf, ecm, event_mgr):
        self.metrics_out = MetricsFile(sdf, self.NAME, self)  # under Gazebo: <metrics_file>, after post_update
        self.params = params = self.stemming_params(scenario_params(sdf))
        for key in ("engage_time", "release_time", "screw_lock_gain", "hold_time", "climb_speed", "slip_limit"):
            if key not in params:
                raise ValueError(f"{self.NAME}: <params> has no '{key}' (config/scenarios/wall_climb.yaml)")
        self.snake = SnakeIO(entity, sdf, ecm, self.NAME)
        self.placement_file = param(sdf, "get_string", "placement_file", self.NAME)
        world_file = param(sdf, "get_string", "world_file", self.NAME)
        self.terrain = find_terrain_field(world_file)
        if self.terrain is None:
            raise ValueError(f"{self.NAME}: the world '{world_file}' has no terrain distance field")
        self.mass = self.snake.robot_model.total_mass
        self.lead_in_s = lead_in_s(params)  # s before the scenario's timed run
        self.lock_gain = params["screw_lock_gain"]
        self.record = ClimbRecord(params)
        self.record.NAME = self.NAME
        self.watch = MobilityWatch(threshold_from(params))
        model = sim.Model(entity)
        link, self.T_watch = self.snake.robot_model.fixed_carrier(self.watch.link,
                                                                  lambda n: bool(model.link_by_name(ecm, n)))
        self.R_watch = None if np.array_equal(self.T_watch[:3, :3], np.eye(3)) else self.T_watch[:3, :3]
        self.watch_links = self.snake.base_links if link == self.snake.chain.root else \
            [sim.Link(model.link_by_name(ecm, link))]
        if self.watch_links is not self.snake.base_links:
            self.watch_links[0].enable_velocity_checks(ecm, True)
        self.geometry = None
        self.placed = None
        self.k = 0  # steps taken
        self.rates: dict[str, float] | None = None
        self.climb_steps = 0
        self.t0 = 0.0

    def stemming_params(self, params: dict) -> dict:
        """The scenario's parameters as the stemming needs them (moulin_descent merges in wall_climb's)."""
        return params

    # --- the first step: what placement left ---------------------------------------------------
    def _start(self, info) -> None:
        try:
            with open(self.placement_file) as f:
                self.placed = json.load(f)
        except (OSError, ValueError) as exc:
            raise ValueError(f"{self.NAME}: cannot read <placement_file> '{self.placement_file}': {exc}") from None
        report = self.placed["report"]
        self.record.gap, self.record.amplitude = report["gap_m"], report["bend_amplitude_rad"]
        self.q_press = report["press"]
        self.q_lock = {j: self.placed["joints"][j] for j in self.snake.screw_actuators}
        r = report["rope"]
        self.rope_point = np.array([r["point"]], float)
        self.rope_anchor = np.array([r["anchor"]], float)
        self.rope_kcl = np.array([[r["stiffness"], r["damping"], r["length"]]], float)
        self.rope_f, self.rope_m = np.zeros((1, 3)), np.zeros((1, 3))
        if r["link"] != self.snake.chain.root:
            raise ValueError(f"{self.NAME}: the rope hangs from the tail '{self.snake.chain.root}', not '{r['link']}'")
        dt = info.dt.total_seconds()
        self.n_engage = int(round(self.params["engage_time"] / dt))
        self.n_release = int(round(self.params["release_time"] / dt))
        self.n_hold = int(round(self.params["hold_time"] / dt))
        self.geometry = {k: (g.radius, np.tan(g.lead_angle), g.handedness)
                         for k, g in self.snake.screw_geometry().items()}

    # --- commands -------------------------------------------------------------------------
    def _hold(self) -> None:
        """Bends at the press set points; screws locked at ``q_lock``: a position loop of gain
        ``screw_lock_gain`` (1/s) closed around the screws' velocity controllers, whose integral
        then carries the load torque with no creep (a plain zero-velocity set point lets the
        screws turn slowly under the walls' torque, and the robot creep along their threads).
        Before the first state is reported the screws are where placement put them: rate 0."""
        if self.snake.ready:
            angles = self.snake.angles()
            hold = {j: -self.lock_gain * (angles[j] - q) for j, q in self.q_lock.items()}
        else:
            hold = {j: 0.0 for j in self.q_lock}
        self.snake.command(positions=self.q_press, velocities=hold)

    def _rope(self, ecm):
        """The rope's force and moment about the tail origin at the state now, or None."""
        states = link_world_states(ecm, self.snake.base_links)
        if states is None:
            return None
        pos, rot, lin, ang = states
        tether_wrenches(pos, rot, lin, ang, self.rope_point, self.rope_anchor, self.rope_kcl, self.rope_f,
                        self.rope_m)
        return self.rope_f, self.rope_m

    def pre_update(self, info, ecm):
        if info.paused:
            return
        if self.placed is None:
            self._start(info)
        self.k += 1
        k, lead = self.k, self.n_engage + self.n_release
        if k <= lead:  # the push on the rope, then its release
            self._hold()
            scale = 1.0 if k <= self.n_engage else 1.0 - (k - self.n_engage) / self.n_release
            out = self._rope(ecm) if scale != 0.0 else None
            if out is not None:
                add_link_world_wrenches_each(ecm, self.snake.base_links, scale * out[0], scale * out[1])
            return
        if k - 1 - lead < self.n_hold:  # run steps completed before this one, against the hold's
            self._hold()
            return
        if self.record.climb_start is None:
            self.record.climb_start = self.snake.base_pose()[:3, 3]
        if self.climb_steps % RATE_EVERY == 0:
            self.rates = climb_rates(self.snake.chain, self.snake.angles(), self.snake.base_pose(), self.geometry,
                                     self.record.climb_speed)
        self.climb_steps += 1
        self.snake.command(positions=self.q_press, velocities=self.rates)

    # --- after the step -------------------------------------------------------------------
    def post_update(self, info, ecm):
        if info.paused or self.placed is None or not self.snake.read(ecm):
            return
        k, lead, rec = self.k, self.n_engage + self.n_release, self.record
        pose = self.snake.base_pose()
        tail = pose[:3, 3]
        if k == self.n_engage:  # the push's end: what the rope carries
            out = self._rope(ecm)
            rec.rope_force = float(np.linalg.norm(out[0], axis=1).sum()) if out is not None else 0.0
            rec.p_engaged = tail
        if k < lead:
            return
        now = info.sim_time.total_seconds()
        if k == lead:  # the hold begins: the walls carry the weight
            self.t0, rec.p0 = now, tail
            rec.hold_statics = self.hold_statics()
            rec.watch = self.watch
            self.started()
            return
        failed = rec.record(now - self.t0, tail, self.snake.total_screw_load())
        if failed is not None:
            request_run_end(SLIP_FAILURE, failed, ecm)
            return
        failed = self.watch.check(now, self._watch_rotation(ecm, pose), self.snake.gravity)
        if failed is not None:
            request_run_end(MOBILITY_FAILURE, failed, ecm)

    def started(self) -> None:
        """Called when the hold begins (moulin_descent keeps its own figures then)."""

    def _watch_rotation(self, ecm, base_pose: np.ndarray) -> np.ndarray:
        if self.watch_links is self.snake.base_links:
            R = base_pose[:3, :3]
        else:
            R = link_world_states(ecm, self.watch_links)[1][0]
        return R if self.R_watch is None else R @ self.R_watch

    def hold_statics(self) -> dict:
        """eels_gz.scenarios.hold_analysis of the robot now, with the screw contact's loads of the last step."""
        contact = self.snake.screw_contact
        return hold_analysis(self.snake.chain, self.snake.angles(), self.snake.base_pose(), self.terrain,
                             self.snake.screw_geometry(), self.snake.gravity, self.snake.screw_loads(), self.mass,
                             contact.params.mu if contact is not None else None)

    # --- outputs --------------------------------------------------------------------------
    def metrics(self):
        return self.record.metrics()

    def plot(self, path):
        self.record.plot(path)


def get_system():
    return WallClimb()
