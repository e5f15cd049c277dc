"""``sidewind``: the serpenoid sidewinding gait (NEO Eq. 1, β = 0, δ = π/4,
adjacent twist joints π/2 apart; :class:`~eels_gz.snake.serpenoid.SerpenoidGait`
with config/snake.yaml ``serpenoid``) with the screws held still. Pure: the
system is plugins_py/sidewind.py.

Placement (``placement: sidewind``, :func:`place`): the robot starts straight
where it was spawned, its bend and twist joints at the gait's angles of
``t = 0`` (the twist joints at their alternating offsets). The system then
commands Eq. 1 from ``t = 0`` of the run every step, position set points with
their rates as feed-forward, for ``duration`` s; every screw is held at
0 rad/s. The first ``warmup`` s (one gait period by default) are left out of
the speed, so that the average is over steady cycles.

Metrics (:func:`sidewind_metrics`): the displacement of the robot's centroid
(mean of the module points, sampled every ``sample_period`` s) over the
measured window, the average speed (m/s) and its direction in the world and
relative to the body axis (the direction of the principal axis of the module
points at the window's start, rad: sidewinding moves roughly perpendicular to
it), the path length of the centroid, and the world (``ice_plane`` or
``mars_dem`` through ``--world``).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from eels_gz.errors import ConfigError
from eels_gz.scenarios import Placement, PlacementContext, param
from eels_gz.snake.chain import SnakeChain
from eels_gz.snake.params import load_snake_params
from eels_gz.snake.serpenoid import SerpenoidGait

METRICS = ("duration_s", "gait", "window_s", "displacement_m", "average_speed_m_s", "heading_rad",
           "direction_from_body_axis_rad", "centroid_path_m", "world")


def gait_for(chain: SnakeChain, where: str = "sidewind") -> SerpenoidGait:
    """The gait of config/snake.yaml ``serpenoid`` on ``chain``; ConfigError without twist joints."""
    if not chain.twist_joints():
        raise ConfigError(f"{where}: sidewinding needs twist joints to set adjacent bend axes pi/2 apart")
    return SerpenoidGait(load_snake_params().serpenoid, chain)


def check_params(params: dict[str, float], where: str = "sidewind") -> tuple[float, float]:
    """``(warmup, sample_period)`` (s) of the scenario's params, checked."""
    warmup, sample_period = param(params, "warmup", where), param(params, "sample_period", where)
    if warmup < 0 or not sample_period > 0:
        raise ConfigError(f"{where}: warmup must be >= 0 and sample_period > 0, got {params}")
    return warmup, sample_period


def place(ctx: PlacementContext) -> Placement:
    """The robot where it was spawned, its bend and twist joints at the gait's angles of ``t = 0``."""
    check_params(ctx.params)
    gait = gait_for(SnakeChain.from_model(ctx.model))
    if ctx.base_pose is None:
        raise ConfigError("sidewind: the placement needs the robot's spawn pose")
    return Placement(np.asarray(ctx.base_pose, float), gait.setpoints(0.0),
                     report={"gait_time_s": 0.0})


def body_axis(points: np.ndarray) -> np.ndarray:
    """Unit horizontal principal axis of module points (n, 3), pointing tail to head."""
    xy = points[:, :2] - points[:, :2].mean(axis=0)
    _, _, vt = np.linalg.svd(xy, full_matrices=False)
    a = vt[0]
    if a @ (xy[-1] - xy[0]) < 0:
        a = -a
    return np.array([a[0], a[1], 0.0])


def window(t, warmup: float) -> tuple[int, int]:
    """Indices of the first sample at or after ``warmup`` (s) and of the last sample."""
    t = np.asarray(t, float)
    first = int(np.searchsorted(t, warmup - 1e-9))
    return min(first, len(t) - 1), len(t) - 1


def sidewind_metrics(t, centroid, traces, gait: SerpenoidGait, warmup: float, world: str) -> dict:
    """The metrics of samples at times ``t`` (s from the gait's start) of the centroid (N, 3) and the
    module points ``traces`` (N, n, 3), m."""
    if len(t) < 2:
        return {"duration_s": 0.0}
    i, j = window(t, warmup)
    c = np.asarray(centroid, float)
    d = c[j] - c[i]
    span = t[j] - t[i]
    axis = body_axis(np.asarray(traces[i], float))
    heading = math.atan2(d[1], d[0])
    relative = math.atan2(axis[0] * d[1] - axis[1] * d[0], axis @ d)
    path = float(np.linalg.norm(np.diff(c[i:j + 1, :2], axis=0), axis=1).sum())
    return {
        "gait": {"omega_t_rad_s": gait.params.omega_t, "omega_s_rad": gait.params.omega_s,
                 "amplitude_rad": gait.params.amplitude_even, "delta_rad": gait.params.delta},
        "window_s": [t[i], t[j]],
        "displacement_m": d.tolist(),
        "average_speed_m_s": float(np.linalg.norm(d[:2]) / span) if span > 0 else None,
        "heading_rad": heading,
        "direction_from_body_axis_rad": relative,
        "centroid_path_m": path,
        "world": world,
    }


def plot(path: str | Path, centroid, traces) -> None:
    """Module points (grey, every 1/12 of the run), the centroid and the final shape, to ``path`` (PNG)."""
    from eels_gz.plots import plt

    fig, ax = plt.subplots(figsize=(7, 6), constrained_layout=True)
    if len(traces):
        tr = np.asarray(traces, float)
        c = np.asarray(centroid, float)
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
