"""gz.msgs <-> ROS 2 message conversion, as ros_gz_bridge (jazzy,
ros_gz_bridge/src/convert/*.cpp) does it, so that what the host bridges is
what a Gazebo user receives:

- frames travel in the gz header's ``data`` entries: ``frame_id`` and, for
  Odometry and each pose of a TF ``Pose_V``, ``child_frame_id`` (``::`` in a
  gz frame becomes ``/``); ``Pose.name`` is not read;
- ``gz.msgs.Model`` carries joint states as ``joint[i].name`` and
  ``joint[i].axis1.position/velocity/force``;
- a ROS JointState command becomes a Model only with ``name``, ``position``,
  ``velocity`` and ``effort`` of one length: ros_gz_bridge loops over
  ``position`` and reads ``velocity[i]`` and ``effort[i]`` unchecked, so it
  drops a velocity-only command and reads past the end of a position-only
  one. Send NaN for "no set point" (the joint-control plugin skips NaN).

gz -> ROS builds rosbags message objects (for CDR encoding on DDS and in
log.mcap); ROS -> gz reads any object with the ROS field names (rosbags,
the DDS IDL classes or rclpy messages) and builds host gz messages.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from eels_gz.gzapi import msgs as gz
from eels_gz.ros.messages import typestore

_DTYPES = {gz.INT8: 1, gz.UINT8: 2, gz.INT16: 3, gz.UINT16: 4, gz.INT32: 5, gz.UINT32: 6,
           gz.FLOAT32: 7, gz.FLOAT64: 8}  # PointField uses the same numbering


def _T(name: str):
    return typestore().types[name]


def _header_value(header, key: str) -> str:
    for entry in header.data:
        if entry.key == key and entry.value:
            return entry.value[0].replace("::", "/")  # ros_gz_bridge's frame_id_gz_to_ros
    return ""


def _stamp(t):
    return _T("builtin_interfaces/msg/Time")(sec=int(t.sec), nanosec=int(t.nsec))


def _header(h):
    return _T("std_msgs/msg/Header")(stamp=_stamp(h.stamp), frame_id=_header_value(h, "frame_id"))


def _vec(v, kind="geometry_msgs/msg/Vector3"):
    return _T(kind)(x=float(v.x), y=float(v.y), z=float(v.z))


def _quat(q):
    return _T("geometry_msgs/msg/Quaternion")(x=float(q.x), y=float(q.y), z=float(q.z), w=float(q.w))


def _pose(p):
    return _T("geometry_msgs/msg/Pose")(position=_vec(p.position, "geometry_msgs/msg/Point"),
                                        orientation=_quat(p.orientation))


def _cov(values, n: int) -> np.ndarray:
    out = np.zeros(n, dtype=np.float64)
    data = list(values.data)
    out[:len(data)] = data[:n]
    return out


# --- gz -> ROS -----------------------------------------------------------------------
def clock(m):
    return _T("rosgraph_msgs/msg/Clock")(clock=_stamp(m.sim))


def joint_state(m):
    joints = list(m.joint)
    return _T("sensor_msgs/msg/JointState")(
        header=_header(m.header), name=[j.name for j in joints],
        position=np.array([j.axis1.position for j in joints], dtype=np.float64),
        velocity=np.array([j.axis1.velocity for j in joints], dtype=np.float64),
        effort=np.array([j.axis1.force for j in joints], dtype=np.float64))


def wrench_stamped(m):
    return _T("geometry_msgs/msg/WrenchStamped")(
        header=_header(m.header),
        wrench=_T("geometry_msgs/msg/Wrench")(force=_vec(m.force), torque=_vec(m.torque)))


def imu(m):
    return _T("sensor_msgs/msg/Imu")(
        header=_header(m.header), orientation=_quat(m.orientation),
        orientation_covariance=_cov(m.orientation_covariance, 9),
        angular_velocity=_vec(m.angular_velocity), angular_velocity_covariance=_cov(m.angular_velocity_covariance, 9),
        linear_acceleration=_vec(m.linear_acceleration),
        linear_acceleration_covariance=_cov(m.linear_acceleration_covariance, 9))


def point_cloud(m):
    fields = [_T("sensor_msgs/msg/PointField")(name=f.name, offset=int(f.offset), datatype=_DTYPES.get(f.datatype, 0),
                                               count=int(f.count)) for f in m.field]
    return _T("sensor_msgs/msg/PointCloud2")(
        header=_header(m.header), height=int(m.height), width=int(m.width), fields=fields,
        is_bigendian=bool(m.is_bigendian), point_step=int(m.point_step), row_step=int(m.row_step),
        data=np.frombuffer(bytes(m.data), dtype=np.uint8), is_dense=bool(m.is_dense))


def odometry(m):
    zeros = np.zeros(36, dtype=np.float64)
    return _T("nav_msgs/msg/Odometry")(
        header=_header(m.header), child_frame_id=_header_value(m.header, "child_frame_id"),
        pose=_T("geometry_msgs/msg/PoseWithCovariance")(pose=_pose(m.pose), covariance=zeros),
        twist=_T("geometry_msgs/msg/TwistWithCovariance")(
            twist=_T("geometry_msgs/msg/Twist")(linear=_vec(m.twist.linear), angular=_vec(m.twist.angular)),
            covariance=zeros.copy()))


def tf_message(m):
    """Each pose's own header gives the stamp, frame and child frame (ros_gz_bridge ignores Pose.name)."""
    transforms = []
    for p in m.pose:
        transforms.append(_T("geometry_msgs/msg/TransformStamped")(
            header=_header(p.header), child_frame_id=_header_value(p.header, "child_frame_id"),
            transform=_T("geometry_msgs/msg/Transform")(translation=_vec(p.position), rotation=_quat(p.orientation))))
    return _T("tf2_msgs/msg/TFMessage")(transforms=transforms)


# ros_gz_bridge's pixel format <-> encoding table (convert/sensor_msgs.cpp), for the formats the host renders
_ENCODINGS = {gz.RGB_INT8: ("rgb8", 3), gz.L_INT8: ("mono8", 1), gz.R_FLOAT32: ("32FC1", 4)}


def image(m):
    encoding, _ = _ENCODINGS.get(m.pixel_format_type, ("", 0))
    if not encoding:
        raise ValueError(f"gz.msgs.Image pixel_format_type {m.pixel_format_type} has no ROS encoding here")
    return _T("sensor_msgs/msg/Image")(
        header=_header(m.header), height=int(m.height), width=int(m.width), encoding=encoding, is_bigendian=0,
        step=int(m.step), data=np.frombuffer(bytes(m.data), dtype=np.uint8))


# ros_gz_bridge's names of gz.msgs.CameraInfo.Distortion models
DISTORTION_MODELS = {gz.PLUMB_BOB: "plumb_bob", gz.RATIONAL_POLYNOMIAL: "rational_polynomial",
                     gz.EQUIDISTANT: "equidistant"}


def camera_info(m):
    return _T("sensor_msgs/msg/CameraInfo")(
        header=_header(m.header), height=int(m.height), width=int(m.width),
        distortion_model=DISTORTION_MODELS.get(m.distortion.model, ""),
        d=np.array(list(m.distortion.k), dtype=np.float64),
        k=np.array(list(m.intrinsics.k), dtype=np.float64).reshape(9),
        r=np.array(list(m.rectification_matrix), dtype=np.float64).reshape(9),
        p=np.array(list(m.projection.p), dtype=np.float64).reshape(12), binning_x=0, binning_y=0,
        roi=_T("sensor_msgs/msg/RegionOfInterest")(x_offset=0, y_offset=0, height=0, width=0, do_rectify=False))


# --- ROS -> gz -----------------------------------------------------------------------
def _to_gz_header(src, dst) -> None:
    dst.stamp.sec, dst.stamp.nsec = int(src.stamp.sec), int(src.stamp.nanosec)
    if src.frame_id:
        gz.set_frame_id(dst, src.frame_id)


def model_from_joint_state(r):
    """JointState -> gz Model, joint by joint. Only a command whose name, position, velocity and effort
    have one length is carried correctly by ros_gz_bridge; any other is refused here with the rule."""
    names = list(r.name)
    n = len(names)
    pos, vel, eff = (list(v) for v in (r.position, r.velocity, r.effort))
    lengths = {"position": len(pos), "velocity": len(vel), "effort": len(eff)}
    if any(k != n for k in lengths.values()):
        raise ValueError(f"JointState command with {n} names and {len(pos)} position, {len(vel)} velocity and "
                         f"{len(eff)} effort values: give every array one entry per name (NaN where there is no "
                         "set point), as ros_gz_bridge reads velocity and effort by the index of position")
    m = gz.Model()
    _to_gz_header(r.header, m.header)
    for k, name in enumerate(names):
        j = m.joint.add(name=name)
        j.axis1.position, j.axis1.velocity, j.axis1.force = float(pos[k]), float(vel[k]), float(eff[k])
    return m


def boolean(r):
    return gz.Boolean(data=bool(r.data))


def pose_from_pose_stamped(r):
    m = gz.Pose()
    _to_gz_header(r.header, m.header)
    p, q = r.pose.position, r.pose.orientation
    m.position.x, m.position.y, m.position.z = float(p.x), float(p.y), float(p.z)
    m.orientation.x, m.orientation.y, m.orientation.z, m.orientation.w = float(q.x), float(q.y), float(q.z), float(q.w)
    return m


def twist(r):
    m = gz.Twist()
    for src, dst in ((r.linear, m.linear), (r.angular, m.angular)):
        dst.x, dst.y, dst.z = float(src.x), float(src.y), float(src.z)
    return m


# (ROS type, gz type) -> converter, per direction
GZ_TO_ROS: dict[tuple[str, str], Callable[[Any], Any]] = {
    ("rosgraph_msgs/msg/Clock", "gz.msgs.Clock"): clock,
    ("sensor_msgs/msg/JointState", "gz.msgs.Model"): joint_state,
    ("geometry_msgs/msg/WrenchStamped", "gz.msgs.Wrench"): wrench_stamped,
    ("sensor_msgs/msg/Imu", "gz.msgs.IMU"): imu,
    ("sensor_msgs/msg/PointCloud2", "gz.msgs.PointCloudPacked"): point_cloud,
    ("nav_msgs/msg/Odometry", "gz.msgs.Odometry"): odometry,
    ("tf2_msgs/msg/TFMessage", "gz.msgs.Pose_V"): tf_message,
    ("sensor_msgs/msg/Image", "gz.msgs.Image"): image,
    ("sensor_msgs/msg/CameraInfo", "gz.msgs.CameraInfo"): camera_info,
}
ROS_TO_GZ: dict[tuple[str, str], Callable[[Any], Any]] = {
    ("sensor_msgs/msg/JointState", "gz.msgs.Model"): model_from_joint_state,
    ("std_msgs/msg/Bool", "gz.msgs.Boolean"): boolean,
    ("geometry_msgs/msg/PoseStamped", "gz.msgs.Pose"): pose_from_pose_stamped,
    ("geometry_msgs/msg/Twist", "gz.msgs.Twist"): twist,
}
