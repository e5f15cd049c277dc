"""The robot model: one reading of a URDF that every consumer shares (pure: no engine imports).

A :class:`RobotModel` is built from one parse of the URDF text (:meth:`RobotModel.from_urdf`), or
from a ``<robot>`` element already parsed (:func:`~eels_gz.description.xacro_loader.split_gazebo`
hands it the xacro output it parsed; the multibody optimizer the tree it rewrote). It holds the
structure, checked to form one tree (links and joints in document order, root, parent joints,
mimic pairs), the mass, the kind of robot and the elements themselves for readers of the details
(origins, inertias, shapes, limits). The processed description carries its model
(:attr:`~eels_gz.description.xacro_loader.Description.model`), so a run parses its URDF once:
the xacro output, the optimized model taken from the optimizer's own tree.

The model is read-only: its elements are shared, so a consumer that edits the tree (the
optimizer) works on a copy (``copy.deepcopy(model.element)``).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from lxml import etree

from eels_gz.errors import DescriptionError
from eels_gz.rotations import rpy_matrix

JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")
WORLD_LINK = "world"  # the root of a fixed-base URDF (a rig): not a body, the world frame
WHEEL_SUFFIX = "_wheel_joint"  # rover naming contract (urdf/rover_macros.xacro): <id>_wheel_joint
STEER_SUFFIX = "_steer_joint"  # and <id>_steer_joint for a steerable wheel
INERTIA_KEYS = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")


@dataclass(frozen=True)
class JointInfo:
    """The structural part of a URDF ``<joint>``."""

    name: str
    type: str
    parent: str
    child: str
    mimic: str | None  # name of the mimicked joint, if any


@dataclass(frozen=True)
class Mimic:
    """A ``<mimic>`` relation: ``follower = multiplier * leader + offset``."""

    follower: str
    leader: str
    multiplier: float
    offset: float


def parse_xml(urdf_xml: str | bytes, source: str) -> etree._Element:
    """Parse URDF text into its ``<robot>`` element; DescriptionError naming ``source`` otherwise."""
    if not isinstance(urdf_xml, (str, bytes)):
        raise DescriptionError(f"{source}: URDF must be XML text, got {type(urdf_xml).__name__}")
    data = urdf_xml.encode() if isinstance(urdf_xml, str) else urdf_xml
    try:
        root = etree.fromstring(data, etree.XMLParser(remove_blank_text=True))
    except etree.XMLSyntaxError as exc:
        raise DescriptionError(f"{source}: not well-formed XML: {exc.msg}") from None
    if root.tag != "robot":
        raise DescriptionError(f"{source}: URDF root element must be <robot>, got <{root.tag}>")
    return root


def _named(node: etree._Element, kind: str, source: str) -> str:
    name = node.get("name")
    if not name:
        raise DescriptionError(f"{source}:{node.sourceline}: <{kind}> without a name attribute")
    return name


def _joint_link(node: etree._Element, tag: str, joint: str, source: str) -> str:
    el = node.find(tag)
    link = None if el is None else el.get("link")
    if not link:
        raise DescriptionError(f"{source}: joint '{joint}' has no <{tag} link=...>")
    return link


# --- element readers (origins, inertials) -------------------------------------------------
def pose_matrix(xyz: Iterable[float], rpy: Iterable[float]) -> np.ndarray:
    """4x4 pose of a position and URDF fixed-axis roll-pitch-yaw."""
    T = np.eye(4)
    T[:3, :3] = rpy_matrix(*rpy)
    T[:3, 3] = list(xyz)
    return T


def read_floats(text: str | None, n: int, what: str, source: str) -> list[float]:
    """``n`` finite numbers of an attribute's ``text`` (zeros when absent); DescriptionError naming ``what``."""
    if text is None:
        return [0.0] * n
    try:
        values = [float(v) for v in text.split()]
    except ValueError:
        values = []
    if len(values) != n or not all(np.isfinite(values)):
        raise DescriptionError(f"{source}: {what} is '{text}', expected {n} finite numbers")
    return values


def read_origin(parent: etree._Element, what: str, source: str) -> np.ndarray:
    """The 4x4 pose of a URDF ``<origin>`` child of ``parent`` (identity if absent)."""
    el = parent.find("origin")
    if el is None:
        return np.eye(4)
    return pose_matrix(read_floats(el.get("xyz"), 3, f"{what} origin xyz", source),
                       read_floats(el.get("rpy"), 3, f"{what} origin rpy", source))


def link_inertial(link: etree._Element, source: str) -> tuple[float, np.ndarray, np.ndarray]:
    """Mass (kg), centre of mass (m) and inertia about it (kg m^2), in the link frame."""
    name = link.get("name")
    el = link.find("inertial")
    if el is None:
        return 0.0, np.zeros(3), np.zeros((3, 3))
    mass_el = el.find("mass")
    mass = read_floats(None if mass_el is None else mass_el.get("value"), 1, f"link '{name}' mass", source)[0]
    if mass_el is None or mass < 0:
        raise DescriptionError(f"{source}: link '{name}' <inertial> needs <mass value=...> >= 0")
    T = read_origin(el, f"link '{name}' inertial", source)
    inertia_el = el.find("inertia")
    values = {k: 0.0 for k in INERTIA_KEYS}
    if inertia_el is not None:
        for k in INERTIA_KEYS:
            values[k] = read_floats(inertia_el.get(k, "0"), 1, f"link '{name}' inertia {k}", source)[0]
    I_c = np.array([[values["ixx"], values["ixy"], values["ixz"]],
                    [values["ixy"], values["iyy"], values["iyz"]],
                    [values["ixz"], values["iyz"], values["izz"]]])
    R = T[:3, :3]
    return mass, T[:3, 3].copy(), R @ I_c @ R.T


class RobotModel:
    """One URDF's robot, read once (see the module docstring).

    Refused, each with a DescriptionError naming ``source`` and the link or joint: duplicate
    names, a joint without type, parent or child, an unknown joint type, a joint naming a link
    that does not exist, a link that is the child of two joints, a mimic naming an unknown joint,
    several roots (unless ``allow_forest``, used to report a removed joint as a difference), and
    cycles. ``links`` and ``joints`` keep document order; ``parent_joint`` maps each non-root link
    to the joint whose child it is.
    """

    def __init__(self, robot: etree._Element, source: str, allow_forest: bool = False, urdf: str | None = None):
        self.element = robot
        self.source = source
        self.name = robot.get("name", "robot")
        self._urdf = urdf
        self.link_elements: dict[str, etree._Element] = {}
        for node in robot.findall("link"):
            name = _named(node, "link", source)
            if name in self.link_elements:
                raise DescriptionError(f"{source}: link '{name}' is defined twice")
            self.link_elements[name] = node
        if not self.link_elements:
            raise DescriptionError(f"{source}: the URDF has no <link>")
        self.links: tuple[str, ...] = tuple(self.link_elements)
        self.joint_elements: dict[str, etree._Element] = {}
        self.joints: dict[str, JointInfo] = {}
        self.parent_joint: dict[str, str] = {}
        for node in robot.findall("joint"):
            self._add_joint(node)
        for j in self.joints.values():
            if j.mimic is not None and j.mimic not in self.joints:
                raise DescriptionError(f"{source}: joint '{j.name}' mimics joint '{j.mimic}', which does not exist")
        self.roots: tuple[str, ...] = tuple(link for link in self.links if link not in self.parent_joint)
        if len(self.roots) > 1 and not allow_forest:
            raise DescriptionError(
                f"{source}: the URDF has {len(self.roots)} root links ({', '.join(repr(r) for r in self.roots)}); "
                "expected one tree with a single root")
        self._check_tree()

    @classmethod
    def from_urdf(cls, urdf_xml: str | bytes, source: str, allow_forest: bool = False) -> RobotModel:
        """The model of URDF text: its one parse."""
        return cls(parse_xml(urdf_xml, source), source, allow_forest,
                   urdf_xml if isinstance(urdf_xml, str) else None)

    def _add_joint(self, node: etree._Element) -> None:
        source = self.source
        name = _named(node, "joint", source)
        if name in self.joints:
            raise DescriptionError(f"{source}: joint '{name}' is defined twice")
        kind = node.get("type")
        if kind not in JOINT_TYPES:
            raise DescriptionError(
                f"{source}: joint '{name}' has type '{kind}', expected one of {', '.join(JOINT_TYPES)}")
        parent = _joint_link(node, "parent", name, source)
        child = _joint_link(node, "child", name, source)
        for role, link in (("parent", parent), ("child", child)):
            if link not in self.link_elements:
                raise DescriptionError(f"{source}: joint '{name}' names {role} link '{link}', which does not exist")
        if child in self.parent_joint:
            raise DescriptionError(
                f"{source}: link '{child}' is the child of two joints, '{self.parent_joint[child]}' and '{name}'")
        mimic_el = node.find("mimic")
        mimic = None if mimic_el is None else mimic_el.get("joint")
        if mimic_el is not None and not mimic:
            raise DescriptionError(f"{source}: joint '{name}' has a <mimic> without a joint attribute")
        self.parent_joint[child] = name
        self.joints[name] = JointInfo(name, kind, parent, child, mimic)
        self.joint_elements[name] = node

    def _check_tree(self) -> None:
        if self.roots:
            reached = set(self.topological_links())
            stray = [link for link in self.links if link not in reached]
            if not stray:
                return
            start = stray[0]
        else:
            start = self.links[0]
        # every link off the root's tree has one parent, so walking up from it ends in a cycle
        path, link = [], start
        while link not in path:
            path.append(link)
            link = self.joints[self.parent_joint[link]].parent
        cycle = path[path.index(link):]
        raise DescriptionError(
            f"{self.source}: the joints form a cycle through links "
            f"{' -> '.join(repr(c) for c in cycle + [cycle[0]])}; a URDF must be a tree")

    # --- structure -------------------------------------------------------------------------
    @property
    def root(self) -> str:
        return self.roots[0]

    @property
    def urdf(self) -> str:
        """The URDF text of the model (the text it was read from, else its element written out)."""
        if self._urdf is None:
            self._urdf = etree.tostring(self.element, encoding="unicode")
        return self._urdf

    def parent_link(self, link: str) -> str | None:
        joint = self.parent_joint.get(link)
        return None if joint is None else self.joints[joint].parent

    def children(self, link: str) -> list[str]:
        """Names of the joints whose parent is ``link``, in document order."""
        return [j.name for j in self.joints.values() if j.parent == link]

    def topological_links(self) -> list[str]:
        """Links ordered so that every parent comes before its children (root first)."""
        kids: dict[str, list[str]] = {}
        for j in self.joints.values():
            kids.setdefault(j.parent, []).append(j.child)
        order, stack = [], list(reversed(self.roots))
        while stack:
            link = stack.pop()
            order.append(link)
            stack.extend(reversed(kids.get(link, [])))
        return order

    def joint_pose(self, name: str) -> np.ndarray:
        """4x4 pose of a joint frame in the root link frame, every joint at zero."""
        T = read_origin(self.joint_elements[name], f"joint '{name}'", self.source)
        link = self.joints[name].parent
        while link in self.parent_joint:
            j = self.parent_joint[link]
            T = read_origin(self.joint_elements[j], f"joint '{j}'", self.source) @ T
            link = self.joints[j].parent
        return T

    def fixed_carrier(self, link: str, present) -> tuple[str, np.ndarray]:
        """The link that carries ``link`` in a model whose fixed joints may have been merged (gz-sim's
        URDF import lumps a link into its parent across a fixed joint; so does the embedded host's
        optimizer): ``(carrier, T_carrier_link)``, the first of ``link`` and its ancestors across fixed
        joints for which ``present(name)`` is true, and the pose (4x4) of ``link`` in it. A link that is
        not in the model, or one reached only across a moving joint, is a DescriptionError naming it."""
        if link not in self.link_elements:
            raise DescriptionError(f"{self.source}: '{link}' is not a link of the robot")
        T = np.eye(4)
        name = link
        while not present(name):
            joint = self.parent_joint.get(name)
            if joint is None or self.joints[joint].type != "fixed":
                raise DescriptionError(f"{self.source}: link '{link}' is not a link of the simulated model, "
                                       "nor fixed to one")
            T = read_origin(self.joint_elements[joint], f"joint '{joint}'", self.source) @ T
            name = self.joints[joint].parent
        return name, T

    @functools.cached_property
    def mimics(self) -> tuple[Mimic, ...]:
        """The ``<mimic>`` relations, in document order."""
        out = []
        for name, j in self.joints.items():
            if j.mimic is None:
                continue
            el = self.joint_elements[name].find("mimic")
            try:
                out.append(Mimic(name, j.mimic, float(el.get("multiplier", "1")), float(el.get("offset", "0"))))
            except ValueError:
                raise DescriptionError(f"{self.source}: joint '{name}': <mimic> multiplier/offset must be "
                                       "numbers") from None
        return tuple(out)

    # --- mass and kind ---------------------------------------------------------------------
    @functools.cached_property
    def total_mass(self) -> float:
        """The robot's mass (kg): the sum of its links' ``<inertial><mass>`` (the optimizer conserves it)."""
        return float(sum(link_inertial(link, self.source)[0] for link in self.link_elements.values()))

    def massless_links(self) -> list[str]:
        """Links without ``<inertial>`` (DART would give each a phantom 1 kg body)."""
        return [name for name, link in self.link_elements.items() if link.find("inertial") is None]

    @property
    def wheel_joints(self) -> list[str]:
        """The rover naming contract's ``<id>_wheel_joint`` joints, in document order."""
        return [name for name in self.joints if name.endswith(WHEEL_SUFFIX)]

    @property
    def is_rover(self) -> bool:
        """Whether the robot has wheels by the rover naming contract (a rover; a rig carrying a wheel)."""
        return bool(self.wheel_joints)

    @property
    def kind(self) -> str:
        """``rig`` (its root is the ``world`` link: a fixed-base test stand), ``rover`` (wheel joints)
        or ``snake`` (any other free-floating robot: EELS)."""
        if self.root == WORLD_LINK:
            return "rig"
        return "rover" if self.is_rover else "snake"
