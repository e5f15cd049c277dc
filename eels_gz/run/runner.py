"""``eels-gz run``: a resolved configuration -> its run plan (:func:`eels_gz.run.resolve.resolve_run`, once,
in :func:`run`) -> a simulation of the plan in the embedded host (:func:`run_plan`) -> ``log.mcap``,
``summary.json`` and ``trajectory.png``."""

from __future__ import annotations

import contextlib
import gc
import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import yaml

from eels_gz.errors import (ConfigError, PluginCallbackError, RobotLost, RunInterrupted, SimulationDiverged,
                            WriteFailed)
from eels_gz.gzapi.gzmath import matrix_to_quat
from eels_gz.gzapi.gzsim import ResolvedSet
from eels_gz.run.plan import RunPlan, SensorsPlan
from eels_gz.run.resolve import (CONTACT_MODELS, DEFAULT_DURATION, _scenario_file, check_contact_step,  # noqa: F401
                                  check_soil, resolve_run, scenario_defaults, scenario_system_plugins)
from eels_gz.run.numba_compile import CompileWatch, KernelManifest, compiled_signatures, load_cached_kernels
from eels_gz.dart.simulation import AUTO_CLEARANCE, RobotSpec, Simulation
from eels_gz.dart.step_kernels import base_odometry
from eels_gz.dart.terrain_start import WorldBounds, check_start_pose, place_on_terrain, terrain_field
from eels_gz.interrupt import interrupts
from eels_gz.outputs import OutputFile, begin_result, check_writable_dir, command_line, reason, write_result
from eels_gz.own_files import stamp_config
from eels_gz.process_start import process_info
from eels_gz.ranges import say_estimate
from eels_gz.ros import messages
from eels_gz.ros.mcap_log import McapLog
from eels_gz.rotations import quat_rpy as _rpy
from eels_gz.rotations import quat_yaw as _yaw
from eels_gz.steps import period

log = logging.getLogger(__name__)


@dataclass
class Prepared:
    sim: Simulation
    plan: RunPlan  # what the simulation was built from
    settings: dict
    terrain: object | None = None  # the world's terrain distance field (eels_gz.terrain), if it has one

    @property
    def duration(self) -> float:
        return self.plan.duration

    @property
    def scenario(self) -> dict | None:
        """The loaded scenario, parameters resolved."""
        return self.plan.scenario.loaded

    @property
    def scenario_file(self) -> str:
        return self.plan.scenario.file


def prepare(plan: RunPlan, work_dir: str | Path | None = None) -> Prepared:
    """Build the simulation of a run plan (``work_dir``: where the robot's URDF is written for a
    scenario's systems to read; the plan's own folder when None).

    Checked before the robot is built: the step against the screw contact's stability bound
    (:mod:`eels_gz.contact.stability`; the step against the duration was checked by the resolution).
    ``robot.pose: auto`` puts the robot on the terrain under it (:mod:`eels_gz.dart.terrain_start`).
    """
    cfg, rcfg, entry, dt, duration = plan.cfg, plan.cfg["robot"], plan.robot.entry, plan.dt, plan.duration
    scenario, description = plan.scenario.loaded, plan.robot.description
    contact_set = plan.contact.params
    phys = cfg["physics"]
    host = cfg["sim"]
    check_contact_step(plan)
    plugins = _scenario_system_plugins(plan, work_dir if work_dir is not None else plan.files.work_dir)
    say_estimate(f"a run of {duration:g} s simulated at a {dt:g} s step", duration / dt)  # before the build
    sim = Simulation(plan.world.spec, RobotSpec(entry.name, description, rcfg["pose"],
                                                optimize=bool(rcfg["optimize"]), plugins=plugins,
                                                yaw=float(rcfg["yaw"])),
                     dt=dt, collision_detector=phys["collision_detector"],
                     max_velocity=phys["max_velocity"], plugin_errors=host["plugin_errors"],
                     batch_api=bool(host["batch_api"]), solver=phys["solver"], param_sets=_param_sets(plan),
                     mimic=phys["mimic"])
    terrain = terrain_field(sim)
    placed = None
    if rcfg["pose"] == "auto":
        placed = place_on_terrain(sim, description, terrain, AUTO_CLEARANCE)
    elif not (scenario and scenario.get("placement")):  # a scenario's placement sets the start before the run
        check_start_pose(sim, rcfg["pose"])
    resolved_cfg = plan.resolved_config()
    resolved_cfg["physics"].update(collision_detector=sim.detector_name, solver=sim.solver_name)
    bodies, dofs = sim.robot_sizes()
    settings = {
        "config": resolved_cfg,
        "resolved": {
            "world_file": str(plan.world.path),
            "robot_description": description.source,
            "bodies": bodies,
            "dt": dt,
            "collision_detector": sim.detector_name,
            "solver": sim.solver_name,
            "contact": plan.contact_model,
            "duration": duration,
            "dofs": dofs,
            "systems": [s.module for s in sim.systems],
        },
    }
    soil_set = plan.soil.params
    if soil_set is not None:  # the numbers the soil contact runs with (summary.json)
        settings["resolved"]["soil_params"] = soil_set.to_dict()
    if contact_set is not None:  # the numbers the screw contact runs with (summary.json)
        settings["resolved"]["contact_params"] = contact_set.to_dict()
    if plan.granular.params is not None:  # the medium the rft contact runs with (summary.json)
        settings["resolved"]["granular_params"] = plan.granular.params.to_dict()
    if placed is not None:
        settings["resolved"]["auto_pose"] = placed["method"]
    return Prepared(sim, plan, settings, terrain)


def _param_sets(plan: RunPlan) -> dict[str, ResolvedSet]:
    """The contact, soil and granular sets the run resolved, handed to its systems (the host context,
    ``ecm.param_sets``): each keyed by the element its system reads and with the value written there,
    so the systems' ``configure`` take them instead of reading the files again."""
    given = {"contact_params": plan.contact, "soil_params": plan.soil, "granular_params": plan.granular}
    return {element: ResolvedSet(str(ps.file), ps.params) for element, ps in given.items() if ps.params is not None}


def _scenario_system_plugins(plan: RunPlan, work_dir: Path | None) -> tuple[str, ...]:
    """The ``<plugin>`` elements of the scenario's systems (eels_gz.run.resolve.scenario_system_plugins,
    the export's writer too), with the robot's URDF written to ``work_dir/robot.urdf`` (a temporary
    folder without one) for them to read."""
    scenario = plan.scenario.loaded
    if not (scenario and (scenario.get("systems") or scenario.get("tethers"))):  # tethers: a system's
        return ()
    import tempfile

    folder = Path(work_dir) if work_dir is not None else Path(tempfile.mkdtemp(prefix="eels_gz_robot_"))
    folder.mkdir(parents=True, exist_ok=True)
    urdf = folder / "robot.urdf"
    urdf.write_text(plan.robot.description.urdf)
    from eels_gz.run.placing import PLACEMENT_FILE

    return tuple(scenario_system_plugins(plan, str(urdf.resolve()),
                                         placement_file=str((folder / PLACEMENT_FILE).resolve())))


class Recorder:
    """Samples the robot at the log rate into arrays and ``log.mcap``."""

    def __init__(self, sim: Simulation, mcap_path: Path | None):
        self.sim = sim
        self.joint_names, self.joint_dofs = sim.robot_joints()
        self.state = sim.robot_state
        self.t, self.pos, self.quat = [], [], []
        self.odom = np.empty(13)  # base_odometry's output: position, quaternion, twist in the base frame
        self.log = McapLog(mcap_path) if mcap_path else None
        if self.log:
            self.log.channel("/clock", messages.CLOCK)
            self.log.channel("/joint_states", messages.JOINT_STATE)
            self.log.channel("/ground_truth/odom", messages.ODOMETRY)
            self.templates = messages.RunLogTemplates(self.joint_names, "world", sim.robot_base_name())
            self.no_effort = np.zeros(len(self.joint_dofs))
            from eels_gz.dart.scene_log import SceneLog

            self.scene = SceneLog(sim, self.log, sim.robot_source_model)

    def sample(self) -> None:
        t = self.sim.time
        t_ns = round(t * 1e9)
        T, v, w = self.sim.robot_base_state()
        odom = self.odom
        base_odometry(T, v, w, odom)
        self.t.append(t)
        self.pos.append(odom[:3].copy())
        self.quat.append(odom[3:7].copy())
        if self.log is None:
            return
        st, idx = self.state, self.joint_dofs
        effort = st.applied[idx] if st.applied is not None else self.no_effort
        log, tpl = self.log, self.templates
        log.write_cdr("/clock", t_ns, tpl.clock(t_ns))
        log.write_cdr("/joint_states", t_ns, tpl.joint_state(t_ns, st.q[idx], st.dq[idx], effort))
        log.write_cdr("/ground_truth/odom", t_ns, tpl.odometry_packed(t_ns, odom))
        self.scene.sample(t_ns)

    def close(self) -> None:
        if self.log:
            self.log.close()


class HostRos:
    """The host's gz topics (clock, joint states, ground truth, commands) bridged to ROS 2, the state
    published every ``ros.state_rate`` Hz of simulated time on a ``dt`` s step."""

    def __init__(self, sim: Simulation, rcfg: dict, dt: float):
        from eels_gz.gzapi.topics import HostTopics
        from eels_gz.ros.interface import RosInterface

        rate = float(rcfg["state_rate"])
        if not rate > 0:
            raise ConfigError(f"ros.state_rate must be positive, got {rate}")
        self.topics = HostTopics(sim, period=period(rate, dt))
        self.interface = RosInterface(sim, rcfg["transport"], rcfg["domain"])
        self.bridged = self.interface.describe()  # summary.json's ros.bridged
        self.post_step = self.topics.post_step

    def close(self) -> None:
        self.interface.close()


def start_sensors(sim: Simulation, plan: SensorsPlan, mcap=None):
    """The robot's simulated sensors (eels_gz.dart.sensors) when the plan has them on, logged to ``mcap``."""
    if not plan.enabled or sim.robot_skeleton is None or not sim.sensor_specs:
        return None
    from eels_gz.dart.sensors import HostSensors, log_sensors

    sensors = HostSensors(sim, noise=plan.noise, seed=plan.seed, cameras=plan.cameras,
                          camera_renderer=plan.camera_renderer)
    if mcap is not None:
        log_sensors(sensors, mcap)
    return sensors


def start_ros(sim: Simulation, rcfg: dict, dt: float) -> HostRos | None:
    """The ROS 2 interface of a run on a ``dt`` s step when ``ros.enabled``; checks ``ros.rate``."""
    if rcfg["rate"] is not None and not rcfg["rate"] > 0:
        raise ConfigError(f"ros.rate (--rate) must be positive, got {rcfg['rate']}")
    return HostRos(sim, rcfg, dt) if rcfg["enabled"] else None


def run_plan(plan: RunPlan, out_dir: str | Path, progress: Callable[[int, int], None] | None = None, *,
             final_dir: str | Path | None = None, save_config: str | Path | None = None,
             setup_progress: Callable[[float], None] | None = None, overwrite_config: bool = False) -> dict:
    """Run a resolved plan (:func:`eels_gz.run.resolve.resolve_run`, whose files the systems read are in
    ``plan.files``; :func:`run` resolves it into ``out_dir``); write log.mcap, summary.json and
    trajectory.png into out_dir.

    ``out_dir`` is checked writable before the model is built (OutputError).
    ``final_dir``: where the files will be when the run is over (the paths in
    the summary), when out_dir is a temporary folder renamed into place
    (:class:`eels_gz.outputs.RunFolder`). ``save_config``: a file to write the
    fully resolved configuration to (checked before the model is built; an existing file is
    replaced only with ``overwrite_config`` and only if --save-config wrote it and nobody edited it
    since, :mod:`eels_gz.own_files`).
    ``setup_progress(sim_time)`` is called every SETUP_TICK steps of a
    scenario's setup (placement).

    Whatever stops the run, the log and the summary are written first, with a
    status that says what happened: ``ok`` or a scenario's own ending (e.g.
    ``mobility_failure``) return the summary; ``diverged`` raises
    SimulationDiverged, ``fell_through_terrain``/``left_world`` RobotLost,
    ``interrupted`` (SIGINT, SIGTERM) RunInterrupted, ``output_error`` (a write
    failed, e.g. a full disk) WriteFailed, and ``error`` re-raises the
    unexpected exception.
    """
    return _run(lambda out: plan, out_dir, progress, final_dir=final_dir, save_config=save_config,
                setup_progress=setup_progress, overwrite_config=overwrite_config)


def run(cfg: dict, out_dir: str | Path, progress: Callable[[int, int], None] | None = None, *,
        final_dir: str | Path | None = None, save_config: str | Path | None = None,
        setup_progress: Callable[[float], None] | None = None, overwrite_config: bool = False) -> dict:
    """:func:`run_plan` of the configuration ``cfg`` (eels_gz.config.resolve), its plan resolved once into
    ``out_dir`` (:func:`eels_gz.run.resolve.resolve_run`) after out_dir and ``save_config`` are checked, and
    under the run's signal handling: SIGINT or SIGTERM during the resolution raises RunInterrupted
    (``started=False``) as during the build. Arguments and outcome: :func:`run_plan`."""
    return _run(lambda out: resolve_run(cfg, out), out_dir, progress, final_dir=final_dir,
                save_config=save_config, setup_progress=setup_progress, overwrite_config=overwrite_config)


def _run(plan_of: Callable[[Path], RunPlan], out_dir: str | Path, progress, *, final_dir, save_config,
         setup_progress, overwrite_config) -> dict:
    """:func:`run_plan` of ``plan_of(out)`` (the checked output folder), called where the model is built:
    after the output files are checked, interruptible at once, and timed as the run's setup."""
    called = time.perf_counter()  # summary.json's setup_wall_time counts from here
    _freeze_at_exit()
    had = compiled_signatures()  # a warm process's kernels: not this run's to record (KernelManifest)
    out = check_writable_dir(out_dir)
    final = Path(final_dir) if final_dir is not None else out
    with interrupts() as stop, contextlib.ExitStack() as stack, CompileWatch() as compiling:
        saved = (stack.enter_context(OutputFile(save_config, overwrite=overwrite_config, own="config",
                                                what="--save-config file"))
                 if save_config is not None else None)
        with stop.immediately():
            prep = prepare(plan_of(out))
        if saved is not None:
            saved.write_text(stamp_config(yaml.safe_dump(prep.settings["config"], sort_keys=False), command_line()))
        begin_result(out / "summary.json")
        return _RunLoop(prep, out, final, stop, progress, setup_progress, compiling, called, had).run()


def _freeze_at_exit() -> None:
    """Once per process: at the interpreter's exit, freeze every object for the collector first.
    Python's finalization runs full collections over everything alive, a run's model, numba's and
    DART's objects (1.2 s of a 1 s run's command in one trial under load); the process is ending, so
    nothing needs collecting. Objects are still released as their modules are torn down."""
    global _FREEZE_REGISTERED
    if not _FREEZE_REGISTERED:
        import atexit

        atexit.register(gc.freeze)
        _FREEZE_REGISTERED = True


_FREEZE_REGISTERED = False
SETUP_TICK = 500  # steps between setup progress reports


class _RunLoop:
    """One prepared run, from the scenario's setup to summary.json (see :func:`run_plan`)."""

    def __init__(self, prep: Prepared, out: Path, final: Path, stop, progress, setup_progress,
                 compiling: CompileWatch | None = None, called: float | None = None,
                 had: dict | None = None):
        self.prep, self.out, self.final, self.stop = prep, out, final, stop
        self.called = time.perf_counter() if called is None else called  # when run() or run_plan() was called
        self.compiling, self.loop_start = compiling, None
        self.sensors = None
        self.cfg = prep.settings["config"]
        self.progress, self.setup_progress = progress, setup_progress
        self.sim = prep.sim
        self.status, self.error, self.message = "ok", None, None
        self.rec: Recorder | None = None
        self.unwritten: list[str] = []
        self.physics0 = 0.0  # DART's wall time before the timed run (the setup's)
        self.cache_load = (0, 0.0)  # numba compilations loaded from the cache before the loop, seconds
        self.bridged: dict | None = None  # what the ROS 2 interface bridged (HostRos.bridged)
        self.kernels: KernelManifest | None = None  # the kernels runs of this kind call
        self.had = had  # the kernels' compilations the process had when run() or run_plan() was called
        self.at_loop: dict | None = None  # ... and when the timed loop began

    def _kind(self) -> list:
        """What decides which kernels a run calls (KernelManifest's kind): the robot, the world, the
        systems loaded, the sensors' settings, whether the log is written and the ROS interface's
        settings (the plot calls no kernel)."""
        cfg = self.cfg
        sensors, log, ros = cfg["sensors"], cfg["log"], cfg["ros"]
        return [cfg["robot"]["name"], cfg["world"], sorted(s.module for s in self.sim.systems),
                [sensors["enabled"], sensors["cameras"], sensors["camera_renderer"], sensors["noise"]],
                log["mcap"], [ros["enabled"], ros["transport"]]]

    def _setup(self) -> None:
        """The scenario's placement before the run (eels_gz.run.placing) and its systems' lead-in,
        interruptible at any moment."""
        prep, sim = self.prep, self.sim
        placing = bool(prep.scenario and prep.scenario.get("placement"))
        ticking = placing or any(getattr(s.system, "lead_in_s", 0.0) for s in sim.systems)
        if self.setup_progress is not None and ticking:
            report, active = self.setup_progress, [True]

            def tick(info, ecm) -> None:
                if active[0] and info.iterations % SETUP_TICK == 0:
                    report(sim.time)

            sim.add_pre_update(tick)
        try:
            if placing:
                from eels_gz.run.placing import place

                with self.stop.immediately():
                    placed = place(sim, prep, self.out)  # ctx.settle: eels_gz.run.placing.settle
                if placed is not None and placed.status != "ok":
                    self.status, self.message = placed.status, placed.message
            if self.status == "ok":
                self._lead_in()
        finally:
            if self.setup_progress is not None and ticking:
                active[0] = False

    def _lead_in(self) -> None:
        """The steps a scenario system needs before the scenario's timed run (its ``lead_in_s``, s:
        wall_climb's push and the rope's release), with every system running, timed as setup."""
        sim = self.sim
        lead_in = max((float(getattr(s.system, "lead_in_s", 0.0)) for s in sim.systems if not s.disabled), default=0.0)
        self.prep.settings["resolved"]["lead_in_s"] = lead_in  # setup_sim_time's share stepped with the systems
        with self.stop.immediately():
            for _ in range(int(round(lead_in / self.prep.plan.dt))):
                sim.step()
                if sim.ecm.run_end is not None:
                    self.status, self.message = sim.ecm.run_end
                    return

    def run(self) -> dict:
        sim, cfg = self.sim, self.cfg
        wall0 = time.perf_counter()
        sim0 = 0.0
        ros = None
        try:
            try:
                self._setup()
            except RunInterrupted as exc:
                self.message = f"interrupted by {exc.signal_name} during the scenario's setup, at t = {sim.time:.4f} s"
                self.status, self.error = "interrupted", RunInterrupted(exc.signum, self.message)
            self.rec = Recorder(sim, self.out / "log.mcap" if self.prep.plan.log.mcap else None)
            self.rec.sample()
            sim0 = sim.time  # simulated by the scenario's setup (placement, settling) before the timed run
            self.physics0 = sim.physics_seconds
            if self.status == "ok":
                sensors = self.sensors = start_sensors(sim, self.prep.plan.sensors, self.rec.log)
                ros = start_ros(sim, cfg["ros"], self.prep.plan.dt)
                self.bridged = ros.bridged if ros is not None else None
                # paid here, not on the kernels' first calls in the loop; only those runs of this kind call
                self.kernels = KernelManifest(kind=self._kind(), before=self.had)
                self.cache_load = load_cached_kernels(only=self.kernels.names)
                self.at_loop = compiled_signatures()
            wall0 = self.loop_start = time.perf_counter()
            if self.status == "ok":
                gc.freeze()  # the collector's full passes skip everything built before the loop
                try:
                    self._loop(sensors, ros, wall0)
                finally:
                    gc.unfreeze()
        except SimulationDiverged as exc:
            self.status, self.error, self.message = "diverged", exc, str(exc)
        except PluginCallbackError as exc:
            self.status, self.error, self.message = "plugin_error", exc, str(exc)
        except OSError as exc:
            self._output_failed(exc)
        except Exception as exc:  # a bug or a plugin's error: still leave the log and a summary
            self.status, self.error = "error", exc
            self.message = f"{type(exc).__name__}: {exc}"
        finally:
            loop_end = time.perf_counter()
            wall = loop_end - wall0
            self._close(ros)
        return self._finish(wall, sim0, loop_end)

    def _loop(self, sensors, ros, wall0: float) -> None:
        sim, cfg, stop, rec = self.sim, self.cfg, self.stop, self.rec
        plan = self.prep.plan
        dt = plan.dt
        n_steps = int(round(plan.duration / dt))
        every = period(plan.log.rate, dt)
        pace = cfg["ros"]["rate"]
        reset_at = cfg["sim"]["reset_at"]
        watch = WorldBounds(sim, self.prep.terrain)
        progress, done = self.progress, 0
        tick = max(1, min(1000, n_steps // 100))
        for k in range(1, n_steps + 1):
            sim.step()
            if sim.ecm.run_end is not None:  # a scenario system ended the run (gz_compat.request_run_end)
                self.status, self.message = sim.ecm.run_end
                rec.sample()
                break
            if sensors is not None:
                sensors.post_step()
            if ros is not None:
                ros.post_step()
            if reset_at is not None and not sim.resets and sim.time >= reset_at - 0.5 * dt:
                rec.sample()  # the robot's last state
                t_reset = sim.time
                sim.reset()  # gz-sim's world control reset: it removes the robot (Simulation.reset)
                self.status = "robot_removed"
                self.message = (f"world reset at t = {t_reset:.4f} s (sim.reset_at): gz-sim restores the world as "
                                "its file loaded it, without the robot spawned after that (ros_gz_sim create), so "
                                "the robot's systems ran their reset() and were unloaded, and the robot was "
                                "removed; the run ends here")
                break
            if pace:
                ahead = sim.time / pace - (time.perf_counter() - wall0)
                if ahead > 0.001:  # sleep in slices of 1 ms or more
                    time.sleep(ahead)
            last = k == n_steps or stop.requested
            if k % every == 0 or last:
                rec.sample()
                lost = watch.check()
                if lost is not None:
                    self.status, self.message = lost
                    self.error = RobotLost(*lost, sim.time)
                    break
            if progress is not None and (k % tick == 0 or k == n_steps):
                progress(k - done, n_steps)
                done = k
            if stop.requested:
                self.status = "interrupted"
                self.error = RunInterrupted(stop.signum)
                self.message = f"interrupted by {self.error.signal_name} at t = {sim.time:.4f} s"
                self.error = RunInterrupted(stop.signum, self.message)
                break

    def _output_failed(self, exc: OSError) -> None:
        self.status = "output_error"
        where = f" '{self.final / Path(exc.filename).name}'" if exc.filename else ""
        self.message = f"writing the run's output{where} failed: {reason(exc)}"
        self.error = WriteFailed(self.message)

    def _close(self, ros) -> None:
        if self.rec is not None:
            try:
                self.rec.close()
            except OSError as exc:
                if self.status in ("ok", "interrupted"):
                    self._output_failed(exc)
                self.unwritten.append("log.mcap (complete up to its last chunk: eels-gz recover)")
        if ros is not None:
            ros.close()
        self.sim.close()

    def _finish(self, wall: float, sim0: float, loop_end: float) -> dict:
        out, final, cfg = self.out, self.final, self.cfg
        physics = self.sim.physics_seconds - self.physics0
        if self.kernels is not None:
            self.kernels.record()
        summary = _summary(self.sim, self.rec, self.prep, wall, self.status, self.error, out, cfg, sim0,
                           final, self.unwritten)
        # the timed run's cost relative to DART's own step: 1 would be a host that costs nothing
        summary["physics_wall_time"] = physics
        rcfg = cfg["ros"]
        summary["ros"] = {"enabled": bool(rcfg["enabled"]), "transport": rcfg["transport"], "domain": rcfg["domain"],
                          "state_rate": rcfg["state_rate"], "rate": rcfg["rate"]}
        if self.bridged is not None:
            summary["ros"]["bridged"] = self.bridged
        summary["step_cost_ratio"] = wall / physics if physics > 0 else None
        if self.sensors is not None:  # each sensor's share of the timed run
            summary["sensor_wall_time"] = self.sensors.wall_times()
            if self.sensors.camera_renderer is not None:  # which renderer drew the cameras, and why
                summary["camera_renderer"] = self.sensors.camera_renderer
        if self.compiling is not None:
            summary["numba"] = self.compiling.report(self.loop_start)
            summary["numba"]["cache_loaded"], summary["numba"]["cache_load_time"] = self.cache_load
            # compilations the loop loaded on first call (or compiled): what the kind's record missed
            summary["numba"]["cache_loaded_in_run"] = (
                sum(len(sigs - self.at_loop.get(name, set())) for name, sigs in compiled_signatures().items())
                if self.at_loop is not None else 0)
            _say_compiled(summary["numba"])
        if self.message:
            summary["message"] = self.message
        scenario_systems = [s for s in self.sim.systems if hasattr(s.system, "metrics") or hasattr(s.system, "plot")]
        if self.prep.scenario and self.prep.scenario.get("systems"):
            try:
                _system_outputs(scenario_systems, self.prep, cfg, out, summary, final)
            except OSError as exc:
                self.unwritten.append(f"metrics.json and the scenario plot ({reason(exc)})")
            except Exception as exc:  # the summary says what happened; the run's own error comes first
                if self.error is None:
                    raise
                self.unwritten.append(f"metrics.json and the scenario plot ({type(exc).__name__}: {exc})")
        if self.unwritten:
            summary["unwritten"] = self.unwritten
        # run() called -> first step, and last step -> this summary (the plots included): with
        # wall_time, the run's whole time but summary.json's own write
        summary["setup_wall_time"] = (self.loop_start if self.loop_start is not None else loop_end) - self.called
        summary["finish_wall_time"] = time.perf_counter() - loop_end
        summary["process"] = process_info()  # a fresh interpreter, a warm server's child or a sweep's fork
        try:
            write_result(out / "summary.json", json.dumps(summary, indent=2))
        except OSError as exc:
            raise WriteFailed(f"cannot write '{final / 'summary.json'}': {reason(exc)}; it still says "
                              "'incomplete'") from None
        if self.error is not None:
            raise self.error
        return summary


def _say_compiled(numba: dict) -> None:
    """A run that compiled kernels (the first after an install) says so: its wall time includes it."""
    if not numba["compiled"]:
        return
    where = (f", {numba['compile_time_in_run']:.1f} s of it inside the timed run"
             if numba["compile_time_in_run"] > 0 else "")
    say = log.warning if numba["compile_time"] >= 1.0 else log.info
    say("numba compiled %d kernel(s) in %.1f s%s (once after an install: they are cached for later runs; "
        "`make venv` warms the cache: python -m eels_gz.warm)", len(numba["compiled"]), numba["compile_time"], where)


def _system_outputs(systems: list, prep, cfg: dict, out: Path, summary: dict, final: Path) -> None:
    """metrics.json from the scenario systems' ``metrics()`` (merged in load order; a key two systems
    give is an error naming both) and ``<scenario>.png`` from the first system with ``plot``."""
    from eels_gz.scenarios import scenario_metrics

    metrics: dict = {"scenario": cfg["scenario"]["name"], "status": summary["status"]}
    owner: dict[str, str] = {}
    for s in systems:
        if s.disabled or not hasattr(s.system, "metrics"):
            continue
        for key, value in (s.system.metrics() or {}).items():
            if key in owner:
                raise ValueError(f"metrics.json key '{key}' is given by both systems '{owner[key]}' and '{s.module}'")
            owner[key] = s.module
            metrics[key] = value
    declared = {"scenario", "status", *scenario_metrics(prep.scenario, prep.scenario_file)}
    undeclared = set(metrics) - declared
    if undeclared:  # a sweep checks its metrics against METRICS before it runs: keep them in step
        log.warning("scenario '%s': metrics.json keys %s are not in its systems' METRICS", cfg["scenario"]["name"],
                    ", ".join(sorted(undeclared)))
    (out / "metrics.json").write_text(json.dumps(metrics, indent=2))
    summary["files"]["metrics"] = str(final / "metrics.json")
    plotter = next((s.system for s in systems if not s.disabled and hasattr(s.system, "plot")), None)
    if cfg["log"]["plot"] and plotter is not None:
        png = out / f"{cfg['scenario']['name']}.png"
        plotter.plot(png)
        if png.exists():
            summary["files"]["scenario_plot"] = str(final / png.name)


def _summary(sim, rec, prep, wall, status, error, out, cfg, setup_sim_time: float = 0.0,
             final: Path | None = None, unwritten: list | None = None) -> dict:
    final = out if final is None else final
    if rec is not None and rec.t:
        p, q = rec.pos[-1], rec.quat[-1]
    else:  # nothing recorded (the log could not be opened): the state reached
        T = sim.robot_base_pose()
        p, q = T[:3, 3], matrix_to_quat(T[:3, :3])
    files = {"summary": str(final / "summary.json")}
    if rec is not None and rec.log:
        files["log"] = str(final / "log.mcap")
    if cfg["log"]["plot"] and rec is not None and len(rec.t) > 1:
        from eels_gz.plots import trajectory  # matplotlib only for a run that plots (0.3 s of a process's start)

        png = out / "trajectory.png"
        t = np.array(rec.t)
        try:
            trajectory(png, t, np.array(rec.pos), np.array([_yaw(x) for x in rec.quat]),
                       f"{cfg['robot']['name']} on {Path(prep.settings['resolved']['world_file']).stem}"
                       + (f", scenario {cfg['scenario']['name']}" if cfg["scenario"]["name"] else ""))
            files["plot"] = str(final / "trajectory.png")
        except OSError as exc:
            png.unlink(missing_ok=True)  # no half-written figure
            if unwritten is not None:
                unwritten.append(f"trajectory.png ({reason(exc)})")
    summary = {
        "status": status,
        "sim_time": sim.time,
        "setup_sim_time": setup_sim_time,
        "wall_time": wall,
        # the timed run only: the setup's simulated seconds are not in wall_time
        "real_time_factor": (sim.time + sim.time_before_resets - setup_sim_time) / wall if wall > 0 else None,
        "steps": sim.total_iterations,  # the steps taken, a world reset's included
        "final_base_pose": {
            "position": [float(v) for v in p],
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
    if isinstance(error, SimulationDiverged):
        summary["error"] = {"message": str(error), "step": error.step, "time": error.time, "body": error.body}
    elif isinstance(error, PluginCallbackError):
        summary["error"] = {"message": str(error), "step": error.step, "time": error.time, "plugin": error.plugin,
                            "callback": error.callback}
    elif status == "error" and error is not None:
        summary["error"] = {"message": f"{type(error).__name__}: {error}", "time": sim.time}
    return summary
