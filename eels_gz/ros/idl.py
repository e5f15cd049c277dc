"""cyclonedds IDL classes for ROS 2 message types, generated from the
ROS 2 (Jazzy) message definitions that rosbags ships, so the structure has
one source: ``idl_class("sensor_msgs/msg/JointState")`` is a final
``IdlStruct`` named ``sensor_msgs::msg::dds_::JointState_`` with the ROS
field names and types (XCDR1, as rmw_cyclonedds_cpp uses).

Imported only by the DDS transport (it imports cyclonedds)."""

from __future__ import annotations

import types
from dataclasses import dataclass, field
from functools import lru_cache

import cyclonedds.idl.annotations as annotate
from cyclonedds.idl import IdlStruct
from cyclonedds.idl import types as t
from rosbags.typesys.base import Nodetype

from eels_gz.errors import EelsError
from eels_gz.ros.messages import typestore

_BASE = {
    "bool": bool, "byte": t.uint8, "char": t.uint8, "int8": t.int8, "uint8": t.uint8,
    "int16": t.int16, "uint16": t.uint16, "int32": t.int32, "uint32": t.uint32,
    "int64": t.int64, "uint64": t.uint64, "float32": t.float32, "float64": t.float64,
    "string": str,
}


def dds_type_name(ros_type: str) -> str:
    """``sensor_msgs/msg/Imu`` -> ``sensor_msgs::msg::dds_::Imu_`` (the ROS 2 wire name)."""
    pkg, kind, name = ros_type.split("/")
    return f"{pkg}::{kind}::dds_::{name}_"


def dds_topic_name(ros_topic: str) -> str:
    """``/imu`` -> ``rt/imu`` (ROS 2 topics on DDS)."""
    return "rt/" + ros_topic.lstrip("/")


def _field_type(desc):
    kind, detail = desc
    if kind == Nodetype.BASE:
        name, bound = detail
        if name not in _BASE:
            raise EelsError(f"ROS base type '{name}' has no IDL mapping")
        if name == "string" and bound:
            return t.bounded_str[bound]
        return _BASE[name]
    if kind == Nodetype.NAME:
        return idl_class(detail)
    sub, length = detail
    if kind == Nodetype.ARRAY:
        return t.array[_field_type(sub), length]
    if kind == Nodetype.SEQUENCE:
        return t.sequence[_field_type(sub), length] if length else t.sequence[_field_type(sub)]
    raise EelsError(f"ROS field node type {kind} has no IDL mapping")


def _default(desc):
    kind, detail = desc
    if kind == Nodetype.BASE:
        return {"string": "", "bool": False, "float32": 0.0, "float64": 0.0}.get(detail[0], 0)
    if kind == Nodetype.NAME:
        return field(default_factory=idl_class(detail))
    if kind == Nodetype.ARRAY:
        sub, length = detail
        return field(default_factory=lambda: [_default_value(sub)] * length)
    return field(default_factory=list)


def _default_value(desc):
    d = _default(desc)
    return d.default_factory() if hasattr(d, "default_factory") else d


@lru_cache(maxsize=None)
def idl_class(ros_type: str) -> type:
    """The IdlStruct class of a ROS 2 message type (``pkg/msg/Name``)."""
    store = typestore()
    if ros_type not in store.fielddefs:
        raise EelsError(f"unknown ROS 2 message type '{ros_type}'")
    _, fields = store.fielddefs[ros_type]
    annotations, defaults = {}, {}
    for name, desc in fields:
        annotations[name] = _field_type(desc)
        defaults[name] = _default(desc)
    if not fields:  # empty ROS messages carry one uint8 on the wire (rosidl's structure_needs_at_least_one_member)
        annotations["structure_needs_at_least_one_member"] = t.uint8
        defaults["structure_needs_at_least_one_member"] = 0

    def body(ns):
        ns["__annotations__"] = annotations
        ns.update(defaults)

    cls = types.new_class(ros_type.split("/")[-1], (IdlStruct,), {"typename": dds_type_name(ros_type)}, body)
    cls.__module__ = __name__
    return annotate.final(dataclass(cls))


def from_ros(msg, ros_type: str):
    """A rosbags message object -> the IdlStruct of the same type (recursively)."""
    cls = idl_class(ros_type)
    _, fields = typestore().fielddefs[ros_type]
    values = {}
    for name, desc in fields:
        values[name] = _convert(getattr(msg, name), desc)
    return cls(**values)


def _convert(value, desc):
    kind, detail = desc
    if kind == Nodetype.NAME:
        return from_ros(value, detail)
    if kind == Nodetype.BASE:
        return value
    sub = detail[0]
    if sub[0] == Nodetype.NAME:
        return [from_ros(v, sub[1]) for v in value]
    if sub[0] == Nodetype.BASE and sub[1][0] == "uint8" and hasattr(value, "tobytes"):
        return list(value.tobytes())
    return [v.item() if hasattr(v, "item") else v for v in value] if hasattr(value, "dtype") else list(value)
