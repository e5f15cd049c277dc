"""``surface_traverse`` metrics: a controller that only watches. The joint set
points stay those of config/scenarios/surface_traverse.yaml (``eels-gz
compare`` runs the same scenario under both contact models and depends on
them); this adds the tail's path length, its final pose, and its
displacement in each phase between the scenario's keyframes (m, rad)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from eels_gz.scenarios import ScenarioController
from eels_gz.scenarios.snake_host import SnakeHost


def _yaw(T: np.ndarray) -> float:
    return math.atan2(T[1, 0], T[0, 0])


class SurfaceTraverse(ScenarioController):
    METRICS = ("tail_path_length_m", "final_tail_pose", "phases")
    def __init__(self, scenario: dict):
        self.keyframes = sorted({float(k["t"]) for k in scenario.get("setpoints") or []})
        self.t: list[float] = []
        self.poses: list[np.ndarray] = []

    def setup(self, sim, params):
        self.snake = SnakeHost(sim, "surface_traverse")
        self.t.append(sim.time)
        self.poses.append(self.snake.base_pose())

    def post_step(self, sim):
        self.t.append(sim.time)
        self.poses.append(self.snake.base_pose())
        return None

    def metrics(self):
        t = np.array(self.t)
        P = np.array(self.poses)
        xyz = P[:, :3, 3]
        bounds = [b for b in self.keyframes if b < t[-1]] + [float(t[-1])]
        phases = []
        for a, b in zip(bounds[:-1], bounds[1:]):
            i, j = int(np.searchsorted(t, a - 1e-9)), int(np.searchsorted(t, b - 1e-9))
            j = min(j, len(t) - 1)
            d = xyz[j] - xyz[i]
            phases.append({"start_s": a, "end_s": b, "displacement_m": d.tolist(),
                           "yaw_change_rad": math.remainder(_yaw(P[j]) - _yaw(P[i]), 2 * math.pi)})
        return {
            "tail_path_length_m": float(np.linalg.norm(np.diff(xyz[:, :2], axis=0), axis=1).sum()),
            "final_tail_pose": {"position_m": xyz[-1].tolist(), "yaw_rad": _yaw(P[-1])},
            "phases": phases,
        }

    def plot(self, path):
        from eels_gz.plots import plt

        xyz = np.array(self.poses)[:, :3, 3]
        fig, ax = plt.subplots(figsize=(6, 5), constrained_layout=True)
        ax.plot(xyz[:, 0], xyz[:, 1])
        t = np.array(self.t)
        for b in self.keyframes:
            k = min(int(np.searchsorted(t, b - 1e-9)), len(t) - 1)
            ax.plot(xyz[k, 0], xyz[k, 1], "k.")
            ax.annotate(f"{b:g} s", xyz[k, :2], fontsize=7)
        ax.set_aspect("equal", adjustable="datalim")
        ax.set_xlabel("x [m]")
        ax.set_ylabel("y [m]")
        ax.set_title("surface_traverse: tail path, keyframes marked")
        fig.savefig(Path(path), dpi=100)
        plt.close(fig)


def make_controller(scenario: dict) -> SurfaceTraverse:
    return SurfaceTraverse(scenario)
