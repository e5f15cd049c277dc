"""The Archimede test campaign (§3.1) in the embedded host: a rover drive is a run of the scenario
``rover_drive`` (config/scenarios/rover_drive.yaml; its system plugins_py/rover_drive.py drives the
path through icr_steering and records the ground truth, the odometry and the slip). This module turns
the options of ``eels-gz rover drive`` into that run's configuration, runs it through
:func:`eels_gz.run.runner.run` (the one step loop) and writes the drive's record: the nominal path,
the ground truth and the odometry (Fig. 9), the end-point odometry error, and wheel slip (Fig. 12/13).
Paths, plan and slip: :mod:`eels_gz.scenarios.rover_drive`.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
from pathlib import Path

from lxml import etree

from eels_gz import registry
from eels_gz.errors import ConfigError, EelsError, RunInterrupted
from eels_gz.interrupt import interrupts
from eels_gz.paths import asset
from eels_gz.scenarios.rover_drive import (FLAT_PATHS, SAMPLE_PERIOD, Segment, check_path, check_rate, nominal_path,
                                           path_index, path_segments, slip_stats)

__all__ = ["PATHS", "SAMPLE_PERIOD", "Segment", "nominal_path", "path_segments", "slip_stats", "run_drive",
           "drive_sample", "slope_world", "slope_angle", "campaign_config", "interrupted", "drive_config"]

log = logging.getLogger(__name__)
PATHS = FLAT_PATHS  # the flat test paths of §3.1.1 (the campaign's plan: config/sweeps/rover_campaign.yaml)
SCENARIO = "rover_drive"
# the drive record's keys from the scenario's metrics.json, as they are named there
_FROM_METRICS = ("speed", "distance", "end_error", "end_error_relative", "saturated", "max_wheel_rate",
                 "slip_samples", "t", "ground_truth", "odometry")


def campaign_config() -> dict:
    """The ``campaign`` section of config/rover_control.yaml (the slope worlds' friction)."""
    from eels_gz.yamlio import load

    return load(asset("config", "rover_control.yaml"))["campaign"]


def slope_world(angle_deg: float, cache: Path) -> Path:
    """A slope world rising along +x at ``angle_deg``, generated with eels_gz.terrain
    into ``cache`` (once), with the campaign's soil friction on the slope."""
    from eels_gz.terrain.worldgen import make_primitive
    from eels_gz.terrain.writers import write_terrain

    name = f"rover_slope_{angle_deg:g}".replace(".", "_")
    world = cache / "worlds" / f"{name}.sdf"
    if world.is_file():
        return world
    mu = float(campaign_config()["slope_friction"])
    folder, world = write_terrain(make_primitive("slope", angle=angle_deg), name, cache / "models", cache / "worlds")
    model = folder / "model.sdf"
    tree = etree.parse(str(model))
    for tag in ("mu", "mu2"):
        for node in tree.iter(tag):
            node.text = f"{mu:g}"
    prefix = f"model://{name}/"
    for uri in tree.iter("uri"):  # relative to the model file: no resource path needed
        if uri.text and uri.text.strip().startswith(prefix):
            uri.text = uri.text.strip()[len(prefix):]
    tree.write(str(model), xml_declaration=True, encoding="utf-8")
    wtree = etree.parse(str(world))
    for uri in wtree.iter("uri"):
        uri.text = str(folder.resolve())  # the host resolves absolute paths; no resource path needed
    wtree.write(str(world), xml_declaration=True, encoding="utf-8")
    return world


def _rover_checks(robot: str, path: str, rate: float, segments: list[Segment], mode: str) -> None:
    """Refuse, before any model is built, a robot that is not a rover, a wheel rate its drive motors
    cannot reach (the wheel joints' ``<limit velocity>``) and a path its steering cannot drive as given
    (the steering joints' limits): the same checks the rover_drive system makes when it starts."""
    from eels_gz.rover.from_urdf import wheels
    from eels_gz.rover.steering import IcrSteering

    _, desc = _rover(robot, mode)
    check_rate(rate, _max_wheel_rate(desc))
    check_path(IcrSteering(wheels(desc.model), mode), robot, path, segments)


def _rover(robot: str, mode: str):
    """(registry entry, description without Gazebo blocks) of a rover; ConfigError for another robot."""
    from eels_gz.description.assemble import robot_description

    entry = registry.robot(robot)
    if entry.family != "rover":
        raise ConfigError(f"robot '{robot}' is not a rover; expected one of: "
                          f"{', '.join(n for n, e in registry.ROBOTS.items() if e.family == 'rover')}")
    return entry, robot_description(entry, xacro_args={"drive_mode": mode}, gazebo=False)


def _max_wheel_rate(desc) -> float:
    """The drive motors' limit (rad/s): the smallest wheel joint ``<limit velocity>``, or inf."""
    model = desc.model
    limits = [float(j.find("limit").get("velocity")) for j in map(model.joint_elements.get, model.wheel_joints)
              if j.find("limit") is not None and j.find("limit").get("velocity")]
    return min(limits) if limits else math.inf


def path_refusal(robot: str, path: str, *, scale: float = 1.0, mode: str = "general_ackermann") -> str | None:
    """Why ``robot`` cannot drive ``path`` as given (its steering joints' limits; the message a drive
    of it would stop with), or None when it can. A robot that is not a rover is a ConfigError."""
    from eels_gz.rover.from_urdf import wheels
    from eels_gz.rover.steering import IcrSteering

    _, desc = _rover(robot, mode)
    try:
        check_path(IcrSteering(wheels(desc.model), mode), robot, path,
                   path_segments(path, scale))
    except ConfigError as exc:
        return str(exc)
    return None


def rate_refusal(robot: str, rate: float, *, mode: str = "general_ackermann") -> str | None:
    """Why ``robot``'s drive motors cannot reach the mean wheel rate ``rate`` (rad/s), or None."""
    _, desc = _rover(robot, mode)
    try:
        check_rate(rate, _max_wheel_rate(desc))
    except ConfigError as exc:
        return str(exc)
    return None


def drive_config(robot: str, path: str, rate: float, world: str | Path, *, scale: float = 1.0,
                 mode: str = "general_ackermann", extent: float = math.inf, extra: dict | None = None) -> dict:
    """The ``eels-gz run`` configuration of a drive: scenario rover_drive with the path, rate, scale
    and extent as its params, the drive mode as the rover's xacro argument; ``extra``: more dotted
    settings (e.g. ``soil.params``)."""
    from eels_gz import config

    cfg = config.resolve()
    items = {"robot.name": robot, "world": str(world), "scenario.name": SCENARIO,
             "scenario.path": float(path_index(path)), "scenario.rate": float(rate), "scenario.scale": float(scale),
             "scenario.extent": float(extent) if math.isfinite(extent) else 0.0,
             "robot.xacro_args": {"drive_mode": mode}, **(extra or {})}
    for key, value in items.items():
        config.set_key(cfg, key, value, "rover drive")
    return cfg


def run_drive(robot: str, path: str, rate: float, world: str | Path, out: Path | None, *,
              slope_deg: float = 0.0, scale: float = 1.0, mode: str = "general_ackermann",
              extent: float = math.inf, overwrite: bool = True, final: Path | None = None,
              plots: bool = True) -> dict:
    """One drive, a run of the scenario rover_drive; writes ``out/<robot>_<path>_<rate>_<world>.json``
    (the record) and the run's own folder ``out/<robot>_<path>_<rate>_<world>/`` (summary.json,
    metrics.json, log.mcap, plots) when ``out`` is given (a temporary folder otherwise).

    ``final``: where ``out`` will be once renamed into place (a sweep sample's ``DIR.partial`` is
    renamed to ``DIR``); the record's paths inside ``out`` (its file, a generated world) then name
    their place there, so that they still exist when the run is done.

    The file is checked writable (and, without ``overwrite``, absent) before the
    model is built, locked against a concurrent run and replaced as a whole. An
    interrupted drive (SIGINT, SIGTERM) writes its record too, with status
    ``interrupted`` and the signal number in ``signal``. ``plots``: the run's trajectory.png and
    rover_drive.png (a campaign's drives leave them out)."""
    import tempfile

    from eels_gz.outputs import OutputFile
    from eels_gz.own_files import DRIVE_MARK
    from eels_gz.run.runner import run

    if not (math.isfinite(rate) and rate > 0):
        raise ConfigError(f"--speed must be a positive wheel rate in rad/s, got {rate}")
    segments = path_segments(path, scale)
    stem = f"{robot}_{path}_{rate:g}_{Path(str(world)).stem}".replace("/", "_")
    with contextlib.ExitStack() as stack:
        target = None
        if out is not None:
            target = stack.enter_context(OutputFile(out / f"{stem}.json", overwrite=overwrite, lock=True,
                                                    what="rover run file", own="rover run file"))
            folder = Path(out) / stem
        else:
            folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="eels_gz_drive_"))) / stem
        with interrupts() as stop, stop.immediately():
            _rover_checks(robot, path, rate, segments, mode)
            cfg = drive_config(robot, path, rate, world, scale=scale, mode=mode, extent=extent,
                               extra=None if plots else {"log.plot": False})
        record = _drive_run(run, cfg, folder, final)
        record.update({"robot": robot, "path": path, "rate": rate, "world": str(_moved(world, out, final)),
                       "slope_deg": slope_deg, "scale": scale, "mode": mode,
                       "nominal": nominal_path(segments).tolist()})
        if out is not None:
            record["run"] = str(_moved(folder, out, final))
        if target is not None:
            record["file"] = str(_moved(target.path, out, final))
            record[DRIVE_MARK[0]] = DRIVE_MARK[1]  # how a later --overwrite knows the file is ours
            target.write_text(json.dumps(record))
    log.info("%s %s at %g rad/s on %s: %.3f m, end error %.2f %%, slip median %s", robot, path, rate, world,
             record["distance"], 100 * (record["end_error_relative"] or 0), record["slip"]["median"])
    return record


def _drive_run(run, cfg: dict, folder: Path, final: Path | None) -> dict:
    """Run ``cfg`` into ``folder`` and turn its summary.json and metrics.json into a drive record
    (status: the drive's own, ``timed out`` or ``left the terrain``, or the run's when it did not
    end ok, ``diverged: MESSAGE`` for a blow-up; ``signal`` when interrupted)."""
    from eels_gz.errors import SimulationDiverged
    from eels_gz.outputs import RunFolder

    folder.parent.mkdir(parents=True, exist_ok=True)
    signum, error = None, None
    # the run's folder by the rules of every run folder: written aside, renamed into place, replacing
    # only a run folder (the drive's record file decides --overwrite)
    with RunFolder(folder, overwrite=True, what="rover drive run") as staged:
        try:
            run(cfg, staged.path, final_dir=folder if final is None else final / folder.name)
        except RunInterrupted as exc:
            if not (staged.path / "summary.json").is_file():
                raise
            signum = exc.signum
        except SimulationDiverged as exc:
            error = f"diverged: {exc}"
        except EelsError:  # a run that began ends with its summary; one refused before is raised
            if not (staged.path / "summary.json").is_file():
                raise
    summary = json.loads((folder / "summary.json").read_text())
    metrics_file = folder / "metrics.json"
    metrics = json.loads(metrics_file.read_text()) if metrics_file.is_file() else {}
    if error is not None:
        status = error
    elif summary["status"] != "ok":
        status = summary["status"]
    else:
        status = metrics.get("drive_status", "ok")
    record = {"status": status, "sim_time": summary["sim_time"]}
    message = summary.get("message") or (summary.get("error") or {}).get("message")
    if summary["status"] not in ("ok", "interrupted") and message:
        record["message"] = message
    record.update({k: metrics.get(k) for k in _FROM_METRICS})
    record["saturated"] = record["saturated"] or []
    record["slip"] = {"samples": metrics.get("slip_count", 0), "median": metrics.get("slip"),
                      "q1": metrics.get("slip_q1"), "q3": metrics.get("slip_q3")}
    for key in ("slip_samples", "t", "ground_truth", "odometry"):
        record[key] = record[key] or []
    if record["t"]:  # the last step's time on gz-sim's clock (integer ns), which the samples carry
        record["sim_time"] = record["t"][-1]
    if signum is not None:
        record["status"], record["signal"] = "interrupted", signum
    return record


def _moved(path: str | Path, out: Path | None, final: Path | None) -> str | Path:
    """``path`` as it will be once ``out`` is renamed to ``final`` (unchanged outside ``out``)."""
    if out is None or final is None:
        return path
    try:
        rel = Path(path).absolute().relative_to(Path(out).absolute())
    except ValueError:
        return path
    return Path(final) / rel


def slope_angle(world: str) -> float:
    """The angle (deg) of a ``slope:DEG`` world name."""
    try:
        angle = float(world.split(":", 1)[1])
    except ValueError:
        raise ConfigError(f"world 'slope:DEG' needs a number of degrees, got '{world}'") from None
    if not (math.isfinite(angle) and 0.0 <= angle < 90.0):
        raise ConfigError(f"world '{world}': the slope must be from 0 to 90 deg")
    return angle


def drive_sample(settings: dict, out: Path, final: Path | None = None) -> dict:
    """One drive of the campaign or of a sweep (``eels-gz sweep`` with ``command: rover drive``):
    ``settings`` robot, path, speed, world, mode, scale; a ``slope:DEG`` world is generated into
    ``out/terrain`` (with the campaign's soil friction) and the drive stops 1 m before the rover would
    leave the slope. Writes the run file into ``out`` (:func:`run_drive`, with ``final`` where ``out``
    will be renamed to) and returns its record."""
    world, angle, extent = settings["world"], 0.0, math.inf
    if str(world).startswith("slope:"):
        angle = slope_angle(world)
        with interrupts() as stop, stop.immediately():
            world = slope_world(angle, out / "terrain")
        extent = 0.5 * _slope_length() - 1.0  # stop a run before the rover leaves the slope
    return run_drive(settings["robot"], settings["path"], float(settings["speed"]), world, out, slope_deg=angle,
                     scale=float(settings["scale"]), mode=settings["mode"], extent=extent, final=final, plots=False)


def interrupted(record: dict) -> RunInterrupted | None:
    """The RunInterrupted to raise for an interrupted drive record, else None."""
    if record["status"] != "interrupted":
        return None
    return RunInterrupted(record["signal"], f"interrupted at t = {record['sim_time']:.3f} s of the {record['path']} "
                                            "drive")


def _slope_length() -> float:
    from eels_gz.terrain.worldgen import primitive_parameters

    return float(primitive_parameters("slope")["length"])
