"""A campaign's plots (``DIR/plots/``): ``hist_<metric>.png`` (each numeric metric over the samples
with status ok), ``scatter_<metric>__<input>.png`` (each numeric metric against each dispersed
input: a scatter for a numeric input, the values per category for a named one) and
``failure_rate.png`` (the share of each status, and the share of samples not ok against each input)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from eels_gz.sweep.results import FIXED_HEAD, FIXED_TAIL, MAX_BINS, numeric, safe_name
from eels_gz.sweep.spec import SweepSpec


def plot_all(folder: Path, spec: SweepSpec, rows: list[dict], cols: list[str]) -> list[Path]:
    from eels_gz.plots import plt

    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.png"):  # a resumed campaign draws them all again
        old.unlink()
    ok = [r for r in rows if r.get("status") == "ok"]
    metric_cols = [c for c in cols if c not in (*FIXED_HEAD, *FIXED_TAIL, "status", "message", *spec.keys)]
    made = []
    for c in metric_cols:
        y = numeric([r.get(c) for r in ok])
        if y is None or not np.isfinite(y).any():
            continue
        fig, ax = plt.subplots(figsize=(5, 3.5), constrained_layout=True)
        ax.hist(y[np.isfinite(y)], bins="auto", color="tab:blue", edgecolor="white")
        ax.set_xlabel(c)
        ax.set_ylabel("samples")
        ax.set_title(f"{c}: {np.isfinite(y).sum()} samples ok of {len(rows)}", fontsize=9)
        made.append(_save(fig, folder / f"hist_{safe_name(c)}.png", plt))
        for k in spec.keys:
            made.append(_scatter(folder, plt, ok, c, k, len(rows)))
    made.append(_failure_rate(folder, plt, spec, rows))
    return [p for p in made if p is not None]


def _save(fig, path: Path, plt) -> Path:
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def _scatter(folder: Path, plt, ok: list[dict], metric: str, key: str, total: int) -> Path | None:
    y = numeric([r.get(metric) for r in ok])
    raw = [r.get(key) for r in ok]
    x = numeric(raw)
    fig, ax = plt.subplots(figsize=(5, 3.5), constrained_layout=True)
    if x is not None:
        ax.plot(x, y, ".", alpha=0.7)
    else:  # named values: one column of points per value
        labels = sorted({str(v) for v in raw})
        pos = {name: i for i, name in enumerate(labels)}
        jitter = np.random.default_rng(0).uniform(-0.15, 0.15, len(raw))
        ax.plot([pos[str(v)] + j for v, j in zip(raw, jitter)], y, ".", alpha=0.7)
        ax.set_xticks(range(len(labels)), labels, rotation=20)
    ax.set_xlabel(key)
    ax.set_ylabel(metric)
    ax.set_title(f"{metric} against {key} ({len(ok)} samples ok of {total})", fontsize=9)
    return _save(fig, folder / f"scatter_{safe_name(metric)}__{safe_name(key)}.png", plt)


def _failure_rate(folder: Path, plt, spec: SweepSpec, rows: list[dict]) -> Path:
    keys = list(spec.keys)
    fig, axes = plt.subplots(1, 1 + len(keys), figsize=(4 + 3.2 * len(keys), 3.5), constrained_layout=True,
                             squeeze=False)
    ax = axes[0, 0]
    statuses = sorted({r["status"] for r in rows}, key=lambda s: (s != "ok", s))
    shares = [sum(r["status"] == s for r in rows) / max(1, len(rows)) for s in statuses]
    colors = ["tab:green" if s == "ok" else "tab:red" for s in statuses]
    ax.bar(range(len(statuses)), shares, color=colors)
    ax.set_xticks(range(len(statuses)), statuses, rotation=20)
    ax.set_ylim(0, 1)
    ax.set_ylabel("share of samples")
    failed = sum(r["status"] != "ok" for r in rows)
    ax.set_title(f"status: {failed} of {len(rows)} not ok", fontsize=9)
    bad = np.array([r["status"] != "ok" for r in rows], dtype=float)
    for ax, key in zip(axes[0, 1:], keys):
        raw = [r.get(key) for r in rows]
        x = numeric(raw)
        if x is not None and np.unique(x[np.isfinite(x)]).size > MAX_BINS:
            edges = np.linspace(np.nanmin(x), np.nanmax(x), MAX_BINS + 1)
            idx = np.clip(np.digitize(x, edges) - 1, 0, MAX_BINS - 1)
            centres = 0.5 * (edges[:-1] + edges[1:])
            rate = [bad[idx == i].mean() if (idx == i).any() else np.nan for i in range(MAX_BINS)]
            ax.bar(centres, rate, width=0.9 * (edges[1] - edges[0]), color="tab:red")
            ax.plot(centres, rate, "k.")  # a bin with no failure shows as a point on 0
        else:
            labels = sorted({str(v) for v in raw})
            if x is not None:
                labels = [str(v) for v in sorted({v for v in raw if v is not None})]
            rate = [bad[[str(v) == name for v in raw]].mean() for name in labels]
            ax.bar(range(len(labels)), rate, color="tab:red")
            ax.plot(range(len(labels)), rate, "k.")
            ax.set_xticks(range(len(labels)), labels, rotation=20)
        ax.set_ylim(0, 1)
        ax.set_xlabel(key)
        ax.set_ylabel("share not ok")
    fig.suptitle("failure rate", fontsize=10)
    return _save(fig, folder / "failure_rate.png", plt)
