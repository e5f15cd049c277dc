"""Every ROS 2 message type the bridge uses: the DDS IDL classes generated
from the ROS 2 definitions (eels_gz.ros.idl) encode a message to exactly the
bytes rosbags' independent CDR serializer gives, and the wire names follow
ROS 2 (rt/<topic>, pkg::msg::dds_::Name_); the gz <-> ROS conversions keep
every field."""

from __future__ import annotations

import math

import numpy as np
import pytest

from eels_gz.gzapi import msgs as gz
from eels_gz.ros import convert, idl
from eels_gz.ros.bridge import load_bridge
from eels_gz.ros.camera_bridge import camera_entries
from eels_gz.ros.messages import encode, typestore


def _gz_samples():
    """One gz message per bridged gz type, with distinct non-default values in every field."""
    clock = gz.Clock()
    clock.sim.sec, clock.sim.nsec = 12, 345_678_901
    model = gz.Model(joint=[{"name": f"j{k}", "axis1": {"position": 0.1 * k, "velocity": -k, "force": 2.5 * k}}
                            for k in range(36)])
    model.header.stamp.sec = 3
    wrench = gz.Wrench(force={"x": 1.0, "y": -2.0, "z": 3.5}, torque={"x": 0.25, "y": 0.5, "z": -0.75})
    gz.set_frame_id(wrench.header, "fts_2_link")
    imu = gz.IMU(orientation={"w": 0.5, "x": 0.5, "y": -0.5, "z": 0.5}, angular_velocity={"x": 0.01, "z": -0.02},
                 linear_acceleration={"z": 9.80665}, angular_velocity_covariance={"data": [4e-8] * 9})
    gz.set_frame_id(imu.header, "imu_link")
    cloud = gz.PointCloudPacked(height=1, width=2, point_step=16, row_step=32, is_dense=True,
                                data=np.arange(32, dtype=np.uint8).tobytes())
    for k, name in enumerate("xyz"):
        cloud.field.add(name=name, offset=4 * k, datatype=gz.FLOAT32, count=1)
    cloud.field.add(name="intensity", offset=12, datatype=gz.FLOAT32, count=1)
    odom = gz.Odometry(pose={"position": {"x": 1.0, "y": 2.0, "z": 0.1}, "orientation": {"w": 1.0}},
                       twist={"linear": {"x": 0.3}, "angular": {"z": 0.1}})
    gz.set_frame_id(odom.header, "odom")
    odom.header.data.add(key="child_frame_id", value=["base_link"])
    tf = gz.Pose_V()
    p = tf.pose.add(name="ignored_by_ros_gz", position={"x": 1.0}, orientation={"w": 1.0})
    p.header.stamp.sec = 2
    gz.set_frame_id(p.header, "odom")
    p.header.data.add(key="child_frame_id", value=["eels::base_link"])
    image = gz.Image(width=3, height=2, step=9, data=bytes(range(18)), pixel_format_type=gz.RGB_INT8)
    gz.set_frame_id(image.header, "cam_optical_frame")
    info = gz.CameraInfo(width=3, height=2)
    gz.set_frame_id(info.header, "cam_optical_frame")
    info.distortion.k.extend([-0.1, 0.01, 1e-3, -2e-3, 0.001])
    info.intrinsics.k.extend([2.5, 0, 1.5, 0, 2.5, 1.0, 0, 0, 1])
    info.projection.p.extend([2.5, 0, 1.5, 0, 0, 2.5, 1.0, 0, 0, 0, 1, 0])
    info.rectification_matrix.extend([1, 0, 0, 0, 1, 0, 0, 0, 1])
    return {"gz.msgs.Clock": clock, "gz.msgs.Model": model, "gz.msgs.Wrench": wrench, "gz.msgs.IMU": imu,
            "gz.msgs.PointCloudPacked": cloud, "gz.msgs.Odometry": odom, "gz.msgs.Pose_V": tf,
            "gz.msgs.Image": image, "gz.msgs.CameraInfo": info}


def _ros_commands():
    T = typestore().types
    stamp = T["builtin_interfaces/msg/Time"](sec=4, nanosec=5)
    header = T["std_msgs/msg/Header"](stamp=stamp, frame_id="world")
    return {
        "sensor_msgs/msg/JointState": T["sensor_msgs/msg/JointState"](
            header=header, name=["a", "b"], position=np.array([0.5, -0.25]), velocity=np.array([math.nan, 0.1]),
            effort=np.array([math.nan, math.nan])),
        "std_msgs/msg/Bool": T["std_msgs/msg/Bool"](data=True),
        "geometry_msgs/msg/PoseStamped": T["geometry_msgs/msg/PoseStamped"](header=header, pose=T["geometry_msgs/msg/Pose"](
            position=T["geometry_msgs/msg/Point"](x=1.0, y=2.0, z=3.0),
            orientation=T["geometry_msgs/msg/Quaternion"](x=0.0, y=0.0, z=math.sin(0.25), w=math.cos(0.25)))),
        "geometry_msgs/msg/Twist": T["geometry_msgs/msg/Twist"](
            linear=T["geometry_msgs/msg/Vector3"](x=0.2, y=0.0, z=0.0),
            angular=T["geometry_msgs/msg/Vector3"](x=0.0, y=0.0, z=-0.3)),
    }


ENTRIES = load_bridge(robot="eels_1_5", fts_sensors=[("fts_2_joint", "fts_2")], world="ice_plane") + \
    camera_entries([("/stereo_1_left/image_raw", "/stereo_1_left/camera_info")])


def test_bridge_uses_every_conversion_once_at_least():
    used = {(e.ros_type, e.gz_type, e.direction) for e in ENTRIES}
    assert {(r, g, "GZ_TO_ROS") for r, g in convert.GZ_TO_ROS} <= used
    assert {(r, g, "ROS_TO_GZ") for r, g in convert.ROS_TO_GZ} <= used


@pytest.mark.parametrize("pair", sorted(convert.GZ_TO_ROS), ids=lambda p: p[0])
def test_sim_to_ros_bytes_equal_rosbags(pair):
    ros_type, gz_type = pair
    msg = convert.GZ_TO_ROS[pair](_gz_samples()[gz_type])
    reference = encode(msg, ros_type)
    assert idl.from_ros(msg, ros_type).serialize() == reference
    assert reference[:4] == b"\x00\x01\x00\x00"  # CDR_LE encapsulation, as rmw_cyclonedds writes


@pytest.mark.parametrize("ros_type", sorted({r for r, _ in convert.ROS_TO_GZ}))
def test_ros_to_sim_bytes_equal_rosbags_and_decode(ros_type):
    msg = _ros_commands()[ros_type]
    data = encode(msg, ros_type)
    cls = idl.idl_class(ros_type)
    assert idl.from_ros(msg, ros_type).serialize() == data
    decoded = cls.deserialize(data)  # what the DDS reader hands the bridge
    gz_type = next(g for r, g in convert.ROS_TO_GZ if r == ros_type)
    a, b = convert.ROS_TO_GZ[(ros_type, gz_type)](decoded), convert.ROS_TO_GZ[(ros_type, gz_type)](msg)
    assert repr(a) == repr(b)  # NaN-safe comparison of the converted gz messages


def test_wire_names():
    assert idl.dds_topic_name("/eels_1_5/fts/fts_2/wrench") == "rt/eels_1_5/fts/fts_2/wrench"
    assert idl.dds_type_name("sensor_msgs/msg/JointState") == "sensor_msgs::msg::dds_::JointState_"
    assert idl.idl_class("rosgraph_msgs/msg/Clock").__idl_typename__ == "rosgraph_msgs::msg::dds_::Clock_"


def test_conversions_keep_fields():
    s = _gz_samples()
    js = convert.joint_state(s["gz.msgs.Model"])
    assert js.name[5] == "j5" and js.position[5] == pytest.approx(0.5) and js.effort[2] == 5.0
    w = convert.wrench_stamped(s["gz.msgs.Wrench"])
    assert w.header.frame_id == "fts_2_link" and (w.wrench.force.z, w.wrench.torque.z) == (3.5, -0.75)
    o = convert.odometry(s["gz.msgs.Odometry"])
    assert (o.header.frame_id, o.child_frame_id, o.twist.twist.angular.z) == ("odom", "base_link", 0.1)
    tf = convert.tf_message(s["gz.msgs.Pose_V"])
    # as ros_gz_bridge: the child frame from the pose's header entry ("::" -> "/"), never Pose.name
    assert (tf.transforms[0].header.frame_id, tf.transforms[0].child_frame_id) == ("odom", "eels/base_link")
    assert tf.transforms[0].header.stamp.sec == 2
    c = convert.clock(s["gz.msgs.Clock"])
    assert (c.clock.sec, c.clock.nanosec) == (12, 345_678_901)
    cmd = convert.model_from_joint_state(_ros_commands()["sensor_msgs/msg/JointState"])
    assert [j.name for j in cmd.joint] == ["a", "b"] and cmd.joint[1].axis1.position == -0.25
    assert math.isnan(cmd.joint[0].axis1.velocity) and cmd.joint[1].axis1.velocity == 0.1  # NaN: no set point


def test_malformed_joint_state_is_rejected_with_reason():
    T = typestore().types
    bad = T["sensor_msgs/msg/JointState"](header=T["std_msgs/msg/Header"](
        stamp=T["builtin_interfaces/msg/Time"](sec=0, nanosec=0), frame_id=""), name=["a", "b"],
        position=np.array([1.0]), velocity=np.array([], float), effort=np.array([], float))
    with pytest.raises(ValueError, match="2 names and 1 position, 0 velocity and 0 effort values"):
        convert.model_from_joint_state(bad)
    # velocity only: ros_gz_bridge would loop over the empty position array and drop it
    velocity_only = T["sensor_msgs/msg/JointState"](header=bad.header, name=["a"], position=np.array([], float),
                                                    velocity=np.array([1.0]), effort=np.array([], float))
    with pytest.raises(ValueError, match="one entry per name"):
        convert.model_from_joint_state(velocity_only)


def test_cdr_templates_give_the_bytes_rosbags_gives():
    """The log's templates (eels_gz.ros.messages.CdrTemplate and kin) write stamps and numbers into
    fixed CDR bytes; for random values they equal rosbags' serialization of the message built in full."""
    from eels_gz.ros import messages

    rng = np.random.default_rng(5)
    names = [f"joint_{k}" for k in range(7)]
    tpl = messages.RunLogTemplates(names, "world", "base_link")
    for t_ns in (0, 1_234_567_891, 59_999_999_999):
        q, dq, e = rng.normal(size=(3, 7))
        assert tpl.joint_state(t_ns, q, dq, e) == messages.encode(
            messages.joint_state(t_ns, names, q, dq, e), messages.JOINT_STATE)
        assert tpl.clock(t_ns) == messages.encode(messages.clock(t_ns), messages.CLOCK)
        p, w, v = rng.normal(size=3), rng.normal(size=3), rng.normal(size=3)
        quat = rng.normal(size=4)
        quat /= np.linalg.norm(quat)
        assert tpl.odometry(t_ns, p, quat, v, w) == messages.encode(
            messages.odometry(t_ns, "world", "base_link", p, quat, v, w), messages.ODOMETRY)
        frames = [("world", "base_link"), ("base_link", "m1"), ("m1", "m2")]
        T = np.tile(np.eye(4), (3, 1, 1))
        T[:, :3, 3] = rng.normal(size=(3, 3))
        tf = messages.TfTemplate(frames)
        assert tf.encode(t_ns, T) == messages.encode(messages.tf_message(
            [messages.transform(t_ns, a, b, T[i]) for i, (a, b) in enumerate(frames)]), messages.TF_MESSAGE)


@pytest.mark.parametrize("n", [0, 1, 2, 5])
def test_point_list_template_gives_the_bytes_rosbags_gives(n):
    from eels_gz.ros import messages

    def make(t_ns, points):
        return messages.marker(t_ns, "world", "screw_contact", 0, "LINE_LIST", scale=(0.01, 0, 0),
                               rgba=(1.0, 0.5, 0.0, 1.0), points=points)

    tpl = messages.PointListTemplate(make)
    points = np.random.default_rng(n).normal(size=(n, 3))
    t_ns = 3_000_000_123
    assert tpl.encode(t_ns, points) == messages.encode(messages.marker_array([make(t_ns, points)]),
                                                       messages.MARKER_ARRAY)


def test_a_template_takes_one_stamp_per_frame_and_refuses_a_wrong_count():
    """CdrTemplate.encode with an array of stamps writes each frame's own stamp (the bytes rosbags gives);
    a wrong number of values or of stamps is a ValueError, not bytes with stale numbers."""
    from eels_gz.ros import messages

    frames = [("world", "base_link"), ("base_link", "m1")]
    tf = messages.TfTemplate(frames)
    T = np.tile(np.eye(4), (2, 1, 1))
    T[:, :3, 3] = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    values = np.concatenate([T[:, :3, 3], messages.quaternions_xyzw(T[:, :3, :3])], axis=1).reshape(-1)
    stamps = np.array([1_000_000_001, 2_500_000_000])
    assert tf.template.encode(stamps, values) == messages.encode(messages.tf_message(
        [messages.transform(int(t), a, b, T[i]) for i, ((a, b), t) in enumerate(zip(frames, stamps))]),
        messages.TF_MESSAGE)
    with pytest.raises(ValueError, match="wrong number"):
        tf.template.encode(0, values[:-1])
    with pytest.raises(ValueError, match="wrong number"):
        tf.template.encode(stamps[:1], values)


def test_blob_template_gives_the_bytes_rosbags_gives_and_refuses_what_it_cannot_place():
    """BlobTemplate (the lidar's logged PointCloud2: stamp, a fixed-size data sequence and is_dense)
    equals rosbags' serialization of the full message, dense or not; data of another size is refused,
    and so is a message without a byte sequence followed by a bool (sensor_msgs/Image)."""
    from eels_gz.ros import messages

    rows, cols = 2, 3

    def cloud(stamp, data, dense):
        fields = [typestore().types["sensor_msgs/msg/PointField"](name=n, offset=4 * k, datatype=7, count=1)
                  for k, n in enumerate(("x", "y", "z", "intensity"))]
        return typestore().types["sensor_msgs/msg/PointCloud2"](
            header=messages.header(stamp[0] * 1_000_000_000 + stamp[1], "lidar"), height=rows, width=cols,
            fields=fields, is_bigendian=False, point_step=16, row_step=16 * cols,
            data=np.frombuffer(bytes(data), dtype=np.uint8), is_dense=bool(dense))

    tpl = messages.BlobTemplate("sensor_msgs/msg/PointCloud2", cloud, 16 * rows * cols)
    rng = np.random.default_rng(2)
    for t_ns, dense in ((0, True), (7_000_000_001, False), (59_999_999_999, True)):
        data = rng.normal(size=(rows * cols, 4)).astype("<f4")
        expected = messages.encode(cloud((t_ns // 1_000_000_000, t_ns % 1_000_000_000), data.tobytes(), dense),
                                   "sensor_msgs/msg/PointCloud2")
        assert tpl.encode(t_ns, data, dense) == expected
    with pytest.raises(ValueError, match="expected 96"):
        tpl.encode(0, np.zeros((rows * cols - 1, 4), dtype="<f4"), True)
    with pytest.raises(ValueError, match="cannot find"):
        messages.BlobTemplate(messages.IMAGE, lambda st, data, flag: messages.image(
            st[0] * 1_000_000_000 + st[1], "cam", np.frombuffer(bytes(data), np.uint8).reshape(1, -1), "mono8"), 8)
