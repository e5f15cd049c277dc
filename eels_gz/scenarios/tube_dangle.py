"""``tube_dangle``: EELS 1.5 hanging from tethers inside ``tube`` (pure; the systems are
plugins_py/tethers.py, which carries the robot on the scenario's ``tethers:``, and
plugins_py/tube_dangle.py, which watches).

Placement (:func:`place`): the robot straight and level (tail frame = world frame turned to the tether
line) with the first tether's attachment point straight below its anchor at the tether's rest length,
every bend and twist joint at 0 (held there by the scenario's set points). Each step the system
records the tethers' forces (the tethers system's, at the state after the step), the base pose and,
every ``CLEARANCE_EVERY`` steps, the robot's clearance to the ice: the smallest signed distance (m) of
the terrain field over the surface points of every collision cylinder facing the ice
(:func:`~eels_gz.snake.settling.sample_points`).

Metrics (:func:`dangle_metrics`), averaged after ``settle_time`` (s): total tether force (N, world),
the robot's weight m g from the model's masses, their ratio, each tether's tension, the smallest
clearance (negative: penetration) and the final base pose.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from eels_gz.errors import ConfigError
from eels_gz.scenarios import Placement, PlacementContext
from eels_gz.snake.chain import SnakeChain
from eels_gz.snake.tethers import TETHER_LOAD_METRICS, parse_tethers, tether_load_metrics

SAMPLES_PER_LINK = 3  # clearance stations along each collision cylinder
CLEARANCE_EVERY = 10  # steps between clearance samples

METRICS = (*TETHER_LOAD_METRICS, "min_clearance_m", "min_clearance_settled_m", "final_base_position",
           "final_base_x_axis")


def place(ctx: PlacementContext) -> Placement:
    """Straight and level along x, the first tether's point at its rest length below its anchor."""
    where = "tube_dangle"
    if not ctx.scenario.get("tethers"):
        raise ConfigError(f"{where}: the scenario needs 'tethers:' to hang the robot from")
    first = parse_tethers(ctx.scenario["tethers"], where)[0]
    if first.anchor is None:
        raise ConfigError(f"{where}: the first tether needs an explicit anchor: the robot is hung below it")
    chain = SnakeChain.from_model(ctx.model)
    angles = {n: 0.0 for n in chain.bend_joints() + chain.twist_joints()}
    poses = chain.link_poses(angles, np.eye(4))
    if first.link not in poses:
        raise ConfigError(f"{where}: tether link '{first.link}' is not a link of the robot")
    p_link = poses[first.link] @ np.r_[first.point, 1.0]
    pose = np.eye(4)
    pose[:3, 3] = np.array(first.anchor) - np.array([0.0, 0.0, first.length]) - p_link[:3]
    return Placement(pose, angles, report={"anchor": list(first.anchor), "length_m": first.length})


def dangle_metrics(t, forces, clear_t, clearance, settle_time: float, mass: float, g, final_pose,
                   n_tethers: int) -> dict:
    """The metrics (module docstring) from the step times ``t`` (s after the run's start), the tethers'
    forces ``forces`` (per step, (n_tethers, 3) N), the clearance samples ``clearance`` (m) at
    ``clear_t``, the robot's ``mass`` (kg), gravity ``g`` (3,) and the final base pose (4x4)."""
    ct = np.array(clear_t)
    clear = np.array(clearance) if len(clearance) else np.array([np.nan])
    return {
        **tether_load_metrics(t, forces, settle_time, mass, g, n_tethers),
        "min_clearance_m": float(np.nanmin(clear)),
        "min_clearance_settled_m": float(np.nanmin(clear[ct >= settle_time])) if (ct >= settle_time).any() else None,
        "final_base_position": final_pose[:3, 3].tolist(),
        "final_base_x_axis": final_pose[:3, 0].tolist(),
    }


def plot_dangle(path, t, forces, clear_t, clearance, labels: list[str], weight: float) -> None:
    """Tether forces (each, their sum, m g) and the clearance to the ice over time, to ``path`` (PNG)."""
    from eels_gz.plots import plt

    f = np.array(forces)
    fig, (a, b) = plt.subplots(2, 1, figsize=(7, 5), sharex=True, constrained_layout=True)
    for k, label in enumerate(labels):
        a.plot(t, np.linalg.norm(f[:, k], axis=1), label=label)
    a.plot(t, np.linalg.norm(f.sum(axis=1), axis=1), "k", label="sum")
    a.axhline(weight, color="r", ls="--", label="m g")
    a.set_ylabel("tether force [N]")
    a.legend(loc="best")
    b.plot(clear_t, np.array(clearance) * 1e3)
    b.set_ylabel("clearance to ice [mm]")
    b.set_xlabel("time [s]")
    fig.suptitle("tube_dangle")
    fig.savefig(Path(path), dpi=100)
    plt.close(fig)
