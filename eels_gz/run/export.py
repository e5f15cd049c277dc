"""``eels-gz export``: a scenario's run resolved as ``run`` resolves it, written as a Gazebo world.

:func:`export_scenario` writes into an output folder ``DIR``:

- ``world.sdf``: the world's own content (``worlds/<world>.sdf`` or the SDF file given) with the
  Physics, Sensors, Imu and ForceTorque systems loaded (added when the world lacks them; gz-sim 8's
  names, :data:`eels_gz.gzapi.system_loader.BUILTIN_SYSTEMS`), its step set to the run's ``physics.dt`` (and
  its DART collision detector and solver to the run's when they are set), and the robot as an
  ``<include>`` at its placed pose, holding the initial_joints system (the placed joint positions)
  and the scenario's systems (:func:`eels_gz.scenarios.plugin_elements.scenario_plugins`);
- ``<robot>.urdf``: the robot's description with its ``<gazebo>`` blocks (its own Python systems,
  joint_control, screw_contact..., and sensors), as Gazebo converts it itself when it includes it;
- ``placement.json`` (:func:`eels_gz.run.placing.placement_record`, as a run writes it): the robot's
  base pose (the world pose of the URDF's root link) and joint positions, and how they were found
  (the scenario's placement before the run, ``pose: auto`` as :mod:`eels_gz.spawn` computes it, or
  the configuration's pose);
- ``scenario.yaml``, ``contact.yaml``, ``soil.yaml``, ``granular.yaml`` (those that apply): the sets the systems read,
  resolved (``--set`` applied), named by the description;
- ``export.json``: what was exported, the resolved configuration and the command that runs it;
  ``mesh_friction_ignored`` lists the world's mesh collisions whose ``<mu>`` gz-sim 8 does not apply
  (:func:`eels_gz.run.mesh_friction.mesh_friction_ignored`), and ``robot_friction`` says whether the robot's
  links carry their coefficient instead, so that each contact keeps the world's
  (:func:`eels_gz.run.mesh_friction.carry_mesh_friction`; where it cannot, the export warns and says why).

Paths: the robot's ``<include><uri>`` and every file the systems read are absolute (``file://`` for
the include). libsdformat resolves a relative include URI against the current folder or
``GZ_SIM_RESOURCE_PATH``, not against the world file's folder, so a relative URI would make
``gz sim -r DIR/world.sdf`` depend on where it is started; the price is that ``DIR`` cannot be moved
(export again instead). The world's own ``model://`` terrain includes are kept: their models name
their meshes and heightmaps by ``model://`` too, so Gazebo needs the package's ``models/`` on
``GZ_SIM_RESOURCE_PATH`` either way (the package's environment hook sets it; see README).

The scenario's systems get ``<metrics_file>`` ``DIR/metrics.json``: under Gazebo they write their
metrics there. The engine (dartpy) is imported only for a scenario whose placement before the run needs
it (``placement:``, :func:`engine_placement`); otherwise the export runs where dartpy is not installed
(the launch file calls it on a ROS 2 machine).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import NamedTuple

import numpy as np
from lxml import etree

from eels_gz.errors import ConfigError, TerrainError
from eels_gz.gzapi.system_loader import GZ_NAMESPACE
from eels_gz.rotations import rpy_matrix
from eels_gz.run.mesh_friction import carry_mesh_friction, mesh_friction_ignored
from eels_gz.run.placing import PLACEMENT_FILE, placement_record
from eels_gz.run.plan import RunPlan
from eels_gz.run.resolve import RunFiles, check_contact_step, resolve_run, scenario_system_plugins
from eels_gz.scenarios import Placement, scenario_lead_in_s
from eels_gz.spawn import pose_of

log = logging.getLogger(__name__)
WORLD_FILE = "world.sdf"
RESULT_FILE = "export.json"
METRICS_FILE = "metrics.json"  # where the scenario's systems write their metrics under Gazebo
# the gz-sim systems the exported world must load (gz-sim 8 file names)
REQUIRED_SYSTEMS = ("gz-sim-physics-system", "gz-sim-sensors-system", "gz-sim-imu-system",
                    "gz-sim-forcetorque-system")
LOADER = {"filename": "gz-sim-python-system-loader-system", "name": "gz::sim::systems::PythonSystemLoader"}
RENDER_ENGINE = "ogre2"  # the Sensors system's, as the shipped worlds give it
SENSORS_SYSTEM = "gz-sim-sensors-system"
# the sensor types gz-sim 8's Sensors system renders (sdformat's names and their aliases): a headless
# export leaves them out, with the Sensors system, because gz-sim 8.14 crashes when a world loads the
# Sensors system, has a camera and no render engine can be loaded (RenderUtil::Init on a null engine)
RENDERING_SENSORS = frozenset({"camera", "depth_camera", "depth", "rgbd_camera", "rgbd", "gpu_lidar", "gpu_ray",
                               "thermal_camera", "thermal", "segmentation_camera", "segmentation",
                               "boundingbox_camera", "boundingbox", "wideanglecamera", "multicamera"})


class Exported(NamedTuple):
    """What :func:`write_export` wrote: export.json's content, the run plan it wrote, and the robot's
    URDF as written to ``DIR/<robot>.urdf`` (its Gazebo blocks, as Gazebo includes it)."""

    result: dict
    plan: RunPlan
    urdf: str


def _matrix(pose) -> np.ndarray:
    """4x4 world pose of [x, y, z, roll, pitch, yaw] (m, rad; fixed-axis rpy)."""
    T = np.eye(4)
    T[:3, :3] = rpy_matrix(*(float(v) for v in pose[3:6]))
    T[:3, 3] = [float(v) for v in pose[:3]]
    return T


def placement(plan: RunPlan) -> tuple[Placement, str]:
    """The robot's start and where it came from (``engine``, ``shipped``, ``robot.pose`` or the
    ``pose: auto`` method): the scenario's placement before the run (``placement:``, which runs the
    engine as ``run`` does: :func:`engine_placement`; where dartpy is missing, the shipped placement of
    the same configuration, :func:`eels_gz.run.placing.shipped_placement`), else the configuration's
    pose, or ``pose: auto`` on the world's terrain (:func:`eels_gz.spawn.spawn_pose`, the arithmetic of
    the host's own placement)."""
    scenario = plan.scenario.loaded
    if scenario and scenario.get("placement"):
        from eels_gz.dart.available import engine_available

        if engine_available():
            return engine_placement(plan), "engine"
        from eels_gz.run.placing import placement_key, shipped_placement, shipped_placements_file

        name = plan.scenario.name
        shipped = shipped_placement(name, placement_key(plan.resolved_config()))
        if shipped is None:
            raise ConfigError(
                f"scenario '{name}': its placement before the run settles the robot with the engine (dartpy), "
                f"which is not installed here, and {shipped_placements_file(name)} holds no placement for this "
                "configuration (robot, world, contact, soil, scenario parameters, step); export it on a "
                "machine with dartpy (pip install dartpy) and run that world, or use the scenario's own "
                "robot, world and parameters")
        return shipped, "shipped"
    rcfg = plan.cfg["robot"]
    pose = rcfg["pose"]
    if pose != "auto":
        return Placement(_matrix(pose), {}, {"method": "robot.pose"}), "robot.pose"
    from eels_gz.spawn import spawn_pose
    from eels_gz.terrain.world_terrain import find_terrain_field

    try:
        field = find_terrain_field(plan.world.path)
    except TerrainError as exc:
        log.warning("%s: no terrain distance field (%s); the robot is placed on z = 0", plan.world.path, exc)
        field = None
    spawn = spawn_pose(plan.robot.description, field, optimize=bool(rcfg["optimize"]), yaw=float(rcfg["yaw"]))
    return Placement(_matrix(spawn.pose), dict(spawn.joints), {"method": spawn.method}), spawn.method


def engine_placement(plan: RunPlan) -> Placement:
    """A scenario's placement that needs the engine (gravity off, attraction springs, a rope): the run's own
    step (:func:`eels_gz.run.placing.place` on the simulation ``run`` prepares from ``plan``), with the
    robot's URDF for the systems in a scratch folder.
    ConfigError when it fails: the world would start the robot where it does not rest."""
    import tempfile

    from eels_gz.run.placing import place
    from eels_gz.run.runner import prepare  # the engine: only for a scenario that places with it

    with tempfile.TemporaryDirectory(prefix="eels_gz_placing_") as scratch:
        prep = prepare(plan, scratch)
        try:
            placed = place(prep.sim, prep, None, settle=None)
        finally:
            prep.sim.close()
    if placed is None or placed.status != "ok":
        why = placed.message if placed is not None else "it placed nothing"
        raise ConfigError(f"scenario '{plan.scenario.name}': the placement before the run failed "
                          f"({placed.status if placed is not None else 'none'}): {why}")
    return placed


def _system_file(element) -> str:
    """A <plugin filename> as gz-sim 8 names it (``libgz-sim-imu-system.so`` -> ``gz-sim-imu-system``)."""
    name = Path(element.get("filename") or "").name
    if name.startswith("lib"):
        name = name[3:]
    return name[:-3] if name.endswith(".so") else name


def add_systems(world, headless: bool = False) -> list[str]:
    """Add the REQUIRED_SYSTEMS the ``<world>`` element lacks, after its last plugin; their file names.
    ``headless``: the Sensors system is neither added nor kept (:data:`RENDERING_SENSORS`)."""
    from eels_gz.gzapi.system_loader import BUILTIN_SYSTEMS

    if headless:
        for plugin in world.findall("plugin"):
            if _system_file(plugin) == SENSORS_SYSTEM:
                world.remove(plugin)
    plugins = world.findall("plugin")
    have = {_system_file(p) for p in plugins} | ({SENSORS_SYSTEM} if headless else set())
    added = []
    anchor = plugins[-1] if plugins else (world.find("gravity") if world.find("gravity") is not None
                                          else world.find("physics"))
    for filename in REQUIRED_SYSTEMS:
        if filename in have:
            continue
        plugin = etree.Element("plugin", filename=filename, name=BUILTIN_SYSTEMS[filename][0])
        if filename == SENSORS_SYSTEM:
            etree.SubElement(plugin, "render_engine").text = RENDER_ENGINE
        if anchor is None:
            world.insert(0, plugin)
        else:
            anchor.addnext(plugin)
        anchor = plugin
        added.append(filename)
    return added


def _set_physics(world, plan: RunPlan, real_time_factor: float | None = None) -> None:
    """The run's step (and its collision detector and solver when set, and the real-time factor when
    given) in the world's <physics>."""
    physics = world.find("physics")
    if physics is None:
        physics = etree.Element("physics", name="eels_gz", type="dart")
        world.insert(0, physics)
    step = physics.find("max_step_size")
    if step is None:
        step = etree.SubElement(physics, "max_step_size")
    step.text = repr(float(plan.dt))
    if real_time_factor is not None:
        rtf = physics.find("real_time_factor")
        if rtf is None:
            rtf = etree.Element("real_time_factor")
            step.addnext(rtf)
        rtf.text = repr(float(real_time_factor))
    phys = plan.cfg["physics"]
    if phys.get("collision_detector") or phys.get("solver"):
        dart = physics.find("dart")
        if dart is None:
            dart = etree.SubElement(physics, "dart")
        if phys.get("collision_detector"):
            detector = dart.find("collision_detector")
            if detector is None:
                detector = etree.SubElement(dart, "collision_detector")
            detector.text = str(phys["collision_detector"])
        if phys.get("solver"):
            solver = dart.find("solver")
            if solver is None:
                solver = etree.SubElement(dart, "solver")
            kind = solver.find("solver_type")
            if kind is None:
                kind = etree.SubElement(solver, "solver_type")
            kind.text = str(phys["solver"])


def robot_systems_write_metrics(root, scenario: dict | None, name: str, metrics_file: str) -> None:
    """Put the scenario's name and ``<metrics_file>`` into ``root`` (a description's ``<robot>`` element
    with its Gazebo blocks, changed in place), in the ``<plugin>`` of each scenario system
    the description loads itself (wheel_rig's: the scenario names it for its metrics and does not load
    it again, eels_gz.scenarios.plugin_elements), so that it writes its metrics under Gazebo as the scenario's
    own systems do (gz_compat.MetricsFile)."""
    from eels_gz.scenarios.plugin_elements import system_entries

    if not scenario or not scenario.get("systems"):
        return
    modules = {m for m, _ in system_entries(scenario, name)}
    for plugin in root.iter("plugin"):
        module = (plugin.findtext("module_name") or "").strip()
        if module in modules and plugin.find("metrics_file") is None:
            etree.SubElement(plugin, "scenario").text = name
            etree.SubElement(plugin, "metrics_file").text = metrics_file


def headless_world(world_file: str | Path, out_dir: str | Path) -> Path:
    """A copy of the SDF world ``world_file`` in ``out_dir`` for a server without a render engine: no
    Sensors system (and gz-sim's Physics, Imu and ForceTorque systems added if it lacks them). Its
    ``model://`` includes are kept (``GZ_SIM_RESOURCE_PATH`` finds them)."""
    tree = etree.parse(str(world_file), etree.XMLParser(remove_comments=False))
    world = tree.getroot().find("world")
    if world is None:
        raise ConfigError(f"world file '{world_file}': no <world> element under <sdf>")
    add_systems(world, headless=True)
    out = Path(out_dir) / Path(world_file).name
    out.write_bytes(etree.tostring(tree, xml_declaration=True, encoding="UTF-8"))
    return out


def without_rendering_sensors(urdf: str) -> tuple[str, list[str]]:
    """``urdf`` (a description with its Gazebo blocks) without the sensors gz-sim renders, and their names
    (the launch's spawned URDF; the export removes them from its tree, :func:`remove_rendering_sensors`)."""
    root = etree.fromstring(urdf.encode())
    removed = remove_rendering_sensors(root)
    return etree.tostring(root, encoding="unicode"), removed


def remove_rendering_sensors(root) -> list[str]:
    """Remove the sensors gz-sim renders from ``root`` (a description's ``<robot>`` element with its Gazebo
    blocks, changed in place); their names."""
    removed = []
    for sensor in list(root.iter("sensor")):
        if sensor.get("type") in RENDERING_SENSORS:
            removed.append(f"{sensor.get('name')} ({sensor.get('type')})")
            parent = sensor.getparent()
            parent.remove(sensor)
            if parent.tag == "gazebo" and len(parent) == 0:  # a <gazebo reference> that held only that sensor
                parent.getparent().remove(parent)
    return removed


def _world_rtf(world) -> float | None:
    """The world's <physics><real_time_factor> (1 when it gives none, gz-sim's default)."""
    text = world.findtext("physics/real_time_factor")
    return float(text) if text is not None else 1.0


TIMING_FILE = "timing.json"  # where --time-systems' timed_system writes the Python systems' wall time


def timed_systems(root, timing_file: str) -> int:
    """Load every Python system under ``root`` (an lxml element) through plugins_py/timed_system.py, which
    times its callbacks into ``timing_file``; how many."""
    count = 0
    for plugin in root.iter("plugin"):
        module = plugin.find("module_name")
        if plugin.get("filename") != LOADER["filename"] or module is None or module.text == "timed_system":
            continue
        etree.SubElement(plugin, "timed_module").text = module.text.strip()
        etree.SubElement(plugin, "timing_file").text = timing_file
        module.text = "timed_system"
        count += 1
    return count


def initial_joints_plugin(joints: dict[str, float]):
    """The initial_joints system (plugins_py/initial_joints.py) setting ``joints``."""
    plugin = etree.Element("plugin", **LOADER)
    etree.SubElement(plugin, "module_name").text = "initial_joints"
    for name, q in sorted(joints.items()):
        etree.SubElement(plugin, "joint", name=name, position=repr(float(q)))
    return plugin


def scenario_systems(plan: RunPlan, description_file: Path, metrics_file: Path, placement_file: Path) -> list:
    """The scenario's gz-sim systems as <plugin> elements (the writer ``run`` uses,
    :func:`eels_gz.run.resolve.scenario_system_plugins`), parsed with gz-sim's namespace for their
    ``<gz:system_priority>``."""
    texts = scenario_system_plugins(plan, str(description_file), str(metrics_file), str(placement_file))
    if not texts:
        return []
    wrapped = etree.fromstring(f'<plugins xmlns:gz="{GZ_NAMESPACE}">{"".join(texts)}</plugins>'.encode())
    return list(wrapped)


def robot_include(name: str, uri: str, start: Placement, plugins: list):
    """The robot's <include>: ``uri`` as model ``name`` at the placed pose, with ``plugins`` inside."""
    include = etree.Element("include")
    etree.SubElement(include, "uri").text = uri
    etree.SubElement(include, "name").text = name
    etree.SubElement(include, "pose").text = " ".join(repr(float(v)) for v in pose_of(np.asarray(start.base_pose)))
    if start.joints:
        include.append(initial_joints_plugin(start.joints))
    for plugin in plugins:
        include.append(plugin)
    return include


def export_scenario(cfg: dict, work_dir: str | Path, final_dir: str | Path | None = None,
                    headless: bool = False, real_time_factor: float | None = None,
                    time_systems: bool = False) -> dict:
    """Write the Gazebo world of the resolved configuration ``cfg`` into ``work_dir`` (module docstring),
    naming its files by ``final_dir`` (where the folder is renamed to; ``work_dir`` when None): its plan
    resolved once (:func:`resolve_export`), then :func:`write_export`.
    Returns export.json's content. Bad input raises ConfigError (or the registry's, the world
    reader's, xacro's error) before anything but the resolved sets is written."""
    return write_export(resolve_export(cfg, work_dir), work_dir, final_dir, headless, real_time_factor,
                        time_systems)[0]


def resolve_export(cfg: dict, work_dir: str | Path) -> RunPlan:
    """The run plan of ``cfg`` as an export into ``work_dir`` resolves it: its contact, soil, granular and
    scenario sets written there even when they equal the named ones (``RunFiles(work_dir, record=True)``),
    for the world to name them beside it."""
    work = Path(work_dir)
    work.mkdir(parents=True, exist_ok=True)
    return resolve_run(cfg, RunFiles(work, record=True))


def write_export(plan: RunPlan, work_dir: str | Path, final_dir: str | Path | None = None,
                 headless: bool = False, real_time_factor: float | None = None,
                 time_systems: bool = False) -> Exported:
    """Write the Gazebo world of the run plan ``plan`` (resolved into ``work_dir`` by :func:`resolve_export`)
    into ``work_dir`` (:func:`export_scenario`), returning it with the plan and the robot's URDF as written
    (:class:`Exported`: the launch file bridges the description's sensors and gives robot_state_publisher
    the URDF, the Gazebo host records its topics). ``headless``: for a server without a render
    engine, the world loads no Sensors system and the description has no rendering sensors
    (:data:`RENDERING_SENSORS`); IMU and force-torque sensors stay (their own systems).
    ``real_time_factor``: the world's ``<physics><real_time_factor>`` (gz-sim paces the run to it;
    0 runs as fast as the machine allows); None keeps the world's (the shipped worlds give 1).
    ``time_systems``: every Python system is loaded through plugins_py/timed_system.py, which writes the
    wall time of its callbacks to ``DIR/timing.json`` (bench/gazebo.py)."""
    work = Path(work_dir)
    work.mkdir(parents=True, exist_ok=True)
    final = Path(final_dir) if final_dir is not None else work
    check_contact_step(plan)
    if plan.cfg["physics"].get("mimic") == "exact":
        raise ConfigError("physics.mimic: exact is the embedded host's coupling; gz-sim's DART plugin has no mimic "
                          "constraint, so an export cannot keep it (use physics.mimic: none)")
    start, start_source = placement(plan)
    final_abs, work_abs = final.absolute().resolve(), work.absolute().resolve()

    def named(text: str) -> str:
        """``text`` naming the resolved sets in the folder's final place, not in ``work_dir`` (its
        staging name, DIR.partial, until the export is complete)."""
        return text if final_abs == work_abs else text.replace(f"{work_abs}/", f"{final_abs}/")

    robot_file = f"{plan.robot.entry.name}.urdf"
    world_file = final_abs / WORLD_FILE
    plugins = scenario_systems(plan, final_abs / robot_file, final_abs / METRICS_FILE, final_abs / PLACEMENT_FILE)

    tree = etree.parse(str(plan.world.path), etree.XMLParser(remove_comments=False))
    root = tree.getroot()
    world = root.find("world")
    if world is None:
        raise ConfigError(f"world file '{plan.world.path}': no <world> element under <sdf>")
    had_sensors_system = any(_system_file(p) == SENSORS_SYSTEM for p in world.findall("plugin"))
    added = add_systems(world, headless)
    _set_physics(world, plan, real_time_factor)
    world.append(robot_include(plan.robot.entry.name, (final_abs / robot_file).as_uri(), start, plugins))
    scenario = plan.scenario.name
    root.insert(0, etree.Comment(
        f" eels-gz export: scenario {scenario or '(none)'}, robot {plan.robot.entry.name}, world {plan.world.path}; "
        f"run it with: gz sim -r {world_file} (see {RESULT_FILE}) "))
    etree.cleanup_namespaces(root, top_nsmap={"gz": GZ_NAMESPACE} if plugins else None)
    etree.indent(root, space="  ")
    robot = plan.robot.description.gazebo_element()
    robot_systems_write_metrics(robot, plan.scenario.loaded, scenario or "", str(final_abs / METRICS_FILE))
    removed_sensors = remove_rendering_sensors(robot) if headless else []
    if time_systems:
        timing = str(final_abs / TIMING_FILE)
        timed_systems(root, timing)
        timed_systems(robot, timing)
    ignored_friction = mesh_friction_ignored(plan.world.spec)
    robot_friction = carry_mesh_friction(robot, plan.world.spec, ignored_friction)
    gazebo_urdf = etree.tostring(robot, encoding="unicode")
    robot_urdf = named(gazebo_urdf)
    (work / robot_file).write_text(robot_urdf)
    (work / PLACEMENT_FILE).write_text(json.dumps(placement_record(start), indent=2))
    (work / WORLD_FILE).write_text(named(etree.tostring(tree, xml_declaration=True, encoding="UTF-8").decode()),
                                      encoding="utf-8")
    resolved_cfg = plan.resolved_config()
    files = {"world": str(world_file), "robot": str(final_abs / robot_file),
             "placement": str(final_abs / PLACEMENT_FILE)}
    for key, name in (("scenario", "scenario.yaml"), ("contact", "contact.yaml"), ("soil", "soil.yaml"),
                      ("granular", "granular.yaml")):
        if (work / name).is_file():
            files[key] = str(final_abs / name)
    if plugins or "<metrics_file>" in gazebo_urdf:  # written by the scenario's systems under Gazebo
        files["metrics"] = str(final_abs / METRICS_FILE)
    if time_systems:  # likewise, by timed_system
        files["timing"] = str(final_abs / TIMING_FILE)
    # the systems' lead-in (wall_climb's push and release) runs in the world's time before the scenario's
    # own duration: the embedded host steps it as setup
    lead_in = scenario_lead_in_s(plan.scenario.loaded, plan.scenario.file or "scenario")
    if robot_friction["carried"]:
        log.info("gz-sim 8 gives mesh collisions DART's default friction 1, not their <mu>: the robot's links carry "
                 "mu %g instead, so each contact keeps the world's coefficient (docs/gazebo.md)", robot_friction["mu"])
    elif ignored_friction:
        log.warning("gz-sim 8 gives mesh collisions DART's default friction 1, not their <mu> (docs/gazebo.md), "
                    "and the robot cannot carry it (%s): %s", robot_friction["reason"],
                    ", ".join(f"{e['model']}/{e['collision']} (mu {e['mu']:g})" for e in ignored_friction))
    steps = int(round((lead_in + plan.duration) / plan.dt))
    result = {
        "status": "ok",
        "scenario": scenario,
        "robot": plan.robot.entry.name,
        "world": str(plan.world.path.resolve()),
        "world_name": world.get("name"),
        "duration": plan.duration,
        "lead_in_s": lead_in,
        "iterations": steps,
        "dt": plan.dt,
        "placement": placement_record(start),
        "placement_source": start_source,
        "mesh_friction_ignored": ignored_friction,
        "robot_friction": robot_friction,
        "headless": ({"sensors_removed": removed_sensors,
                      "systems_removed": [SENSORS_SYSTEM] if had_sensors_system else []} if headless else None),
        "systems_added": added,
        "python_systems": sorted({e.text for e in robot.iter("module_name")}
                                 | {p.findtext("module_name") for p in plugins}
                                 | ({"initial_joints"} if start.joints else set())),
        "command": f"gz sim -r --iterations {steps} {world_file}",
        "real_time_factor": _world_rtf(world),
        "config": resolved_cfg,
        "files": files,
    }
    (work / RESULT_FILE).write_text(json.dumps(result, indent=2))
    return Exported(result, plan, robot_urdf)


def launch_export(plan: RunPlan, headless: bool = False) -> Exported:
    """launch/sim.launch.py's ``scenario:=NAME``: ``eels-gz export --scenario`` of the launch's plan
    (:func:`launch_plan` with its scenario) into the folder it was resolved into.
    Returns what :func:`write_export` wrote (export.json's content, the run plan, the URDF). Bad input raises the
    export's error (ConfigError, RegistryError...), whose message names it."""
    return write_export(plan, plan.files.work_dir, headless=headless)


def launch_plan(robot: str = "", world: str = "", contact: str = "", n_modules: str = "", scenario: str = "",
                out_dir: str | Path | None = None) -> RunPlan:
    """The run plan of launch/sim.launch.py's arguments (empty: the scenario's, else the run defaults),
    resolved as ``eels-gz run`` resolves them. Without ``scenario``, the launch spawns its description in
    its world; with one, it is resolved as an export into ``out_dir`` (:func:`resolve_export`; a new
    temporary folder when None) for :func:`launch_export`.
    Bad input raises the resolution's error (ConfigError, RegistryError...), whose message names it."""
    cfg = _launch_config(scenario, robot, world, contact, n_modules)
    if not scenario:
        return resolve_run(cfg)
    import tempfile

    out = Path(out_dir) if out_dir is not None else Path(tempfile.mkdtemp(prefix="eels_gz_export_")) / scenario
    return resolve_export(cfg, out)


def _launch_config(scenario: str, robot: str, world: str, contact: str, n_modules: str) -> dict:
    """The configuration of the launch arguments (empty: the scenario's, else the run defaults)."""
    from eels_gz import config

    overrides: dict = {"scenario": scenario} if scenario else {}
    if robot:
        overrides.setdefault("robot", {})["name"] = robot
    if n_modules:
        overrides.setdefault("robot", {})["n_modules"] = int(n_modules)
    if world:
        overrides["world"] = world
    if contact:
        overrides["contact"] = {"model": contact}
    return config.resolve(None, overrides, [])
