"""``eels-gz export``: a scenario as a Gazebo world (:mod:`eels_gz.run.export`)."""

from __future__ import annotations

from pathlib import Path

import click

from eels_gz.cli.common import NON_NEGATIVE, exit_for, fail, overwrite_option
from eels_gz.errors import EelsError, OutputError, RunInterrupted


@click.command()
@click.option("--scenario", required=True, help="Scenario name from config/scenarios/.")
@click.option("--robot", help="Robot registry name (default: the scenario's, else the run default).")
@click.option("--world", help="World registry name or SDF world file (default: the scenario's).")
@click.option("--contact", type=click.Choice(["screw", "stock", "rft"]),
              help="Screw contact model: screw (EELS anisotropic model), stock (engine's isotropic contact) or "
                   "rft (screws in granular ground, medium granular.params).")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE",
              help="Override a setting as for run, e.g. --set scenario.speed=0.03 or --set contact.mu=0.1 "
                   "(repeatable).")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False),
              help="Output folder: world.sdf, the robot's URDF, placement.json, the resolved sets, export.json "
                   "(refused if it holds files).")
@click.option("--headless", is_flag=True,
              help="For a gz-sim server without a render engine: no Sensors system and no rendering sensors "
                   "(cameras, depth cameras, GPU lidars); IMU and force-torque stay. gz-sim 8.14 crashes on a "
                   "world with the Sensors system and a camera when no render engine loads.")
@click.option("--real-time-factor", "rtf", type=NON_NEGATIVE,
              help="The world's <real_time_factor>: gz-sim paces the run to R x the wall clock; 0 runs it as fast "
                   "as the machine allows (default: the world's, 1 for the shipped worlds).")
@click.option("--time-systems", is_flag=True,
              help="Load every Python system through plugins_py/timed_system.py, which writes the wall time of its "
                   "callbacks to DIR/timing.json (what the systems cost per step in gz-sim; bench/gazebo.py).")
@overwrite_option
def export(scenario, robot, world, contact, sets, out_dir, headless, rtf, time_systems, overwrite):
    """Write a scenario as a Gazebo world: `gz sim -r DIR/world.sdf` runs it (robot, placement, systems and
    parameters resolved as `eels-gz run` resolves them)."""
    from eels_gz import config as configuration
    from eels_gz.interrupt import interrupts
    from eels_gz.outputs import RunFolder
    from eels_gz.run.export import RESULT_FILE, export_scenario

    overrides: dict = {"scenario": scenario}
    if robot is not None:
        overrides["robot"] = {"name": robot}
    if world is not None:
        overrides["world"] = world
    if contact is not None:
        overrides["contact"] = {"model": contact}
    try:
        # Ctrl-C or SIGTERM stops the export at once; the staging folder is discarded, DIR is as it was
        with interrupts() as stop, stop.immediately():
            cfg = configuration.resolve(None, overrides, sets)
            with RunFolder(out_dir, overwrite=overwrite, what="export") as folder:
                result = export_scenario(cfg, folder.path, final_dir=out_dir, headless=headless,
                                         real_time_factor=rtf, time_systems=time_systems)
                folder.commit()
    except RunInterrupted as exc:
        exit_for(exc)
    except EelsError as exc:
        fail(exc)
    except OSError as exc:  # a write failed (full disk...): nothing was put in place
        from eels_gz.outputs import reason

        fail(OutputError(f"writing the export into '{out_dir}' failed: {reason(exc)}; '{out_dir}' is unchanged"))
    p = result["placement"]["base_pose"]["position"]
    click.echo(f"scenario {result['scenario']}: robot {result['robot']} on {Path(result['world']).name}, "
               f"base at x={p[0]:.4f} y={p[1]:.4f} z={p[2]:.4f} m "
               f"({result['placement']['report'].get('method', '')})")
    click.echo(f"python systems: {', '.join(result['python_systems'])}")
    if result["headless"]:
        gone = result["headless"]["sensors_removed"] + result["headless"]["systems_removed"]
        click.echo(f"headless: left out {', '.join(gone) if gone else 'nothing (no rendering sensors)'}")
    if result["systems_added"]:
        click.echo(f"systems added to the world: {', '.join(result['systems_added'])}")
    for name, path in result["files"].items():
        click.echo(f"{name}: {path}")
    click.echo(f"{RESULT_FILE}: {Path(out_dir) / RESULT_FILE}")
    click.echo(f"run it: {result['command']}")
    if result["real_time_factor"] != 0:
        click.echo(f"gz-sim paces it to {result['real_time_factor']:g} x real time; export with --real-time-factor 0 "
                   "to run it as fast as the machine allows")
