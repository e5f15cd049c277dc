"""``eels-gz compare``: one scenario under stock contact and under the package's contact model: the
screw-ice model for an EELS robot (or, ``contact="rft"``, its screws in granular ground: resistive
force theory, medium ``granular.params``), the soil model (issue 34) for a rover.

The EELS-DARTS §4.2 validation compares the tail's planar pose (x, y, yaw)
of a 45 s screw-driven traverse between simulation and VICON (Fig. 14). Here
the same set-point profile runs twice in the embedded host, once with the
engine's isotropic contact (stock Gazebo) and once with the screw-ice model,
and the tail poses are compared the same way: per-model final pose and path
length, and the maximum and RMS of the difference (screw - stock) in x, y
and yaw.

A rover runs once on the engine's rigid contact (no soil: its wheels collide with the terrain,
friction from the world) and once on the soil set the run names (``--set soil.params=NAME``, else the
scenario's ``soil:``), the soil contact system in place of the wheels' collisions; its "tail" is the
rover's base link.

Output folder: ``stock/`` and ``screw/`` (``rft/`` with ``contact="rft"``, ``soil/`` for a rover;
each a full ``eels-gz run`` folder), ``compare.json``, ``compare.png`` (Fig. 14 layout: the two
models' x, y, yaw against time, and their difference) and ``replay.html``
(both runs in 3D, overlaid or side by side: eels_gz.viewer).
"""

from __future__ import annotations

import copy
import json
import logging
from pathlib import Path
from typing import Callable

import numpy as np
from mcap.reader import make_reader

from eels_gz import registry
from eels_gz.errors import (ConfigError, PluginCallbackError, RobotLost, RunInterrupted, SimulationDiverged,
                            WriteFailed)
from eels_gz.plots import comparison
from eels_gz.ros.messages import typestore

log = logging.getLogger(__name__)
MODELS = ("stock", "screw")
ROVER_MODELS = ("stock", "soil")
EELS_CONTACTS = ("screw", "rft")  # the package's contact models an EELS robot is compared under, against stock
TAIL_TOPIC = "/ground_truth/odom"


def tail_track(mcap_path: Path) -> tuple[np.ndarray, np.ndarray]:
    """Times (s) and planar poses (N, 3): x, y (m) and unwrapped yaw (rad) of
    the base link (the tail) from a run's ``log.mcap``."""
    store = typestore()
    t, pose = [], []
    with open(mcap_path, "rb") as f:
        for _, channel, message in make_reader(f).iter_messages(topics=[TAIL_TOPIC]):
            odom = store.deserialize_cdr(message.data, "nav_msgs/msg/Odometry")
            p, q = odom.pose.pose.position, odom.pose.pose.orientation
            t.append(message.log_time * 1e-9)
            pose.append((p.x, p.y, np.arctan2(2 * (q.w * q.z + q.x * q.y), 1 - 2 * (q.y * q.y + q.z * q.z))))
    if not t:
        raise ConfigError(f"{mcap_path}: no {TAIL_TOPIC} messages; was the run logged (log.mcap: true)?")
    pose = np.array(pose)
    pose[:, 2] = np.unwrap(pose[:, 2])
    return np.array(t), pose


def _model_summary(t: np.ndarray, pose: np.ndarray, run: dict) -> dict:
    steps = np.diff(pose[:, :2], axis=0)
    return {
        "status": run["status"],
        "sim_time": run["sim_time"],
        "real_time_factor": run["real_time_factor"],
        "final_pose": {"x": float(pose[-1, 0]), "y": float(pose[-1, 1]), "yaw": float(pose[-1, 2])},
        "path_length": float(np.sum(np.hypot(steps[:, 0], steps[:, 1]))),
        "samples": int(len(t)),
    }


def differences(pose_a: np.ndarray, pose_b: np.ndarray) -> dict:
    """Max |.| and RMS of ``pose_b - pose_a`` per axis x, y (m) and yaw (rad)."""
    d = pose_b - pose_a
    return {axis: {"max": float(np.max(np.abs(d[:, i]))), "rms": float(np.sqrt(np.mean(d[:, i] ** 2)))}
            for i, axis in enumerate(("x", "y", "yaw"))}


def compare(cfg: dict, out_dir: str | Path,
            progress: Callable[[str, int, int], None] | None = None, *,
            final_dir: str | Path | None = None, setup_progress: Callable[[float], None] | None = None,
            layout: str = "overlay", contact: str | None = None) -> dict:
    """Run ``cfg`` under both contact models; write and return compare.json, and the
    3D replay of both runs (``layout`` overlay or side) as replay.html.

    ``contact``: the package's model an EELS robot runs under against stock, ``screw`` or ``rft``
    (default: ``cfg``'s ``contact.model`` when it is ``rft``, else ``screw``).

    ``final_dir``: where ``out_dir`` will be once the comparison ends (the
    paths in compare.json; see eels_gz.outputs.RunFolder). A model's run that
    ends early (diverged, interrupted, fell through the terrain, a failed
    write) stops the comparison: compare.json is written with that status and
    the runs done so far, and the run's exception propagates.
    """
    from eels_gz.outputs import begin_result, check_writable_dir, write_result
    from eels_gz.run.hosts import run
    from eels_gz.run.resolve import check_combination_of

    entry = registry.robot(cfg["robot"]["name"])
    if entry.family not in ("eels", "rover"):
        raise ConfigError(f"compare runs the screw contact model (EELS robots) or the soil model (rovers), "
                          f"not '{entry.name}' (a {entry.family})")
    if not cfg["log"]["mcap"]:
        raise ConfigError("compare reads the tail pose from log.mcap; log.mcap must be true")
    if contact is not None and (contact not in EELS_CONTACTS or entry.family != "eels"):
        raise ConfigError(f"compare's contact model is one of {', '.join(EELS_CONTACTS)} for an EELS robot, "
                          f"got {contact!r} for '{entry.name}' (a {entry.family})")
    ours = contact or ("rft" if cfg["contact"].get("model") == "rft" else "screw")
    models = ("stock", ours) if entry.family == "eels" else ROVER_MODELS
    soil = _rover_soil(cfg, entry) if entry.family == "rover" else None
    out = check_writable_dir(out_dir)
    final = Path(final_dir) if final_dir is not None else out
    configs = {}
    for model in models:
        mcfg = copy.deepcopy(cfg)
        if soil is not None:  # a rover: the soil set named, or none at all (the engine's rigid contact)
            mcfg["soil"] = dict(soil) if model == "soil" else {"params": ""}
        else:
            mcfg["contact"]["model"] = model
        if model == "stock":  # contact.mu, ... are the screw model's; the engine's contact reads none
            mcfg["contact"] = {k: v for k, v in mcfg["contact"].items() if k in ("model", "params")}
        check_combination_of(mcfg)  # every run's robot, scenario, contact and world, before the first begins
        configs[model] = mcfg
    runs, tracks = {}, {}
    for model in models:
        mcfg = configs[model]
        step = (lambda d, n, m=model: progress(m, d, n)) if progress else None
        try:
            runs[model] = run(mcfg, out / model, step, final_dir=final / model, setup_progress=setup_progress)
        except Exception as exc:  # whatever ended a run that began, compare.json says so
            if not (out / model / "summary.json").exists():
                raise  # refused before it began: nothing to say in compare.json
            # the command prints the error once (exit_for); here only where the run's files are
            log.info("the %s contact run ended early; its log and summary are in %s", model, final / model)
            stopped = {"status": _status(exc), "message": f"the {model} contact run: {exc}",
                       **_reached(out, final, models),
                       "runs": {m: str(final / m) for m in models if (out / m / "summary.json").exists()}}
            try:
                write_result(out / "compare.json", json.dumps({**_header(cfg), **stopped}, indent=2))
            except OSError:
                pass  # the run's own summary says what happened
            raise
        tracks[model] = tail_track(out / model / "log.mcap")
    from eels_gz.viewer import load_run, write_replay

    other = models[1]
    replay = write_replay([load_run(out / m, m) for m in models], out / "replay.html",
                          title=f"{cfg['robot']['name']}: stock vs {other} contact", layout=layout)
    (t0, p0), (t1, p1) = tracks["stock"], tracks[other]
    n = min(len(t0), len(t1))
    if not np.allclose(t0[:n], t1[:n], atol=1e-9):
        raise ConfigError("the two runs logged at different times; cannot compare them sample by sample")
    t, p0, p1 = t0[:n], p0[:n], p1[:n]
    begin_result(out / "compare.json", "comparison")
    png = out / "compare.png"
    resolved = runs[other]["settings"]["resolved"]
    title = (f"{cfg['robot']['name']} on {Path(resolved['world_file']).stem}"
             + (f", scenario {cfg['scenario']['name']}" if cfg["scenario"].get("name") else ""))
    comparison(png, t, {"stock": p0, other: p1}, title)
    result = {
        **_header(cfg),
        "status": "ok",
        "duration": resolved["duration"],
        "dt": resolved["dt"],
        "tail_link": "base_link",
        "models": {m: _model_summary(*tracks[m], runs[m]) for m in models},
        "difference": {"of": f"{other} - stock", **differences(p0, p1)},
        "files": {"json": str(final / "compare.json"), "plot": str(final / "compare.png"),
                  "replay": str(final / replay.name), **{f"{m}_run": str(final / m) for m in models}},
    }
    if soil is not None:
        result["soil"] = runs["soil"]["settings"]["resolved"].get("soil_params")
    write_result(out / "compare.json", json.dumps(result, indent=2))
    return result


def _rover_soil(cfg: dict, entry) -> dict:
    """The soil section of a rover's soil run: the configuration's ``soil`` with ``soil.params`` from the
    scenario's ``soil:`` when not set; a ConfigError when neither names a set."""
    from eels_gz.control.setpoints import load_scenario
    from eels_gz.run.runner import check_soil

    soil = dict(cfg.get("soil") or {"params": None})
    if not soil.get("params") and cfg["scenario"].get("name"):
        scfg = cfg["scenario"]
        scenario = load_scenario(registry.scenario_path(scfg["name"]), {k: v for k, v in scfg.items() if k != "name"})
        soil["params"] = scenario.get("soil")
    if not soil.get("params"):
        raise ConfigError(f"compare runs a rover ('{entry.name}') under the soil model and under stock rigid "
                          "contact: name the soil, --set soil.params=NAME (a set of config/soil/: "
                          "eac1a, lava_gravel, dry_sand) or a scenario with a soil")
    check_soil(soil, entry)  # an unknown set or key stops here, before any run
    return soil


def _reached(out: Path, final: Path, models: tuple[str, ...] = MODELS) -> dict:
    """compare.json's keys for a comparison that stopped early, as a finished one has them: each model's
    status and what its run reached (final pose and path length from its log, when it logged a pose;
    ``not_run`` for a model whose run never began), no difference, and the files there are."""
    summaries, resolved = {}, {}
    for m in models:
        try:
            run = json.loads((out / m / "summary.json").read_text())
        except (OSError, ValueError):
            summaries[m] = {"status": "not_run", "sim_time": 0.0, "real_time_factor": None, "final_pose": None,
                         "path_length": None, "samples": 0}
            continue
        resolved = resolved or run.get("settings", {}).get("resolved", {})
        try:
            summaries[m] = _model_summary(*tail_track(out / m / "log.mcap"), run)
        except Exception:  # no log, or no pose in it yet: what the summary says
            summaries[m] = {"status": run.get("status"), "sim_time": run.get("sim_time"),
                         "real_time_factor": run.get("real_time_factor"), "final_pose": None, "path_length": None,
                         "samples": 0}
    files = {"json": str(final / "compare.json"),
             **{f"{m}_run": str(final / m) for m in models if summaries[m]["status"] != "not_run"}}
    return {"duration": resolved.get("duration"), "dt": resolved.get("dt"), "tail_link": "base_link",
            "models": summaries, "difference": None, "files": files}


def _header(cfg: dict) -> dict:
    return {"robot": cfg["robot"]["name"], "world": cfg["world"], "scenario": cfg["scenario"]}


def _status(exc: Exception) -> str:
    """compare.json's status for a run that ended on ``exc``: the run's own (summary.json's)."""
    if isinstance(exc, RobotLost):
        return exc.status
    for kind, status in ((SimulationDiverged, "diverged"), (RunInterrupted, "interrupted"),
                         (WriteFailed, "output_error"), (PluginCallbackError, "plugin_error")):
        if isinstance(exc, kind):
            return status
    return "error"
