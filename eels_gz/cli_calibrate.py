"""``eels-gz calibrate``: friction identification from drag tests (EELS-DARTS Fig. 6/7)."""

from __future__ import annotations

import json
import sys

import click

from eels_gz.errors import EelsError


def _fail(exc: Exception) -> None:
    click.echo(f"eels-gz: error: {exc}", err=True)
    sys.exit(2)


@click.group()
def calibrate() -> None:
    """Identify mu and |e_v| = a + b F_n from screw drag tests."""


@calibrate.command()
@click.argument("csv_file", metavar="DRAGS.csv", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the fit as JSON.")
@click.option("--plot", "plot_file", type=click.Path(dir_okay=False), metavar="FILE.png",
              help="Write the Fig. 6-style figure here.")
def friction(csv_file, as_json, plot_file):
    """Fit mu, ev_a and ev_b to DRAGS.csv (columns direction, normal_force_N, drag_force_N)."""
    from eels_gz.contact.calibration import fit_friction, plot_fit, read_drag_csv

    try:
        samples = read_drag_csv(csv_file)
        fit = fit_friction(samples)
        if plot_file:
            plot_fit(fit, samples, plot_file)
    except EelsError as exc:
        _fail(exc)
    result = fit.to_dict()
    for warning in fit.warnings:
        click.echo(f"eels-gz: warning: {csv_file}: {warning}", err=True)
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    click.echo(f"mu    = {fit.mu:.6g} (stderr {fit.mu_stderr:.2g})")
    click.echo(f"ev_a  = {fit.ev_a:.6g} (stderr {fit.ev_a_stderr:.2g})")
    click.echo(f"ev_b  = {fit.ev_b:.6g} 1/N (stderr {fit.ev_b_stderr:.2g})")
    click.echo(f"R^2   = {fit.r2:.6f} over {fit.n_perpendicular} perpendicular drags at {fit.n_loads} loads")
    click.echo("residuals (|e_v| sample - line): " + " ".join(f"{r:+.3g}" for r in fit.residuals))
    if plot_file:
        click.echo(f"plot: {plot_file}")


def _floats(text: str) -> list[float]:
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise click.BadParameter(f"expected comma-separated numbers, got '{text}'") from None


@calibrate.command()
@click.option("--out", "out_file", type=click.Path(dir_okay=False), default="results/drags.csv", show_default=True,
              help="CSV to write (the format `calibrate friction` reads).")
@click.option("--variant", default="eels_1_0_front_only", show_default=True, help="EELS variant whose screw is dragged.")
@click.option("--params", default="ice", show_default=True, help="Contact parameters: a name in config/contact/ or a YAML path.")
@click.option("--loads", default="2,5,10,15,20", show_default=True,
              help="Load masses on the screw (kg, comma-separated); the screw's own weight adds to each.")
@click.option("--speed-factor", type=float, default=20.0, show_default=True, help="Drag speed in units of the contact's v_eps.")
@click.option("--fit", "also_fit", is_flag=True, help="Also fit the written CSV and print the result as JSON.")
def simulate(out_file, variant, params, loads, speed_factor, also_fit):
    """Drag one screw along and across its thread in the host under several loads; write DRAGS.csv."""
    from pathlib import Path

    from eels_gz.calibrate_sim import simulate_drags
    from eels_gz.contact.calibration import fit_friction, write_drag_csv

    try:
        samples = simulate_drags(variant, params, _floats(loads), speed_factor)
        Path(out_file).parent.mkdir(parents=True, exist_ok=True)
        write_drag_csv(samples, out_file)
        click.echo(f"drags: {out_file} ({len(samples.direction)} rows)", err=also_fit)
        if also_fit:
            click.echo(json.dumps(fit_friction(samples).to_dict(), indent=2))
    except EelsError as exc:
        _fail(exc)
