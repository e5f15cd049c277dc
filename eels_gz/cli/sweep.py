"""``eels-gz sweep``: a Monte Carlo campaign on Ray (eels_gz/sweep/)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import click

from eels_gz.cli.common import Number, Progress, exit_for, overwrite_option
from eels_gz.errors import EelsError


def failures_note(statuses: Counter) -> str:
    """'2 not ok (diverged 1, input_error 1)' for a progress line, '' when every sample is ok."""
    bad = {k: v for k, v in sorted(statuses.items()) if k != "ok"}
    if not bad:
        return ""
    return f"{sum(bad.values())} not ok (" + ", ".join(f"{k} {v}" for k, v in bad.items()) + ")"


def campaign_progress(progress: Progress):
    """A run_sweep progress callback drawing on ``progress`` (samples done, ETA, failures)."""
    seen = [0]

    def report(done: int, total: int, statuses: Counter) -> None:
        progress.note = failures_note(statuses)
        progress.update(done - seen[0], total)
        seen[0] = done

    return report


def ray_options(f):
    f = click.option("--address", help="Join the Ray cluster at ADDR (e.g. HEAD_IP:6379 or auto) instead of starting "
                                       "Ray on this machine; default: $RAY_ADDRESS, if set.")(f)
    f = click.option("--workers", type=Number(int, 1),
                     help="Samples run at once (default: every core here, every CPU of a cluster).")(f)
    return f


@click.command()
@click.argument("spec_file", metavar="SPEC.yaml", type=click.Path(dir_okay=False))
@click.option("--out", "out_dir", type=click.Path(file_okay=False), required=True,
              help="Output folder: results.parquet, results.csv, summary.md, plots/, samples/NNNNN/ (one run "
                   "folder per sample), sweep.json.")
@ray_options
@click.option("--resume", is_flag=True, help="Finish the campaign in --out: run only the samples not done yet.")
@overwrite_option
@click.option("--json", "as_json", is_flag=True, help="Print sweep.json to stdout.")
def sweep(spec_file, out_dir, workers, address, resume, overwrite, as_json):
    """Run a Monte Carlo campaign: every sample of SPEC.yaml (settings drawn from distributions)
    in its own process on Ray, then one results table, summary.md and plots (docs/sweeps.md)."""
    from eels_gz.sweep import load_spec, run_sweep

    try:
        spec = load_spec(spec_file)
        with Progress("sweep", show_pos=True) as progress:
            state = run_sweep(spec, out_dir, workers=workers, address=address, resume=resume, overwrite=overwrite,
                              progress=campaign_progress(progress))
    except EelsError as exc:
        if as_json and getattr(exc, "result", None) is not None:  # interrupted: sweep.json as written
            click.echo(json.dumps(exc.result, indent=2, default=str))
        exit_for(exc, out_dir, "sweep")
    if as_json:
        click.echo(json.dumps(state, indent=2, default=str))
        return
    counts = ", ".join(f"{k} {v}" for k, v in sorted(state["statuses"].items(), key=lambda kv: kv[0] != "ok"))
    click.echo(f"{state['samples_done']} of {state['samples_planned']} samples in {state['wall_time']:.1f} s: "
               f"{counts or 'none run'}" + (f" ({state['resumed']} done before --resume)" if state["resumed"] else ""))
    out = Path(out_dir)
    for name in ("results.parquet", "results.csv", "summary.md"):
        click.echo(f"{name}: {out / name}")
    click.echo(f"plots: {out / 'plots'} ({len(state['files']['plots'])} files)")
