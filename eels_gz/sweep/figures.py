"""Figures a campaign spec asks for by name (``figures: [slope_slip]``), drawn into ``DIR/plots/``
beside the generic ones (:mod:`eels_gz.sweep.plots`) from the results rows and the samples' run
folders.

- ``slope_slip``: the layout of seed 004's Figs. 12 and 13 for a slope campaign whose rows hold
  ``setup``, ``slope_deg``, ``wheel_rate`` and ``slip`` (the median over a drive, a fraction):
  ``slope_slip_median.png``, one panel per setup, the median slip (%) against the slope, a line per
  wheel rate (Fig. 12); ``slope_slip_boxes.png``, one panel per setup, box plots of every slip sample
  of the drives at each slope, wheel rates pooled (Fig. 13; the samples from each run's metrics.json
  ``slip_samples``).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from eels_gz.errors import ConfigError


def _slope_rows(rows: list[dict]) -> list[dict]:
    need = ("setup", "slope_deg", "wheel_rate", "slip")
    ok = [r for r in rows if r.get("status") == "ok" and all(r.get(k) is not None for k in need)]
    for r in ok:
        r["_slope"] = round(float(r["slope_deg"]), 3)
    return ok


def _samples_of(out: Path, row: dict) -> list[float]:
    try:
        metrics = json.loads((out / row["run"] / "metrics.json").read_text())
    except (OSError, ValueError, KeyError):
        return []
    return [float(v) for v in metrics.get("slip_samples") or []]


def slope_slip(folder: Path, out: Path, rows: list[dict]) -> list[Path]:
    """Figs. 12-13 of seed 004 from a slope campaign (module docstring)."""
    from eels_gz.plots import plt

    ok = _slope_rows(rows)
    if not ok:
        return []
    setups = sorted({str(r["setup"]) for r in ok})
    rates = sorted({float(r["wheel_rate"]) for r in ok})
    made = []
    fig, axes = plt.subplots(1, len(setups), figsize=(4.5 * len(setups), 3.6), sharey=True, squeeze=False,
                             constrained_layout=True)
    for ax, setup in zip(axes[0], setups):
        for rate in rates:
            at = sorted((r["_slope"], 100 * float(r["slip"])) for r in ok
                        if str(r["setup"]) == setup and float(r["wheel_rate"]) == rate)
            slopes = sorted({a for a, _ in at})
            med = [float(np.median([s for a, s in at if a == x])) for x in slopes]
            ax.plot(slopes, med, "o-", label=f"ω = {rate:g} rad/s")
        ax.set_title(f"Setup {setup}: median slip")
        ax.set_xlabel("slope σ [deg]")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    axes[0][0].set_ylabel("slip s [%]")
    path = folder / "slope_slip_median.png"
    fig.savefig(path, dpi=90)
    plt.close(fig)
    made.append(path)
    fig, axes = plt.subplots(1, len(setups), figsize=(4.5 * len(setups), 3.6), sharey=True, squeeze=False,
                             constrained_layout=True)
    for ax, setup in zip(axes[0], setups):
        slopes = sorted({r["_slope"] for r in ok if str(r["setup"]) == setup})
        data = [100 * np.array([v for r in ok if str(r["setup"]) == setup and r["_slope"] == a
                                for v in _samples_of(out, r)]) for a in slopes]
        keep = [(a, d) for a, d in zip(slopes, data) if d.size]
        if keep:
            ax.boxplot([d for _, d in keep], positions=range(len(keep)), showfliers=False)
            ax.set_xticks(range(len(keep)), [f"{a:g}" for a, _ in keep])
        ax.set_title(f"Setup {setup}: slip, wheel rates pooled")
        ax.set_xlabel("slope σ [deg]")
        ax.grid(alpha=0.3, axis="y")
    axes[0][0].set_ylabel("slip s [%]")
    path = folder / "slope_slip_boxes.png"
    fig.savefig(path, dpi=90)
    plt.close(fig)
    made.append(path)
    return made


FIGURES = {"slope_slip": slope_slip}


def check_figures(names, source: str) -> tuple[str, ...]:
    """The spec's ``figures:`` checked: a list of names of :data:`FIGURES`."""
    if names is None:
        return ()
    if not isinstance(names, list) or not all(isinstance(n, str) and n in FIGURES for n in names):
        raise ConfigError(f"{source}: figures: expected a list of figure names ({', '.join(FIGURES)}), got {names!r}")
    return tuple(names)


def draw(folder: Path, out: Path, names: tuple[str, ...], rows: list[dict]) -> list[Path]:
    """Draw the named figures into ``folder``; a figure that fails is logged, not fatal (the results
    and the other plots are written)."""
    import logging

    made = []
    for name in names:
        try:
            made += FIGURES[name](folder, out, [dict(r) for r in rows])
        except Exception as exc:  # a figure never costs the campaign its results
            logging.getLogger(__name__).warning("figure %s not drawn: %s: %s", name, type(exc).__name__, exc)
    return made
