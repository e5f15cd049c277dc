"""gz.msgs message classes for the embedded host, in plain Python.

Names and field names follow gz-msgs (``gz.msgs10``/``gz.msgs11``
``*_pb2`` modules), so a plugin that builds or reads messages through
``gz_compat.msgs`` runs unchanged under Gazebo and in the host:

- fields are attributes with proto3 defaults (0, 0.0, "", False, b"");
- message fields are created on first access and are nested
  (``odom.pose.position.x``, ``twist.header.stamp.sec``); like protobuf,
  assigning a whole message to a field is an error: set its fields or use
  ``CopyFrom``;
- repeated fields are lists; repeated message fields have ``add(**fields)``;
- constructors take field keywords, nested messages as messages or dicts;
- ``DESCRIPTOR.full_name`` is ``"gz.msgs.<Name>"``, as gz-transport uses.

Only the messages the plugins and the host's sensors need are defined
(``MESSAGES``); units are SI and angles radians, as in gz-msgs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Descriptor:
    """The part of protobuf's ``Descriptor`` that transport code reads."""

    name: str
    full_name: str


class Repeated(list):
    """A repeated message field: a list with protobuf's ``add()``."""

    __slots__ = ("_type",)

    def __init__(self, msg_type: type, items=()):
        super().__init__(items)
        self._type = msg_type

    def add(self, **fields):
        item = self._type(**fields)
        self.append(item)
        return item


class Message:
    """Base of every host gz message: fields from ``_FIELDS`` (name -> default or type)."""

    __slots__ = ()
    _FIELDS: dict[str, Any] = {}
    _MESSAGE_FIELDS: dict[str, type] = {}
    _REPEATED: dict[str, type | None] = {}  # name -> message type, or None for scalars
    DESCRIPTOR: Descriptor

    def __init__(self, **fields):
        for name, value in fields.items():
            if name not in self._FIELDS:
                raise ValueError(f"Protocol message {type(self).__name__} has no \"{name}\" field.")
            if name in self._MESSAGE_FIELDS:
                sub = getattr(self, name)
                sub.CopyFrom(value) if isinstance(value, Message) else sub.__init__(**value)
            elif name in self._REPEATED:
                kind = self._REPEATED[name]
                target = getattr(self, name)
                for item in value:
                    if kind is None:
                        target.append(item)
                    else:
                        target.add().CopyFrom(item) if isinstance(item, Message) else target.add(**item)
            else:
                setattr(self, name, value)

    def __getattr__(self, name):
        # only reached for fields not yet set: create the default lazily
        fields = type(self)._FIELDS
        if name not in fields:
            raise AttributeError(f"{type(self).__name__} has no field '{name}'")
        kind = self._MESSAGE_FIELDS.get(name)
        if kind is not None:
            value = kind()
        elif name in self._REPEATED:
            sub = self._REPEATED[name]
            value = Repeated(sub) if sub is not None else []
        else:
            value = fields[name]
        object.__setattr__(self, name, value)
        return value

    def __setattr__(self, name, value):
        if name not in self._FIELDS:
            raise AttributeError(f"{type(self).__name__} has no field '{name}'")
        if name in self._MESSAGE_FIELDS or name in self._REPEATED:
            raise AttributeError(f"assignment not allowed to field \"{name}\" in protocol message "
                                 f"{type(self).__name__}: set its fields or use CopyFrom/extend")
        object.__setattr__(self, name, value)

    def CopyFrom(self, other: "Message") -> None:  # noqa: N802 (protobuf's name)
        if type(other) is not type(self):
            raise TypeError(f"CopyFrom: expected {type(self).__name__}, got {type(other).__name__}")
        if other is self:
            return
        for name in self._FIELDS:
            object.__setattr__(self, name, _copy_value(other, name))

    def copy(self) -> "Message":
        """A deep copy (transport delivers copies, as serialization would)."""
        new = type(self).__new__(type(self))
        for name, value in self.__dict__.items():
            object.__setattr__(new, name, _copy_field(value))
        return new

    def ListFields(self):  # noqa: N802 (protobuf's name)
        """(name, value) of the fields that were set or touched."""
        return [(n, self.__dict__[n]) for n in self._FIELDS if n in self.__dict__]

    def __eq__(self, other):
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in self._FIELDS)

    def __repr__(self):
        inner = ", ".join(f"{n}={v!r}" for n, v in self.ListFields())
        return f"{type(self).__name__}({inner})"


def _copy_field(value):
    if isinstance(value, Message):
        return value.copy()
    if isinstance(value, Repeated):
        return Repeated(value._type, [v.copy() for v in value])
    if isinstance(value, list):
        return list(value)
    return value


def _copy_value(msg: Message, name: str):
    return _copy_field(getattr(msg, name))


MESSAGES: dict[str, type] = {}


def _define(type_name: str, /, **fields) -> type:
    """Define a message class; a field is a default value, a class name
    (``"Vector3d"``), or ``[type]`` / ``[None]`` for repeated fields."""
    resolved, message_fields, repeated = {}, {}, {}
    for field_name, spec in fields.items():
        if isinstance(spec, list):
            repeated[field_name] = MESSAGES[spec[0]] if spec[0] else None
            resolved[field_name] = None
        elif isinstance(spec, str) and spec in MESSAGES:
            message_fields[field_name] = MESSAGES[spec]
            resolved[field_name] = None
        else:
            resolved[field_name] = spec
    cls = type(type_name, (Message,), {
        "__slots__": ("__dict__",), "_FIELDS": resolved, "_MESSAGE_FIELDS": message_fields,
        "_REPEATED": repeated, "DESCRIPTOR": Descriptor(type_name, f"gz.msgs.{type_name}"),
        "__module__": __name__,
    })
    MESSAGES[type_name] = cls
    globals()[type_name] = cls
    return cls


# gz-msgs 10 field names (header first, as in the .proto files)
_define("Time", sec=0, nsec=0)
_define("Map", key="", value=[None])  # Header.Map
_define("Header", stamp="Time", data=["Map"])
_define("Vector3d", header="Header", x=0.0, y=0.0, z=0.0)
_define("Quaternion", header="Header", x=0.0, y=0.0, z=0.0, w=0.0)
_define("Float_V", header="Header", data=[None])
_define("Pose", header="Header", name="", id=0, position="Vector3d", orientation="Quaternion")
_define("Pose_V", header="Header", pose=["Pose"])
_define("Twist", header="Header", linear="Vector3d", angular="Vector3d")
_define("Odometry", header="Header", pose="Pose", twist="Twist")
_define("Boolean", header="Header", data=False)
_define("Double", header="Header", data=0.0)
_define("Clock", header="Header", system="Time", real="Time", sim="Time")
_define("Axis", header="Header", xyz="Vector3d", limit_lower=0.0, limit_upper=0.0, limit_effort=0.0,
        limit_velocity=0.0, damping=0.0, friction=0.0, position=0.0, velocity=0.0, force=0.0)
_define("Joint", header="Header", name="", id=0, parent="", parent_id=0, child="", child_id=0,
        pose="Pose", axis1="Axis", axis2="Axis")
_define("Model", header="Header", name="", id=0, is_static=False, pose="Pose", joint=["Joint"])
_define("IMU", header="Header", entity_name="", orientation="Quaternion",
        orientation_covariance="Float_V", angular_velocity="Vector3d",
        angular_velocity_covariance="Float_V", linear_acceleration="Vector3d",
        linear_acceleration_covariance="Float_V")
_define("Wrench", header="Header", force="Vector3d", torque="Vector3d", force_offset="Vector3d")
_define("PointCloudPacked_Field", name="", offset=0, datatype=0, count=0)
_define("PointCloudPacked", header="Header", field=["PointCloudPacked_Field"], height=0, width=0,
        is_bigendian=False, point_step=0, row_step=0, data=b"", is_dense=False)
_define("Image", header="Header", width=0, height=0, step=0, data=b"", pixel_format_type=0)
_define("CameraInfo_Distortion", model=0, k=[None])
_define("CameraInfo_Intrinsics", k=[None])
_define("CameraInfo_Projection", p=[None])
_define("CameraInfo", header="Header", width=0, height=0, distortion="CameraInfo_Distortion",
        intrinsics="CameraInfo_Intrinsics", projection="CameraInfo_Projection", rectification_matrix=[None])

# PixelFormatType values (gz-msgs image.proto) the host's cameras use; CameraInfo.Distortion.DistortionModelType
L_INT8, RGB_INT8, R_FLOAT32 = 1, 3, 13
PLUMB_BOB, RATIONAL_POLYNOMIAL, EQUIDISTANT = 0, 1, 2

# PointCloudPacked.Field.DataType values (gz-msgs pointcloud_packed.proto)
INT8, UINT8, INT16, UINT16, INT32, UINT32, FLOAT32, FLOAT64 = range(1, 9)


def stamp_of(header, t_s: float) -> None:
    """Set ``header.stamp`` from a time in seconds."""
    ns = int(round(t_s * 1e9))
    header.stamp.sec, header.stamp.nsec = ns // 1_000_000_000, ns % 1_000_000_000


def frame_id_of(header) -> str:
    """gz headers carry the frame in ``data`` under the key ``frame_id``; "" if absent."""
    for entry in header.data:
        if entry.key == "frame_id" and entry.value:
            return entry.value[0]
    return ""


def set_frame_id(header, frame: str) -> None:
    """Store ``frame`` under ``frame_id`` in a gz header, as Gazebo's sensors do."""
    header.data.add(key="frame_id", value=[frame])

PointCloudPacked.Field = PointCloudPacked_Field  # protobuf's nested name
CameraInfo.Distortion = CameraInfo_Distortion
CameraInfo.Intrinsics = CameraInfo_Intrinsics
CameraInfo.Projection = CameraInfo_Projection
