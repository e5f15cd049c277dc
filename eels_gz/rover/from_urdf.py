"""Wheels of a rover read from its robot model (:class:`~eels_gz.description.model.RobotModel`; the
naming contract of urdf/rover_macros.xacro), so no wheel position, limit or radius is copied.

- every ``<id>_wheel_joint`` is a wheel; its radius is the ``radius`` of the
  ``<id>_wheel_link`` collision sphere (or cylinder);
- with an ``<id>_steer_joint`` the wheel is steerable: its (x, y) is that
  joint's origin in the base frame at the zero configuration and its range
  the joint's ``<limit lower upper>``;
- without one the wheel is fixed: (x, y) is the wheel joint's origin and the
  fixed steer angle is the direction the wheel rolls for a positive rate,
  axle x z.
"""

from __future__ import annotations

import math

import numpy as np

from eels_gz.description.model import STEER_SUFFIX, WHEEL_SUFFIX, RobotModel
from eels_gz.errors import DescriptionError
from eels_gz.rotations import rpy_matrix
from eels_gz.rover.wheels import Wheel

__all__ = ["STEER_SUFFIX", "WHEEL_SUFFIX", "origin_matrix", "rpy_matrix", "soil_contact_wheels", "wheel_radius",
           "wheels", "wheels_from_urdf"]


def _floats(text: str | None, n: int, default: float = 0.0) -> list[float]:
    return [float(v) for v in text.split()] if text else [default] * n


def origin_matrix(joint) -> np.ndarray:
    """4x4 transform parent link -> joint frame of a URDF ``<joint>`` element."""
    T = np.eye(4)
    origin = joint.find("origin")
    if origin is not None:
        T[:3, :3] = rpy_matrix(*_floats(origin.get("rpy"), 3))
        T[:3, 3] = _floats(origin.get("xyz"), 3)
    return T


def wheel_radius(model: RobotModel, link_name: str) -> float:
    """Radius of the collision sphere (or cylinder) of a wheel link."""
    link = model.link_elements.get(link_name)
    shape = None
    if link is not None:
        shape = link.find("collision/geometry/sphere")
        shape = link.find("collision/geometry/cylinder") if shape is None else shape
    if shape is None:
        raise DescriptionError(f"{model.source}: wheel link '{link_name}' has no collision sphere or cylinder "
                               "(the wheel radius is read from it)")
    return float(shape.get("radius"))


def wheels(model: RobotModel) -> list[Wheel]:
    """The rover's wheels, in document order of their wheel joints."""
    source = model.source
    out = []
    for name in model.wheel_joints:
        joint = model.joint_elements[name]
        wid = name[: -len(WHEEL_SUFFIX)]
        radius = wheel_radius(model, model.joints[name].child)
        steer = model.joint_elements.get(wid + STEER_SUFFIX)
        if steer is not None:
            T = model.joint_pose(steer.get("name"))
            limit = steer.find("limit")
            if steer.get("type") != "revolute" or limit is None:
                raise DescriptionError(f"{source}: steering joint '{steer.get('name')}' must be revolute with "
                                       "<limit lower upper>")
            out.append(Wheel(wid, float(T[0, 3]), float(T[1, 3]), radius,
                             float(limit.get("lower")), float(limit.get("upper"))))
        else:
            T = model.joint_pose(name)
            axis = joint.find("axis")  # URDF's default axis is x
            axle = T[:3, :3] @ np.array(_floats(axis.get("xyz"), 3) if axis is not None else [1.0, 0.0, 0.0])
            roll_dir = np.cross(axle, [0.0, 0.0, 1.0])
            out.append(Wheel.fixed(wid, float(T[0, 3]), float(T[1, 3]), radius,
                                   math.atan2(roll_dir[1], roll_dir[0])))
    if not out:
        raise DescriptionError(f"{source}: no '<id>{WHEEL_SUFFIX}' joints; the rover naming contract "
                               "(urdf/rover_macros.xacro) names each drive joint so")
    return out


def wheels_from_urdf(urdf: str, source: str = "<urdf>") -> list[Wheel]:
    """:func:`wheels` of URDF text (one parse)."""
    return wheels(RobotModel.from_urdf(urdf, source))


def soil_contact_wheels(model: RobotModel) -> tuple[list[dict], bool]:
    """The soil contact system's wheels with their lugs (``<wheel link radius width lug_height
    lug_count/>``; no lugs when the attributes are absent) as dicts of those keys, and its
    ``<grousers>`` switch (true when absent), from the model's ``<gazebo>`` plugin blocks (a model
    of the URDF as Gazebo reads it). ([], True) without a soil block."""
    source = model.source
    out, grousers = [], True
    for plugin in model.element.iter("plugin"):
        if (plugin.findtext("module_name") or "").strip() != "soil_contact":
            continue
        grousers = (plugin.findtext("grousers") or "true").strip() != "false"
        for wheel in plugin.iter("wheel"):
            try:
                out.append({"link": wheel.get("link"), "radius": float(wheel.get("radius")),
                            "width": float(wheel.get("width")), "lug_height": float(wheel.get("lug_height", 0.0)),
                            "lug_count": int(wheel.get("lug_count", 0))})
            except (TypeError, ValueError):
                raise DescriptionError(f"{source}: soil_contact <wheel> needs numeric radius=, width= (and "
                                       f"lug_height=, lug_count=), got {dict(wheel.attrib)}") from None
    return out, grousers
