"""A campaign's results: ``results.parquet`` and ``results.csv`` (one row per sample: ``sample``,
``case``, ``seed``, the drawn inputs, ``status``, ``message``, the metrics, ``run`` and
``wall_time``), ``summary.md`` and the plots in ``plots/``: a histogram of each metric, a scatter of
each metric against each dispersed input, and the failure rate (the share of each status, and the
share of samples not ``ok`` against each input).

A metric whose value is a list or a mapping gives a column per item (``final_base_pose.position.0``,
``.1``, ``.2``). A value that is neither a number, a string nor a boolean (a list drawn by a
dispersion, e.g. a pose) is stored as its JSON text. Statistics and plots take the samples whose
status is ``ok``.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np

from eels_gz.sweep.spec import SweepSpec

FIXED_HEAD = ("sample", "case", "seed")
FIXED_TAIL = ("run", "wall_time")
MAX_BINS = 8  # bins of a numeric input in the failure-rate plot
LISTED_FAILURES = 20  # failed samples listed in summary.md


def columns(spec: SweepSpec, rows: list[dict]) -> list[str]:
    """Column order: sample, case, seed, inputs (spec order), status, message, metrics (spec order,
    expanded), run, wall_time. A metric column that stayed None while its expansion exists is dropped."""
    seen: list[str] = []
    for row in rows:
        seen += [k for k in row if k not in seen]
    inputs = list(spec.keys)
    fixed = set(FIXED_HEAD) | set(FIXED_TAIL) | set(inputs) | {"status", "message"}
    metric_cols = []
    for metric in spec.metrics:
        mine = [c for c in seen if c not in fixed and (c == metric or c.startswith(metric + "."))]
        if metric in mine and len(mine) > 1 and all(r.get(metric) is None for r in rows):
            mine.remove(metric)
        metric_cols += [c for c in mine if c not in metric_cols]
    return [*FIXED_HEAD, *inputs, "status", "message", *metric_cols, *FIXED_TAIL]


def _cell(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return json.dumps(value)


def table(spec: SweepSpec, rows: list[dict]):
    """The results as a pyarrow Table (module docstring)."""
    import pyarrow as pa

    data = {}
    for name in columns(spec, rows):
        values = [_cell(r.get(name)) for r in rows]
        kinds = {type(v) for v in values if v is not None}
        if str in kinds and len(kinds) > 1:  # a column that mixes names and numbers: all text
            values = [None if v is None else str(v) for v in values]
        elif kinds == {int, float} or (float in kinds and bool not in kinds):
            values = [None if v is None else float(v) for v in values]
        data[name] = pa.array(values) if values else pa.array([], pa.null())
    return pa.table(data)


def numeric(values: list) -> np.ndarray | None:
    """The values as floats (None -> NaN), or None when they are not numbers."""
    if not values or any(isinstance(v, (str, bool)) for v in values if v is not None):
        return None
    if all(v is None for v in values):
        return None
    return np.array([np.nan if v is None else float(v) for v in values])


def _fmt(v: float) -> str:
    if v is None or not math.isfinite(v):
        return "n/a"
    return f"{v:.4g}"


def _overhead_lines(o: dict | None) -> list[str]:
    """What a sample cost beyond its run (sweep.json's ``overhead``, eels_gz.sweep.execute.overhead)."""
    if not o:
        return []
    text = (f"Per-sample overhead over the {o['samples']} samples run now (a run {o['run_s']:.3f} s on average): "
            f"{o['in_worker_s']:.3f} s in its worker (its process forked, ended and its row read)")
    if o.get("between_s") is not None:
        text += f"; its worker waited {o['between_s']:.3f} s for it after its previous sample (Ray's round trip)"
    if o.get("per_sample_s") is not None:
        text += (f"; {o['per_sample_s']:.3f} s in all (the campaign's wall time from the first dispatch to the "
                 f"last row, times the {o['at_once']} samples run at once, per sample, less the run: Ray's "
                 "scheduling and the workers' warm-up included)")
    node = o.get("node_server")
    if node and node.get("samples"):
        text += f". {node['samples']} of the samples were forked from this node's warm process"
        if node.get("warm_up_s") is not None:
            text += f" (warmed in {node['warm_up_s']:.2f} s while Ray started"
            ready = node.get("ready_after_dispatch_s")
            if ready is not None:
                text += (f", ready {-ready:.2f} s before the first dispatch" if ready <= 0
                         else f", ready {ready:.2f} s after the first dispatch")
            text += ")"
    if o.get("warm_up_s"):
        each = ", ".join(f"{w:.2f}" for w in o["warm_up_s"])
        text += f". Workers that warmed themselves did so once each in {each} s"
    return [text + ".", ""]


def summary_markdown(spec: SweepSpec, rows: list[dict], state: dict, files: dict) -> str:
    cols = columns(spec, rows)
    ok = [r for r in rows if r.get("status") == "ok"]
    lines = [f"# Campaign `{Path(spec.source).name}`", "",
             f"Command `{spec.command}`, seed {spec.seed}: {state.get('samples_done', len(rows))} of "
             f"{state.get('samples_planned', len(rows))} samples done, status **{state.get('status')}**"
             + (f", {state['wall_time']:.1f} s" if state.get("wall_time") is not None else "") + ".", ""]
    lines += _overhead_lines(state.get("overhead"))
    lines += ["| status | samples | share |", "|---|---:|---:|"]
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    for status, n in sorted(counts.items(), key=lambda kv: (kv[0] != "ok", kv[0])):
        lines.append(f"| {status} | {n} | {100 * n / max(1, len(rows)):.1f} % |")
    lines += ["", "Dispersed: " + (", ".join(f"`{d.key}` {d.kind} {list(d.values)}"
                                             for ds in spec.case_dispersions() for d in ds) or "nothing") + ".", ""]
    metric_cols = [c for c in cols if c not in (*FIXED_HEAD, *FIXED_TAIL, "status", "message", *spec.keys)]
    if metric_cols:
        lines += [f"Metrics over the {len(ok)} samples with status ok:", "",
                  "| metric | n | mean | std | min | 5 % | median | 95 % | max |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for c in metric_cols:
            x = numeric([r.get(c) for r in ok])
            if x is None or not np.isfinite(x).any():
                lines.append(f"| `{c}` | 0 | " + " | ".join(["n/a"] * 7) + " |")
                continue
            x = x[np.isfinite(x)]
            q = np.percentile(x, [5, 50, 95])
            lines.append(f"| `{c}` | {x.size} | {_fmt(x.mean())} | {_fmt(x.std(ddof=1) if x.size > 1 else 0.0)} | "
                         f"{_fmt(x.min())} | {_fmt(q[0])} | {_fmt(q[1])} | {_fmt(q[2])} | {_fmt(x.max())} |")
        sens = _sensitivity(spec, ok, metric_cols)
        if sens:
            lines += ["", "Spearman rank correlation of each metric with each numeric input (ok samples):", "",
                      "| metric | " + " | ".join(f"`{k}`" for k in sens[0][1]) + " |",
                      "|---|" + "---:|" * len(sens[0][1])]
            lines += [f"| `{c}` | " + " | ".join(_fmt(v) for v in vals.values()) + " |" for c, vals in sens]
    failed = [r for r in rows if r.get("status") != "ok"]
    if failed:
        lines += ["", f"Samples not ok ({len(failed)}):", ""]
        for r in failed[:LISTED_FAILURES]:
            inputs = ", ".join(f"{k} = {r.get(k)!r}" for k in spec.keys)
            lines.append(f"- {r['sample']} ({inputs}): **{r['status']}**: {r.get('message') or ''} (`{r['run']}`)")
        if len(failed) > LISTED_FAILURES:
            lines.append(f"- ... and {len(failed) - LISTED_FAILURES} more (results.csv)")
    lines += ["", "Files: `results.parquet`, `results.csv`; plots:", ""]
    lines += [f"- [{p}]({p})" for p in files.get("plots", [])]
    return "\n".join(lines) + "\n"


def _sensitivity(spec: SweepSpec, ok: list[dict], metric_cols: list[str]) -> list[tuple[str, dict]]:
    from scipy.stats import spearmanr

    inputs = {}
    for k in spec.keys:
        x = numeric([r.get(k) for r in ok])
        if x is not None and np.isfinite(x).sum() >= 3 and np.unique(x[np.isfinite(x)]).size > 1:
            inputs[k] = x
    if not inputs:
        return []
    out = []
    for c in metric_cols:
        y = numeric([r.get(c) for r in ok])
        if y is None:
            continue
        vals = {}
        for k, x in inputs.items():
            m = np.isfinite(x) & np.isfinite(y)
            if m.sum() >= 3 and np.unique(y[m]).size > 1:
                vals[k] = float(spearmanr(x[m], y[m]).statistic)
            else:
                vals[k] = float("nan")
        out.append((c, vals))
    return out


def safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)
