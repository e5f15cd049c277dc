"""Kinematic chain of an EELS snake robot read from its URDF text.

The chain is the tree of URDF joints (origins, axes, types, mimics) rooted at
the floating base (the tail, ``base_link``). For given joint angles it gives
every link's pose (SE(3), 4x4 homogeneous, metres) in the base frame, or in
the world when a base pose is given, and from those:

- module frames (``module_<i>_shell``), ``i = 1..n``;
- module points: the tail's rear end (base origin), every bend joint
  ``module_<i>_bend`` and the front end of the last shell. Consecutive points
  are rigidly ``segment_lengths`` apart, which is what leader-follower shape
  control lays on a path (NEO Fig. 4);
- screw axes: each screw joint's origin, unit spin axis and the screw it
  belongs to, with the actuated joint and multiplier of counter-rotating
  pairs (``<mimic>``, ``q_rear = -q_front``);
- collision cylinders along the body, for placement sample points.

Joint names follow urdf/eels_macros.xacro: ``module_<i>_bend``,
``module_<i>_twist``, ``module_<i>_screw``, ``module_<i>_screw_rear``. Screw
geometry (radius, lead angle, handedness) is not in the plain URDF; the xacro
writes it into the screw contact plugin's ``<screw>`` elements, read by
:func:`screw_geometries`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
from lxml import etree

from eels_gz.contact.screw_points import ScrewGeometry
from eels_gz.description.model import RobotModel, read_origin
from eels_gz.errors import DescriptionError, SnakeModelError
from eels_gz.snake.chain_kinematics import FIXED, PRISMATIC, REVOLUTE, chain_poses

MOVABLE = ("revolute", "continuous", "prismatic")
_BEND = re.compile(r"module_(\d+)_bend")


@dataclass(frozen=True)
class ChainJoint:
    """One URDF joint: ``origin`` (4x4) is the child frame in the parent link at
    zero angle, ``axis`` the unit joint axis in that frame; limits in rad (or m)."""

    name: str
    type: str
    parent: str
    child: str
    origin: np.ndarray
    axis: np.ndarray
    mimic: str | None = None
    multiplier: float = 1.0
    offset: float = 0.0
    lower: float = -math.inf
    upper: float = math.inf


@dataclass(frozen=True)
class CollisionCylinder:
    """A ``<cylinder>`` collision of ``link``: ``pose`` (4x4) in the link frame, the
    cylinder axis being the pose's z column; radius and length in m."""

    link: str
    radius: float
    length: float
    pose: np.ndarray


@dataclass(frozen=True)
class ScrewAxis:
    """A screw joint in some frame: ``origin`` (m) and unit spin ``axis``;
    ``actuated`` is the joint that drives it and ``multiplier`` its ratio
    (``q = multiplier * q_actuated``, -1 for the rear screw of a pair)."""

    joint: str
    link: str
    origin: np.ndarray
    axis: np.ndarray
    actuated: str
    multiplier: float


def cross3(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.cross`` of two 3-vectors, the same products, without its general-shape overhead (~20x faster)."""
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


def axis_rotation(axis: np.ndarray, angle: float) -> np.ndarray:
    """Rotation matrix of ``angle`` (rad) about the unit ``axis`` (Rodrigues)."""
    x, y, z = axis
    c, s = math.cos(angle), math.sin(angle)
    C = 1.0 - c
    return np.array([
        [c + x * x * C, x * y * C - z * s, x * z * C + y * s],
        [y * x * C + z * s, c + y * y * C, y * z * C - x * s],
        [z * x * C - y * s, z * y * C + x * s, c + z * z * C],
    ])


def _floats(text: str | None, n: int, what: str, source: str) -> np.ndarray:
    try:
        values = np.array([float(v) for v in (text or "").split()])
    except ValueError:
        values = np.array([])
    if values.shape != (n,) or not np.isfinite(values).all():
        raise DescriptionError(f"{source}: {what} is '{text}', expected {n} finite numbers")
    return values


def _parse_joint(node: etree._Element, jtype: str, parent: str, child: str, source: str) -> ChainJoint:
    name = node.get("name")
    origin = read_origin(node, f"joint '{name}'", source)
    axis = np.array([1.0, 0.0, 0.0])
    if jtype in MOVABLE:
        axis_el = node.find("axis")
        if axis_el is not None:
            axis = _floats(axis_el.get("xyz"), 3, f"joint '{name}' axis xyz", source)
        norm = float(np.linalg.norm(axis))
        if not norm > 0.0:
            raise DescriptionError(f"{source}: joint '{name}' has a zero axis; expected a non-zero 3-vector")
        axis = axis / norm
    elif jtype not in ("fixed",):
        raise DescriptionError(f"{source}: joint '{name}' is of type '{jtype}'; a snake chain supports "
                               f"{', '.join(MOVABLE)} and fixed joints")
    mimic, mult, off = None, 1.0, 0.0
    mimic_el = node.find("mimic")
    if mimic_el is not None:
        mimic = mimic_el.get("joint")
        mult = float(_floats(mimic_el.get("multiplier", "1"), 1, f"joint '{name}' mimic multiplier", source)[0])
        off = float(_floats(mimic_el.get("offset", "0"), 1, f"joint '{name}' mimic offset", source)[0])
    lower, upper = -math.inf, math.inf
    limit_el = node.find("limit")
    if jtype in ("revolute", "prismatic") and limit_el is not None:
        lower = float(_floats(limit_el.get("lower", "0"), 1, f"joint '{name}' lower limit", source)[0])
        upper = float(_floats(limit_el.get("upper", "0"), 1, f"joint '{name}' upper limit", source)[0])
    return ChainJoint(name, jtype, parent, child, origin, axis, mimic, mult, off, lower, upper)


def _parse_cylinders(robot: etree._Element, source: str) -> list[CollisionCylinder]:
    out = []
    for link in robot.findall("link"):
        for col in link.findall("collision"):
            cyl = col.find("geometry/cylinder")
            if cyl is None:
                continue
            what = f"link '{link.get('name')}' collision cylinder"
            r = float(_floats(cyl.get("radius"), 1, f"{what} radius", source)[0])
            length = float(_floats(cyl.get("length"), 1, f"{what} length", source)[0])
            out.append(CollisionCylinder(link.get("name"), r, length, read_origin(col, what, source)))
    return out


class SnakeChain:
    """Forward kinematics of an EELS robot (see the module docstring).

    Joint angles are a mapping ``joint name -> angle`` (rad); joints left out
    are 0, mimic joints follow their master unless given. Poses are 4x4
    homogeneous transforms; ``base_pose`` (default identity) is the base
    link's pose in the world.
    """

    def __init__(self, joints: Iterable[ChainJoint], root: str, links: Iterable[str],
                 cylinders: Iterable[CollisionCylinder] = (), source: str = "URDF"):
        self.source = source
        self.root = root
        self.links = tuple(links)
        self.joints: dict[str, ChainJoint] = {j.name: j for j in joints}
        self.cylinders = tuple(cylinders)
        by_child = {j.child: j for j in self.joints.values()}
        # joints ordered so that each parent link is placed before its children
        order, placed, pending = [], {root}, list(self.joints.values())
        while pending:
            ready = [j for j in pending if j.parent in placed]
            if not ready:
                raise DescriptionError(f"{source}: links {[j.child for j in pending]} are not connected to '{root}'")
            for j in ready:
                order.append(j)
                placed.add(j.child)
            pending = [j for j in pending if j.child not in placed]
        self._order = tuple(order)
        self._by_child = by_child
        # the tree as arrays for chain_poses: link 0 the root, joint k places link k + 1
        self._link_order = (root,) + tuple(j.child for j in order)
        index = {link: i for i, link in enumerate(self._link_order)}
        self._parent = np.array([index[j.parent] for j in order], dtype=np.int64)
        self._origin = np.array([j.origin for j in order], dtype=float).reshape(len(order), 4, 4)
        self._axis = np.array([j.axis for j in order], dtype=float).reshape(len(order), 3)
        self._kind = np.array([REVOLUTE if j.type in ("revolute", "continuous") else
                               PRISMATIC if j.type == "prismatic" else FIXED for j in order], dtype=np.int64)
        self.n_modules = self._count_modules()

    @classmethod
    def from_model(cls, model: RobotModel) -> SnakeChain:
        """Build the chain from a robot model (``<gazebo>`` blocks are ignored)."""
        joints = [_parse_joint(model.joint_elements[name], info.type, info.parent, info.child, model.source)
                  for name, info in model.joints.items()]
        return cls(joints, model.root, model.links, _parse_cylinders(model.element, model.source), model.source)

    @classmethod
    def from_urdf(cls, urdf: str, source: str = "URDF") -> SnakeChain:
        """Build the chain from URDF text (:meth:`from_model` of its one parse)."""
        return cls.from_model(RobotModel.from_urdf(urdf, source))

    # --- structure ------------------------------------------------------------------------
    def _count_modules(self) -> int:
        indices = sorted(int(m.group(1)) for name in self.joints if (m := _BEND.fullmatch(name)))
        if indices != list(range(1, len(indices) + 1)):
            raise DescriptionError(f"{self.source}: bend joints must be module_1_bend .. module_n_bend, "
                                   f"found module indices {indices}")
        return len(indices)

    def joint(self, name: str) -> ChainJoint:
        try:
            return self.joints[name]
        except KeyError:
            raise SnakeModelError(f"{self.source}: no joint '{name}'; the chain has "
                                  f"{', '.join(sorted(self.joints))}") from None

    def bend_joints(self) -> list[str]:
        return [f"module_{i}_bend" for i in range(1, self.n_modules + 1)]

    def twist_joints(self) -> list[str]:
        """``module_<i>_twist`` names, or [] for a robot without twist joints."""
        names = [f"module_{i}_twist" for i in range(1, self.n_modules + 1)]
        return names if all(n in self.joints for n in names) else []

    def screw_joints(self) -> list[str]:
        return [n for n in self.joints if re.fullmatch(r"module_\d+_screw(_rear)?", n)]

    def ancestors(self, link: str) -> list[str]:
        """Joints from the root to ``link``, root first."""
        out = []
        while link != self.root:
            j = self._by_child.get(link)
            if j is None:
                raise SnakeModelError(f"{self.source}: no link '{link}' in the chain")
            out.append(j.name)
            link = j.parent
        return out[::-1]

    def actuated(self, joint: str) -> tuple[str, float]:
        """The joint driving ``joint`` and the ratio: (master, multiplier) for a mimic."""
        j = self.joint(joint)
        return (j.mimic, j.multiplier) if j.mimic else (j.name, 1.0)

    # --- kinematics -----------------------------------------------------------------------
    def angles(self, q: Mapping[str, float] | None) -> dict[str, float]:
        """All joint values: given ones, mimics from their masters, the rest 0."""
        q = dict(q or {})
        unknown = [k for k in q if k not in self.joints]
        if unknown:
            raise SnakeModelError(f"{self.source}: unknown joint(s) {', '.join(unknown)} in the joint angles")
        out = {}
        for name, j in self.joints.items():
            if name in q:
                out[name] = float(q[name])
            elif j.mimic is not None:
                out[name] = j.multiplier * float(q.get(j.mimic, 0.0)) + j.offset
            else:
                out[name] = 0.0
        bad = [k for k, v in out.items() if not math.isfinite(v)]
        if bad:
            raise SnakeModelError(f"{self.source}: joint angle(s) of {', '.join(bad)} are not finite")
        return out

    def _kinematics(self, q: Mapping[str, float] | None, base_pose: np.ndarray | None):
        """(link poses (n + 1, 4, 4) in ``_link_order``, joint frames (n, 4, 4) in ``_order``)."""
        values = self.angles(q)
        v = np.array([values.get(j.name, 0.0) for j in self._order])
        base = np.eye(4) if base_pose is None else np.ascontiguousarray(base_pose, dtype=float)
        return chain_poses(self._parent, self._origin, self._axis, self._kind, v, base)

    def link_poses(self, q: Mapping[str, float] | None = None,
                   base_pose: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """Pose (4x4) of every link for joint angles ``q`` (rad), in the world
        given the base pose (base frame if None)."""
        poses, _ = self._kinematics(q, base_pose)
        return dict(zip(self._link_order, poses))

    def _joint_frames(self, frames: np.ndarray) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        return {j.name: (F[:3, 3].copy(), F[:3, :3] @ j.axis) for j, F in zip(self._order, frames)
                if j.type in MOVABLE}

    def joint_frames(self, q: Mapping[str, float] | None = None,
                     base_pose: np.ndarray | None = None) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """(origin (3,), unit axis (3,)) of every movable joint, in the world/base frame."""
        return self._joint_frames(self._kinematics(q, base_pose)[1])

    def module_frames(self, q: Mapping[str, float] | None = None,
                      base_pose: np.ndarray | None = None) -> np.ndarray:
        """Poses (n, 4, 4) of the module shells ``module_1_shell .. module_n_shell``."""
        poses = self.link_poses(q, base_pose)
        return np.array([poses[f"module_{i}_shell"] for i in range(1, self.n_modules + 1)])

    def _tip_in_last_shell(self) -> np.ndarray:
        """Front end of the last shell in its own frame: the far end of its collision cylinder along x."""
        link = f"module_{self.n_modules}_shell"
        cyl = [c for c in self.cylinders if c.link == link]
        if not cyl:
            raise DescriptionError(f"{self.source}: link '{link}' has no collision cylinder to find the robot's "
                                   "front end")
        c = cyl[0]
        ends = [c.pose[:3, 3] + s * 0.5 * c.length * c.pose[:3, 2] for s in (-1.0, 1.0)]
        return max(ends, key=lambda p: p[0])

    def module_points(self, q: Mapping[str, float] | None = None,
                      base_pose: np.ndarray | None = None) -> np.ndarray:
        """(n + 2, 3) points: base origin, bend joints 1..n, front end of the last shell (m)."""
        pose_array, frame_array = self._kinematics(q, base_pose)
        poses, frames = dict(zip(self._link_order, pose_array)), self._joint_frames(frame_array)
        tip = poses[f"module_{self.n_modules}_shell"] @ np.append(self._tip_in_last_shell(), 1.0)
        return np.array([poses[self.root][:3, 3]] + [frames[b][0] for b in self.bend_joints()] + [tip[:3]])

    def segment_lengths(self) -> np.ndarray:
        """(n + 1,) rigid distances between consecutive :meth:`module_points` (m)."""
        return np.linalg.norm(np.diff(self.module_points(), axis=0), axis=1)

    def screw_axes(self, q: Mapping[str, float] | None = None,
                   base_pose: np.ndarray | None = None) -> dict[str, ScrewAxis]:
        """Screw joints by child link name (the name the screw contact uses)."""
        frames = self.joint_frames(q, base_pose)
        out = {}
        for name in self.screw_joints():
            j = self.joints[name]
            master, mult = self.actuated(name)
            origin, axis = frames[name]
            out[j.child] = ScrewAxis(name, j.child, origin, axis, master, mult)
        return out


def screw_geometries(gazebo_blocks: Iterable[etree._Element], source: str = "description") -> dict[str, ScrewGeometry]:
    """Screw geometry by link name from the screw contact plugin's ``<screw link= radius=
    length= lead_angle= handedness=/>`` elements (written by urdf/eels.gazebo.xacro)."""
    out = {}
    for block in gazebo_blocks:
        for el in block.iter("screw"):
            link = el.get("link")
            what = f"<screw link='{link}'>"
            vals = {k: float(_floats(el.get(k), 1, f"{what} {k}", source)[0])
                    for k in ("radius", "length", "lead_angle", "handedness")}
            out[link] = ScrewGeometry(vals["radius"], vals["length"], vals["lead_angle"], int(vals["handedness"]),
                                      name=link)
    return out
