"""``surface_traverse`` metrics (pure; the system is plugins_py/surface_traverse.py, which only
watches: the joint set points stay those of config/scenarios/surface_traverse.yaml, which ``eels-gz
compare`` runs under both contact models and depends on). It adds the tail's path length, its final
pose, and its displacement in each phase between the scenario's keyframes (m, rad)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

METRICS = ("tail_path_length_m", "final_tail_pose", "phases")


def _yaw(T: np.ndarray) -> float:
    return math.atan2(T[1, 0], T[0, 0])


def traverse_metrics(t, poses, keyframes) -> dict:
    """The metrics of a run whose tail (base link) was at world poses ``poses`` (N, 4, 4) at times ``t``
    (N,) s from the run's start, phases bounded by the keyframe times ``keyframes`` (s, sorted)."""
    t = np.asarray(t, float)
    P = np.asarray(poses, float)
    xyz = P[:, :3, 3]
    bounds = [b for b in keyframes if b < t[-1]] + [float(t[-1])]
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


def plot(path: str | Path, t, xyz, keyframes) -> None:
    """The tail's path (``xyz`` (N, 3) m at times ``t`` s), the keyframes marked, to ``path`` (PNG)."""
    from eels_gz.plots import plt

    xyz = np.asarray(xyz, float)
    fig, ax = plt.subplots(figsize=(6, 5), constrained_layout=True)
    ax.plot(xyz[:, 0], xyz[:, 1])
    t = np.asarray(t, float)
    for b in keyframes:
        k = min(int(np.searchsorted(t, b - 1e-9)), len(t) - 1)
        ax.plot(xyz[k, 0], xyz[k, 1], "k.")
        ax.annotate(f"{b:g} s", xyz[k, :2], fontsize=7)
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.set_title("surface_traverse: tail path, keyframes marked")
    fig.savefig(Path(path), dpi=100)
    plt.close(fig)
