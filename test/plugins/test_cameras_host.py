"""The description's camera and depth_camera sensors in the host (eels_gz.host.cameras): names and frames agree
with the Gazebo tags (REP-103 optical frames), images and camera info reach the gz topics, ROS (the bridge's
conversions) and log.mcap."""

from __future__ import annotations

import numpy as np
import pytest
from lxml import etree
from mcap.reader import make_reader

from eels_gz import config
from eels_gz.errors import DescriptionError
from eels_gz.host import msgs
from eels_gz.host.cameras import Camera, camera_model
from eels_gz.host.runner import prepare, run
from eels_gz.host.sensors import HostSensors
from eels_gz.ros import convert
from eels_gz.ros.camera_bridge import camera_entries, description_cameras
from eels_gz.ros.messages import typestore
from eels_gz.sensors.camera import T_SENSOR_OPTICAL

HEAD = {"robot": {"name": "eels_1_0_alternating", "n_modules": 1}, "world": "tube",
        "sensors": {"cameras": True}}


@pytest.fixture(scope="module")
def head():
    sim = prepare(config.resolve(overrides=HEAD)).sim
    sensors = HostSensors(sim, noise=False, cameras=True)
    return sim, sensors


def test_gazebo_tags_name_the_optical_frames_of_the_description(head):
    sim, sensors = head
    urdf = etree.fromstring(sim.robot_source_urdf.encode())
    links = {n.get("name") for n in urdf.iter("link")}
    cams = [s for s in sensors.sensors if isinstance(s, Camera)]
    assert sorted(c.name for c in cams) == sorted(
        [f"stereo_{i}_{s}" for i in range(1, 5) for s in ("left", "right")] + ["depth_camera"])
    for cam in cams:
        assert cam.frame_id.endswith("_optical_frame") and cam.frame_id in links
        # the host renders from exactly the frame its header names: the REP-103 optical frame of the link
        assert np.allclose(cam.pose(), sim.frame_world_pose(cam.frame_id), atol=1e-12)
        body = cam.frame_id[: -len("_optical_frame")]
        assert np.allclose(sim.frame_world_pose(body) @ T_SENSOR_OPTICAL, cam.pose(), atol=1e-12)


def test_stereo_pairs_look_out_radially_left_camera_on_the_left(head):
    sim, sensors = head
    T_head = sim.frame_world_pose("head_link")
    for i in range(1, 5):
        left, right = (next(s for s in sensors.sensors if s.name == f"stereo_{i}_{side}") for side in ("left", "right"))
        L, R = left.pose(), right.pose()
        p_head = np.linalg.inv(T_head) @ L
        radial = p_head[:3, 3] - [p_head[0, 3], 0, 0]
        view = p_head[:3, 2]  # optical z in the head frame
        assert np.allclose(view, radial / np.linalg.norm(radial), atol=1e-9)
        # seen from the left camera, the right one is to the right (+x) on the baseline, not ahead or below
        r_in_left = np.linalg.inv(L) @ R[:, 3]
        assert r_in_left[0] > 0.05 and abs(r_in_left[1]) < 1e-9 and abs(r_in_left[2]) < 1e-9


def test_images_and_camera_info_on_gz_and_ros(head):
    sim, sensors = head
    node = sensors.node  # a node on the simulation's bus
    got = {}
    for topic, kind in (("/stereo_1_left/image_raw", msgs.Image), ("/stereo_1_left/camera_info", msgs.CameraInfo),
                        ("/depth_camera/depth_image", msgs.Image)):
        node.subscribe(kind, topic, lambda m, t=topic: got.setdefault(t, m))
    depth = next(s for s in sensors.sensors if s.name == "depth_camera")
    left = next(s for s in sensors.sensors if s.name == "stereo_1_left")
    sim.step()
    for cam in (left, depth):  # what post_step does when they are due, without rendering the other 7
        cam.publish(round(sim.time * 1e9))
    sim.transport.deliver()
    img, info, dep = (got[t] for t in ("/stereo_1_left/image_raw", "/stereo_1_left/camera_info",
                                       "/depth_camera/depth_image"))
    ros_img, ros_info, ros_dep = convert.image(img), convert.camera_info(info), convert.image(dep)
    assert (ros_img.encoding, ros_img.width, ros_img.height, ros_img.step) == ("rgb8", 640, 480, 1920)
    assert ros_img.header.frame_id == "stereo_1_left_optical_frame" == ros_info.header.frame_id
    assert ros_img.data.size == 640 * 480 * 3 and len(set(ros_img.data[::97].tolist())) > 5  # a scene, not blank
    cam = next(s for s in sensors.sensors if s.name == "stereo_1_left").model
    assert np.allclose(ros_info.k, cam.K.ravel()) and np.allclose(ros_info.p, cam.P.ravel())
    assert ros_info.distortion_model == "plumb_bob" and np.array_equal(ros_info.d, np.zeros(5))
    assert ros_dep.encoding == "32FC1" and ros_dep.step == 4 * ros_dep.width
    d = np.frombuffer(ros_dep.data.tobytes(), "<f4").reshape(ros_dep.height, ros_dep.width)
    finite = d[np.isfinite(d)]
    # inside a bore of radius 0.6 m: nothing nearer than the robot's head, nothing beyond the far clip
    assert finite.size > 0 and finite.min() > 0 and finite.max() <= depth.model.far
    for e in camera_entries(description_cameras(sim.sensor_specs)):
        assert (e.ros_type, e.gz_type) in convert.GZ_TO_ROS


def test_cameras_go_to_log_mcap(tmp_path):
    cfg = config.resolve(overrides={**HEAD, "world": "ice_plane", "duration": 0.11, "log": {"plot": False}})
    run(cfg, tmp_path)
    store, seen = typestore(), {}
    with open(tmp_path / "log.mcap", "rb") as f:
        for schema, channel, message in make_reader(f).iter_messages():
            if "camera" in channel.topic or "stereo" in channel.topic:
                seen[channel.topic] = store.deserialize_cdr(message.data, schema.name)
    # the 8 stereo cameras (10 Hz) at 0.1 s, image and camera_info; the depth camera (5 Hz) is first due at 0.2 s
    assert len(seen) == 16 and not any("depth" in t for t in seen)
    assert seen["/stereo_4_right/image_raw"].encoding == "rgb8"
    assert seen["/stereo_4_right/camera_info"].header.frame_id == "stereo_4_right_optical_frame"


def test_bad_camera_elements_are_named():
    el = etree.fromstring("<sensor name='c' type='camera'><camera><horizontal_fov>4</horizontal_fov>"
                          "<image><width>8</width><height>6</height></image></camera></sensor>")
    with pytest.raises(DescriptionError, match="here: .*horizontal_fov"):
        camera_model(el, "here")
    el = etree.fromstring("<sensor name='c' type='camera'><camera><horizontal_fov>1</horizontal_fov>"
                          "<distortion><center>a b</center></distortion></camera></sensor>")
    with pytest.raises(DescriptionError, match="<center>"):
        camera_model(el, "here")
    with pytest.raises(DescriptionError, match="needs a <camera>"):
        camera_model(etree.fromstring("<sensor name='c' type='camera'/>"), "here")
