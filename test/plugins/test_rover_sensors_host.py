"""The rovers' sensors in the embedded host: Archimede's IMU, planar lidar and RGB-D camera (colour and
depth imagers), Rocky 7's stereo pairs, each simulated from its Gazebo tags with the host's own sensor
machinery and checked against closed-form geometry."""

from __future__ import annotations

import numpy as np
import pytest

from eels_gz import config
from eels_gz.gzapi import msgs, transport
from eels_gz.run.resolve import resolve_run
from eels_gz.run.runner import prepare
from eels_gz.dart.sensors import HostSensors


def _sim(robot: str, pose="auto"):
    return prepare(resolve_run(config.resolve(overrides={"robot": {"name": robot, "pose": pose}, "duration": 0.5}))).sim


def test_archimede_carries_imu_planar_lidar_and_rgbd_camera():
    sensors = HostSensors(_sim("archimede"), noise=False, cameras=True)
    kinds = {s.name: s.kind for s in sensors.sensors if s.kind != "camera_info"}
    assert kinds == {"imu": "imu", "lidar": "gpu_lidar", "camera_color": "camera", "camera_depth": "depth_camera",
                     "camera_depth points": "depth_points"}  # the depth camera's <topic>/points
    (lidar,) = [s for s in sensors.sensors if s.name == "lidar"]
    assert lidar.pattern.rows == 1  # planar
    cams = {s.name: s for s in sensors.sensors if s.kind in ("camera", "depth_camera") and hasattr(s, "model")}
    for cam in cams.values():  # 640 x 480 depth and colour, as the D435i streams them
        assert (cam.model.width, cam.model.height) == (640, 480)
    assert {"/imu", "/lidar/points", "/camera/color/image_raw", "/camera/color/camera_info",
            "/camera/depth/image_rect_raw", "/camera/depth/camera_info",
            "/camera/depth/image_rect_raw/points"} <= set(sensors.topics)


def test_archimede_imu_at_rest_reads_plus_g():
    sim = _sim("archimede")
    sensors = HostSensors(sim, noise=False)
    got = []
    node = transport.node_on(sim.transport)
    node.subscribe(msgs.IMU, "/imu", got.append)
    for _ in range(400):
        sim.step()
        sensors.post_step()
    sim.transport.deliver()
    acc = np.array([[m.linear_acceleration.x, m.linear_acceleration.y, m.linear_acceleration.z] for m in got[-20:]])
    g = -sim.world.getGravity()[2]
    # noise off; the rover has settled on its suspension after 0.4 s: 1 mm/s^2 of residual motion
    assert acc.mean(axis=0) == pytest.approx([0.0, 0.0, g], abs=1e-2)


def test_planar_lidar_pitched_at_the_ice_hits_it_where_the_plane_is():
    """Rover held pitched nose-down by 0.3 rad at t = 0: a beam of direction d (world) from the lidar's
    origin at height h meets the plane z = 0 at t = -h / d_z when that lies within the sensor's range."""
    sim = _sim("archimede", pose=[0.0, 0.0, 1.0, 0.0, 0.3, 0.0])
    (lidar,) = [s for s in HostSensors(sim, noise=False).sensors if s.name == "lidar"]
    T_ws = lidar.body.getWorldTransform().matrix() @ lidar.T
    d_w = lidar.pattern.directions @ T_ws[:3, :3].T
    with np.errstate(divide="ignore"):
        t = np.where(d_w[:, 2] < 0, -T_ws[2, 3] / d_w[:, 2], np.inf)
    expected = np.where((t >= lidar.pattern.range_min) & (t <= lidar.pattern.range_max), t, np.nan)
    ranges = lidar.scan().ranges
    hit = np.isfinite(expected)
    assert hit.sum() > 100  # the forward half of the scan sees the ice
    assert np.array_equal(np.isfinite(ranges), hit)
    # the sphere tracer stops within its 1e-4 m surface tolerance
    assert ranges[hit] == pytest.approx(expected[hit], abs=1e-3)


@pytest.mark.parametrize("robot", ["rocky7", "msl_like"])
def test_rocky7_stereo_pairs_have_a_5_cm_baseline_across_their_view(robot):
    sensors = HostSensors(_sim(robot), noise=False, cameras=True)
    cams = {s.name: s for s in sensors.sensors if getattr(s, "kind", None) == "camera" and hasattr(s, "model")}
    assert set(cams) == {"stereo_front_left", "stereo_front_right", "stereo_rear_left", "stereo_rear_right"}
    for end, heading in (("front", 1.0), ("rear", -1.0)):
        L, R = cams[f"stereo_{end}_left"].pose(), cams[f"stereo_{end}_right"].pose()
        assert np.allclose(L[:3, :3], R[:3, :3], atol=1e-12)  # parallel optical axes
        baseline = L[:3, 3] - R[:3, 3]
        assert np.linalg.norm(baseline) == pytest.approx(0.05, abs=1e-12)
        # right camera on the optical +x side of the left one; the view (optical z) along +-x of the body
        assert baseline @ L[:3, 0] == pytest.approx(-0.05, abs=1e-12)
        body_x = sensors.sim.robot_skeleton.getRootBodyNode().getWorldTransform().matrix()[:3, 0]
        assert L[:3, 2] @ body_x == pytest.approx(heading, abs=1e-12)
