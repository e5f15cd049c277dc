"""``eels-gz run``: a resolved configuration -> a simulation in the embedded
host -> ``log.mcap``, ``summary.json`` and ``trajectory.png``."""

from __future__ import annotations

import json
import logging
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import yaml

from eels_gz import registry
from eels_gz.control.setpoints import load_scenario
from eels_gz.description.assemble import robot_description
from eels_gz.errors import ConfigError, PluginCallbackError, SimulationDiverged
from eels_gz.host.gzmath import matrix_to_quat
from eels_gz.host.simulation import RobotSpec, Simulation
from eels_gz.plots import trajectory
from eels_gz.ros import messages
from eels_gz.ros.mcap_log import McapLog

log = logging.getLogger(__name__)
DEFAULT_DURATION = 10.0
CONTACT_MODELS = ("stock", "screw")


@dataclass
class Prepared:
    sim: Simulation
    duration: float
    settings: dict
    scenario: dict | None = None  # the loaded scenario, parameters resolved
    scenario_file: str = ""


def _scenario_file(scfg: dict, work_dir: Path | None) -> tuple[str, dict | None]:
    """The scenario the joint-control plugin reads, with ``scenario.*`` parameters applied.

    A scenario with parameters is written, resolved, to ``work_dir/scenario.yaml``
    (a temporary folder without one), so the run's output records what ran.
    """
    if not scfg.get("name"):
        extra = sorted(k for k in scfg if k != "name")
        if extra:
            raise ConfigError(f"scenario parameters {extra} given without a scenario (set --scenario)")
        return "", None
    source = registry.scenario_path(scfg["name"]).resolve()
    scenario = load_scenario(source, {k: v for k, v in scfg.items() if k != "name"})
    if not scenario["params"]:
        return str(source), scenario
    folder = Path(work_dir) if work_dir is not None else Path(tempfile.mkdtemp(prefix="eels_gz_scenario_"))
    folder.mkdir(parents=True, exist_ok=True)
    resolved = folder / "scenario.yaml"
    resolved.write_text(f"# {scfg['name']} from {source}, parameters resolved\n"
                        + yaml.safe_dump(scenario, sort_keys=False))
    return str(resolved.resolve()), scenario


def prepare(cfg: dict, work_dir: str | Path | None = None) -> Prepared:
    """Build the simulation a resolved configuration describes (``work_dir``:
    where a parametrized scenario is written resolved)."""
    scenario_file, scenario = _scenario_file(cfg["scenario"], work_dir)
    cfg = scenario_defaults(cfg, scenario)
    rcfg = cfg["robot"]
    entry = registry.robot(rcfg["name"])
    duration = cfg["duration"]
    if scenario is not None and duration is None:
        duration = scenario.get("duration")
    duration = DEFAULT_DURATION if duration is None else float(duration)
    if not duration > 0:
        raise ConfigError(f"duration must be positive, got {duration}")
    world = registry.world_path(cfg["world"])
    contact = cfg["contact"]
    if contact["model"] not in CONTACT_MODELS:
        raise ConfigError(f"contact.model must be one of {', '.join(CONTACT_MODELS)}, got {contact['model']!r}")
    xacro_args = dict(rcfg.get("xacro_args") or {})
    state_rate = cfg["ros"]["state_rate"]
    if not state_rate > 0:
        raise ConfigError(f"ros.state_rate must be positive, got {state_rate}")
    xacro_args.setdefault("state_rate", state_rate)  # the JointStatePublisher and OdometryPublisher rate
    if entry.family == "eels":
        xacro_args.update(contact=contact["model"], contact_params=contact["params"], world_file=str(world.resolve()))
    elif contact["model"] != "stock":
        raise ConfigError(f"contact.model '{contact['model']}' applies to EELS robots only, not '{entry.name}'")
    description = robot_description(entry, n_modules=rcfg["n_modules"], xacro_args=xacro_args,
                                    urdf_file=rcfg["urdf"], gazebo=True, scenario=scenario_file)
    phys, host = cfg["physics"], cfg["sim"]
    sim = Simulation(world, RobotSpec(entry.name, description, rcfg["pose"], optimize=bool(rcfg["optimize"])),
                     dt=phys["dt"], collision_detector=phys["collision_detector"],
                     max_velocity=phys["max_velocity"], plugin_errors=host["plugin_errors"],
                     batch_api=bool(host["batch_api"]))
    if scenario is not None and scenario.get("tethers"):
        from eels_gz.host.tethers import TetherSet, parse_tethers

        where = scenario_file or str(cfg["scenario"]["name"])
        sim.add_pre_update(TetherSet(sim, parse_tethers(scenario["tethers"], where), where).pre_update)
    settings = {
        "config": cfg,
        "resolved": {
            "world_file": str(world),
            "robot_description": description.source,
            "bodies": sim.robot_skeleton.getNumBodyNodes(),
            "dt": sim.dt,
            "collision_detector": sim.detector_name,
            "contact": contact["model"],
            "duration": duration,
            "dofs": sim.robot_skeleton.getNumDofs(),
            "systems": [s.module for s in sim.systems],
        },
    }
    return Prepared(sim, duration, settings, scenario, scenario_file)


CONTACT_FALLBACK = {"model": "stock", "params": "ice"}


def scenario_defaults(cfg: dict, scenario: dict | None) -> dict:
    """A scenario's ``robot`` and ``world`` apply where the configuration keeps
    the run defaults; its ``contact`` model and params fill the configuration's
    null ones (then stock contact with the ``ice`` parameters)."""
    contact = dict(cfg["contact"])
    for key, fallback in CONTACT_FALLBACK.items():
        if contact.get(key) is None:
            contact[key] = ((scenario or {}).get("contact") or {}).get(key) or fallback
    out = dict(cfg, contact=contact)
    if not scenario:
        return out
    from eels_gz.config import defaults

    base = defaults()
    if scenario.get("robot") and cfg["robot"]["name"] == base["robot"]["name"]:
        out["robot"] = {**cfg["robot"], "name": scenario["robot"]}
    if scenario.get("world") and cfg["world"] == base["world"]:
        out["world"] = scenario["world"]
    return out


class Recorder:
    """Samples the robot at the log rate into arrays and ``log.mcap``."""

    def __init__(self, sim: Simulation, mcap_path: Path | None):
        self.sim = sim
        skel = sim.robot_skeleton
        self.base = skel.getBodyNode(0)
        self.joint_dofs, self.joint_names = [], []
        for j in range(skel.getNumJoints()):
            joint = skel.getJoint(j)
            if joint.getType() != "FreeJoint" and joint.getNumDofs() == 1:
                self.joint_dofs.append(joint.getIndexInSkeleton(0))
                self.joint_names.append(joint.getName())
        self.joint_dofs = np.array(self.joint_dofs, dtype=int)
        self.state = next(s for s in sim.states if s.skel is skel)
        self.t, self.pos, self.quat = [], [], []
        self.log = McapLog(mcap_path) if mcap_path else None
        if self.log:
            self.log.channel("/clock", messages.CLOCK)
            self.log.channel("/joint_states", messages.JOINT_STATE)
            self.log.channel("/ground_truth/odom", messages.ODOMETRY)
            from eels_gz.host.scene_log import SceneLog

            self.scene = SceneLog(sim, self.log, sim.robot_source_urdf)

    def sample(self) -> None:
        t_ns = round(self.sim.time * 1e9)
        T = self.base.getWorldTransform().matrix()
        q = matrix_to_quat(T[:3, :3])
        self.t.append(self.sim.time)
        self.pos.append(T[:3, 3].copy())
        self.quat.append(q)
        if self.log is None:
            return
        st, idx = self.state, self.joint_dofs
        effort = st.applied[idx] if st.applied is not None else np.zeros(len(idx))
        R = T[:3, :3]
        v_child = R.T @ self.base.getLinearVelocity()
        w_child = R.T @ self.base.getAngularVelocity()
        self.log.write("/clock", t_ns, messages.clock(t_ns))
        self.log.write("/joint_states", t_ns, messages.joint_state(t_ns, self.joint_names, st.q[idx], st.dq[idx], effort))
        self.log.write("/ground_truth/odom", t_ns, messages.odometry(t_ns, "world", self.base.getName(), T[:3, 3], q, v_child, w_child))
        self.scene.sample(t_ns)

    def close(self) -> None:
        if self.log:
            self.log.close()


def _yaw(q: np.ndarray) -> float:
    w, x, y, z = q
    return float(np.arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z)))


def _rpy(q: np.ndarray) -> list[float]:
    w, x, y, z = q
    roll = np.arctan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y))
    pitch = np.arcsin(np.clip(2 * (w * y - z * x), -1, 1))
    return [float(roll), float(pitch), _yaw(q)]


class HostRos:
    """The host's gz topics (clock, joint states, ground truth, commands) bridged to ROS 2."""

    def __init__(self, sim: Simulation, rcfg: dict):
        from eels_gz.host.topics import HostTopics
        from eels_gz.ros.interface import RosInterface

        rate = float(rcfg["state_rate"])
        if not rate > 0:
            raise ConfigError(f"ros.state_rate must be positive, got {rate}")
        self.topics = HostTopics(sim, period=max(1, int(round(1.0 / (rate * sim.dt)))))
        self.interface = RosInterface(sim, rcfg["transport"], rcfg["domain"])
        self.post_step = self.topics.post_step

    def close(self) -> None:
        self.interface.close()


def start_sensors(sim: Simulation, scfg: dict, mcap=None):
    """The robot's simulated sensors (eels_gz.host.sensors) when ``sensors.enabled``, logged to ``mcap``."""
    if not scfg["enabled"] or sim.robot_skeleton is None or not sim.sensor_specs:
        return None
    from eels_gz.host.sensors import HostSensors, log_sensors

    sensors = HostSensors(sim, noise=bool(scfg["noise"]), seed=int(scfg["seed"]), cameras=bool(scfg["cameras"]))
    if mcap is not None:
        log_sensors(sensors, mcap)
    return sensors


def start_ros(sim: Simulation, rcfg: dict) -> HostRos | None:
    """The ROS 2 interface of a run when ``ros.enabled``; checks ``ros.rate``."""
    if rcfg["rate"] is not None and not rcfg["rate"] > 0:
        raise ConfigError(f"ros.rate (--rate) must be positive, got {rcfg['rate']}")
    return HostRos(sim, rcfg) if rcfg["enabled"] else None


def run(cfg: dict, out_dir: str | Path, progress: Callable[[int, int], None] | None = None) -> dict:
    """Run a resolved configuration; write log.mcap, summary.json and trajectory.png into out_dir.

    On divergence the log and summary so far are written (status "diverged")
    before SimulationDiverged propagates.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    prep = prepare(cfg, out)
    sim = prep.sim
    controller = None
    if prep.scenario and prep.scenario.get("controller"):
        from eels_gz.scenarios import load_controller

        where = prep.scenario_file or str(cfg["scenario"]["name"])
        controller = load_controller(prep.scenario["controller"], prep.scenario, where)
        controller.setup(sim, dict(prep.scenario["params"]))
    reset_at = cfg["sim"]["reset_at"]
    if reset_at is not None and controller is not None:
        raise ConfigError(f"sim.reset_at: scenario '{cfg['scenario']['name']}' runs a host-side controller whose "
                          "state a world reset does not restore; use it with scenarios of set points only")
    n_steps = int(round(prep.duration / sim.dt))
    every = max(1, int(round(1.0 / (cfg["log"]["rate"] * sim.dt))))
    rec = Recorder(sim, out / "log.mcap" if cfg["log"]["mcap"] else None)
    rec.sample()
    sensors = start_sensors(sim, cfg["sensors"], rec.log)
    ros = start_ros(sim, cfg["ros"])
    pace = cfg["ros"]["rate"]
    status, error, message = "ok", None, None
    wall0 = time.perf_counter()
    sim0 = sim.time  # simulated by the scenario's setup (placement, settling) before the timed run
    done = 0
    try:
        for k in range(1, n_steps + 1):
            if controller is not None:
                controller.pre_step(sim)
            sim.step()
            end = controller.post_step(sim) if controller is not None else None
            if end is not None:  # the scenario ends the run, e.g. mobility_failure
                status, message = end.status, end.message
                rec.sample()
                break
            if sensors is not None:
                sensors.post_step()
            if ros is not None:
                ros.post_step()
            if reset_at is not None and not sim.resets and sim.time >= reset_at - 0.5 * sim.dt:
                sim.reset()  # gz-sim's world control reset
                rec.sample()
            if pace:
                ahead = sim.time / pace - (time.perf_counter() - wall0)
                if ahead > 0.001:  # sleep in slices of 1 ms or more
                    time.sleep(ahead)
            if k % every == 0:
                rec.sample()
            if progress is not None and (k % 1000 == 0 or k == n_steps):
                progress(k - done, n_steps)
                done = k
    except SimulationDiverged as exc:
        status, error = "diverged", exc
    except PluginCallbackError as exc:
        status, error = "plugin_error", exc
    finally:
        wall = time.perf_counter() - wall0
        rec.close()
        if ros is not None:
            ros.close()
        sim.close()
    summary = _summary(sim, rec, prep, wall, status, error, out, cfg, sim0)
    if message:
        summary["message"] = message
    if controller is not None:
        _scenario_outputs(controller, cfg, out, summary)
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    if error is not None:
        raise error
    return summary


def _scenario_outputs(controller, cfg: dict, out: Path, summary: dict) -> None:
    """The controller's metrics.json and <scenario>.png next to summary.json."""
    metrics = {"scenario": cfg["scenario"]["name"], "status": summary["status"], **controller.metrics()}
    (out / "metrics.json").write_text(json.dumps(metrics, indent=2))
    summary["files"]["metrics"] = str(out / "metrics.json")
    if cfg["log"]["plot"]:
        png = out / f"{cfg['scenario']['name']}.png"
        controller.plot(png)
        if png.exists():
            summary["files"]["scenario_plot"] = str(png)


def _summary(sim, rec, prep, wall, status, error, out, cfg, setup_sim_time: float = 0.0) -> dict:
    q = rec.quat[-1]
    files = {"summary": str(out / "summary.json")}
    if rec.log:
        files["log"] = str(out / "log.mcap")
    if cfg["log"]["plot"] and len(rec.t) > 1:
        png = out / "trajectory.png"
        t = np.array(rec.t)
        trajectory(png, t, np.array(rec.pos), np.array([_yaw(x) for x in rec.quat]),
                   f"{cfg['robot']['name']} on {Path(prep.settings['resolved']['world_file']).stem}"
                   + (f", scenario {cfg['scenario']['name']}" if cfg["scenario"]["name"] else ""))
        files["plot"] = str(png)
    summary = {
        "status": status,
        "sim_time": sim.time,
        "setup_sim_time": setup_sim_time,
        "wall_time": wall,
        # the timed run only: the setup's simulated seconds are not in wall_time
        "real_time_factor": (sim.time - setup_sim_time) / wall if wall > 0 else None,
        "steps": sim.iterations,
        "final_base_pose": {
            "position": [float(v) for v in rec.pos[-1]],
            "orientation_wxyz": [float(v) for v in q],
            "rpy": _rpy(q),
        },
        "settings": prep.settings,
        "files": files,
    }
    if sim.resets:
        summary["resets"] = sim.resets
    disabled = {s.module: s.disabled for s in sim.systems if s.disabled}
    if disabled:
        summary["disabled_systems"] = disabled
    if isinstance(error, PluginCallbackError):
        summary["error"] = {"message": str(error), "step": error.step, "time": error.time, "plugin": error.plugin,
                            "callback": error.callback}
    elif error is not None:
        summary["error"] = {"message": str(error), "step": error.step, "time": error.time, "body": error.body}
    return summary
