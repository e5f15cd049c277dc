"""The 3D scene in log.mcap (eels_gz.dart.scene_log): /robot_description,
/tf_static, /tf, the terrain markers and the screw contact force arrows,
decoded with rosbags' ROS 2 type store (the official message definitions)."""

from __future__ import annotations

import numpy as np
import pytest
import yaml
from lxml import etree
from mcap.reader import make_reader
from scipy.spatial.transform import Rotation

from eels_gz import config
from eels_gz.run.resolve import resolve_run
from eels_gz.run.runner import Recorder, prepare
from eels_gz.dart.scene_log import ARROW_M_PER_N, EMBED_MAX_TRIANGLES, package_uri
from eels_gz.paths import share_dir
from eels_gz.ros.messages import msgdef, typestore

TOPIC_TYPES = {
    "/robot_description": "std_msgs/msg/String",
    "/tf_static": "tf2_msgs/msg/TFMessage",
    "/tf": "tf2_msgs/msg/TFMessage",
    "/terrain": "visualization_msgs/msg/MarkerArray",
    "/terrain/embedded": "visualization_msgs/msg/MarkerArray",
    "/screw_contact/forces": "visualization_msgs/msg/MarkerArray",
}


def _record(tmp_path, robot, world, n_modules, steps, contact="screw", **xacro):
    cfg = config.resolve(overrides={"robot": {"name": robot, "n_modules": n_modules, "xacro_args": xacro},
                                    "world": world, "contact": {"model": contact}})
    sim = prepare(resolve_run(cfg, tmp_path)).sim
    rec = Recorder(sim, tmp_path / "log.mcap")
    rec.sample()
    for _ in range(steps):
        sim.step()
    rec.sample()
    rec.close()
    return sim


def _read(path):
    store, out, channels = typestore(), {}, {}
    with open(path, "rb") as f:
        reader = make_reader(f)
        for schema, channel, message in reader.iter_messages():
            channels[channel.topic] = (schema, channel)
            out.setdefault(channel.topic, []).append(
                (message.log_time, store.deserialize_cdr(message.data, schema.name)))
    return out, channels


def _matrix(tf):
    t, q = tf.transform.translation, tf.transform.rotation
    T = np.eye(4)
    T[:3, :3] = Rotation.from_quat([q.x, q.y, q.z, q.w]).as_matrix()
    T[:3, 3] = (t.x, t.y, t.z)
    return T


@pytest.fixture(scope="module")
def head_run(tmp_path_factory):
    """EELS 1.0 (counter-rotating screws, perception head), 2 modules, screw contact on ice: 200 steps."""
    tmp = tmp_path_factory.mktemp("scene")
    sim = _record(tmp, "eels_1_0_alternating", "ice_plane", 2, 200)
    return sim, *_read(tmp / "log.mcap")


def test_scene_topics_have_the_official_schemas(head_run):
    _, messages, channels = head_run
    for topic, typename in TOPIC_TYPES.items():
        schema, channel = channels[topic]
        assert schema.name == typename and schema.encoding == "ros2msg" and channel.message_encoding == "cdr"
        assert schema.data.decode() == msgdef(typename)  # rosbags' Jazzy definition, dependencies included
    # latched topics are offered transient local, the others volatile (rosbag2's offered_qos_profiles)
    for topic in TOPIC_TYPES:
        qos = yaml.safe_load(channels[topic][1].metadata["offered_qos_profiles"])[0]
        latched = topic in ("/robot_description", "/tf_static", "/terrain", "/terrain/embedded")
        assert qos["durability"] == ("transient_local" if latched else "volatile"), topic
        assert qos["reliability"] == "reliable"
    assert len(messages["/robot_description"]) == len(messages["/tf_static"]) == 1
    assert len(messages["/tf"]) == len(messages["/screw_contact/forces"]) == 2


def test_every_link_of_the_description_has_a_pose_equal_to_the_simulation(head_run):
    sim, messages, _ = head_run
    urdf = messages["/robot_description"][0][1].data
    assert urdf == sim.robot_source_urdf
    links = {n.get("name") for n in etree.fromstring(urdf.encode()).iter("link")}
    assert {"stereo_1_left", "imu_link", "lidar_link", "head_link"} <= links  # frames the optimizer merged away
    edges = {tf.child_frame_id: (tf.header.frame_id, _matrix(tf)) for tf in messages["/tf_static"][0][1].transforms}
    t_ns, last = messages["/tf"][-1]
    assert t_ns == round(sim.time * 1e9)
    for tf in last.transforms:
        assert tf.child_frame_id not in edges, "a frame on both /tf and /tf_static"
        edges[tf.child_frame_id] = (tf.header.frame_id, _matrix(tf))
        assert tf.header.stamp.sec * 10**9 + tf.header.stamp.nanosec == t_ns
    assert set(edges) == links  # every link, each with exactly one parent

    def world(name):
        parent, T = edges[name]
        return T if parent == "world" else world(parent) @ T

    for name in links:
        # float64 transforms composed along the tree: equal to the engine's pose to round-off
        assert np.allclose(world(name), sim.frame_world_pose(name), atol=1e-9), name


def test_terrain_markers_resolve_and_embed_the_mesh(tmp_path):
    _record(tmp_path, "eels_1_0_front_only", "tube", 2, 1, contact="stock")
    messages, _ = _read(tmp_path / "log.mcap")
    (marker,) = messages["/terrain"][0][1].markers
    assert marker.type == marker.MESH_RESOURCE and marker.header.frame_id == "world"
    uri = marker.mesh_resource
    assert uri == "package://eels_gz/models/tube/meshes/collision.stl"
    # package://eels_gz/ is the share directory (ament's share/eels_gz, or the source tree)
    assert (share_dir() / uri[len("package://eels_gz/"):]).is_file()
    assert package_uri(tmp_path / "log.mcap") == (tmp_path / "log.mcap").resolve().as_uri()  # outside: file://
    (embedded,) = messages["/terrain/embedded"][0][1].markers
    assert embedded.type == embedded.TRIANGLE_LIST
    tris = np.array([[p.x, p.y, p.z] for p in embedded.points]).reshape(-1, 3, 3)
    assert 0.5 * EMBED_MAX_TRIANGLES <= len(tris) <= EMBED_MAX_TRIANGLES  # the 25k-triangle tube, simplified
    # the tube's bore: radius 0.6 m about the axis y = 0, z = 0.6 m (models/tube/terrain.json); roughness 0.02 m
    r = np.hypot(tris[..., 1], tris[..., 2] - 0.6)
    inner = r[r < 0.7]
    assert inner.size > 0.3 * r.size and np.all(np.abs(inner - 0.6) < 0.08)


def test_ice_plane_is_a_flat_cube_marker_and_two_triangles(head_run):
    _, messages, _ = head_run
    (cube,) = messages["/terrain"][0][1].markers
    assert cube.type == cube.CUBE and (cube.scale.x, cube.scale.y) == (200.0, 200.0) and cube.scale.z < 0.01
    (tri,) = messages["/terrain/embedded"][0][1].markers
    pts = np.array([[p.x, p.y, p.z] for p in tri.points])
    assert pts.shape == (6, 3) and np.all(pts[:, 2] == 0.0) and np.ptp(pts[:, 0]) == 200.0


def test_force_segments_are_the_screw_contact_forces(head_run):
    sim, messages, _ = head_run
    _, last = messages["/screw_contact/forces"][-1]
    (marker,) = last.markers
    assert marker.type == marker.LINE_LIST and marker.id == 0 and marker.header.frame_id == "world"
    pts = np.array([[p.x, p.y, p.z] for p in marker.points]).reshape(-1, 2, 3)
    system = next(s.system for s in sim.systems if s.module == "screw_contact")
    w = system.last
    in_contact = [s for s in range(len(w.force)) if np.any(w.normal_force[s] > 0)]
    assert len(pts) == len(in_contact) > 0
    for (start, end), s in zip(pts, in_contact):
        assert np.allclose((end - start) / ARROW_M_PER_N, w.force[s], rtol=1e-9, atol=1e-9)
        # from the pressure centre of its contact points, which lie on the screw
        fn = w.normal_force[s]
        assert np.allclose(start, (fn[:, None] * w.points[s]).sum(0) / fn.sum(), atol=1e-12)
