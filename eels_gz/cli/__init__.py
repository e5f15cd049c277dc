"""The ``eels-gz`` command line."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import click

from eels_gz import config as configuration
from eels_gz.cli import common
from eels_gz.cli.common import NON_NEGATIVE, Number, Progress, echo_result, exit_for, fail, overwrite_option
from eels_gz.errors import EelsError


def _max_modules() -> int:
    from eels_gz.registry import MAX_MODULES

    return MAX_MODULES


N_MODULES = Number(int, 1, _max_modules, above="{value:g} is above the limit of {max} modules")
ROS_DOMAIN = Number(int, 0, 232)  # the DDS domain ids a ROS 2 node may use on Linux (ROS 2 docs: 0-101, up to 232)


def _scenario_overrides(robot, n_modules, world, duration, scenario) -> dict:
    """Configuration overrides from the flags `run` and `compare` share."""
    overrides: dict = {}
    if robot is not None:
        overrides.setdefault("robot", {})["name"] = robot
    if n_modules is not None:
        overrides.setdefault("robot", {})["n_modules"] = n_modules
    for key, value in (("world", world), ("duration", duration), ("scenario", scenario)):
        if value is not None:
            overrides[key] = value
    return overrides


def _registry_epilog() -> str:
    """The robots, worlds and scenarios a run may name (for ``run --help``)."""
    from eels_gz import registry

    def block(title: str, names) -> list[str]:
        return ["\b", f"{title}:", *("  " + line for line in _wrap(", ".join(names)))]

    return "\n".join(block("Robots", registry.ROBOTS) + [""] + block("Worlds (or an SDF world file)", registry.WORLDS)
                     + [""] + block("Scenarios", registry.scenarios())
                     + ["", "Reference: docs/running.md, docs/robots.md, docs/worlds.md, docs/scenarios.md."])


def _wrap(text: str, width: int = 76) -> list[str]:
    import textwrap

    return textwrap.wrap(text, width)


class _Main(click.Group):
    """The command group; remembers the command line a user typed (``sys.argv``) so that ``run`` can
    hand it to a warm run server (:mod:`eels_gz.server`): not when called with ``args`` (a test, the
    server's own child)."""

    def main(self, args=None, *rest, **kwargs):
        global _command_line
        _command_line = list(sys.argv) if args is None else None
        return super().main(args, *rest, **kwargs)


_command_line: list[str] | None = None


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="eels_gz", prog_name="eels-gz")
@click.option("-v", "--verbose", count=True, help="More log output (-v info, -vv debug).")
def main(verbose: int) -> None:
    """Screw-propelled snake robots and steerable rovers in the embedded DART host."""
    level = logging.WARNING - 10 * min(verbose, 2)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")


class _RunCommand(click.Command):
    """``run``, whose help lists the registry's names: read when the help is shown, not at every start
    (the scenarios' and EELS variants' scan, about 0.03 s of each command)."""

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        if self.epilog is None:
            self.epilog = _registry_epilog()
        super().format_epilog(ctx, formatter)


@main.command(cls=_RunCommand)
@click.option("--robot", help="Robot registry name (listed below), e.g. eels_1_0_front_only.")
@click.option("--n-modules", "n_modules", type=N_MODULES,
              help="Number of modules of an EELS robot, 1 to 100 (default: the variant's).")
@click.option("--urdf", "urdf_file", type=click.Path(dir_okay=False),
              help="User-corrected URDF/xacro replacing the robot's own; must have the same tree, joints and joint types.")
@click.option("--no-optimize", is_flag=True, help="Load the description as it is, without the multibody optimizer.")
@click.option("--world", help="World registry name or path of an SDF world file.")
@click.option("--contact", type=click.Choice(["screw", "stock", "rft"]),
              help="Screw contact model: screw (EELS anisotropic model), stock (engine's isotropic contact) or "
                   "rft (screws in granular ground, medium granular.params).")
@click.option("--duration", type=common.DURATION, help="Simulated seconds, > 0 and <= 1e6 (default: the scenario's, else 10).")
@click.option("--scenario", help="Scenario name from config/scenarios/.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default="results/run", show_default=True,
              help="Output folder for log.mcap, summary.json and trajectory.png (refused if it holds a run).")
@overwrite_option
@click.option("--config", "config_file", type=click.Path(dir_okay=False), help="YAML settings file.")
@click.option("--save-config", type=click.Path(dir_okay=False),
              help="Write the resolved configuration here (every default filled in: step, contact, module count); "
                   "an existing file is refused, and with --overwrite replaced only if --save-config wrote it "
                   "and it was not edited since.")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE",
              help="Override any key of the resolved configuration, e.g. --set physics.dt=0.002 (repeatable).")
@click.option("--dt", type=common.STEP, help="Step size in s, > 0 and <= 1 (default: the world's <max_step_size>).")
@click.option("--collision-detector", type=click.Choice(["ode", "bullet", "fcl", "dart"]),
              help="DART collision detector (default: the world's, else ode).")
@click.option("--json", "as_json", is_flag=True, help="Print summary.json to stdout, whatever the run's status.")
@click.option("--ros", "ros", is_flag=True, default=None, help="Bridge the topics to ROS 2 (config/bridge.yaml).")
@click.option("--ros-transport", type=click.Choice(["auto", "rclpy", "dds"]),
              help="ROS 2 transport: rclpy when ROS 2 is sourced (auto), else DDS with ROS 2 wire names.")
@click.option("--ros-domain", type=ROS_DOMAIN, help="ROS_DOMAIN_ID for the ROS 2 interface (default 0).")
@click.option("--rate", type=common.PACE, help="Pace the simulation at R x wall clock (default: as fast as possible).")
@click.option("--no-server", is_flag=True,
              help="Run in this process even when a run server (eels-gz serve) is running (as EELS_GZ_SERVER=off).")
@click.option("--host", type=click.Choice(["embedded", "gazebo"]),
              help="embedded: this package's DART host (the default); gazebo: the run exported headless and run in "
                   "the gz-sim 8 installed here (as --set sim.host=gazebo; docs/running.md).")
def run(robot, n_modules, urdf_file, no_optimize, world, contact, duration, scenario, out_dir, overwrite, config_file,
        save_config, sets, dt, collision_detector, as_json, ros, ros_transport, ros_domain, rate, no_server, host):
    """Run a robot in a world headless in the embedded host (through a running `eels-gz serve`, if any)."""
    if _command_line is not None and not no_server:
        from eels_gz.server.client import hand_over

        code = hand_over(_command_line, click.get_current_context().find_root().info_name)
        if code is not None:
            sys.exit(code)
    from eels_gz.interrupt import interrupts
    from eels_gz.outputs import RunFolder

    overrides = _scenario_overrides(robot, n_modules, world, duration, scenario)
    if urdf_file is not None:
        overrides.setdefault("robot", {})["urdf"] = urdf_file
    if no_optimize:
        overrides.setdefault("robot", {})["optimize"] = False
    if contact is not None:
        overrides["contact"] = {"model": contact}
    if dt is not None:
        overrides.setdefault("physics", {})["dt"] = dt
    if collision_detector is not None:
        overrides.setdefault("physics", {})["collision_detector"] = collision_detector
    for key, value in (("enabled", ros), ("transport", ros_transport), ("domain", ros_domain), ("rate", rate)):
        if value is not None:
            overrides.setdefault("ros", {})[key] = value
    if host is not None:
        overrides.setdefault("sim", {})["host"] = host
    folder = None
    try:
        with interrupts():
            cfg = configuration.resolve(config_file, overrides, sets)
            from eels_gz.run.hosts import run as run_simulation

            if cfg["ros"]["enabled"]:  # say what is bridged as soon as the interface is up
                ros_log = logging.getLogger("eels_gz.ros.interface")
                if ros_log.getEffectiveLevel() > logging.INFO:
                    ros_log.setLevel(logging.INFO)
            with RunFolder(out_dir, overwrite=overwrite) as folder, Progress("simulating") as progress:
                summary = run_simulation(cfg, folder.path, progress.update, final_dir=out_dir,
                                         save_config=folder.inside(save_config) if save_config else None,
                                         setup_progress=progress.setup, overwrite_config=overwrite)
    except EelsError as exc:
        if folder is not None and folder.committed:  # the run began: its summary says how it ended
            echo_result(Path(out_dir) / "summary.json", as_json)
        exit_for(exc, out_dir)
    if as_json:
        click.echo(json.dumps(summary, indent=2))
    else:
        pose = summary["final_base_pose"]["position"]
        setup = summary["setup_sim_time"]
        if summary["status"] != "ok":
            click.echo(f"status: {summary['status']}: {summary.get('message', '')}")
        if summary.get("host", {}).get("name") == "gazebo":
            click.echo(f"host: gz-sim {summary['host']['gz_sim']} ({summary['host']['found']})")
        click.echo((f"setup simulated {setup:.3f} s; " if setup else "")
                   + f"simulated {summary['sim_time'] - setup:.3f} s in {summary['wall_time']:.2f} s "
                   f"(real-time factor {summary['real_time_factor']:.2f})")
        click.echo(f"final base position: x={pose[0]:.4f} y={pose[1]:.4f} z={pose[2]:.4f} m")
        bridged = summary.get("ros", {}).get("bridged")
        if bridged:
            click.echo(f"ros: {bridged['topics']} topics bridged ({bridged['to_ros']} to ROS 2, {bridged['from_ros']} "
                       f"from ROS 2) over {bridged['transport']} on ROS_DOMAIN_ID {bridged['domain']}")
        for name, path in summary["files"].items():
            click.echo(f"{name}: {path}")
        if save_config:
            click.echo(f"resolved configuration: {save_config}")


@main.command()
@click.option("--robot", required=True, help="Robot registry name, e.g. eels_1_5, archimede or rocky7.")
@click.option("--n-modules", "n_modules", type=N_MODULES,
              help="Number of modules of an EELS robot (default: the variant's).")
@click.option("--format", "fmt", type=click.Choice(["urdf", "sdf"]), default="urdf", show_default=True,
              help="urdf: xacro output; sdf: converted by real libsdformat (`ign sdf -p`), as Gazebo does it.")
@click.option("--gazebo/--no-gazebo", default=None,
              help="Include the <gazebo> plugin and sensor blocks (default: only for --format sdf).")
@click.option("--optimized", is_flag=True, help="Print the URDF after the multibody optimizer (urdf format only).")
@click.option("--set-arg", "set_args", multiple=True, metavar="NAME=VALUE",
              help="Extra xacro argument, e.g. --set-arg head=true (repeatable).")
def describe(robot, n_modules, fmt, gazebo, optimized, set_args):
    """Print a robot's description (URDF, or SDF through libsdformat)."""
    from lxml import etree

    from eels_gz import registry
    from eels_gz.description.assemble import check_xacro_args, robot_description
    from eels_gz.description.optimizer import optimize_urdf
    from eels_gz.description.sdformat import urdf_to_sdf

    try:
        extra = {}
        for item in set_args:
            name, sep, value = item.partition("=")
            if not sep or not name.strip():
                raise configuration.ConfigError(f"--set-arg expects NAME=VALUE, got '{item}'")
            extra[name.strip()] = value
        if optimized and fmt == "sdf":
            raise configuration.ConfigError("--optimized applies to --format urdf only (libsdformat lumps fixed joints itself)")
        entry = registry.robot(robot)
        check_xacro_args(entry, extra, "--set-arg", reserved={"variant": "--robot", "layout": "--robot",
                                                              "n_modules": "--n-modules", "gazebo": "--gazebo"})
        with_gazebo = (fmt == "sdf") if gazebo is None else gazebo
        desc = robot_description(entry, n_modules=n_modules, xacro_args=extra, gazebo=with_gazebo)
        urdf = etree.tostring(desc.gazebo_element(), encoding="unicode", pretty_print=True)
        if optimized:
            urdf = optimize_urdf(urdf, source=desc.source).urdf
        click.echo(urdf_to_sdf(urdf, desc.source) if fmt == "sdf" else urdf)
    except EelsError as exc:
        fail(exc)


@main.command()
@click.option("--robot", help="Robot registry name (an EELS robot, e.g. eels_1_0_front_only, or a rover: archimede).")
@click.option("--n-modules", "n_modules", type=N_MODULES, help="Number of modules (default: the variant's).")
@click.option("--world", help="World registry name or SDF world file.")
@click.option("--scenario", help="Scenario name from config/scenarios/, e.g. surface_traverse, rover_drive.")
@click.option("--duration", type=common.DURATION, help="Simulated seconds, > 0 and <= 1e6 (default: the scenario's).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default="results/compare", show_default=True,
              help="Output folder: stock/ and screw/ (rft/ with --contact rft; a rover: soil/), compare.json, "
                   "compare.png (refused if it holds a run).")
@overwrite_option
@click.option("--config", "config_file", type=click.Path(dir_okay=False), help="YAML settings file (as for run).")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="Override a setting, as for run (repeatable).")
@click.option("--json", "as_json", is_flag=True, help="Print compare.json to stdout, whatever its status.")
@click.option("--layout", type=click.Choice(["overlay", "side"]), default="overlay", show_default=True,
              help="replay.html: the two runs overlaid in one scene, or side by side.")
@click.option("--contact", type=click.Choice(["screw", "rft"]),
              help="An EELS robot's model against stock: screw (default) or rft (screws in granular ground, "
                   "medium granular.params; output folder rft/).")
@click.option("--host", type=click.Choice(["embedded", "gazebo"]),
              help="Where both runs are simulated: embedded (default) or gazebo (the installed gz-sim 8, "
                   "as run --host gazebo).")
def compare(robot, n_modules, world, scenario, duration, out_dir, overwrite, config_file, sets, as_json,
            layout, contact, host):
    """Run one scenario under stock and under screw contact (or --contact rft; a rover: the soil model
    of --set soil.params=NAME against rigid contact) and compare the tail (base) pose."""
    from eels_gz.cli.compare import compare as run_compare
    from eels_gz.interrupt import interrupts
    from eels_gz.outputs import RunFolder

    overrides = _scenario_overrides(robot, n_modules, world, duration, scenario)
    if host is not None:
        overrides.setdefault("sim", {})["host"] = host
    folder = None
    try:
        with interrupts():
            cfg = configuration.resolve(config_file, overrides, sets)
            with RunFolder(out_dir, overwrite=overwrite, what="compare") as folder, \
                    Progress("compare") as progress:
                def step(model: str, delta: int, total: int) -> None:
                    progress.note = f"the {model} run"  # which of the two runs the count is in
                    progress.update(delta, 2 * total)  # both runs have the same number of steps

                result = run_compare(cfg, folder.path, step, final_dir=out_dir, setup_progress=progress.setup,
                                     layout=layout, contact=contact)
    except EelsError as exc:
        if folder is not None and folder.committed:
            echo_result(Path(out_dir) / "compare.json", as_json)
        exit_for(exc, out_dir, "comparison")
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    for model, m in result["models"].items():
        p = m["final_pose"]
        click.echo(f"{model:5s}: final tail x={p['x']:.4f} m y={p['y']:.4f} m yaw={p['yaw']:.4f} rad, "
                   f"path {m['path_length']:.3f} m, real-time factor {m['real_time_factor']:.2f}")
    d = result["difference"]
    click.echo(f"{d['of']}: " + ", ".join(f"{k} max {d[k]['max']:.4f} rms {d[k]['rms']:.4f}" for k in ("x", "y", "yaw")))
    for name, path in result["files"].items():
        click.echo(f"{name}: {path}")


@main.command()
@click.argument("run_dirs", nargs=-1, required=True, type=click.Path(file_okay=False))
@click.option("--out", "out_file", type=click.Path(dir_okay=False),
              help="HTML file to write (default: RUN_DIR/replay.html, or replay.html beside several runs).")
@click.option("--layout", type=click.Choice(["overlay", "side"]), default="overlay", show_default=True,
              help="Several runs: overlaid in one scene, or side by side with one camera.")
@click.option("--label", "labels", multiple=True, help="Name shown for each run, in order (default: its folder).")
@click.option("--fps", type=Number(float, 0, 1000, min_open=True), default=30.0, show_default=True, help="Frames kept per simulated second.")
@click.option("--screenshot", "png", type=click.Path(dir_okay=False),
              help="Also save a PNG of the replay from headless Chromium (see --at).")
@click.option("--at", "at_time", type=NON_NEGATIVE, help="Simulated time (s) of the --screenshot (default: the end).")
@click.option("--overwrite", is_flag=True,
              help="Replace an existing --out or --screenshot file, only if eels-gz view wrote it (the default "
                   "RUN_DIR/replay.html is replaced when view wrote it, without this flag).")
def view(run_dirs, out_file, layout, labels, fps, png, at_time, overwrite):
    """Write a self-contained 3D replay (one HTML file, no server or network needed) of one or more runs."""
    import contextlib

    from eels_gz.outputs import OutputFile
    from eels_gz.own_files import stamp_png
    from eels_gz.viewer import load_run
    from eels_gz.viewer.html import replay_html

    try:
        if labels and len(labels) != len(run_dirs):
            raise configuration.ConfigError(f"--label given {len(labels)} times for {len(run_dirs)} runs")
        default = out_file is None
        if default:  # the run's own replay, which view writes again whenever it is asked
            out_file = Path(run_dirs[0]) / "replay.html" if len(run_dirs) == 1 else \
                Path(run_dirs[0]).parent / "replay.html"
        with contextlib.ExitStack() as stack:  # both outputs checked before the runs are read
            page = stack.enter_context(OutputFile(out_file, overwrite=overwrite or default, own="replay",
                                                  what="replay page"))
            image = stack.enter_context(OutputFile(png, overwrite=overwrite, own="png", what="--screenshot file")) \
                if png else None
            runs = [load_run(d, labels[i] if labels else None, max_fps=fps) for i, d in enumerate(run_dirs)]
            out = page.write_text(replay_html(runs, layout=layout))
            click.echo(f"replay: {out}")
            if image is not None:
                from eels_gz.viewer.browser import screenshot

                t = at_time if at_time is not None else max(float(r.times[-1]) for r in runs)
                shot = screenshot(out, f"t={t}")
                image.write_bytes(stamp_png(shot.png, "eels-gz view --screenshot"))
                click.echo(f"screenshot: {png}")
    except EelsError as exc:
        fail(exc)


@main.command()
@click.argument("log_file", metavar="LOG.mcap", type=click.Path(dir_okay=False, exists=True))
@click.option("-o", "--out", "out_file", type=click.Path(dir_okay=False),
              help="The recovered log (default: LOG.recovered.mcap beside it).")
@overwrite_option
def recover(log_file, out_file, overwrite):
    """Rewrite the readable part of a log cut short (a run killed by SIGKILL or a power loss) as a
    complete MCAP file that every reader opens."""
    from eels_gz.errors import LogError
    from eels_gz.outputs import OutputFile, reason
    from eels_gz.ros.mcap_log import TargetWriteError, check_mcap
    from eels_gz.ros.mcap_log import recover as recover_log

    source = Path(log_file)
    target = Path(out_file) if out_file else source.with_name(source.stem + ".recovered.mcap")
    try:
        check_mcap(source)  # before anything is written
        if target.absolute() == source.absolute() or (target.exists() and target.samefile(source)):
            raise LogError(f"the recovered log '{target}' would replace the log it reads, '{source}': choose "
                           "another -o")
        with OutputFile(target, overwrite=overwrite, what="recovered log", own="recovered log") as out:
            report = recover_log(source, out.tmp)
            out.commit()
    except EelsError as exc:
        fail(exc)
    except TargetWriteError as exc:
        fail(f"cannot write the recovered log '{target}': {reason(exc)}; '{source}' is unchanged")
    except OSError as exc:
        fail(f"cannot read '{source}': {reason(exc)}")
    state = "it was complete" if report["complete"] else f"it stops at its last complete chunk ({report['stopped']})"
    click.echo(f"{target}: {report['messages']} messages on {report['channels']} channels; {state}")


from eels_gz.cli.calibrate import calibrate  # noqa: E402  (the `eels-gz calibrate` group)
from eels_gz.cli.world import world  # noqa: E402  (the `eels-gz world` group)
main.add_command(world)
from eels_gz.cli.rover import rover  # noqa: E402  (the `eels-gz rover` group)
main.add_command(rover)
main.add_command(calibrate)
from eels_gz.cli.sweep import sweep  # noqa: E402  (the `eels-gz sweep` command)
main.add_command(sweep)
from eels_gz.cli.export import export  # noqa: E402  (the `eels-gz export` command)
main.add_command(export)
from eels_gz.cli.serve import serve  # noqa: E402  (the `eels-gz serve` command)
main.add_command(serve)
