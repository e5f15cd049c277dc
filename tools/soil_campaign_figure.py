#!/usr/bin/env python3
"""docs/soil.md's figures of the Archimede slope campaign (issue 44), from bench/archimede_slopes.py's JSON.

- ``archimede_slopes_prediction.png``: the prediction in the layout of seed 004's Figs. 12 and 13, with
  what the paper's hardware showed beside it. Top row (Fig. 12): per setup, the median slip against the
  slope, a line per wheel rate. Bottom row (Fig. 13): per setup, box plots of the drives' slips at each
  slope, wheel rates pooled (the boxes are over the draws of the unpublished values, the drive modes and
  the rates). The hardware: Figs. 12-13's values are not in the paper's text (only their captions are), so
  what is drawn of it is what its text states: a median slip around 5 % on flat ground in both setups
  (the grey band, 4-6 %), and, written in each panel, B's lower slips, non-overlapping boxes and
  exponential rise.
- ``archimede_slopes_cross.png``: the 2x2 cross (each wheel on each soil) and both setups with the
  grouser terms off: the median slip against the slope, driving straight.

    python tools/soil_campaign_figure.py results/bench/archimede_slopes.json [--out docs/images]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

HARDWARE = {"A": "hardware (seed 004 §4.2, text): ~5 % flat;\nslip rises exponentially; above B's at\nevery "
                 "slope, boxes not overlapping",
            "B": "hardware (seed 004 §4.2, text): ~5 % flat;\nlower gradient and lower slips than A;\nwidest "
                 "spread at 20 deg"}


def prediction(values: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    setups = values["setups"]
    fig, axes = plt.subplots(2, 2, figsize=(9.5, 7.2), sharey="row", constrained_layout=True)
    top = 5.0 + max(100 * max(max(d) for d in v["slips"]) for k, v in setups.items() if k in "AB")
    for col, name in enumerate("AB"):
        s = setups[name]
        ax = axes[0][col]
        for rate, med in sorted(s["median_by_rate"].items()):
            ax.plot(s["slopes"], [100 * m for m in med], "o-", label=f"prediction, ω = {rate} rad/s")
        ax.axhspan(4.0, 6.0, xmin=0.0, xmax=0.06, color="0.6", alpha=0.6, label="hardware: ~5 % flat")
        ax.set_title(f"Setup {name}: median slip (Fig. 12 layout)")
        ax.text(0.02, 0.97, HARDWARE[name], transform=ax.transAxes, va="top", fontsize=7, color="0.3")
        ax.legend(fontsize=7, loc="center left")
        ax.set_xlabel("slope σ [deg]")
        ax.set_ylim(0, top)
        ax.grid(alpha=0.3)
        ax = axes[1][col]
        ax.boxplot([[100 * x for x in d] for d in s["slips"]], positions=range(len(s["slopes"])), showfliers=True)
        ax.set_xticks(range(len(s["slopes"])), [f"{a:g}" for a in s["slopes"]])
        ax.set_title(f"Setup {name}: each drive's slip (Fig. 13 layout)")
        ax.set_xlabel("slope σ [deg]")
        ax.set_ylim(0, top)
        ax.grid(alpha=0.3, axis="y")
    for row in axes:
        row[0].set_ylabel("slip s [%]")
    fig.savefig(path, dpi=90)
    plt.close(fig)


def cross(values: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    setups = values["setups"]
    fig, axes = plt.subplots(1, 2, figsize=(9.5, 3.8), sharey=True, constrained_layout=True)
    for name, s in sorted(setups.items()):
        med = [100 * m for m in (s["median_by_mode"].get("straight") or s["median"])]
        if s["grousers"] == "on":
            style = "o-" if s["wheel"] == s["soil"] else "s--"
            axes[0].plot(s["slopes"], med, style, label=f"wheel {s['wheel']}, soil {s['soil']}")
        if s["wheel"] == s["soil"]:
            style = "o-" if s["grousers"] == "on" else "x:"
            axes[1].plot(s["slopes"], med, style, label=f"setup {s['wheel']}, grouser terms {s['grousers']}")
    axes[0].set_title("2x2 cross: median slip, driving straight")
    axes[1].set_title("grouser terms on and off: median slip, driving straight")
    for ax in axes:
        ax.set_xlabel("slope σ [deg]")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    axes[0].set_ylabel("slip s [%]")
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("json", help="bench/archimede_slopes.py's output")
    parser.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "docs" / "images"))
    args = parser.parse_args()
    values = json.loads(Path(args.json).read_text())
    out = Path(args.out)
    prediction(values, out / "archimede_slopes_prediction.png")
    cross(values, out / "archimede_slopes_cross.png")


if __name__ == "__main__":
    main()
