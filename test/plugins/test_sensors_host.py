"""The host's simulated sensors (eels_gz.dart.sensors) on EELS 1.5 with its
head: IMU at rest reads +g within its noise; rates from <update_rate>;
sensor messages go to log.mcap; bad sensor elements are refused with the
file, sensor and element named."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from lxml import etree
from mcap.reader import make_reader

from eels_gz import config
from eels_gz.errors import DescriptionError
from eels_gz.gzapi import msgs, transport
from eels_gz.run.resolve import resolve_run
from eels_gz.run.runner import prepare, run
from eels_gz.dart.sensors import HostSensors

HEAD = {"robot": {"name": "eels_1_5", "xacro_args": {"head": "true"}}, "duration": 0.3}


@pytest.fixture(scope="module")
def sim():
    return prepare(resolve_run(config.resolve(overrides=HEAD))).sim


def _collect(sim, sensors, topic, cls, steps):
    got = []
    node = transport.node_on(sim.transport)
    node.subscribe(cls, topic, got.append)
    for _ in range(steps):
        sim.step()
        sensors.post_step()
    sim.transport.deliver()
    node.unsubscribe(topic)
    return got


def test_imu_at_rest_reads_plus_g_within_noise(sim):
    sensors = HostSensors(sim, noise=True, seed=1)
    (imu,) = [s for s in sensors.sensors if s.name == "imu"]
    _collect(sim, sensors, "/imu", msgs.IMU, 300)  # settle on the ice
    got = _collect(sim, sensors, "/imu", msgs.IMU, 500)
    assert len(got) == 500 // imu.period  # the description's 200 Hz at dt = 1 ms
    acc = np.array([[m.linear_acceleration.x, m.linear_acceleration.y, m.linear_acceleration.z] for m in got])
    gyro = np.array([[m.angular_velocity.x, m.angular_velocity.y, m.angular_velocity.z] for m in got])
    sigma_a = imu.acc.stddev[2]
    g = -sim.world.getGravity()[2]
    # the mean of n samples has noise sigma / sqrt(n); 5 of those plus 1e-3 m/s^2 of residual contact motion
    tol = 5 * sigma_a / np.sqrt(len(acc)) + 1e-3
    assert np.linalg.norm(acc.mean(axis=0)) == pytest.approx(g, abs=tol)
    # the spread is the configured noise (the robot is still): within 30 % for 100 samples
    assert acc[:, 2].std() == pytest.approx(sigma_a, rel=0.3)
    assert np.abs(gyro.mean(axis=0)).max() < 5 * imu.gyro.stddev[0] / np.sqrt(len(gyro)) + 1e-4


def test_imu_from_the_batched_accelerations_is_darts_reading(sim):
    """The IMU sample from the step's batched accelerations (SkeletonState.accelerations) is the one
    from DART's own getLinearAcceleration at the sensor, noise off, while the robot moves and turns
    (the offset's centripetal and tangential terms count): to round-off of the 40-body recursion."""
    sensors = HostSensors(sim, noise=False)
    (imu,) = [s for s in sensors.sensors if s.name == "imu"]
    skel = sim.robot_skeleton
    rng = np.random.default_rng(5)
    for _ in range(3):
        skel.setVelocities(skel.getVelocities() + rng.normal(0.0, 0.5, skel.getNumDofs()))
        for _ in range(5):
            sim.step()
        assert np.linalg.norm(skel.getBodyNode(imu.index).getAngularVelocity()) > 0.1
        assert imu.state.accelerations() is not None
        batched = imu.values().copy()
        state, imu.state = imu.state, None  # the per-body dartpy path
        try:
            darts = imu.values().copy()
        finally:
            imu.state = state
        np.testing.assert_allclose(batched, darts, atol=1e-9 * max(1.0, np.abs(darts).max()), rtol=0)


def test_sensor_messages_go_to_log_mcap(tmp_path):
    cfg = config.resolve(overrides={**HEAD, "duration": 0.25, "log": {"plot": False}})
    summary = run(cfg, tmp_path)
    cost = summary["sensor_wall_time"]  # each sensor's share of the run, by name, with its type
    assert {v["type"] for v in cost.values()} >= {"imu", "force_torque", "gpu_lidar"}
    assert all(0 < v["seconds"] < summary["wall_time"] for v in cost.values())
    assert set(summary["numba"]) == {"compile_time", "compile_time_in_run", "compiled", "cache_loaded",
                                     "cache_load_time", "cache_loaded_in_run"}
    with open(tmp_path / "log.mcap", "rb") as f:
        counts = {}
        for _, channel, _ in make_reader(f).iter_messages():
            counts[channel.topic] = counts.get(channel.topic, 0) + 1
    assert counts["/imu"] >= 40 and counts["/eels_1_5/fts/fts_2/wrench"] >= 20 and counts["/lidar/points"] >= 2


def test_logged_sensor_bytes_are_the_bridged_messages(tmp_path):
    """The IMU, force-torque and lidar sensors write the log from their numbers (no gz message unless the
    topic has a subscriber); the bytes must be those the bus path gives: the gz message a subscriber
    receives, converted as ros_gz converts it and serialized by rosbags. A subscriber on each topic makes
    the sensors publish too, so both paths carry the same samples."""
    from eels_gz.dart.sensors import log_sensors
    from eels_gz.ros import convert
    from eels_gz.ros.mcap_log import McapLog
    from eels_gz.ros.messages import encode

    sim = prepare(resolve_run(config.resolve(overrides=HEAD))).sim
    sensors = HostSensors(sim, noise=True, seed=3)
    log = McapLog(tmp_path / "log.mcap")
    log_sensors(sensors, log)
    node = transport.node_on(sim.transport)
    received = {}
    fixed = [s for s in sensors.sensors if s.name in ("imu", "fts_2") or s.kind == "gpu_lidar"]
    assert len(fixed) == 3
    kinds = {"imu": (msgs.IMU, "sensor_msgs/msg/Imu"), "force_torque": (msgs.Wrench, "geometry_msgs/msg/WrenchStamped"),
             "gpu_lidar": (msgs.PointCloudPacked, "sensor_msgs/msg/PointCloud2")}
    for s in fixed:
        node.subscribe(kinds[s.kind][0], s.topic, lambda m, t=s.topic: received.setdefault(t, []).append(m))
    for _ in range(300):
        sim.step()
        sensors.post_step()
    sim.transport.deliver()
    log.close()
    logged = {}
    with open(tmp_path / "log.mcap", "rb") as f:
        for _, channel, message in make_reader(f).iter_messages():
            logged.setdefault(channel.topic, []).append(message.data)
    for s in fixed:
        ros_type = kinds[s.kind][1]
        conv = convert.GZ_TO_ROS[(ros_type, transport.topic_of(s.pub)[1])]
        expected = [encode(conv(m), ros_type) for m in received[s.topic]]
        assert len(expected) == 300 // s.period >= 3
        assert logged[s.log_channel] == expected


def test_each_sensor_samples_on_the_multiples_of_its_period(sim, monkeypatch):
    """post_step skips the steps between multiples of the periods' gcd (no sensor is due there); each
    sensor still samples at every multiple of its own period. (A world reset removes the robot and its
    sensors with it, as in Gazebo: Simulation.reset.)"""
    import math

    sensors = HostSensors(sim, noise=False)
    periods = {s.name: s.period for s in sensors.sensors}
    assert len(set(periods.values())) >= 2 and sensors.every == math.gcd(*periods.values())
    sampled = []
    for s in sensors.sensors:
        monkeypatch.setattr(s, "sample", lambda t_ns, s=s: sampled.append((s.name, sim.iterations)))
    done = []
    for _ in range(2 * max(periods.values()) + 1):
        sim.step()
        sensors.post_step()
        done.append(sim.iterations)
    expected = [(s.name, k) for k in done for s in sensors.sensors if k % s.period == 0]
    assert sampled == expected


def _with(sim, name, path, text):
    """A copy of the simulation's sensor specs with one element of sensor ``name`` set to ``text``."""
    specs = []
    for ref, n, kind, el in sim.sensor_specs:
        if n == name:
            el = copy.deepcopy(el)
            node = el
            for part in path.split("/"):
                child = node.find(part)
                node = child if child is not None else etree.SubElement(node, part)
            node.text = text
        specs.append((ref, n, kind, el))
    return specs


@pytest.mark.parametrize("name, path, text, match", [
    ("imu", "update_rate", "-5", "<update_rate> must be >= 0"),
    ("imu", "update_rate", "fast", "<update_rate> must be a number"),
    ("fts_2", "force_torque/frame", "world", "<frame> must be child, sensor or parent"),
    ("fts_2", "force_torque/measure_direction", "up", "measure_direction"),
    ("lidar", "lidar/range/max", "0.01", "range limits"),
    ("lidar", "pose", "1 2 3", "<pose> '1 2 3' is not 6 numbers"),
])
def test_bad_sensor_elements(sim, monkeypatch, name, path, text, match):
    monkeypatch.setattr(sim, "sensor_specs", _with(sim, name, path, text))
    with pytest.raises(Exception, match=match) as info:
        HostSensors(sim)
    assert isinstance(info.value, (DescriptionError,)) or "range limits" in str(info.value)
    assert name in str(info.value) or "range limits" in str(info.value)


def test_the_lidars_shape_arrays_follow_the_bodies(sim):
    """ShapeTable.arrays (kinds, sizes and radii kept, poses from the step's batched kinematics) gives
    the arrays of the shapes read from DART body by body, after the robot has moved; and a scan cast
    against them is the scan cast against the shapes."""
    from eels_gz.sensors.lidar import cast, shape_arrays

    lidar = next(s for s in HostSensors(sim).sensors if s.kind == "gpu_lidar")
    table, state = lidar.shape_table, lidar.state
    for _ in range(2):  # the second call moves the arrays kept from the first
        for _ in range(20):
            sim.step()
        got, want = table.arrays(state.kinematics().T), shape_arrays(table.world())
        assert len(got) == len(want) > 10
        for name in ("kind", "size", "radius"):
            np.testing.assert_array_equal(getattr(got, name), getattr(want, name))
        np.testing.assert_allclose(got.R, want.R, atol=1e-12)
        np.testing.assert_allclose(got.p, want.p, atol=1e-12)
    T_ws = lidar.body.getWorldTransform().matrix() @ lidar.T
    a, b = cast(lidar.pattern, T_ws, None, got), cast(lidar.pattern, T_ws, None, table.world())
    assert np.isfinite(a.ranges).sum() > 0
    np.testing.assert_allclose(a.ranges, b.ranges, atol=1e-9, equal_nan=True)


def test_the_lidar_sees_a_shape_drawn_twice_once(sim):
    """A visual that repeats its collision shape (kind, size, pose) is kept once in the lidar's table,
    and the scan is the scan cast against every shape of every body, read from DART one by one."""
    from eels_gz.sensors.lidar import Shape, cast

    lidar = next(s for s in HostSensors(sim).sensors if s.kind == "gpu_lidar")
    kinds = {"BoxShape": "box", "SphereShape": "sphere", "CylinderShape": "cylinder"}
    every = []
    for body in lidar.shapes_of:
        for k in range(body.getNumShapeNodes()):
            node = body.getShapeNode(k)
            shape, kind = node.getShape(), kinds.get(node.getShape().getType())
            if kind is None:
                continue
            size = (np.asarray(shape.getSize(), float) if kind == "box" else (shape.getRadius(),) if kind == "sphere"
                    else (shape.getRadius(), shape.getHeight()))
            every.append(Shape(kind, tuple(size), node.getWorldTransform().matrix()))
    table = lidar.shape_table.world()
    assert len(every) > len(table) > 10  # the robot draws its shells and screws as their collision cylinders
    T_ws = lidar.body.getWorldTransform().matrix() @ lidar.T
    a, b = cast(lidar.pattern, T_ws, lidar.field, table), cast(lidar.pattern, T_ws, lidar.field, every)
    assert np.isfinite(a.ranges).sum() > 0
    np.testing.assert_allclose(a.ranges, b.ranges, atol=1e-12, equal_nan=True)
    np.testing.assert_allclose(a.intensity, b.intensity, atol=1e-12, equal_nan=True)
