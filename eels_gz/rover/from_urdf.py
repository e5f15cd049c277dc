"""Wheels of a rover read from its URDF (the naming contract of
urdf/rover_macros.xacro), so no wheel position, limit or radius is copied.

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
from lxml import etree

from eels_gz.errors import DescriptionError
from eels_gz.rotations import rpy_matrix
from eels_gz.rover.wheels import Wheel

WHEEL_SUFFIX = "_wheel_joint"
STEER_SUFFIX = "_steer_joint"


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


class UrdfTree:
    """Joints of a URDF by name and by child link, for zero-configuration poses."""

    def __init__(self, urdf: str, source: str = "<urdf>"):
        try:
            self.root = etree.fromstring(urdf.encode())
        except etree.XMLSyntaxError as exc:
            raise DescriptionError(f"{source}: malformed URDF: {exc.msg}") from None
        self.source = source
        self.joints = {j.get("name"): j for j in self.root.iter("joint")}
        self.by_child = {j.find("child").get("link"): j for j in self.joints.values()}
        self.links = {link.get("name"): link for link in self.root.iter("link")}
        children = set(self.by_child)
        roots = [n for n in self.links if n not in children]
        if len(roots) != 1:
            raise DescriptionError(f"{source}: expected one root link, found {roots}")
        self.base = roots[0]

    def joint_pose(self, name: str) -> np.ndarray:
        """4x4 pose of a joint frame in the root link frame, every joint at zero."""
        T = origin_matrix(self.joints[name])
        link = self.joints[name].find("parent").get("link")
        while link != self.base:
            j = self.by_child[link]
            T = origin_matrix(j) @ T
            link = j.find("parent").get("link")
        return T


def wheel_radius(tree: UrdfTree, link_name: str) -> float:
    """Radius of the collision sphere (or cylinder) of a wheel link."""
    link = tree.links.get(link_name)
    shape = None
    if link is not None:
        shape = link.find("collision/geometry/sphere")
        shape = link.find("collision/geometry/cylinder") if shape is None else shape
    if shape is None:
        raise DescriptionError(f"{tree.source}: wheel link '{link_name}' has no collision sphere or cylinder "
                               "(the wheel radius is read from it)")
    return float(shape.get("radius"))


def wheels_from_urdf(urdf: str, source: str = "<urdf>") -> list[Wheel]:
    """The rover's wheels, in document order of their wheel joints."""
    tree = UrdfTree(urdf, source)
    wheels = []
    for name, joint in tree.joints.items():
        if not name.endswith(WHEEL_SUFFIX):
            continue
        wid = name[: -len(WHEEL_SUFFIX)]
        radius = wheel_radius(tree, joint.find("child").get("link"))
        steer = tree.joints.get(wid + STEER_SUFFIX)
        if steer is not None:
            T = tree.joint_pose(steer.get("name"))
            limit = steer.find("limit")
            if steer.get("type") != "revolute" or limit is None:
                raise DescriptionError(f"{source}: steering joint '{steer.get('name')}' must be revolute with "
                                       "<limit lower upper>")
            wheels.append(Wheel(wid, float(T[0, 3]), float(T[1, 3]), radius,
                                float(limit.get("lower")), float(limit.get("upper"))))
        else:
            T = tree.joint_pose(name)
            axis = joint.find("axis")  # URDF's default axis is x
            axle = T[:3, :3] @ np.array(_floats(axis.get("xyz"), 3) if axis is not None else [1.0, 0.0, 0.0])
            roll_dir = np.cross(axle, [0.0, 0.0, 1.0])
            wheels.append(Wheel.fixed(wid, float(T[0, 3]), float(T[1, 3]), radius,
                                      math.atan2(roll_dir[1], roll_dir[0])))
    if not wheels:
        raise DescriptionError(f"{source}: no '<id>{WHEEL_SUFFIX}' joints; the rover naming contract "
                               "(urdf/rover_macros.xacro) names each drive joint so")
    return wheels


def soil_wheels_from_urdf(urdf: str, source: str = "<urdf>") -> list[tuple[str, float, float]]:
    """The wheels the soil contact system is given (``<wheel link radius width/>`` in its
    ``soil_contact`` plugin block): (link, radius m, width m) each. Empty if the URDF has no soil block
    (a description built without a soil set)."""
    tree = UrdfTree(urdf, source)
    out = []
    for plugin in tree.root.iter("plugin"):
        if (plugin.findtext("module_name") or "").strip() != "soil_contact":
            continue
        for wheel in plugin.iter("wheel"):
            try:
                out.append((wheel.get("link"), float(wheel.get("radius")), float(wheel.get("width"))))
            except (TypeError, ValueError):
                raise DescriptionError(f"{source}: soil_contact <wheel> needs numeric radius= and width=, got "
                                       f"{dict(wheel.attrib)}") from None
    return out


def soil_contact_wheels(urdf: str, source: str = "<urdf>") -> tuple[list[dict], bool]:
    """The soil contact system's wheels with their lugs (``<wheel link radius width lug_height
    lug_count/>``; no lugs when the attributes are absent) as dicts of those keys, and its
    ``<grousers>`` switch (true when absent). ([], True) without a soil block."""
    tree = UrdfTree(urdf, source)
    out, grousers = [], True
    for plugin in tree.root.iter("plugin"):
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


def total_mass(urdf: str, source: str = "<urdf>") -> float:
    """The sum of every link's ``<inertial><mass value>`` (kg)."""
    tree = UrdfTree(urdf, source)
    return sum(float(m.get("value")) for m in tree.root.iter("mass"))
