"""``eels-gz rover``: drive a rover along the Archimede test paths (§3.1) in
the embedded host, one run (``drive``) or the whole plan (``campaign``)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from eels_gz.cli.common import PATH_SCALE, WHEEL_RATE, Progress, exit_for, overwrite_option
from eels_gz.cli.sweep import campaign_progress, ray_options
from eels_gz.errors import EelsError


@click.group()
def rover() -> None:
    """Rover steering, odometry and the Archimede test campaign."""


@rover.command()
@click.option("--robot", default="archimede", show_default=True, help="Rover registry name (archimede, rocky7).")
@click.option("--path", "path_name", required=True,
              help="straight, lateral, diagonal_20, quarter_circle, s_path, square (or parallel).")
@click.option("--speed", "rate", type=WHEEL_RATE, required=True, help="Mean wheel rate, rad/s (paper: 1.2 2.4 3.6 4.8).")
@click.option("--world", default="ice_plane", show_default=True,
              help="World registry name or SDF file, or slope:DEG for a generated slope rising along +x.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default="results/rover", show_default=True,
              help="Output folder for the run's JSON (nominal path, ground truth, odometry, errors, slip).")
@overwrite_option
@click.option("--mode", default="general_ackermann", show_default=True, help="Drive mode of icr_steering.")
@click.option("--scale", type=PATH_SCALE, default=1.0, show_default=True,
              help="Scale path lengths and turn angles, > 0 and <= 10.")
@click.option("--json", "as_json", is_flag=True, help="Print the run summary as JSON.")
def drive(robot, path_name, rate, world, out_dir, overwrite, mode, scale, as_json):
    """Drive one path at one wheel rate and write DIR/<robot>_<path>_<rate>_<world>.json."""
    from eels_gz.run.drive_runs import interrupted, run_drive, slope_world
    from eels_gz.interrupt import interrupts
    from eels_gz.outputs import check_writable_dir

    try:
        with interrupts() as stop:
            check_writable_dir(out_dir)
            slope = 0.0
            if world.startswith("slope:"):
                try:
                    slope = float(world.split(":", 1)[1])
                except ValueError:
                    raise EelsError(f"--world slope:DEG needs a number of degrees, got '{world}'") from None
                with stop.immediately():
                    world = slope_world(slope, Path(out_dir) / "terrain")
            rec = run_drive(robot, path_name, rate, world, Path(out_dir), slope_deg=slope, scale=scale, mode=mode,
                            overwrite=overwrite)
            brief = {k: rec[k] for k in ("status", "distance", "end_error", "end_error_relative", "slip",
                                         "saturated", "file")}
            stopped = interrupted(rec)
            if stopped is not None:
                stopped.result = brief
                raise stopped
    except EelsError as exc:
        if as_json and getattr(exc, "result", None) is not None:  # the drive's record up to the stop
            click.echo(json.dumps(exc.result, indent=2))
        exit_for(exc, out_dir, "drive")
    if as_json:
        click.echo(json.dumps(brief, indent=2))
    else:
        click.echo(f"{robot} {path_name} at {rate:g} rad/s: {rec['status']}, {rec['distance']:.3f} m, "
                   f"end-point odometry error {100 * (rec['end_error_relative'] or 0):.3f} % of distance")
        for s in rec["saturated"]:
            click.echo(f"segment {s['segment']}: saturated, the fastest wheel at the motor limit "
                       f"({rec['max_wheel_rate']:.3g} rad/s): command scaled by {s['factor']:.3f}")
        click.echo(f"run: {rec['file']}")


@rover.command()
@click.option("--robot", default="archimede", show_default=True, help="Rover registry name.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default="results/rover_campaign",
              show_default=True, help="Output folder: runs/*.json, campaign.json, campaign.md, and the sweep's "
              "results.parquet, results.csv, summary.md, plots/ and samples/ (refused if it holds a campaign).")
@overwrite_option
@click.option("--scale", type=PATH_SCALE, default=1.0, show_default=True,
              help="Shorten every path (for quick looks), > 0 and <= 10.")
@ray_options
@click.option("--resume", is_flag=True, help="Finish the campaign in --out: run only the drives not done yet.")
@click.option("--json", "as_json", is_flag=True, help="Print campaign.json.")
def campaign(robot, out_dir, overwrite, scale, workers, address, resume, as_json):
    """Run the whole Archimede plan (config/sweeps/rover_campaign.yaml) on Ray, every drive in its own
    process, and write one summary table."""
    from eels_gz.sweep.rover_campaign import campaign as run_campaign

    try:
        with Progress("campaign", show_pos=True) as progress:
            summary = run_campaign(Path(out_dir), robot=robot, scale=scale, workers=workers, address=address,
                                   resume=resume, overwrite=overwrite, progress=campaign_progress(progress))
    except EelsError as exc:
        if as_json and getattr(exc, "result", None) is not None:  # interrupted: campaign.json as written
            click.echo(json.dumps(exc.result, indent=2))
        exit_for(exc, out_dir, "campaign")
    if as_json:
        click.echo(json.dumps(summary, indent=2))
    else:
        click.echo((Path(out_dir) / "campaign.md").read_text())
