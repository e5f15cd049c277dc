"""The description's camera and depth_camera sensors in the host (eels_gz.dart.cameras): names and frames agree
with the Gazebo tags (REP-103 optical frames), images and camera info reach the gz topics, ROS (the bridge's
conversions) and log.mcap."""

from __future__ import annotations

import json

import numpy as np
import pytest
from lxml import etree
from mcap.reader import make_reader

from eels_gz import config
from eels_gz.errors import DescriptionError
from eels_gz.gzapi import msgs
from eels_gz.dart.cameras import Camera, camera_model
from eels_gz.run.resolve import resolve_run
from eels_gz.run.runner import prepare, run
from eels_gz.dart.sensors import HostSensors
from eels_gz.ros import convert
from eels_gz.ros.camera_bridge import camera_entries, description_cameras
from eels_gz.ros.messages import typestore
from eels_gz.sensors.camera import T_SENSOR_OPTICAL

HEAD = {"robot": {"name": "eels_1_0_alternating", "n_modules": 1}, "world": "tube",
        "sensors": {"cameras": True}}


@pytest.fixture(scope="module")
def head():
    sim = prepare(resolve_run(config.resolve(overrides=HEAD))).sim
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
    # the run says which renderer drew its images (OpenGL here: the Makefile's SYSDEPS give EGL)
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["camera_renderer"]["name"] == "gl" and "EGL" in summary["camera_renderer"]["detail"]


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


def test_depth_points_on_gz_and_ros_match_the_depth_image(head):
    """gz-sensors' DepthCameraSensor also publishes ``<topic>/points``: one point per pixel, x y z rgb float32
    at 0 4 8 16 (point_step 24), in the optical frame the header names; here z is the depth image and x, y its
    pinhole back-projection."""
    sim, sensors = head
    node = sensors.node
    got = {}
    for topic, kind in (("/depth_camera/depth_image", msgs.Image), ("/depth_camera/depth_image/points",
                                                                      msgs.PointCloudPacked)):
        node.subscribe(kind, topic, lambda m, t=topic: got.setdefault(t, m))
    depth = next(s for s in sensors.sensors if s.name == "depth_camera")
    sim.step()
    depth.publish(round(sim.time * 1e9))
    sim.transport.deliver()
    image = convert.image(got["/depth_camera/depth_image"])
    cloud = convert.GZ_TO_ROS[("sensor_msgs/msg/PointCloud2", "gz.msgs.PointCloudPacked")](
        got["/depth_camera/depth_image/points"])
    assert cloud.header.frame_id == "depth_camera_link_optical_frame" == image.header.frame_id
    assert [(f.name, f.offset, f.datatype) for f in cloud.fields] == [("x", 0, 7), ("y", 4, 7), ("z", 8, 7),
                                                                      ("rgb", 16, 7)]
    m = depth.model
    assert (cloud.width, cloud.height, cloud.point_step, cloud.row_step) == (m.width, m.height, 24, 24 * m.width)
    rows = np.frombuffer(cloud.data.tobytes(), "<f4").reshape(m.height, m.width, 6)
    d = np.frombuffer(image.data.tobytes(), "<f4").reshape(m.height, m.width)
    seen = np.isfinite(d)
    assert seen.mean() > 0.5 and np.array_equal(np.isfinite(rows[..., 2]), seen)
    u, v = np.meshgrid(np.arange(m.width), np.arange(m.height))
    assert np.allclose(rows[..., 2][seen], d[seen], rtol=1e-6)
    assert np.allclose(rows[..., 0][seen], d[seen] * (u[seen] - m.cx) / m.fx, rtol=1e-5, atol=1e-6)
    assert np.allclose(rows[..., 1][seen], d[seen] * (v[seen] - m.cy) / m.fy, rtol=1e-5, atol=1e-6)
    assert not cloud.is_dense or seen.all()
    entries = {(e.gz_topic, e.ros_type) for e in camera_entries(description_cameras(sim.sensor_specs))}
    assert ("/depth_camera/depth_image/points", "sensor_msgs/msg/PointCloud2") in entries


NS = "xmlns:eels='https://github.com/eels_gz/sdf'"


def _sensor(camera_body: str):
    return etree.fromstring(f"<sensor name='c' type='camera' {NS}><camera><horizontal_fov>1.2</horizontal_fov>"
                            f"<image><width>64</width><height>48</height></image>{camera_body}</camera></sensor>")


def test_the_sdf_selects_each_camera_model():
    from eels_gz.sensors.camera import PinholeCamera
    from eels_gz.sensors.camera_models import CahvoreCamera, FisheyeCamera

    pin = camera_model(_sensor("<distortion><k1>-0.1</k1></distortion><eels:gamma>2.2</eels:gamma>"), "here")
    assert isinstance(pin, PinholeCamera) and pin.distortion.k1 == -0.1 and pin.effects.gamma == 2.2
    fish = camera_model(_sensor("<lens><type>equidistant</type><cutoff_angle>1.5</cutoff_angle></lens>"
                                "<distortion><k1>0.01</k1></distortion><eels:vignetting>0.4</eels:vignetting>"), "here")
    assert isinstance(fish, FisheyeCamera) and fish.cutoff == 1.5 and fish.k == (0.01, 0.0, 0.0, 0.0)
    assert fish.effects.vignetting == 0.4 and fish.distortion_model == "equidistant"
    cahv = "<c>0 0 0</c><a>1 0 0</a><h>60 -110 0</h><v>50 0 -110</v>"
    for extra, kind in (("", "cahv"), ("<o>1 0 0</o><r>0.05 -0.21 0.01</r>", "cahvor"),
                        ("<r>0.05 -0.21 0.01</r><e>0.12 -0.14 0.13</e><linearity>0</linearity>", "cahvore")):
        m = camera_model(_sensor(f"<eels:cahvore>{cahv}{extra}</eels:cahvore>"), "here")
        assert isinstance(m, CahvoreCamera) and m.kind == kind and (m.hc, m.vc) == (60.0, 50.0)
    for body, match in (("<lens><type>stereographic</type></lens>", "stereographic"),
                        ("<eels:cahvore><c>0 0 0</c><a>1 0 0</a><v>50 0 -110</v></eels:cahvore>", "needs <h>"),
                        ("<eels:cahvore><c>0 0</c><a>1 0 0</a><h>60 -110 0</h><v>50 0 -110</v></eels:cahvore>",
                         "<c> must be 3 numbers"),
                        ("<eels:gamma>-1</eels:gamma>", "gamma"),
                        ("<lens><type>equidistant</type></lens><distortion><p1>0.1</p1></distortion>", "k1 k2 k3")):
        with pytest.raises(DescriptionError, match=match):
            camera_model(_sensor(body), "here")


def test_libsdformat_keeps_the_eels_camera_elements(tmp_path):
    """The eels-namespaced elements validate with libsdformat (``ign sdf -k``) and survive URDF -> SDF (``-p``)."""
    import shutil
    import subprocess

    ign = shutil.which("ign")
    assert ign, "ign (ignition-tools, the Makefile's SYSDEPS) is needed"
    urdf = tmp_path / "r.urdf"
    urdf.write_text(f"""<?xml version="1.0"?>
<robot name="r" {NS.replace("'", '"')}>
  <link name="base"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <gazebo reference="base"><sensor name="c" type="camera"><camera><horizontal_fov>1.0</horizontal_fov>
    <image><width>64</width><height>48</height></image>
    <eels:cahvore><c>0 0 0</c><a>1 0 0</a><h>60 -110 0</h><v>50 0 -110</v><o>1 0 0</o></eels:cahvore>
    <eels:vignetting>0.3</eels:vignetting><eels:gamma>2.2</eels:gamma></camera></sensor></gazebo>
</robot>""")
    check = subprocess.run([ign, "sdf", "-k", str(urdf)], capture_output=True, text=True, timeout=60)
    assert check.returncode == 0 and "Valid" in check.stdout
    printed = subprocess.run([ign, "sdf", "-p", str(urdf)], capture_output=True, text=True, timeout=60).stdout
    assert "<eels:cahvore>" in printed and "<eels:gamma>2.2</eels:gamma>" in printed
