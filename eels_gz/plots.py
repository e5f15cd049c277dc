"""Figures written by the CLI (matplotlib, headless).

A run's trajectory plot is drawn with Pillow (eels_gz.plotpng, re-exported here as
``trajectory``): matplotlib's import and drawing took about half a second of a short run.
``plt`` (pyplot on Agg) is imported on first use for the other figures.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402

from eels_gz.plotpng import trajectory  # noqa: E402,F401  (the run's plot, without matplotlib)


def __getattr__(name: str):
    if name == "plt":  # pyplot, imported when a figure needs it (module __getattr__, PEP 562)
        import matplotlib.pyplot as plt

        globals()["plt"] = plt
        return plt
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
