"""A campaign's report: results.parquet and results.csv (:mod:`eels_gz.sweep.results`), the plots
(:mod:`eels_gz.sweep.plots`) and summary.md, written together once the samples are in."""

from __future__ import annotations

from pathlib import Path

from eels_gz.sweep.plots import plot_all
from eels_gz.sweep.results import columns, summary_markdown, table
from eels_gz.sweep.spec import SweepSpec


def write_results(out: Path, spec: SweepSpec, rows: list[dict], state: dict) -> dict:
    """Write results.parquet, results.csv, the plots and summary.md into ``out``; returns their paths
    (relative to ``out``)."""
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    tab = table(spec, rows)
    pq.write_table(tab, out / "results.parquet")
    pacsv.write_csv(tab, out / "results.csv")
    plots = plot_all(out / "plots", spec, rows, columns(spec, rows))
    if spec.figures:  # the spec's own figures, e.g. the slope campaign's Figs. 12-13 (eels_gz.sweep.figures)
        from eels_gz.sweep.figures import draw

        plots += draw(out / "plots", out, spec.figures, rows)
    files = {"results_parquet": "results.parquet", "results_csv": "results.csv", "summary": "summary.md",
             "plots": [str(p.relative_to(out)) for p in plots]}
    (out / "summary.md").write_text(summary_markdown(spec, rows, state, files))
    return files
