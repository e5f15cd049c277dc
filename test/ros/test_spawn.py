"""Gazebo spawns the robot at rest on the terrain, where the embedded host's ``pose: auto`` puts it.

launch/sim.launch.py is executed here against stand-in ``launch`` and
``launch_ros`` modules (ROS is not installed): its OpaqueFunction runs with
the arguments given, and the ``ros_gz_sim create`` node it returns is read:
``-file`` (the URDF Gazebo spawns) and ``-x -y -z -R -P -Y``. That pose must
be the host's after ``pose: auto`` (same description, same world) to
``POSE_TOL``, and a rover's bent suspension must reach Gazebo through the
``initial_joints`` system with the host's joint angles.
"""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path

import numpy as np
import pytest
from lxml import etree

from eels_gz import config
from eels_gz.description.model import RobotModel
from eels_gz.run.resolve import resolve_run
from eels_gz.rover.from_urdf import rpy_matrix
from eels_gz.run.runner import prepare
from eels_gz.spawn import AUTO_CLEARANCE, ZeroPose, pose_of

REPO = Path(__file__).resolve().parents[2]
LAUNCH = REPO / "launch" / "sim.launch.py"
# the host iterates placement to 1e-5 m (eels_gz.spawn.TOLERANCE); both sides do the same arithmetic in float64
POSE_TOL = 1e-6


class _Action:
    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs


class _Configuration:
    def __init__(self, name):
        self.name = name

    def perform(self, context):
        return context[self.name]


def _stand_ins() -> dict[str, types.ModuleType]:
    mods = {}
    for name in ("launch", "launch.actions", "launch.launch_description_sources", "launch.substitutions",
                 "launch_ros", "launch_ros.actions", "launch_ros.substitutions"):
        mods[name] = types.ModuleType(name)
    mods["launch"].LaunchDescription = _Action
    for cls in ("DeclareLaunchArgument", "IncludeLaunchDescription", "OpaqueFunction"):
        setattr(mods["launch.actions"], cls, type(cls, (_Action,), {}))
    mods["launch.launch_description_sources"].PythonLaunchDescriptionSource = _Action
    mods["launch.substitutions"].LaunchConfiguration = _Configuration
    mods["launch_ros.actions"].Node = type("Node", (_Action,), {})
    mods["launch_ros.substitutions"].FindPackageShare = _Action
    return mods


def run_launch(monkeypatch, **given) -> list[_Action]:
    """The actions launch/sim.launch.py returns for the arguments ``given`` (the rest at their defaults)."""
    for name, module in _stand_ins().items():
        monkeypatch.setitem(sys.modules, name, module)
    spec = importlib.util.spec_from_file_location("sim_launch", LAUNCH)
    launch = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(launch)
    description = launch.generate_launch_description()
    declared = {a.args[0]: a.kwargs["default_value"] for a in description.args[0]
                if type(a).__name__ == "DeclareLaunchArgument"}
    assert set(given) <= set(declared), set(given) - set(declared)
    (opaque,) = [a for a in description.args[0] if type(a).__name__ == "OpaqueFunction"]
    return opaque.kwargs["function"]({**declared, **given})


def create_node(actions) -> tuple[dict, str]:
    """(-flag -> value, the spawned URDF) of the ``ros_gz_sim create`` node."""
    (node,) = [a for a in actions if type(a).__name__ == "Node" and a.kwargs["executable"] == "create"]
    assert node.kwargs["package"] == "ros_gz_sim"
    args, flags = list(node.kwargs["arguments"]), {}
    while args:
        item = args.pop(0)
        if "=" in item:
            flag, value = item.split("=", 1)
        else:
            flag, value = item, args.pop(0)
        flags[flag] = value
    return flags, Path(flags["-file"]).read_text()


def host_pose(robot: str, world: str) -> tuple[np.ndarray, dict[str, float]]:
    """(base pose 4x4, joint positions by name) of the host's robot after ``pose: auto``."""
    sim = prepare(resolve_run(config.resolve(overrides={"robot": {"name": robot, "pose": "auto"}, "world": world,
                                            "contact": {"model": "stock"}, "duration": 0.01}))).sim
    skel = sim.robot_skeleton
    joints = {skel.getJoint(i).getName(): float(skel.getJoint(i).getPosition(0))
              for i in range(skel.getNumJoints()) if skel.getJoint(i).getNumDofs() == 1}
    return skel.getRootBodyNode().getWorldTransform().matrix(), joints


def _matrix(flags: dict) -> np.ndarray:
    T = np.eye(4)
    T[:3, :3] = rpy_matrix(*(float(flags[f]) for f in ("-R", "-P", "-Y")))
    T[:3, 3] = [float(flags[f]) for f in ("-x", "-y", "-z")]
    return T


@pytest.mark.parametrize("robot, world", [("eels_1_0_front_only", "ice_plane"), ("eels_1_0_front_only", "mars_dem"),
                                          ("eels_1_0_front_only", "tube"), ("archimede", "ice_plane"),
                                          ("archimede", "mars_dem")])
def test_create_spawns_at_the_hosts_resting_pose(monkeypatch, robot, world):
    flags, urdf = create_node(run_launch(monkeypatch, robot=robot, world=world, gui="false"))
    assert flags["-name"] == robot
    T_host, q_host = host_pose(robot, world)
    T_gz = _matrix(flags)
    assert np.abs(T_gz - T_host).max() < POSE_TOL, (pose_of(T_gz), pose_of(T_host))
    root = etree.fromstring(urdf.encode())
    initial = {j.get("name"): float(j.get("position")) for p in root.iter("plugin")
               if p.findtext("module_name") == "initial_joints" for j in p.iter("joint")}
    bent = {n: q for n, q in q_host.items() if abs(q) > POSE_TOL}
    assert set(initial) >= set(bent)
    for name, q in initial.items():
        assert q == pytest.approx(q_host[name], abs=POSE_TOL), name


@pytest.mark.parametrize("world", ["ice_plane", "tube"])
def test_the_robot_rests_on_the_ground_not_in_it(monkeypatch, world):
    """At the spawned pose the lowest collision corner is AUTO_CLEARANCE above the terrain (not 8.5 cm
    below the ice, as EELS 1.0's screws were at z = 0)."""
    from eels_gz import registry
    from eels_gz.terrain.world_terrain import find_terrain_field

    flags, urdf = create_node(run_launch(monkeypatch, robot="eels_1_0_front_only", world=world, gui="false"))
    zero = ZeroPose(RobotModel.from_urdf(urdf, "robot_description"))
    corners = zero.world(zero.corners, _matrix(flags))
    d, _ = find_terrain_field(registry.world_path(world)).query(corners)
    assert float(np.min(d)) == pytest.approx(AUTO_CLEARANCE, abs=2e-5)  # the placement's 1e-5 m tolerance, twice


def test_an_unknown_scenario_is_refused_naming_it(monkeypatch):
    with pytest.raises(RuntimeError, match="scenario:=screw_forward: .*unknown scenario 'screw_forward'"):
        run_launch(monkeypatch, scenario="screw_forward")


def test_the_bridge_carries_every_sensor_the_rover_publishes(monkeypatch):
    """Archimede's IMU, planar lidar and both imagers: each gz topic its sensors publish (the host's
    sensors publish on the topics gz-sensors would) is a GZ_TO_ROS entry of the launch's bridge file."""
    import yaml

    from eels_gz.dart.sensors import HostSensors

    actions = run_launch(monkeypatch, robot="archimede", world="ice_plane", gui="false")
    (bridge,) = [a for a in actions if type(a).__name__ == "Node" and a.kwargs["executable"] == "parameter_bridge"]
    entries = yaml.safe_load(Path(bridge.kwargs["parameters"][0]["config_file"]).read_text())
    bridged = {e["gz_topic_name"] for e in entries if e["direction"] == "GZ_TO_ROS"}
    sim = prepare(resolve_run(config.resolve(overrides={"robot": {"name": "archimede"}, "duration": 0.01}))).sim
    published = set(HostSensors(sim, noise=False, cameras=True).topics)
    assert len(published) == 7  # imu, lidar points, two images, their camera_info and the depth points
    assert published <= bridged, published - bridged


def test_headless_launches_a_world_gz_sim_can_run_without_a_render_engine(monkeypatch):
    """headless:=true (a gz-sim without OGRE 2): the world loads no Sensors system, the spawned robot has
    no cameras or GPU lidar (gz-sim 8.14 crashes on them there), its IMU stays, and the bridge carries
    no camera topics."""
    import yaml
    from lxml import etree

    for headless in ("false", "true"):
        actions = run_launch(monkeypatch, robot="archimede", world="ice_plane", gui="false", headless=headless)
        (gz,) = [a for a in actions if type(a).__name__ == "IncludeLaunchDescription"]
        world_file = dict(gz.kwargs["launch_arguments"])["gz_args"].split()[1]
        systems = {p.get("filename") for p in etree.parse(world_file).getroot().iter("plugin")}
        _, urdf = create_node(actions)
        types_ = sorted(s.get("type") for s in etree.fromstring(urdf.encode()).iter("sensor"))
        (bridge,) = [a for a in actions if type(a).__name__ == "Node" and a.kwargs["executable"] == "parameter_bridge"]
        entries = yaml.safe_load(Path(bridge.kwargs["parameters"][0]["config_file"]).read_text())
        images = [e for e in entries if e["ros_type_name"] == "sensor_msgs/msg/Image"]
        if headless == "true":
            assert "gz-sim-sensors-system" not in systems and types_ == ["imu"] and images == []
            assert Path(world_file).parent != REPO / "worlds"
        else:
            assert "gz-sim-sensors-system" in systems and "camera" in types_ and images
        assert {"gz-sim-physics-system", "gz-sim-imu-system"} <= systems
