"""``eels-gz run --host gazebo``: a resolved run exported (``eels-gz export --headless``) and run in the
gz-sim 8 found here, written as the same run folder the embedded host writes.

The folder (``DIR``) holds ``summary.json`` (its status and exit code as ``run``'s, ``host`` saying
which gz-sim ran it), ``metrics.json`` (what the scenario's systems last wrote under Gazebo, every
simulated second and when the world paused), ``log.mcap`` (``/clock``, ``/joint_states``,
``/ground_truth/odom`` and the force-torque and IMU topics the description has, as gz-sim published
them and ros_gz_bridge converts them), ``trajectory.png``, ``server.log`` (gz-sim's output) and
``export/`` (the world that ran). The world runs for the scenario's lead-in plus ``duration``
(:func:`eels_gz.scenarios.scenario_lead_in_s`): what the embedded host steps as setup, gz-sim steps
in the world's time. A scenario's placement before the run is the export's (the engine's, or the
shipped one where dartpy is missing).
"""

from __future__ import annotations

import json
import logging
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from eels_gz.errors import GazeboNotFound, GazeboRunFailed, RunInterrupted
from eels_gz.gazebo.install import GzSim, find_gz_sim, looked_for
from eels_gz.gazebo.record import world_clock, write_log
from eels_gz.gazebo.server import LISTENER_LOG, SERVER_LOG, TOPICS_FILE, new_partition, run_environment, run_world
from eels_gz.interrupt import interrupts
from eels_gz.outputs import begin_result, check_writable_dir, write_result
from eels_gz.paths import asset
from eels_gz.process_start import process_info

if TYPE_CHECKING:
    from eels_gz.run.plan import RunPlan

log = logging.getLogger(__name__)
EXPORT_DIR = "export"
# the gz -> ROS topics a run records, by gz type (the listener keeps these; cameras and lidars need a
# render engine, which the headless export leaves out)
RECORDED_TYPES = ("gz.msgs.Odometry", "gz.msgs.Model", "gz.msgs.Wrench", "gz.msgs.IMU")
# the gz systems whose topics a run records when the description loads them (every robot; a rig may not)
STATE_PUBLISHERS = {"/ground_truth/odom": "gz-sim-odometry-publisher-system",
                    "/joint_states": "gz-sim-joint-state-publisher-system"}
_RUN_END = re.compile(r"scenario run end: (\w+): (.*)")  # gz_compat.request_run_end's log line


def require_gz_sim() -> GzSim:
    """The gz-sim found here, or GazeboNotFound saying where it was looked for."""
    gz = find_gz_sim()
    if gz is None:
        raise GazeboNotFound(f"--host gazebo: no gz-sim 8 found ({looked_for()}); install Gazebo Harmonic from its "
                             "binary packages (with ROS 2 Jazzy, or packages.osrfoundation.org), or set "
                             "EELS_GZ_GAZEBO to its prefix")
    return gz


def python_path() -> list[str]:
    """What the gz-sim Python systems and the listener import from: this package and the site-packages
    of the interpreter running it (numpy, numba, ...)."""
    import eels_gz

    return [str(Path(eels_gz.__file__).resolve().parents[1])] + [p for p in sys.path if p.endswith("-packages")]


def listener_python(env: dict) -> str:
    """An interpreter that imports Gazebo's gz.transport13 and gz.msgs10 in ``env``: this one, else the
    ``python3`` on gz's PATH; GazeboNotFound naming what failed."""
    candidates = [sys.executable, shutil.which("python3", path=env.get("PATH")) or ""]
    errors = []
    for python in dict.fromkeys(c for c in candidates if c):
        res = subprocess.run([python, "-c", "import gz.transport13, gz.msgs10.odometry_pb2, "
                              "google.protobuf.json_format"], capture_output=True, text=True, env=env, timeout=120)
        if res.returncode == 0:
            return python
        errors.append(f"{python}: {(res.stderr.strip().splitlines() or ['?'])[-1]}")
    raise GazeboNotFound("--host gazebo: no Python here imports gz-transport's and gz-msgs' bindings "
                         f"(gz.transport13, gz.msgs10): {'; '.join(errors)}")


def _sensors(root) -> list[tuple[str, str, str, str]]:
    """(reference, name, type, <topic>) of each sensor in the description's <gazebo reference> blocks."""
    return [(g.get("reference"), s.get("name"), s.get("type"), (s.findtext("topic") or "").strip())
            for g in root.iter("gazebo") if g.get("reference") for s in g.iter("sensor")]


def recorded_topics(urdf: str, robot: str, world: str):
    """The bridge entries (config/bridge.yaml, gz -> ROS) a run records for the description ``urdf``:
    ground truth and joint states (where its OdometryPublisher and JointStatePublisher systems publish
    them), each force-torque sensor and an IMU on ``/imu``; and those the listener waits for (all but
    the wheel odometry, which only a rover's drive publishes)."""
    from lxml import etree

    from eels_gz.ros.bridge import load_bridge

    root = etree.fromstring(urdf.encode())
    loaded = {Path(p.get("filename") or "").name for p in root.iter("plugin")}
    sensors = _sensors(root)
    fts = [(ref, name) for ref, name, kind, _ in sensors if kind == "force_torque"]
    imu_topics = {"/" + topic.lstrip("/") for _, _, kind, topic in sensors if kind == "imu" and topic}
    entries = [e for e in load_bridge(robot=robot, fts_sensors=fts, world=world, host=False)
               if e.direction == "GZ_TO_ROS" and e.gz_type in RECORDED_TYPES
               and (e.gz_type != "gz.msgs.IMU" or e.gz_topic in imu_topics)
               and (e.gz_topic not in STATE_PUBLISHERS or STATE_PUBLISHERS[e.gz_topic] in loaded)]
    wait = [e for e in entries if e.gz_topic in STATE_PUBLISHERS or e.gz_type == "gz.msgs.Wrench"]
    return entries, wait


def _rename_paths(folder: Path, work: Path, final: Path) -> None:
    """The export's files name their folder's staging path (``DIR.partial``) while the world runs from
    it: give them the final one, as ``eels-gz export`` does."""
    work_abs, final_abs = f"{work.absolute().resolve()}/", f"{final.absolute()}/"
    if work_abs == final_abs:
        return
    for path in folder.iterdir():
        if path.is_file() and path.suffix in (".sdf", ".urdf", ".json", ".yaml"):
            text = path.read_text()
            if work_abs in text:
                path.write_text(text.replace(work_abs, final_abs))


def run_in_gazebo(cfg: dict, out_dir: str | Path, progress: Callable[[int, int], None] | None = None, *,
                  final_dir: str | Path | None = None, save_config: str | Path | None = None,
                  setup_progress: Callable[[float], None] | None = None, overwrite_config: bool = False,
                  time_systems: bool = False) -> dict:
    """:func:`run_plan_in_gazebo` of the configuration ``cfg``, its plan resolved once as the run's export
    (:func:`eels_gz.run.export.resolve_export` into ``DIR/export``), where the export is written: after
    gz-sim's environment is probed, interruptible at once. Arguments and outcome: :func:`run_plan_in_gazebo`."""
    from eels_gz.run.export import resolve_export

    return _run(lambda export: resolve_export(cfg, export), out_dir, progress, final_dir=final_dir,
                save_config=save_config, overwrite_config=overwrite_config, time_systems=time_systems)


def run_plan_in_gazebo(plan: RunPlan, out_dir: str | Path, progress: Callable[[int, int], None] | None = None, *,
                       final_dir: str | Path | None = None, save_config: str | Path | None = None,
                       setup_progress: Callable[[float], None] | None = None, overwrite_config: bool = False,
                       time_systems: bool = False) -> dict:
    """:func:`eels_gz.run.runner.run_plan` in gz-sim (module docstring), for a plan resolved as an export
    into ``out_dir/export`` (:func:`eels_gz.run.export.resolve_export`, whose sets the world names). Returns
    the summary for ``ok`` and a scenario's own ending; raises RunInterrupted (SIGINT, SIGTERM) or
    GazeboRunFailed (``plugin_error``, ``server_failed``, ``listener_failed``) after writing it.
    ``time_systems``: the Python systems' wall time per callback in ``export/timing.json`` (summary
    ``python_systems``)."""
    return _run(lambda export: plan, out_dir, progress, final_dir=final_dir, save_config=save_config,
                overwrite_config=overwrite_config, time_systems=time_systems)


def _run(plan_of: Callable[[Path], RunPlan], out_dir: str | Path, progress, *, final_dir, save_config,
         overwrite_config, time_systems) -> dict:
    """:func:`run_plan_in_gazebo` of ``plan_of(out/export)``, called where the export is written."""
    import yaml

    from eels_gz.outputs import OutputFile
    from eels_gz.run.export import write_export

    called = time.perf_counter()
    gz = require_gz_sim()
    out = check_writable_dir(out_dir)
    final = Path(final_dir) if final_dir is not None else out
    with interrupts() as stop:
        with stop.immediately():
            env_probe = run_environment(gz, new_partition(), python_path(), str(asset("plugins_py")),
                                        str(asset("models")))
            listener = listener_python(env_probe)
            plan = plan_of(out / EXPORT_DIR)
            # as fast as the machine allows, as the embedded host runs; paced when the run asks (--rate)
            rate = plan.cfg["ros"].get("rate")
            result, plan, urdf = write_export(plan, out / EXPORT_DIR, headless=True,
                                              real_time_factor=float(rate or 0.0), time_systems=time_systems)
        if save_config is not None:  # as run writes it (eels_gz.run.runner.run_plan)
            from eels_gz.outputs import command_line
            from eels_gz.own_files import stamp_config

            with OutputFile(save_config, overwrite=overwrite_config, own="config",
                            what="--save-config file") as saved:
                saved.write_text(stamp_config(yaml.safe_dump(result["config"], sort_keys=False), command_line()))
        begin_result(out / "summary.json")
        partition = new_partition()
        env = run_environment(gz, partition, python_path(), str(asset("plugins_py")), str(asset("models")))
        entries, wait = recorded_topics(urdf, plan.robot.entry.name, result["world_name"])
        iterations = int(result["iterations"])
        total = max(1, iterations)

        done = 0  # steps reported to ``progress``

        def report(t: float) -> None:
            nonlocal done
            k = min(total, round(t / plan.dt))
            if progress is not None and k > done:
                progress(k - done, total)
                done = k

        gzrun = run_world(gz, out / EXPORT_DIR / "world.sdf", result["world_name"], iterations, out, env,
                          [(e.gz_topic, e.gz_type) for e in wait], stop=stop, listener_python=listener,
                          progress=report, timeout=120.0 + 100.0 * (iterations * plan.dt),
                          also=[(e.gz_topic, e.gz_type) for e in entries if e not in wait])
        gzrun.partition = partition
        summary = _write_outputs(gzrun, result, plan, out, final, entries, gz, called)
    _rename_paths(out / EXPORT_DIR, out / EXPORT_DIR, final / EXPORT_DIR)
    if summary["status"] == "interrupted":
        raise RunInterrupted(gzrun.signum, summary["message"])
    if summary["status"] in ("plugin_error", "server_failed", "listener_failed"):
        raise GazeboRunFailed(summary["status"], summary["message"])
    return summary


def _write_outputs(gzrun, result: dict, plan: RunPlan, out: Path, final: Path, entries, gz: GzSim,
                   called: float) -> dict:
    from eels_gz.ros.mcap_log import McapLog

    status, message = gzrun.status, gzrun.message
    server_log = (out / SERVER_LOG).read_text(errors="replace")
    if status == "paused":  # a scenario system ended the run (gz_compat.request_run_end logs why)
        ends = _RUN_END.findall(server_log)
        status, message = ends[-1] if ends else ("ok", "the world was paused")
    elif status == "interrupted":
        import signal

        message = f"interrupted by {signal.Signals(gzrun.signum).name}"
    records = gzrun.records
    mcap = McapLog(out / "log.mcap") if plan.log.mcap else None
    try:
        traj, counts = write_log(records, entries, mcap)
    finally:
        if mcap is not None:
            mcap.close()
    sim_time, ran = world_clock(records)
    t, pos, quat = traj.arrays()
    if len(t) and t[-1] > sim_time:  # the server stops between two of its 5 Hz statistics
        sim_time = float(t[-1])
    files = {"summary": str(final / "summary.json"), "server_log": str(final / SERVER_LOG),
             "export": str(final / EXPORT_DIR / "export.json")}
    if mcap is not None:
        files["log"] = str(final / "log.mcap")
    if plan.log.plot and len(t) > 1:
        from eels_gz.plots import trajectory
        from eels_gz.rotations import quat_yaw

        trajectory(out / "trajectory.png", t, pos, np.array([quat_yaw(q) for q in quat]),
                   f"{plan.robot.entry.name} on {Path(result['world']).stem} in gz-sim {gz.version}"
                   + (f", scenario {result['scenario']}" if result["scenario"] else ""))
        files["plot"] = str(final / "trajectory.png")
    gz_metrics = out / EXPORT_DIR / "metrics.json"
    if gz_metrics.exists():
        metrics = json.loads(gz_metrics.read_text())
        metrics = {"scenario": metrics.pop("scenario", result["scenario"]), "status": status, **metrics}
        (out / "metrics.json").write_text(json.dumps(metrics, indent=2))
        files["metrics"] = str(final / "metrics.json")
    from eels_gz.rotations import quat_rpy

    p = pos[-1] if len(pos) else np.full(3, np.nan)
    q = quat[-1] if len(quat) else np.full(4, np.nan)
    summary = {
        "status": status,
        "sim_time": sim_time,
        "setup_sim_time": result["lead_in_s"],
        # the wall time the world ran (gz-sim's stopwatch: the server's start and pauses left out)
        "wall_time": ran,
        "real_time_factor": sim_time / ran if ran > 0 else None,
        "steps": int(round(sim_time / plan.dt)),
        "final_base_pose": {"position": [float(v) for v in p], "orientation_wxyz": [float(v) for v in q],
                            "rpy": quat_rpy(q) if len(quat) else [float("nan")] * 3},
        "settings": {"config": result["config"],
                     "resolved": {"world_file": result["world"], "robot_description": plan.robot.description.source,
                                  "dt": plan.dt, "contact": plan.contact_model, "duration": plan.duration,
                                  "lead_in_s": result["lead_in_s"], "iterations": result["iterations"],
                                  "systems": result["python_systems"], "headless": result["headless"]}},
        "files": files,
        "host": {"name": "gazebo", "gz_sim": gz.version, "found": gz.where, "partition": gzrun.partition,
                 "server_exit_code": gzrun.returncode, "topics": counts,
                 "process_wall_time": gzrun.wall_time},
        "process": process_info(),
        "setup_wall_time": None,
    }
    timing = out / EXPORT_DIR / "timing.json"
    if timing.exists():  # --time-systems: what the Python systems cost, s in total and per step
        totals = json.loads(timing.read_text())
        steps = max((v.get("steps", 0) for v in totals.values()), default=0)
        spent = sum(v.get(k, 0.0) for v in totals.values() for k in ("pre_update_s", "update_s", "post_update_s"))
        summary["python_systems"] = {"seconds": spent, "steps": steps,
                                     "per_step_s": spent / steps if steps else None, "systems": totals}
    if message:
        summary["message"] = message
    if gzrun.plugin_errors:
        summary["plugin_errors"] = gzrun.plugin_errors
    summary["setup_wall_time"] = time.perf_counter() - called - gzrun.wall_time
    if status in ("ok",) and (out / TOPICS_FILE).exists():
        (out / TOPICS_FILE).unlink()  # in log.mcap now; kept when something went wrong
    else:
        files["topics"] = str(final / TOPICS_FILE)
    files["listener_log"] = str(final / LISTENER_LOG)
    write_result(out / "summary.json", json.dumps(summary, indent=2))
    return summary
