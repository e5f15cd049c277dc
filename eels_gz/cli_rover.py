"""``eels-gz rover``: drive a rover along the Archimede test paths (§3.1) in
the embedded host, one run (``drive``) or the whole plan (``campaign``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from eels_gz.errors import EelsError


def _fail(exc: Exception, code: int = 2) -> None:
    click.echo(f"eels-gz: error: {exc}", err=True)
    sys.exit(code)


@click.group()
def rover() -> None:
    """Rover steering, odometry and the Archimede test campaign."""


@rover.command()
@click.option("--robot", default="archimede", show_default=True, help="Rover registry name (archimede, rocky7).")
@click.option("--path", "path_name", required=True,
              help="straight, lateral, diagonal_20, quarter_circle, s_path, square (or parallel).")
@click.option("--speed", "rate", type=float, required=True, help="Mean wheel rate, rad/s (paper: 1.2 2.4 3.6 4.8).")
@click.option("--world", default="ice_plane", show_default=True,
              help="World registry name or SDF file, or slope:DEG for a generated slope rising along +x.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default="results/rover", show_default=True,
              help="Output folder for the run's JSON (nominal path, ground truth, odometry, errors, slip).")
@click.option("--mode", default="general_ackermann", show_default=True, help="Drive mode of icr_steering.")
@click.option("--scale", type=float, default=1.0, show_default=True, help="Shorten path lengths and turn angles.")
@click.option("--json", "as_json", is_flag=True, help="Print the run summary as JSON.")
def drive(robot, path_name, rate, world, out_dir, mode, scale, as_json):
    """Drive one path at one wheel rate and write DIR/<robot>_<path>_<rate>_<world>.json."""
    from eels_gz.host.rover_drive import run_drive, slope_world

    try:
        slope = 0.0
        if world.startswith("slope:"):
            try:
                slope = float(world.split(":", 1)[1])
            except ValueError:
                raise EelsError(f"--world slope:DEG needs a number of degrees, got '{world}'") from None
            world = slope_world(slope, Path(out_dir) / "terrain")
        rec = run_drive(robot, path_name, rate, world, Path(out_dir), slope_deg=slope, scale=scale, mode=mode)
    except EelsError as exc:
        _fail(exc)
    brief = {k: rec[k] for k in ("status", "distance", "end_error", "end_error_relative", "slip", "file")}
    if as_json:
        click.echo(json.dumps(brief, indent=2))
    else:
        click.echo(f"{robot} {path_name} at {rate:g} rad/s: {rec['status']}, {rec['distance']:.3f} m, "
                   f"end-point odometry error {100 * (rec['end_error_relative'] or 0):.3f} % of distance")
        click.echo(f"run: {rec['file']}")


@rover.command()
@click.option("--robot", default="archimede", show_default=True, help="Rover registry name.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default="results/rover_campaign",
              show_default=True, help="Output folder: runs/*.json, campaign.json, campaign.md.")
@click.option("--scale", type=float, default=1.0, show_default=True, help="Shorten every path (for quick looks).")
@click.option("--json", "as_json", is_flag=True, help="Print campaign.json.")
def campaign(robot, out_dir, scale, as_json):
    """Run the whole Archimede plan and write one summary table."""
    from eels_gz.host.rover_drive import campaign as run_campaign

    try:
        with click.progressbar(length=1, label="campaign", file=sys.stderr) as bar:
            def progress(done: int, total: int) -> None:
                bar.length = total
                bar.update(1)

            summary = run_campaign(Path(out_dir), robot=robot, scale=scale, progress=progress)
    except EelsError as exc:
        _fail(exc)
    if as_json:
        click.echo(json.dumps(summary, indent=2))
    else:
        click.echo((Path(out_dir) / "campaign.md").read_text())
