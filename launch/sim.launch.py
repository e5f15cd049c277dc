"""Gazebo mode: EELS or a rover in gz-sim (Harmonic or later) with ROS 2.

Arguments: ``robot`` (a registry name, see README), ``n_modules`` (EELS;
empty: the variant's), ``world`` (registry name or SDF path), ``contact``
(screw|stock|rft; empty: the scenario's, else stock), ``gui`` (true|false),
``scenario`` (a name in config/scenarios/; empty: none), ``headless``
(true: no Sensors system and no rendering sensors, for a gz-sim without a
render engine).

With ``scenario:=NAME`` the scenario is exported as ``eels-gz export
--scenario NAME`` writes it (eels_gz.run.export.launch_plan resolves
it into a temporary folder, launch_export writes it there; robot, world
and contact as given, else the scenario's) and ``gz sim -r`` runs that world: the robot is in it at its
placed pose with its own and the scenario's Python systems, so there is no
``create``. A scenario whose behaviour is still embedded-host code is
refused with the export's message.

Without a scenario, the arguments are resolved into the run plan ``eels-gz
run`` would resolve for them (eels_gz.run.export.launch_plan): its
description (xacro arguments as a run passes them) and world are spawned.
Wires ros_gz_sim's ``gz_sim.launch.py`` (the world), robot_state_publisher
(the robot's xacro with its Gazebo tags), ``ros_gz_sim create`` (spawns
the URDF with its Gazebo blocks from a temporary file, at the resting pose
the embedded host's ``pose: auto`` computes on the world's terrain, with the
initial_joints system when that placement bends joints:
eels_gz.ros.launch_setup) and ros_gz_bridge's ``parameter_bridge``
with config/bridge.yaml, whose templated force-torque entries are expanded
per sensor of the description into a temporary file (the host-only
commands of config/bridge_host.yaml are not bridged: gz-sim has no topics
for them).

Written against the documented launch/launch_ros/ros_gz APIs; not exercised
in CI (see docs/ros.md).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription, OpaqueFunction
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare

SHARE = Path(__file__).resolve().parent.parent  # the package share (or source) folder
BRIDGE_FILE = SHARE / "config" / "bridge.yaml"
ARGS = {
    "robot": ("eels_1_0_front_only", "robot registry name"),
    "n_modules": ("", "number of EELS modules (empty: the variant's)"),
    "world": ("ice_plane", "world registry name or SDF file"),
    "contact": ("", "screw (EELS screw-ice model), rft (screws in granular ground, the default medium) or stock "
                    "(engine contact); empty: the scenario's, else stock"),
    "gui": ("true", "start the Gazebo GUI"),
    "scenario": ("", "scenario name (config/scenarios/): its world exported by eels-gz export and run; empty: none"),
    "headless": ("false", "true: for a gz-sim without a render engine (no OGRE 2): no Sensors system, no cameras or "
                          "GPU lidars (IMU and force-torque stay); gz-sim 8.14 crashes on a camera there"),
}


def _sensor_specs(description, headless: bool = False) -> list[tuple]:
    """(reference, name, type, element) of every sensor in the description's <gazebo reference> blocks
    (``headless``: without the rendering sensors a headless server leaves out)."""
    from eels_gz.run.export import RENDERING_SENSORS

    return [(g.get("reference"), s.get("name"), s.get("type"), s) for g in description.references
            for s in g.iter("sensor") if not (headless and s.get("type") in RENDERING_SENSORS)]


def _bridge_file(robot: str, world_name: str, specs: list[tuple]) -> str:
    """config/bridge.yaml with its {world}/{robot}/{joint}/{sensor} entries expanded, and the cameras'
    image and camera_info topics (the same entries the embedded host bridges); the host-only entries of
    config/bridge_host.yaml are left out."""
    from eels_gz.ros.bridge import load_bridge, to_ros_gz_yaml
    from eels_gz.ros.camera_bridge import camera_entries, description_cameras

    fts = [(ref, name) for ref, name, kind, _ in specs if kind == "force_torque"]
    entries = load_bridge(BRIDGE_FILE, robot=robot, fts_sensors=fts, world=world_name)
    entries += camera_entries(description_cameras(specs, world_name, robot))
    out = Path(tempfile.mkdtemp(prefix="eels_gz_bridge_")) / "bridge.yaml"
    out.write_text(to_ros_gz_yaml(entries))
    return str(out)


def _setup(context):
    from eels_gz.errors import EelsError
    from eels_gz.run.export import launch_plan

    arg = {k: LaunchConfiguration(k).perform(context) for k in ARGS}
    headless = arg["headless"] == "true"
    what = f"scenario:={arg['scenario']}" if arg["scenario"] else f"robot:={arg['robot']} world:={arg['world']}"
    try:  # the run plan of these arguments, resolved once as eels-gz run (or export, with a scenario) resolves it
        plan = launch_plan(robot=arg["robot"], world=arg["world"], contact=arg["contact"], n_modules=arg["n_modules"],
                           scenario=arg["scenario"])
    except EelsError as exc:
        raise RuntimeError(f"{what}: {exc}") from None
    return _scenario(plan, arg, headless) if arg["scenario"] else _spawn(plan, arg, headless)


def _spawn(plan, arg: dict, headless: bool) -> list:
    """No scenario: the plan's description spawned at its resting pose in its world, and the bridges."""
    from eels_gz.ros.launch_setup import create_arguments, resting_spawn, spawn_urdf

    entry, world, description, world_name = (plan.robot.entry, plan.world.path, plan.robot.description,
                                             plan.world.spec.name)
    spawn = resting_spawn(description, world)
    folder = Path(tempfile.mkdtemp(prefix="eels_gz_spawn_"))
    urdf_file = folder / f"{entry.name}.urdf"
    urdf = spawn_urdf(description, spawn)
    if headless:  # no render engine: no Sensors system, no rendering sensors (eels_gz.run.export)
        from eels_gz.run.export import headless_world, without_rendering_sensors

        world = headless_world(world, folder)
        urdf = without_rendering_sensors(urdf)[0]
    urdf_file.write_text(urdf)
    return [
        _gz_sim(str(world), arg["gui"]),
        _state_publisher(description.gazebo_urdf()),
        Node(package="ros_gz_sim", executable="create", output="screen",
             arguments=create_arguments(entry.name, urdf_file, spawn)),
        _bridge(entry.name, world_name, description, headless),
    ]


def _scenario(plan, arg: dict, headless: bool) -> list:
    """``scenario:=NAME``: the plan's exported world (robot and systems in it) run by gz sim, and the bridges."""
    from eels_gz.errors import EelsError
    from eels_gz.run.export import launch_export

    try:
        result, plan, urdf = launch_export(plan, headless=headless)
    except EelsError as exc:
        raise RuntimeError(f"scenario:={arg['scenario']}: {exc}") from None
    return [
        _gz_sim(result["files"]["world"], arg["gui"]),
        _state_publisher(urdf),
        _bridge(result["robot"], result["world_name"], plan.robot.description, headless),
    ]


def _gz_sim(world_file: str, gui: str):
    gz_args = f"-r {world_file}" + ("" if gui == "true" else " -s")
    return IncludeLaunchDescription(
        PythonLaunchDescriptionSource([FindPackageShare("ros_gz_sim"), "/launch/gz_sim.launch.py"]),
        launch_arguments={"gz_args": gz_args}.items())


def _state_publisher(urdf: str):
    return Node(package="robot_state_publisher", executable="robot_state_publisher", output="screen",
                parameters=[{"robot_description": urdf, "use_sim_time": True}])


def _bridge(robot: str, world_name: str, description, headless: bool = False):
    return Node(package="ros_gz_bridge", executable="parameter_bridge", output="screen",
                parameters=[{"config_file": _bridge_file(robot, world_name, _sensor_specs(description, headless)),
                             "use_sim_time": True}])


def generate_launch_description() -> LaunchDescription:
    return LaunchDescription([DeclareLaunchArgument(k, default_value=v, description=d) for k, (v, d) in ARGS.items()]
                             + [OpaqueFunction(function=_setup)])
