"""The ``eels-gz`` command line."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import click

from eels_gz import config as configuration
from eels_gz.errors import EelsError, SimulationDiverged


def _fail(exc: Exception, code: int = 2) -> None:
    click.echo(f"eels-gz: error: {exc}", err=True)
    sys.exit(code)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("-v", "--verbose", count=True, help="More log output (-v info, -vv debug).")
def main(verbose: int) -> None:
    """Screw-propelled snake robots and steerable rovers in the embedded DART host."""
    level = logging.WARNING - 10 * min(verbose, 2)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")


@main.command()
@click.option("--robot", help="Robot registry name (see README), e.g. eels_1_0_front_only.")
@click.option("--world", help="World registry name or path of an SDF world file.")
@click.option("--duration", type=float, help="Simulated seconds (default: the scenario's, else 10).")
@click.option("--scenario", help="Scenario name from config/scenarios/.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default="results/run", show_default=True,
              help="Output folder for log.mcap, summary.json and trajectory.png.")
@click.option("--config", "config_file", type=click.Path(dir_okay=False), help="YAML settings file.")
@click.option("--save-config", type=click.Path(dir_okay=False), help="Write the fully resolved configuration here.")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE",
              help="Override any key of the resolved configuration, e.g. --set physics.dt=0.002 (repeatable).")
@click.option("--dt", type=float, help="Step size in s (default: the world's <max_step_size>).")
@click.option("--collision-detector", type=click.Choice(["ode", "bullet", "fcl", "dart"]),
              help="DART collision detector (default: the world's, else ode).")
@click.option("--json", "as_json", is_flag=True, help="Print summary.json to stdout.")
def run(robot, world, duration, scenario, out_dir, config_file, save_config, sets, dt, collision_detector, as_json):
    """Run a robot in a world headless in the embedded host."""
    from eels_gz.host.runner import run as run_simulation

    overrides: dict = {}
    if robot is not None:
        overrides.setdefault("robot", {})["name"] = robot
    for key, value in (("world", world), ("duration", duration), ("scenario", scenario)):
        if value is not None:
            overrides[key] = value
    if dt is not None:
        overrides.setdefault("physics", {})["dt"] = dt
    if collision_detector is not None:
        overrides.setdefault("physics", {})["collision_detector"] = collision_detector
    try:
        cfg = configuration.resolve(config_file, overrides, sets)
        if save_config:
            configuration.save(cfg, save_config)
        with click.progressbar(length=1, label="simulating", file=sys.stderr,
                               show_eta=True, show_percent=True) as bar:
            def progress(delta: int, total: int) -> None:
                bar.length = total
                bar.update(delta)

            summary = run_simulation(cfg, out_dir, progress)
    except SimulationDiverged as exc:
        click.echo(f"eels-gz: simulation diverged: {exc}", err=True)
        click.echo(f"eels-gz: the log up to the last good state is in {Path(out_dir)}", err=True)
        sys.exit(3)
    except EelsError as exc:
        _fail(exc)
    if as_json:
        click.echo(json.dumps(summary, indent=2))
    else:
        pose = summary["final_base_pose"]["position"]
        click.echo(f"simulated {summary['sim_time']:.3f} s in {summary['wall_time']:.2f} s "
                   f"(real-time factor {summary['real_time_factor']:.2f})")
        click.echo(f"final base position: x={pose[0]:.4f} y={pose[1]:.4f} z={pose[2]:.4f} m")
        for name, path in summary["files"].items():
            click.echo(f"{name}: {path}")


from eels_gz.cli_world import world  # noqa: E402  (the `eels-gz world` group)
main.add_command(world)

if __name__ == "__main__":
    main()
