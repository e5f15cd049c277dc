"""``sidewind``: the serpenoid sidewinding gait (NEO Eq. 1, β = 0, δ = π/4,
adjacent twist joints π/2 apart; :class:`~eels_gz.snake.serpenoid.SerpenoidGait`
with config/snake.yaml ``serpenoid``) with the screws held still.

Setup: the robot starts straight where it lies; the twist joints are set to
the gait's alternating offsets at once (placement) and the bend joints
follow Eq. 1 from ``t = 0`` of the gait, position set points with their
rates as feed-forward, for ``duration`` s. Every screw is held at 0 rad/s.
The first ``warmup`` s (one gait period by default) are left out of the
speed, so that the average is over steady cycles.

Metrics: the displacement of the robot's centroid (mean of the module
points) over the measured window, the average speed (m/s) and its direction
in the world and relative to the body axis (the direction of the principal
axis of the module points at the window's start, rad: sidewinding moves
roughly perpendicular to it), the path length of the centroid, and the
world (``ice_plane`` or ``mars_dem`` through ``--world``).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from eels_gz.errors import ConfigError
from eels_gz.scenarios import ScenarioController, param
from eels_gz.scenarios.snake_host import SnakeHost
from eels_gz.snake.params import load_snake_params
from eels_gz.snake.serpenoid import SerpenoidGait


def body_axis(points: np.ndarray) -> np.ndarray:
    """Unit horizontal principal axis of module points (n, 3), pointing tail to head."""
    xy = points[:, :2] - points[:, :2].mean(axis=0)
    _, _, vt = np.linalg.svd(xy, full_matrices=False)
    a = vt[0]
    if a @ (xy[-1] - xy[0]) < 0:
        a = -a
    return np.array([a[0], a[1], 0.0])


class Sidewind(ScenarioController):
    METRICS = ("duration_s", "gait", "window_s", "displacement_m", "average_speed_m_s", "heading_rad",
               "direction_from_body_axis_rad", "centroid_path_m", "world")
    def __init__(self, scenario: dict):
        self.scenario = scenario
        self.t: list[float] = []
        self.centroid: list[np.ndarray] = []
        self.traces: list[np.ndarray] = []
        self.start_points: np.ndarray | None = None

    def setup(self, sim, params):
        where = "sidewind"
        self.warmup = param(params, "warmup", where)
        self.sample_period = param(params, "sample_period", where)
        if self.warmup < 0 or not self.sample_period > 0:
            raise ConfigError(f"{where}: warmup must be >= 0 and sample_period > 0, got {params}")
        self.snake = SnakeHost(sim, where)
        if not self.snake.chain.twist_joints():
            raise ConfigError(f"{where}: sidewinding needs twist joints to set adjacent bend axes pi/2 apart")
        self.gait = SerpenoidGait(load_snake_params().serpenoid, self.snake.chain)
        self.t0 = sim.time
        self.snake.place(self.snake.base_pose(), self.gait.setpoints(0.0))
        self.next_sample = sim.time
        self.world = sim.spec.name

    def pre_step(self, sim):
        t = sim.time - self.t0
        screws = {j: 0.0 for j in self.snake.screw_actuators}
        self.snake.command(positions=self.gait.setpoints(t), velocities={**self.gait.rates(t), **screws})

    def post_step(self, sim):
        if sim.time + 1e-12 < self.next_sample:
            return None
        self.next_sample = sim.time + self.sample_period
        points = self.snake.module_points()
        self.t.append(sim.time - self.t0)
        self.centroid.append(points.mean(axis=0))
        self.traces.append(points)
        return None

    def window(self) -> tuple[int, int]:
        t = np.array(self.t)
        first = int(np.searchsorted(t, self.warmup - 1e-9))
        return min(first, len(t) - 1), len(t) - 1

    def metrics(self):
        if len(self.t) < 2:
            return {"duration_s": 0.0}
        i, j = self.window()
        c = np.array(self.centroid)
        d = c[j] - c[i]
        span = self.t[j] - self.t[i]
        axis = body_axis(self.traces[i])
        heading = math.atan2(d[1], d[0])
        relative = math.atan2(axis[0] * d[1] - axis[1] * d[0], axis @ d)
        path = float(np.linalg.norm(np.diff(c[i:j + 1, :2], axis=0), axis=1).sum())
        return {
            "gait": {"omega_t_rad_s": self.gait.params.omega_t, "omega_s_rad": self.gait.params.omega_s,
                     "amplitude_rad": self.gait.params.amplitude_even, "delta_rad": self.gait.params.delta},
            "window_s": [self.t[i], self.t[j]],
            "displacement_m": d.tolist(),
            "average_speed_m_s": float(np.linalg.norm(d[:2]) / span) if span > 0 else None,
            "heading_rad": heading,
            "direction_from_body_axis_rad": relative,
            "centroid_path_m": path,
            "world": self.world,
        }

    def plot(self, path):
        from eels_gz.plots import plt

        fig, ax = plt.subplots(figsize=(7, 6), constrained_layout=True)
        if self.traces:
            tr = np.array(self.traces)
            c = np.array(self.centroid)
            for k in range(0, len(tr), max(1, len(tr) // 12)):
                ax.plot(tr[k, :, 0], tr[k, :, 1], "-", color="0.7", lw=0.8)
            ax.plot(c[:, 0], c[:, 1], "b-", lw=1.5, label="centroid")
            ax.plot(tr[-1, :, 0], tr[-1, :, 1], "r.-", label="final shape")
            ax.legend(loc="best")
        ax.set_aspect("equal", adjustable="datalim")
        ax.set_xlabel("x [m]")
        ax.set_ylabel("y [m]")
        ax.set_title("sidewind: module points (grey, every 1/12 of the run) and centroid")
        fig.savefig(Path(path), dpi=100)
        plt.close(fig)


def make_controller(scenario: dict) -> Sidewind:
    return Sidewind(scenario)
