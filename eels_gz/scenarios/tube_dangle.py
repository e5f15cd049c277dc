"""``tube_dangle``: EELS 1.5 hanging from tethers inside ``tube``.

The scenario's ``tethers:`` (applied by the runner) carry the robot. Setup
lays the robot straight and level (tail frame = world frame turned to the
tether line) with the first tether's attachment point straight below its
anchor at the tether's rest length, every joint at 0 and held. Each step
the controller records the tethers' forces (the same law and anchors as the
runner's, :class:`~eels_gz.run.tethers.TetherSet`), the base pose and the
robot's clearance to the ice: the smallest signed distance (m) of the
terrain field over the surface points of every collision cylinder facing
the ice (:func:`~eels_gz.snake.placement.sample_points`).

Metrics, averaged after ``settle_time`` (s): total tether force (N, world),
the robot's weight m g from the simulated model's masses, their ratio, each
tether's tension, the smallest clearance (negative: penetration) and the
final base pose.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from eels_gz.errors import ConfigError
from eels_gz.run.tethers import TetherSet, parse_tethers
from eels_gz.scenarios import ScenarioController, param
from eels_gz.scenarios.snake_host import SnakeHost
from eels_gz.snake.placement import sample_points
from eels_gz.terrain.writers import find_terrain_field

SAMPLES_PER_LINK = 3  # clearance stations along each collision cylinder
CLEARANCE_EVERY = 10  # steps between clearance samples


class TubeDangle(ScenarioController):
    METRICS = ("robot_mass_kg", "weight_n", "tether_force_total_n", "tether_force_vertical_n",
               "tether_force_over_weight", "tether_tension_n", "min_clearance_m", "min_clearance_settled_m",
               "final_base_position", "final_base_x_axis", "settle_time_s")
    def __init__(self, scenario: dict):
        self.scenario = scenario
        if not scenario.get("tethers"):
            raise ConfigError("tube_dangle: the scenario needs 'tethers:' to hang the robot from")
        self.t: list[float] = []
        self.forces: list[np.ndarray] = []  # (n_tethers, 3) per step, N, on the robot
        self.clear_t: list[float] = []
        self.clearance: list[float] = []
        self.steps = 0

    def setup(self, sim, params):
        self.settle_time = param(params, "settle_time", "tube_dangle")
        self.snake = snake = SnakeHost(sim, "tube_dangle")
        self.terrain = find_terrain_field(sim.spec)
        tethers = parse_tethers(self.scenario["tethers"], "tube_dangle")
        first = tethers[0]
        if first.anchor is None:
            raise ConfigError("tube_dangle: the first tether needs an explicit anchor: the robot is hung below it")
        angles = {n: 0.0 for n in snake.shape_joints}
        # the first tether's point at rest length below its anchor, robot straight and level along x
        pose = np.eye(4)
        snake.place(pose, angles)
        p_link = sim.frame_world_pose(first.link) @ np.r_[first.point, 1.0]
        pose[:3, 3] = np.array(first.anchor) - np.array([0.0, 0.0, first.length]) - p_link[:3]
        snake.place(pose, angles)
        self.tethers = TetherSet(sim, tethers, "tube_dangle")
        self.mass = float(sim.robot_skeleton.getMass())
        self.g = np.asarray(sim.world.getGravity(), float)
        self.t0 = sim.time

    def post_step(self, sim):
        self.t.append(sim.time - self.t0)
        self.forces.append(np.array(self.tethers.forces()))
        if self.steps % CLEARANCE_EVERY == 0:
            self.clear_t.append(sim.time - self.t0)
            self.clearance.append(self.min_clearance())
        self.steps += 1
        return None

    def min_clearance(self) -> float:
        """Smallest signed distance (m) from the ice of the robot's ice-facing surface points."""
        sp = sample_points(self.snake.chain, self.snake.angles(), self.snake.base_pose(), self.terrain,
                           SAMPLES_PER_LINK)
        return float(self.terrain.query(sp.points)[0].min())

    def metrics(self):
        t = np.array(self.t)
        f = np.array(self.forces) if self.forces else np.zeros((1, len(self.tethers.tethers), 3))
        late = t >= self.settle_time if len(t) else np.array([True])
        if not late.any():
            late = np.ones(len(f), bool)
        total = f[late].sum(axis=1).mean(axis=0)
        weight = self.mass * float(np.linalg.norm(self.g))
        ct = np.array(self.clear_t)
        clear = np.array(self.clearance) if self.clearance else np.array([np.nan])
        pose = self.snake.base_pose()
        return {
            "robot_mass_kg": self.mass,
            "weight_n": weight,
            "tether_force_total_n": total.tolist(),
            "tether_force_vertical_n": float(total @ (-self.g / np.linalg.norm(self.g))),
            "tether_force_over_weight": float(total @ (-self.g / np.linalg.norm(self.g))) / weight,
            "tether_tension_n": [float(np.linalg.norm(x)) for x in f[late].mean(axis=0)],
            "min_clearance_m": float(np.nanmin(clear)),
            "min_clearance_settled_m": float(np.nanmin(clear[ct >= self.settle_time]))
            if (ct >= self.settle_time).any() else None,
            "final_base_position": pose[:3, 3].tolist(),
            "final_base_x_axis": pose[:3, 0].tolist(),
            "settle_time_s": self.settle_time,
        }

    def plot(self, path):
        from eels_gz.plots import plt

        f = np.array(self.forces)
        fig, (a, b) = plt.subplots(2, 1, figsize=(7, 5), sharex=True, constrained_layout=True)
        for k, tether in enumerate(self.tethers.tethers):
            a.plot(self.t, np.linalg.norm(f[:, k], axis=1), label=tether.link)
        a.plot(self.t, np.linalg.norm(f.sum(axis=1), axis=1), "k", label="sum")
        a.axhline(self.mass * float(np.linalg.norm(self.g)), color="r", ls="--", label="m g")
        a.set_ylabel("tether force [N]")
        a.legend(loc="best")
        b.plot(self.clear_t, np.array(self.clearance) * 1e3)
        b.set_ylabel("clearance to ice [mm]")
        b.set_xlabel("time [s]")
        fig.suptitle("tube_dangle")
        fig.savefig(Path(path), dpi=100)
        plt.close(fig)


def make_controller(scenario: dict) -> TubeDangle:
    return TubeDangle(scenario)
