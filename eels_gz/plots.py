"""Figures written by the CLI (matplotlib, headless).

A run's trajectory plot is drawn on a bare Agg figure, without pyplot (whose import and figure
manager cost a short run 0.3 s) and with a fixed layout (the constrained layout's solver took
another 0.1-0.3 s); ``plt`` (pyplot on Agg) is imported on first use for the other figures.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402


def __getattr__(name: str):
    if name == "plt":  # pyplot, imported when a figure needs it (module __getattr__, PEP 562)
        import matplotlib.pyplot as plt

        globals()["plt"] = plt
        return plt
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def agg_figure(figsize: tuple[float, float]):
    """A bare matplotlib Figure on an Agg canvas (no pyplot), to draw on and ``savefig``."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize)
    FigureCanvasAgg(fig)
    return fig


def trajectory(path: str | Path, t: np.ndarray, xyz: np.ndarray, yaw: np.ndarray, title: str) -> None:
    """Top view of the base path plus x, y, z and yaw against time."""
    fig = agg_figure((11, 5))
    grid = fig.add_gridspec(3, 2, width_ratios=(1.1, 1), left=0.07, right=0.98, bottom=0.1, top=0.9,
                            wspace=0.22, hspace=0.3)
    ax = fig.add_subplot(grid[:, 0])
    ax.plot(xyz[:, 0], xyz[:, 1], lw=1.5)
    ax.plot(xyz[:1, 0], xyz[:1, 1], "go", label="start")
    ax.plot(xyz[-1:, 0], xyz[-1:, 1], "rs", label="end")
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.set_aspect("equal", adjustable="datalim")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best")
    ax.set_title("base_link path (top view)")
    for row, (series, label) in enumerate(((xyz[:, :2], "x, y [m]"), (xyz[:, 2:], "z [m]"), (yaw[:, None], "yaw [rad]"))):
        a = fig.add_subplot(grid[row, 1])
        a.plot(t, series)
        a.set_ylabel(label)
        a.grid(True, alpha=0.3)
        if row == 0:
            a.legend(["x", "y"], loc="best")
        if row == 2:
            a.set_xlabel("simulated time [s]")
    fig.suptitle(title)
    fig.savefig(path, dpi=110)


def comparison(path: str | Path, t: np.ndarray, poses: dict[str, np.ndarray], title: str) -> None:
    """EELS-DARTS Fig. 14 layout: tail x, y and yaw against time for each
    model (left) and the difference of the second minus the first (right)."""
    plt = __getattr__("plt")
    (name_a, a), (name_b, b) = list(poses.items())[:2]
    fig, axes = plt.subplots(3, 2, figsize=(11, 7), sharex=True, constrained_layout=True)
    labels = ("x [m]", "y [m]", "yaw [rad]")
    for row, label in enumerate(labels):
        left, right = axes[row]
        left.plot(t, a[:, row], "--", lw=1.4, label=name_a)
        left.plot(t, b[:, row], lw=1.4, label=name_b)
        left.set_ylabel(label)
        right.plot(t, b[:, row] - a[:, row], color="tab:red", lw=1.2)
        right.axhline(0.0, color="k", lw=0.6)
        right.set_ylabel(f"{name_b} - {name_a}, {label}")
        for ax in (left, right):
            ax.grid(True, alpha=0.3)
    axes[0, 0].legend(loc="best")
    axes[0, 0].set_title("tail pose")
    axes[0, 1].set_title("difference")
    for ax in axes[2]:
        ax.set_xlabel("simulated time [s]")
    fig.suptitle(title)
    fig.savefig(path, dpi=110)
    plt.close(fig)
