"""``eels-gz calibrate``: friction identification from drag tests (EELS-DARTS Fig. 6/7), the ice from the
papers' behaviours, and a soil set's shear modulus K from a flat-ground slip (seed 004)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import click

from eels_gz.cli.common import POSITIVE, Number, exit_for, fail, overwrite_option
from eels_gz.errors import EelsError


@click.group()
def calibrate() -> None:
    """Identify mu and |e_v| = a + b F_n from screw drag tests, and a soil's shear modulus K."""


@calibrate.command()
@click.argument("csv_file", metavar="DRAGS.csv", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the fit as JSON.")
@click.option("--plot", "plot_file", type=click.Path(dir_okay=False), metavar="FILE.png",
              help="Write the Fig. 6-style figure here (an existing file is refused: see --overwrite).")
@overwrite_option
def friction(csv_file, as_json, plot_file, overwrite):
    """Fit mu, ev_a and ev_b to DRAGS.csv (columns direction, normal_force_N, drag_force_N)."""
    import contextlib

    from eels_gz.contact.calibration import fit_friction, plot_fit, read_drag_csv
    from eels_gz.outputs import OutputFile, reason

    try:
        with contextlib.ExitStack() as stack:
            plot = stack.enter_context(OutputFile(plot_file, overwrite=overwrite, own="png", what="--plot file")) \
                if plot_file else None
            samples = read_drag_csv(csv_file)
            fit = fit_friction(samples)
            if plot is not None:
                image = plot.tmp.with_suffix(plot.path.suffix or ".png")  # matplotlib's format from the suffix
                try:
                    plot_fit(fit, samples, image)
                    image.replace(plot.path)
                except OSError as exc:
                    fail(f"cannot write the plot '{plot_file}': {reason(exc)}")
                finally:
                    image.unlink(missing_ok=True)
    except EelsError as exc:
        fail(exc)
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


@calibrate.command()
@click.argument("lf_dir", metavar="LF_DIR", type=click.Path(file_okay=False))
@click.argument("wc_dir", metavar="WC_DIR", type=click.Path(file_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print every grid point's residuals and figures as JSON.")
def identify(lf_dir, wc_dir, as_json):
    """Fit the ice's across-thread line to the papers' hardware behaviours (eels_gz.contact.identify): LF_DIR and
    WC_DIR are the outputs of config/sweeps/ice_identify_leader_follower.yaml and ice_identify_wall_climb.yaml."""
    from eels_gz.contact.identify import candidates_json, report, score

    try:
        candidates = score(Path(lf_dir), Path(wc_dir))
    except EelsError as exc:
        fail(exc)
    click.echo(json.dumps(candidates_json(candidates), indent=2) if as_json else report(candidates))


@calibrate.command("soil")
@click.argument("soil_name", metavar="SOIL")
@click.option("--wheels", type=click.Choice(["low_grousers", "high_grousers"]), required=True,
              help="Archimede's wheel set the slip was measured with (seed 004: A low, B high).")
@click.option("--flat-slip", type=Number(float, 0.0, 0.99, min_open=True, max_open=True), default=None,
              help="The measured slip on flat ground, a fraction [default: seed 004's median, about 5 %].")
@click.option("--json", "as_json", is_flag=True, help="Print K and the slope slips as JSON.")
def soil(soil_name, wheels, flat_slip, as_json):
    """Identify Janosi's shear modulus K of soil set SOIL (a name in config/soil/ or a YAML path) from the slip
    an Archimede wheel set shows on flat ground, measured as seed 004 measures it (nominal wheel radius;
    eels_gz.soil.identify), and print the steady slips it then predicts on seed 004's slopes (one corner,
    Wong-Reece balance with the wheel's lugs). A tool: the slope campaign's soil sets do not come from it."""
    from dataclasses import replace

    from eels_gz import registry
    from eels_gz.description.xacro_loader import process_xacro
    from eels_gz.soil.grousers import contact_geometry
    from eels_gz.soil.identify import (GRAVITY, SEED_004_FLAT_SLIP, SEED_004_SLOPES, corner_slip,
                                       identify_shear_modulus, rover_corner)
    from eels_gz.soil.params import resolve_soil_params

    target = SEED_004_FLAT_SLIP if flat_slip is None else flat_slip
    try:
        params = resolve_soil_params(soil_name)
        entry = registry.robot("archimede")
        urdf = process_xacro(entry.path, entry.args(None, wheels=wheels, soil=soil_name, gazebo="true"))
        corner = rover_corner(urdf, str(entry.path))
        k = identify_shear_modulus(params, corner, target)
    except EelsError as exc:
        fail(exc)
    identified = replace(params, shear_modulus_K=k)
    slips = [corner_slip(identified, corner, a, GRAVITY) for a in SEED_004_SLOPES]
    wheel = corner.wheel
    result = {"soil": soil_name, "wheels": wheels, "flat_slip": target, "shear_modulus_K": k,
              "wheel_radius_m": corner.nominal_radius, "wheel_width_m": wheel.width, "corner_weight_N": corner.weight,
              "tip_radius_m": wheel.radius, "lug_height_m": wheel.lug_height, "lug_count": wheel.lug_count,
              "contact_radius_m": contact_geometry(wheel, identified, corner.grousers).radius,
              "slopes_deg": list(SEED_004_SLOPES), "slope_slips": slips}
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    click.echo(f"shear_modulus_K = {k:.4g} m   ({soil_name}, {wheels}: R = {corner.nominal_radius} m nominal, "
               f"b = {wheel.width} m, corner {corner.weight:.2f} N, flat-ground slip {target:g})")
    click.echo("steady slip on slopes " + ", ".join(f"{a:g}" for a in SEED_004_SLOPES) + " deg: "
               + ", ".join("stuck" if s is None else f"{100 * s:.1f} %" for s in slips))


def _floats(text: str) -> list[float]:
    """Comma-separated load masses (kg): finite and >= 0, at least one."""
    try:
        values = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise click.BadParameter(f"expected comma-separated numbers, got '{text}'", param_hint="'--loads'") from None
    if not values or not all(math.isfinite(v) and v >= 0 for v in values):
        raise click.BadParameter(f"expected comma-separated masses in kg, each finite and >= 0, got '{text}'",
                                 param_hint="'--loads'")
    return values


@calibrate.command()
@click.option("--out", "out_file", type=click.Path(dir_okay=False), default="results/drags.csv", show_default=True,
              help="CSV to write (the format `calibrate friction` reads, with a last column `source`); an existing "
                   "file is refused, and with --overwrite replaced only if calibrate simulate wrote it.")
@overwrite_option
@click.option("--variant", default="eels_1_0_front_only", show_default=True,
              help="EELS variant whose screw is dragged.")
@click.option("--params", default="ice", show_default=True,
              help="Contact parameters: a name in config/contact/ or a YAML path.")
@click.option("--loads", default="2,5,10,15,20", show_default=True, callback=lambda ctx, param, v: _floats(v),
              help="Load masses on the screw (kg, comma-separated); the screw's own weight adds to each.")
@click.option("--speed-factor", type=POSITIVE, default=20.0, show_default=True,
              help="Drag speed in units of the contact's v_eps.")
@click.option("--fit", "also_fit", is_flag=True, help="Also fit the written CSV and print the result as JSON.")
def simulate(out_file, overwrite, variant, params, loads, speed_factor, also_fit):
    """Drag one screw along and across its thread in the host under several loads; write DRAGS.csv.

    Interrupted (SIGINT, SIGTERM), it writes the drags completed so far to
    DRAGS.partial.csv instead, and exits 130 or 143."""
    from eels_gz.cli.calibrate_sim import simulate_drags
    from eels_gz.contact.calibration import fit_friction, write_drag_csv
    from eels_gz.errors import RunInterrupted
    from eels_gz.interrupt import interrupts
    from eels_gz.outputs import OutputFile
    from eels_gz.own_files import CSV_SOURCE

    out = Path(out_file)
    partial = out.with_name(out.stem + ".partial" + out.suffix)
    source = CSV_SOURCE[1]  # the column that marks the CSV as ours (eels_gz.own_files)
    try:
        # both files checked before any drag: an existing one is replaced only with --overwrite, only if ours
        with interrupts(), \
                OutputFile(out, overwrite=overwrite, lock=True, what="drag CSV", own="drag csv") as target, \
                OutputFile(partial, overwrite=overwrite, what="partial drag CSV", own="drag csv") as part:
            try:
                samples = simulate_drags(variant, params, loads, speed_factor)
            except RunInterrupted as exc:
                if getattr(exc, "partial", None) is not None:
                    write_drag_csv(exc.partial, part.tmp, source)
                    part.commit()
                    exc.written = partial  # said by exit_for instead of "nothing was written"
                    exc.args = (f"{exc}; the completed drags are in {partial}, {out} is not written",)
                raise
            write_drag_csv(samples, target.tmp, source)
            target.commit()
        click.echo(f"drags: {out_file} ({len(samples.direction)} rows)", err=also_fit)
        if also_fit:
            click.echo(json.dumps(fit_friction(samples).to_dict(), indent=2))
    except EelsError as exc:
        exit_for(exc, None, "drag simulation")
