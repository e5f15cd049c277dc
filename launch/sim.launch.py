"""Gazebo mode: EELS or a rover in gz-sim (Harmonic or later) with ROS 2.

Arguments: ``robot`` (a registry name, see README), ``n_modules`` (EELS;
empty: the variant's), ``world`` (registry name or SDF path), ``contact``
(screw|stock), ``gui`` (true|false). ``scenario`` is refused for now: a
scenario's controllers become gz-sim systems with issue 32 (``eels-gz
export``); until then scenarios run in the embedded host (``eels-gz run``).

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
    "contact": ("stock", "screw (EELS screw-ice model) or stock (engine contact)"),
    "gui": ("true", "start the Gazebo GUI"),
    "scenario": ("", "not yet supported in Gazebo (issue 32); run scenarios with eels-gz run --scenario"),
}


def _sensor_specs(description) -> list[tuple]:
    """(reference, name, type, element) of every sensor in the description's <gazebo reference> blocks."""
    return [(g.get("reference"), s.get("name"), s.get("type"), s) for g in description.references
            for s in g.iter("sensor")]


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
    from eels_gz import registry
    from eels_gz.description.assemble import robot_description
    from eels_gz.dart.sdf_world import load_world
    from eels_gz.ros.launch_setup import create_arguments, resting_spawn, spawn_urdf

    arg = {k: LaunchConfiguration(k).perform(context) for k in ARGS}
    if arg["scenario"]:
        raise RuntimeError(f"scenario:={arg['scenario']}: scenarios are not available in Gazebo yet (issue 32 turns "
                           "them into gz-sim systems); run it in the embedded host: eels-gz run --scenario "
                           f"{arg['scenario']}")
    entry = registry.robot(arg["robot"])
    world = registry.world_path(arg["world"])
    xacro_args = {}
    if entry.family == "eels":
        xacro_args = {"contact": arg["contact"], "contact_params": "ice", "world_file": str(world)}
    description = robot_description(entry, n_modules=int(arg["n_modules"]) if arg["n_modules"] else None,
                                    xacro_args=xacro_args, urdf_file=None, gazebo=True, scenario="")
    world_name = load_world(world).name
    spawn = resting_spawn(description, world)
    urdf_file = Path(tempfile.mkdtemp(prefix="eels_gz_spawn_")) / f"{entry.name}.urdf"
    urdf_file.write_text(spawn_urdf(description, spawn))
    gz_args = f"-r {world}" + ("" if arg["gui"] == "true" else " -s")
    return [
        IncludeLaunchDescription(
            PythonLaunchDescriptionSource([FindPackageShare("ros_gz_sim"), "/launch/gz_sim.launch.py"]),
            launch_arguments={"gz_args": gz_args}.items()),
        Node(package="robot_state_publisher", executable="robot_state_publisher", output="screen",
             parameters=[{"robot_description": description.gazebo_urdf(), "use_sim_time": True}]),
        Node(package="ros_gz_sim", executable="create", output="screen",
             arguments=create_arguments(entry.name, urdf_file, spawn)),
        Node(package="ros_gz_bridge", executable="parameter_bridge", output="screen",
             parameters=[{"config_file": _bridge_file(entry.name, world_name, _sensor_specs(description)),
                          "use_sim_time": True}]),
    ]


def generate_launch_description() -> LaunchDescription:
    return LaunchDescription([DeclareLaunchArgument(k, default_value=v, description=d) for k, (v, d) in ARGS.items()]
                             + [OpaqueFunction(function=_setup)])
