"""Gazebo's own systems, as the worlds and descriptions name them and as the
host provides them:

- every shipped world, and every world ``eels-gz world`` writes, names the
  systems Gazebo needs to simulate and to publish the robots' sensors
  (Physics, UserCommands, SceneBroadcaster, Sensors with ogre2, Imu,
  ForceTorque), each a real gz-sim 8 system file and plugin name;
- a sensor whose system the world lacks is skipped, as Gazebo would;
- force-torque sensors publish on gz-sim 8's default scoped topic;
- the host's OdometryPublisher twist is gz-sim's moving average of finite
  differences, checked on a free fall in closed form; its JointStatePublisher
  publishes every 1-DOF joint at the description's rate.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import pytest
from lxml import etree

from eels_gz import config, registry
from eels_gz.gzapi import msgs, transport
from eels_gz.run.resolve import resolve_run
from eels_gz.run.runner import prepare
from eels_gz.dart.sensors import HostSensors, force_torque_topic
from eels_gz.gzapi.system_loader import BUILTIN_SYSTEMS, PYTHON_LOADER
from eels_gz.gzapi.topics import HostTopics
from eels_gz.paths import asset
from eels_gz.terrain.writers import write_world
from gz_manifest import MANIFEST

SYSTEMS = MANIFEST["systems"]
SENSOR_SYSTEMS = {("gz-sim-sensors-system", "gz::sim::systems::Sensors"),
                  ("gz-sim-imu-system", "gz::sim::systems::Imu"),
                  ("gz-sim-forcetorque-system", "gz::sim::systems::ForceTorque"),
                  ("gz-sim-physics-system", "gz::sim::systems::Physics"),
                  ("gz-sim-user-commands-system", "gz::sim::systems::UserCommands"),
                  ("gz-sim-scene-broadcaster-system", "gz::sim::systems::SceneBroadcaster")}


def world_systems(path) -> set[tuple[str, str]]:
    root = etree.parse(str(path)).getroot()
    plugins = root.findall("world/plugin")
    sensors = [p for p in plugins if p.get("filename") == "gz-sim-sensors-system"]
    assert all(p.findtext("render_engine") == "ogre2" for p in sensors), path
    return {(p.get("filename"), p.get("name")) for p in plugins}


def test_builtin_and_loader_names_are_real_gz_sim_systems():
    for filename, (name, _) in {**BUILTIN_SYSTEMS, PYTHON_LOADER[0]: (PYTHON_LOADER[1], "")}.items():
        assert filename in SYSTEMS and name in SYSTEMS[filename], (filename, name)


@pytest.mark.parametrize("name", sorted(registry.WORLDS))
def test_shipped_world_names_the_sensor_systems(name):
    assert world_systems(registry.world_path(name)) == SENSOR_SYSTEMS


@dataclass
class _Terrain:
    kind: str = "test"
    description: str = "a written world"
    heightmap: bool = False


def test_written_world_names_the_sensor_systems(tmp_path):
    path = write_world(_Terrain(), "written", tmp_path)
    assert world_systems(path) == SENSOR_SYSTEMS


@pytest.mark.parametrize("robot", ["eels_1_5", "archimede"])
def test_description_systems_are_real(robot):
    cfg = config.resolve(overrides={"robot": {"name": robot}})
    sim = prepare(resolve_run(cfg)).sim
    for filename, specs in sim.gz_systems.items():
        for _, spec in specs:
            assert filename in SYSTEMS and spec.name in SYSTEMS[filename], (filename, spec.name)
    assert {"gz-sim-joint-state-publisher-system", "gz-sim-odometry-publisher-system"} <= set(sim.gz_systems)
    sim.close()


def test_force_torque_topic_is_gz_sims_default():
    default = MANIFEST["sensor_topics"]["ForceTorque"]["default_topic"]
    assert default == "<scoped sensor name>/forcetorque"
    assert force_torque_topic("w", "r", "j", "s") == "/world/w/model/r/joint/j/sensor/s/forcetorque"


def eels_1_5(world: str = "ice_plane", **over):
    cfg = config.resolve(overrides={"robot": {"name": "eels_1_5", "xacro_args": {"head": "true"}}, "world": world,
                                    **over})
    return prepare(resolve_run(cfg)).sim


def test_sensors_publish_on_gz_topics_when_the_world_names_their_systems():
    sim = eels_1_5()
    sensors = HostSensors(sim, noise=False)
    topics = sensors.topics
    assert "/imu" in topics and "/lidar/points" in topics
    fts = sorted(t for t in topics if t.endswith("/forcetorque"))
    assert fts == [force_torque_topic("ice_plane", "eels_1_5", f"fts_{k}_joint", f"fts_{k}") for k in (2, 4, 6)]
    sim.close()


def test_a_sensor_whose_system_the_world_lacks_is_skipped(tmp_path, caplog):
    text = asset("worlds", "ice_plane.sdf").read_text()
    root = etree.fromstring(text.encode())
    world = root.find("world")
    for p in world.findall("plugin"):
        if p.get("filename") == "gz-sim-imu-system":
            world.remove(p)
    path = tmp_path / "no_imu.sdf"
    path.write_bytes(etree.tostring(root))
    sim = eels_1_5(str(path))
    with caplog.at_level(logging.WARNING):
        sensors = HostSensors(sim, noise=False)
    assert "/imu" not in sensors.topics and "/lidar/points" in sensors.topics
    assert "sensor 'imu' (imu) is skipped" in caplog.text and "gz-sim-imu-system" in caplog.text
    sim.close()


def test_ground_truth_twist_is_gz_sims_moving_average_of_finite_differences():
    """A robot in free fall from rest (no contact, joints held): DART's semi-implicit
    step gives v_k = -g dt k and z_k - z_(k-1) = -g dt^2 k, so gz-sim's finite
    difference over step k is exactly -g dt k and its 10-sample moving average
    at step k is -g dt (k - 4.5). Tolerance 1e-9 m/s: rounding of a 2 m height
    differenced over 1 ms (~1e-13) times the window."""
    sim = eels_1_5(**{"ros": {"state_rate": 1000.0}})
    sim._set_root_pose(sim.robot_skeleton, _lifted(sim, 2.0))
    sim.robot_skeleton.setVelocities(sim.robot_skeleton.getVelocities() * 0)
    topics = HostTopics(sim)
    node = transport.node_on(sim.transport)
    odoms = []
    node.subscribe(msgs.Odometry, "/ground_truth/odom", odoms.append)
    g, dt, k = -sim.world.getGravity()[2], sim.dt, 100
    for _ in range(k):
        sim.step()
        topics.post_step()
    sim.transport.deliver()
    last = odoms[-1]
    assert (last.header.stamp.sec, last.header.stamp.nsec) == (0, 100_000_000)
    frames = {e.key: e.value[0] for e in last.header.data}
    assert frames == {"frame_id": "world", "child_frame_id": "base_link"}
    assert last.twist.linear.z == pytest.approx(-g * dt * (k - 4.5), abs=1e-9)
    assert last.pose.position.z == pytest.approx(sim.robot_skeleton.getBodyNode(0).getWorldTransform()
                                                 .translation()[2], abs=1e-12)
    sim.close()


def _lifted(sim, z: float):
    T = sim.robot_skeleton.getBodyNode(0).getWorldTransform().matrix()
    T[2, 3] = z
    return T


def test_joint_state_publisher_sends_every_joint_at_the_description_rate():
    sim = eels_1_5(**{"ros": {"state_rate": 250.0}})
    topics = HostTopics(sim)
    node = transport.node_on(sim.transport)
    got = []
    node.subscribe(msgs.Model, "/joint_states", got.append)
    for _ in range(40):
        sim.step()
        topics.post_step()
    sim.transport.deliver()
    assert len(got) == 10  # 40 ms at 250 Hz
    names = [j.name for j in got[0].joint]
    assert len(names) == sim.robot_skeleton.getNumDofs() - 6 and len(set(names)) == len(names)
    sim.close()
