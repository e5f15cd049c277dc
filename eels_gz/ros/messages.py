"""Build ROS 2 messages and encode them as CDR, with rosbags' ROS 2 (Jazzy)
type store, so the bytes are those a ROS 2 node would put on the wire."""

from __future__ import annotations

import math
from functools import lru_cache

import numba
import numpy as np

JOINT_STATE = "sensor_msgs/msg/JointState"
CLOCK = "rosgraph_msgs/msg/Clock"
ODOMETRY = "nav_msgs/msg/Odometry"


@lru_cache(maxsize=1)
def typestore():
    """rosbags' ROS 2 Jazzy type store, the types eels_gz names registered first and the rest on
    demand (eels_gz.ros.small_store: the same definitions and bytes, without importing every
    release's generated types at a run's start)."""
    from eels_gz.ros.small_store import SmallStore

    return SmallStore()


def msgdef(typename: str) -> str:
    """The ``ros2msg`` schema text (with dependencies) of a message type."""
    return typestore().generate_msgdef(typename, ros_version=2)[0]


def encode(msg, typename: str) -> bytes:
    return bytes(typestore().serialize_cdr(msg, typename))


def _types():
    t = typestore().types
    return t


def stamp(t_ns: int):
    Time = _types()["builtin_interfaces/msg/Time"]
    return Time(sec=int(t_ns // 1_000_000_000), nanosec=int(t_ns % 1_000_000_000))


def header(t_ns: int, frame_id: str):
    return _types()["std_msgs/msg/Header"](stamp=stamp(t_ns), frame_id=frame_id)


def clock(t_ns: int):
    return _types()[CLOCK](clock=stamp(t_ns))


def joint_state(t_ns: int, names: list[str], position, velocity, effort):
    return _types()[JOINT_STATE](
        header=header(t_ns, ""), name=list(names),
        position=np.asarray(position, dtype=np.float64),
        velocity=np.asarray(velocity, dtype=np.float64),
        effort=np.asarray(effort, dtype=np.float64),
    )


def odometry(t_ns: int, frame_id: str, child_frame_id: str, position, quat_wxyz,
             linear_child, angular_child):
    """nav_msgs/Odometry: pose in ``frame_id``, twist in ``child_frame_id`` (REP-105)."""
    T = _types()
    pose = T["geometry_msgs/msg/Pose"](
        position=T["geometry_msgs/msg/Point"](x=float(position[0]), y=float(position[1]), z=float(position[2])),
        orientation=T["geometry_msgs/msg/Quaternion"](
            x=float(quat_wxyz[1]), y=float(quat_wxyz[2]), z=float(quat_wxyz[3]), w=float(quat_wxyz[0])),
    )
    vec = T["geometry_msgs/msg/Vector3"]
    twist = T["geometry_msgs/msg/Twist"](
        linear=vec(x=float(linear_child[0]), y=float(linear_child[1]), z=float(linear_child[2])),
        angular=vec(x=float(angular_child[0]), y=float(angular_child[1]), z=float(angular_child[2])),
    )
    zeros = np.zeros(36, dtype=np.float64)
    return T[ODOMETRY](
        header=header(t_ns, frame_id), child_frame_id=child_frame_id,
        pose=T["geometry_msgs/msg/PoseWithCovariance"](pose=pose, covariance=zeros),
        twist=T["geometry_msgs/msg/TwistWithCovariance"](twist=twist, covariance=zeros.copy()),
    )


# --- the 3D scene of a run (eels_gz.dart.scene_log) and cameras ------------------------
TF_MESSAGE = "tf2_msgs/msg/TFMessage"
STRING = "std_msgs/msg/String"
MARKER_ARRAY = "visualization_msgs/msg/MarkerArray"
IMAGE = "sensor_msgs/msg/Image"
CAMERA_INFO = "sensor_msgs/msg/CameraInfo"


def transform(t_ns: int, parent: str, child: str, T: np.ndarray):
    """geometry_msgs/TransformStamped of ``child`` in ``parent`` from a 4x4 ``T`` (rotation orthonormal)."""
    Ty = _types()
    p = np.asarray(T)[:3, 3]
    return Ty["geometry_msgs/msg/TransformStamped"](
        header=header(t_ns, parent), child_frame_id=child,
        transform=Ty["geometry_msgs/msg/Transform"](
            translation=Ty["geometry_msgs/msg/Vector3"](x=float(p[0]), y=float(p[1]), z=float(p[2])),
            rotation=_quaternion(np.asarray(T)[:3, :3])))


def _quaternion(R: np.ndarray):
    """geometry_msgs/Quaternion of a rotation matrix, w >= 0."""
    x, y, z, w = quaternions_xyzw(np.asarray(R, dtype=float)[None])[0].tolist()
    return _types()["geometry_msgs/msg/Quaternion"](x=x, y=y, z=z, w=w)


@numba.njit(cache=True)
def _quaternions_xyzw(R, out):
    for i in range(R.shape[0]):
        m00, m01, m02 = R[i, 0, 0], R[i, 0, 1], R[i, 0, 2]
        m10, m11, m12 = R[i, 1, 0], R[i, 1, 1], R[i, 1, 2]
        m20, m21, m22 = R[i, 2, 0], R[i, 2, 1], R[i, 2, 2]
        tr = m00 + m11 + m22
        if tr > 0.0:
            s = 2.0 * math.sqrt(tr + 1.0)
            w, x, y, z = 0.25 * s, (m21 - m12) / s, (m02 - m20) / s, (m10 - m01) / s
        elif m00 > m11 and m00 > m22:
            s = 2.0 * math.sqrt(1.0 + m00 - m11 - m22)
            w, x, y, z = (m21 - m12) / s, 0.25 * s, (m01 + m10) / s, (m02 + m20) / s
        elif m11 > m22:
            s = 2.0 * math.sqrt(1.0 + m11 - m00 - m22)
            w, x, y, z = (m02 - m20) / s, (m01 + m10) / s, 0.25 * s, (m12 + m21) / s
        else:
            s = 2.0 * math.sqrt(1.0 + m22 - m00 - m11)
            w, x, y, z = (m10 - m01) / s, (m02 + m20) / s, (m12 + m21) / s, 0.25 * s
        sign = -1.0 if w < 0.0 else 1.0
        out[i, 0], out[i, 1], out[i, 2], out[i, 3] = sign * x, sign * y, sign * z, sign * w


def quaternions_xyzw(R: np.ndarray) -> np.ndarray:
    """Unit quaternions (N, 4) x, y, z, w (w >= 0) of rotation matrices (N, 3, 3) (Shepperd's method)."""
    R = np.ascontiguousarray(R, dtype=np.float64)
    out = np.empty((R.shape[0], 4))
    _quaternions_xyzw(R, out)
    return out


_SENTINEL_VALUE = 16384.0  # value k is 16384 + k: exactly representable, and unique in the CDR bytes
_SENTINEL_SEC, _SENTINEL_NSEC = 1_000_000, 2_000_000


class CdrTemplate:
    """CDR bytes of a message whose strings and array lengths never change, built once with rosbags:
    ``build(stamps, values)`` makes the message from a list of (sec, nanosec) stamps and a float64 array
    of values; the template finds where each lands in the bytes (sentinel numbers), and ``encode`` then
    writes new stamps and values into a copy. A logged sample costs a few array writes instead of a
    rosbags message tree and its serialization (the bytes are the same)."""

    def __init__(self, typename: str, build, n_values: int, n_stamps: int = 1):
        import struct

        sentinels = _SENTINEL_VALUE + np.arange(n_values, dtype=float)
        stamps = [(_SENTINEL_SEC + i, _SENTINEL_NSEC + i) for i in range(n_stamps)]
        self.data = encode(build(stamps, sentinels), typename)
        self.values = np.empty(n_values, dtype=np.int64)
        for k, v in enumerate(sentinels.tolist()):
            self.values[k] = self._place(struct.pack("<d", v), 8, typename, f"value {k}")
        self.stamps = np.empty((n_stamps, 2), dtype=np.int64)
        for i, pair in enumerate(stamps):
            for k, v in enumerate(pair):
                self.stamps[i, k] = self._place(struct.pack("<I", v), 4, typename, f"stamp {i}")
        self._work = None  # encode's buffer: the bytes, rewritten in place (values and stamps only)

    def _place(self, pattern: bytes, size: int, typename: str, what: str) -> int:
        off = self.data.find(pattern)
        base = 4 if size == 8 else 0  # doubles are 8-aligned after the 4-byte encapsulation header
        if off < 0 or (off - base) % size or self.data.find(pattern, off + 1) >= 0:
            raise ValueError(f"CdrTemplate: cannot place {what} of {typename} in its CDR bytes")
        return (off - base) // size

    def encode(self, t_ns: int | np.ndarray, values: np.ndarray) -> bytes:
        """The message with every stamp at ``t_ns`` (or one per stamp: an array) and ``values`` in the build
        order."""
        if self._work is None:  # the buffer and its views as doubles and as words
            buf = np.frombuffer(bytearray(self.data), dtype=np.uint8)
            self._work = (buf, buf[4:4 + 8 * ((len(buf) - 4) // 8)].view("<f8"), buf[:4 * (len(buf) // 4)].view("<u4"))
        buf, doubles, words = self._work
        scalar = not (isinstance(t_ns, np.ndarray) and t_ns.ndim)  # np.ndim() costs a microsecond
        each = _NO_STAMPS if scalar else np.ascontiguousarray(t_ns, dtype=np.int64).reshape(-1)
        _fill_template(doubles, self.values, np.ascontiguousarray(values, dtype=np.float64).reshape(-1), words,
                       self.stamps, int(t_ns) if scalar else 0, each)
        return buf.tobytes()


_NO_STAMPS = np.empty(0, dtype=np.int64)


@numba.njit(cache=True)
def _fill_template(doubles, value_at, values, words, stamp_at, t_ns, each):  # pragma: no cover - compiled
    """doubles[value_at] = values; each stamp's (sec, nanosec) words from t_ns, or from each[i] if given."""
    if values.size != value_at.size or (each.size and each.size != stamp_at.shape[0]):
        raise ValueError("CdrTemplate.encode: wrong number of values or stamps")
    for k in range(value_at.size):
        doubles[value_at[k]] = values[k]
    for i in range(stamp_at.shape[0]):
        t = each[i] if each.size else t_ns
        words[stamp_at[i, 0]] = t // 1_000_000_000
        words[stamp_at[i, 1]] = t % 1_000_000_000


def _time(sec_nsec):
    return _types()["builtin_interfaces/msg/Time"](sec=int(sec_nsec[0]), nanosec=int(sec_nsec[1]))


class TfTemplate:
    """CDR bytes of a tf2_msgs/TFMessage whose frames never change: ``encode(t_ns, T)`` with T (N, 4, 4)
    child-in-parent transforms writes only the stamps, translations and rotations (a /tf sample of a
    40-joint robot in tens of microseconds instead of milliseconds)."""

    def __init__(self, frames: list[tuple[str, str]]):
        Ty = _types()

        def build(stamps, v):
            items = []
            for i, (parent, child) in enumerate(frames):
                x = v[7 * i:7 * i + 7].tolist()
                items.append(Ty["geometry_msgs/msg/TransformStamped"](
                    header=Ty["std_msgs/msg/Header"](stamp=_time(stamps[i]), frame_id=parent), child_frame_id=child,
                    transform=Ty["geometry_msgs/msg/Transform"](
                        translation=Ty["geometry_msgs/msg/Vector3"](x=x[0], y=x[1], z=x[2]),
                        rotation=Ty["geometry_msgs/msg/Quaternion"](x=x[3], y=x[4], z=x[5], w=x[6]))))
            return tf_message(items)

        self.n = len(frames)
        self.template = CdrTemplate(TF_MESSAGE, build, 7 * self.n, self.n)

    def encode(self, t_ns: int, T: np.ndarray) -> bytes:
        values = np.empty((self.n, 7))
        values[:, :3] = T[:, :3, 3]
        values[:, 3:] = quaternions_xyzw(T[:, :3, :3])
        return self.template.encode(t_ns, values.reshape(-1))


class RunLogTemplates:
    """The run log's state messages as CDR templates: ``clock(t_ns)``, ``joint_state(t_ns, q, dq, effort)``
    and ``odometry(t_ns, position, quat_wxyz, linear_child, angular_child)`` for fixed joint names and frames
    (the bytes ``clock``, ``joint_state`` and ``odometry`` would give)."""

    def __init__(self, joint_names: list[str], frame_id: str, child_frame_id: str):
        n = len(joint_names)
        self.n = n
        self._clock = CdrTemplate(CLOCK, lambda st, v: _types()[CLOCK](clock=_time(st[0])), 0)
        self._joints = CdrTemplate(JOINT_STATE, lambda st, v: _types()[JOINT_STATE](
            header=_types()["std_msgs/msg/Header"](stamp=_time(st[0]), frame_id=""), name=list(joint_names),
            position=v[:n].copy(), velocity=v[n:2 * n].copy(), effort=v[2 * n:].copy()), 3 * n)

        def odom(st, v):
            msg = odometry(0, frame_id, child_frame_id, v[0:3], v[3:7], v[7:10], v[10:13])
            msg.header.stamp = _time(st[0])
            return msg

        self._odom = CdrTemplate(ODOMETRY, odom, 13)
        self._buf = np.empty(3 * n)

    def clock(self, t_ns: int) -> bytes:
        return self._clock.encode(t_ns, np.empty(0))

    def joint_state(self, t_ns: int, q, dq, effort) -> bytes:
        n, buf = self.n, self._buf
        buf[:n], buf[n:2 * n], buf[2 * n:] = q, dq, effort
        return self._joints.encode(t_ns, buf)

    def odometry(self, t_ns: int, position, quat_wxyz, linear_child, angular_child) -> bytes:
        return self.odometry_packed(t_ns, np.concatenate([position, quat_wxyz, linear_child, angular_child]))

    def odometry_packed(self, t_ns: int, values: np.ndarray) -> bytes:
        """``odometry`` from its 13 values in one array: position, quaternion w x y z, linear and angular
        velocity in the child frame (``step_kernels.base_odometry`` fills one)."""
        return self._odom.encode(t_ns, values)


def tf_message(transforms: list):
    return _types()[TF_MESSAGE](transforms=list(transforms))


def string(text: str):
    return _types()[STRING](data=text)


def _point(p):
    return _types()["geometry_msgs/msg/Point"](x=float(p[0]), y=float(p[1]), z=float(p[2]))


def marker(t_ns: int, frame_id: str, ns: str, mid: int, kind: str, *, T: np.ndarray | None = None,
           scale=(1.0, 1.0, 1.0), rgba=(1.0, 1.0, 1.0, 1.0), points=None, mesh_resource: str = "",
           action: str = "ADD"):
    """visualization_msgs/Marker: ``kind`` a Marker constant name (MESH_RESOURCE, TRIANGLE_LIST, ARROW, CUBE, ...),
    pose ``T`` (4x4) in ``frame_id``, points (N, 3) for list and arrow markers; lifetime 0 (forever)."""
    Ty = _types()
    M = Ty["visualization_msgs/msg/Marker"]
    T = np.eye(4) if T is None else np.asarray(T)
    pose = Ty["geometry_msgs/msg/Pose"](position=_point(T[:3, 3]), orientation=_quaternion(T[:3, :3]))
    pts = [] if points is None else [_point(p) for p in np.asarray(points, dtype=float).reshape(-1, 3)]
    return M(
        header=header(t_ns, frame_id), ns=ns, id=int(mid), type=getattr(M, kind), action=getattr(M, action),
        pose=pose, scale=Ty["geometry_msgs/msg/Vector3"](x=float(scale[0]), y=float(scale[1]), z=float(scale[2])),
        color=Ty["std_msgs/msg/ColorRGBA"](r=float(rgba[0]), g=float(rgba[1]), b=float(rgba[2]), a=float(rgba[3])),
        lifetime=Ty["builtin_interfaces/msg/Duration"](sec=0, nanosec=0), frame_locked=False, points=pts, colors=[],
        texture_resource="", texture=Ty["sensor_msgs/msg/CompressedImage"](
            header=header(0, ""), format="", data=np.zeros(0, dtype=np.uint8)),
        uv_coordinates=[], text="", mesh_resource=mesh_resource,
        mesh_file=Ty["visualization_msgs/msg/MeshFile"](filename="", data=np.zeros(0, dtype=np.uint8)),
        mesh_use_embedded_materials=False)


def marker_array(markers: list):
    return _types()[MARKER_ARRAY](markers=list(markers))


class PointListTemplate:
    """CDR bytes of a MarkerArray holding one list marker (LINE_LIST, POINTS...) whose points change in
    number and value from sample to sample, everything else fixed: ``encode(t_ns, points (N, 3))`` joins
    the bytes before the points (stamp written in), the count, the points and the bytes after them
    (the bytes rosbags gives, without its message tree per sample)."""

    def __init__(self, make_marker):
        import struct

        self.make = make_marker  # make_marker(t_ns, points) -> a Marker
        one = encode(marker_array([make_marker(0, np.full((1, 3), _SENTINEL_VALUE) + np.arange(3))]),
                     MARKER_ARRAY)
        at = one.find(struct.pack("<3d", _SENTINEL_VALUE, _SENTINEL_VALUE + 1, _SENTINEL_VALUE + 2))
        count = at - 4 if one[at - 4:at] == struct.pack("<I", 1) else at - 8
        if at < 0 or one[count:count + 4] != struct.pack("<I", 1):
            raise ValueError("PointListTemplate: cannot find the points in the marker's CDR bytes")
        self.head, self.gap, self.tail = one[:count], one[count + 4:at], one[at + 24:]
        self.empty = CdrTemplate(MARKER_ARRAY, lambda st, v: marker_array([_with_stamp(make_marker(0, None), st[0])]),
                                 0)
        head = CdrTemplate(MARKER_ARRAY, lambda st, v: marker_array(
            [_with_stamp(make_marker(0, np.full((1, 3), _SENTINEL_VALUE) + np.arange(3)), st[0])]), 0)
        self.stamp_words = head.stamps[0]  # where the stamp lies in the head bytes (4-byte words)

    def encode(self, t_ns: int, points: np.ndarray) -> bytes:
        n = len(points)
        if n == 0:
            return self.empty.encode(t_ns, np.empty(0))
        head = bytearray(self.head)
        words = np.frombuffer(head, dtype="<u4", count=len(head) // 4)
        words[self.stamp_words[0]], words[self.stamp_words[1]] = t_ns // 1_000_000_000, t_ns % 1_000_000_000
        return b"".join((head, n.to_bytes(4, "little"), self.gap,
                         np.ascontiguousarray(points, dtype="<f8").tobytes(), self.tail))


class BlobTemplate:
    """CDR bytes of a message whose only changing parts are its stamp, one byte sequence of fixed length
    and the bool that follows it (a PointCloud2 of a fixed beam pattern: ``data`` and ``is_dense``):
    ``encode(t_ns, data, flag)`` writes them into a copy of the bytes rosbags gave once for
    ``build((sec, nanosec), data, flag)`` (the same bytes, without a message tree per sample)."""

    def __init__(self, typename: str, build, size: int):
        import struct

        stamp = (_SENTINEL_SEC, _SENTINEL_NSEC)
        low = encode(build(stamp, np.zeros(size, dtype=np.uint8), False), typename)
        high = encode(build(stamp, np.full(size, 255, dtype=np.uint8), True), typename)
        differ = np.flatnonzero(np.frombuffer(low, np.uint8) != np.frombuffer(high, np.uint8))
        start = int(differ[0]) if differ.size else -1
        at = low.find(struct.pack("<II", *stamp))
        # size + 1 bytes differ, from start to start + size: the data, then the bool
        if (len(low) != len(high) or differ.size != size + 1 or start < 4 or differ[-1] != start + size
                or low[start - 4:start] != struct.pack("<I", size)
                or at < 0 or low.find(struct.pack("<II", *stamp), at + 1) >= 0):
            raise ValueError(f"BlobTemplate: cannot find the stamp, a {size}-byte sequence and a bool after it "
                             f"in the CDR bytes of {typename}")
        self.data, self.size, self.stamp_at, self.start = low, size, at, start
        self._pack = struct.Struct("<II").pack_into

    def encode(self, t_ns: int, data, flag: bool) -> bytes:
        out = bytearray(self.data)
        self._pack(out, self.stamp_at, t_ns // 1_000_000_000, t_ns % 1_000_000_000)
        view = memoryview(data).cast("B")
        if len(view) != self.size:
            raise ValueError(f"BlobTemplate.encode: {len(view)} bytes of data, expected {self.size}")
        out[self.start:self.start + self.size] = view
        out[self.start + self.size] = 1 if flag else 0
        return bytes(out)


def _with_stamp(msg, stamp_pair):
    msg.header.stamp = _time(stamp_pair)
    return msg


def image(t_ns: int, frame_id: str, data: np.ndarray, encoding: str):
    """sensor_msgs/Image of an (H, W) or (H, W, C) array, row-major, little-endian (``rgb8``, ``32FC1``)."""
    data = np.ascontiguousarray(data)
    h, w = data.shape[:2]
    return _types()[IMAGE](header=header(t_ns, frame_id), height=int(h), width=int(w), encoding=encoding,
                           is_bigendian=0, step=int(data.strides[0]),
                           data=np.frombuffer(data.tobytes(), dtype=np.uint8))


def camera_info(t_ns: int, frame_id: str, width: int, height: int, K, D, P):
    """sensor_msgs/CameraInfo, ``plumb_bob`` with D = (k1, k2, p1, p2, k3), R identity."""
    Ty = _types()
    return Ty[CAMERA_INFO](
        header=header(t_ns, frame_id), height=int(height), width=int(width), distortion_model="plumb_bob",
        d=np.asarray(D, dtype=np.float64), k=np.asarray(K, dtype=np.float64).reshape(9),
        r=np.eye(3).reshape(9), p=np.asarray(P, dtype=np.float64).reshape(12), binning_x=0, binning_y=0,
        roi=Ty["sensor_msgs/msg/RegionOfInterest"](x_offset=0, y_offset=0, height=0, width=0, do_rectify=False))
