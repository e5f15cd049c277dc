"""Multibody optimizer for URDF (EELS-DARTS §2.1.4): merge locked bodies, prune massless links.

Every ``fixed`` joint is contracted, unless it must survive as a locked joint
(a force-torque sensor joint, see :func:`locked_joints`): the child link is
merged into its parent body. Merging moves, all in the parent body's frame:

- mass, centre of mass and inertia (parallel-axis theorem; inertia tensors
  rotated into the body frame), combined into one ``<inertial>`` at the
  combined centre of mass with ``rpy="0 0 0"`` and the full tensor, so
  total mass, centre of mass and inertia are conserved exactly up to
  floating-point rounding;
- ``<visual>`` and ``<collision>`` elements, with composed origins;
- the child's child joints, re-attached to the body with composed origins
  (their axes, limits, dynamics and mimics are in the joint frame, which
  does not move, so they are kept as they are).

A massless link (no ``<inertial>`` or zero mass) on a fixed joint thus
becomes a plain frame of its body. Every original link stays queryable
through :attr:`OptimizedModel.frames` (body and pose in the body).

This also fixes a trap of DART's URDF loader: a link without ``<inertial>``
gets a phantom 1 kg body with unit inertia there, while URDF means "no mass".

``<gazebo reference="LINK">`` blocks of merged links are re-pointed to the
body; their ``<sensor>`` poses (relative to the link) are composed with the
link's pose in the body. Link-level surface tags of a merged link (``mu1``,
``kp``, ...) then apply to the whole body, as in libsdformat's own fixed-joint
lumping; a warning names them. ``<gazebo reference="JOINT">`` blocks of
contracted joints are dropped with a warning. Plugin parameters that name
links are not rewritten: hosts resolve such names through ``frames``.

A root link named ``world`` (a fixed-base URDF) is never merged into: its
joints are kept, since merging into ``world`` would weld bodies to the world.
"""

from __future__ import annotations

import copy
import dataclasses
import logging
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from lxml import etree

from eels_gz.description.model import WORLD_LINK, RobotModel, link_inertial, pose_matrix, read_floats, read_origin
from eels_gz.description.xacro_loader import Description
from eels_gz.errors import DescriptionError
from eels_gz.rotations import matrix_rpy

log = logging.getLogger(__name__)

PRESERVE_TAGS = ("preserveFixedJoint", "disableFixedJointLumping")
# link-level <gazebo> tags that describe the link's own collisions or visuals
SURFACE_TAGS = ("mu1", "mu2", "kp", "kd", "fdir1", "maxContacts", "minDepth", "maxVel", "material", "selfCollide")


@dataclass(frozen=True)
class Frame:
    """Where an original link went: its body in the optimized model and its pose there.

    ``pose`` is the 4x4 homogeneous transform of the link origin in the body
    frame (metres), so ``T_world_link = T_world_body @ pose``.
    """

    name: str
    body: str
    pose: np.ndarray


@dataclass(frozen=True)
class ModelCounts:
    """Size of a URDF model: links (bodies; a ``world`` link is not counted), massless ones, fixed joints."""

    bodies: int
    massless_links: int
    fixed_joints: int


@dataclass(frozen=True)
class OptimizedModel:
    """Result of the optimizer (:func:`optimize_model`).

    ``model`` is the optimized robot (:class:`~eels_gz.description.model.RobotModel`, read from
    the optimizer's own tree: no parse), ``urdf`` its text. ``merged`` maps every body of the
    optimized model to the original links it holds, the body's own link first.
    ``massless_bodies`` are links that stay bodies without mass (a warning names them).
    """

    urdf: str
    model: RobotModel
    frames: dict[str, Frame]
    merged: dict[str, tuple[str, ...]]
    removed_joints: tuple[str, ...]
    kept_fixed_joints: tuple[str, ...]
    massless_bodies: tuple[str, ...]
    before: ModelCounts
    after: ModelCounts


# --- poses ----------------------------------------------------------------------------------
def _fmt(values: Iterable[float]) -> str:
    # repr is the shortest text that reads back to the same double: no rounding is added
    return " ".join(repr(float(v) + 0.0) for v in values)


def write_origin(parent: etree._Element, T: np.ndarray) -> None:
    """Set (or create, as first child) the ``<origin>`` of ``parent`` to the pose ``T``."""
    el = parent.find("origin")
    if el is None:
        el = etree.Element("origin")
        parent.insert(0, el)
    el.set("xyz", _fmt(T[:3, 3]))
    el.set("rpy", _fmt(matrix_rpy(T[:3, :3])))


# --- mass properties ------------------------------------------------------------------------
def combine_inertials(parts: Iterable[tuple[float, np.ndarray, np.ndarray, np.ndarray]]):
    """Combine (mass, com, inertia about com, pose of the part in the body) into one (mass, com, inertia).

    Parallel-axis theorem: each part's inertia is rotated into the body frame
    and shifted from its centre of mass to the combined one.
    """
    parts = [(m, T[:3, :3] @ c + T[:3, 3], T[:3, :3] @ I @ T[:3, :3].T) for m, c, I, T in parts]
    mass = sum(m for m, _, _ in parts)
    if mass <= 0.0:
        return 0.0, np.zeros(3), np.zeros((3, 3))
    com = sum(m * c for m, c, _ in parts) / mass
    inertia = np.zeros((3, 3))
    for m, c, I in parts:
        d = c - com
        inertia += I + m * (d @ d * np.eye(3) - np.outer(d, d))
    return mass, com, inertia


def write_inertial(link: etree._Element, mass: float, com: np.ndarray, inertia: np.ndarray) -> None:
    """Replace the link's ``<inertial>`` (first child) by the given one, full tensor, rpy = 0."""
    old = link.find("inertial")
    if old is not None:
        link.remove(old)
    if mass <= 0.0:
        return
    el = etree.Element("inertial")
    etree.SubElement(el, "origin", xyz=_fmt(com), rpy="0.0 0.0 0.0")
    etree.SubElement(el, "mass", value=_fmt([mass]))
    I = 0.5 * (inertia + inertia.T)
    etree.SubElement(el, "inertia", ixx=_fmt([I[0, 0]]), ixy=_fmt([I[0, 1]]), ixz=_fmt([I[0, 2]]),
                     iyy=_fmt([I[1, 1]]), iyz=_fmt([I[1, 2]]), izz=_fmt([I[2, 2]]))
    link.insert(0, el)


# --- which fixed joints stay ----------------------------------------------------------------
def _is_true(el: etree._Element | None) -> bool:
    return el is not None and (el.text or "").strip().lower() in ("true", "1")


def locked_joints(robot: etree._Element, tree: RobotModel) -> dict[str, str]:
    """Fixed joints the URDF itself says must survive, each with the reason.

    A ``<gazebo reference="JOINT">`` block with ``<preserveFixedJoint>`` or
    ``<disableFixedJointLumping>`` true, or with a ``<sensor type="force_torque">``.
    """
    found: dict[str, str] = {}
    for block in robot.findall("gazebo"):
        ref = block.get("reference")
        if ref not in tree.joints or tree.joints[ref].type != "fixed":
            continue
        for tag in PRESERVE_TAGS:
            if _is_true(block.find(tag)):
                found[ref] = f"<{tag}>"
        if any(s.get("type") == "force_torque" for s in block.findall("sensor")):
            found[ref] = "force_torque sensor"
    return found


def _kept_fixed(robot, tree: RobotModel, keep_joints, keep_links, source: str) -> set[str]:
    keep_joints, keep_links = list(keep_joints), list(keep_links)
    for name in keep_joints:
        if name not in tree.joints:
            raise DescriptionError(f"{source}: keep_joints names '{name}', which is not a joint of the URDF")
    for name in keep_links:
        if name not in tree.links:
            raise DescriptionError(f"{source}: keep_links names '{name}', which is not a link of the URDF")
    kept = {j for j in keep_joints if tree.joints[j].type == "fixed"}
    kept |= set(locked_joints(robot, tree))
    kept |= {tree.parent_joint[link] for link in keep_links if link in tree.parent_joint
             and tree.joints[tree.parent_joint[link]].type == "fixed"}
    for j in tree.joints.values():
        if j.type == "fixed" and j.parent == WORLD_LINK and j.parent == tree.root:
            kept.add(j.name)
        if j.mimic is not None and tree.joints[j.mimic].type == "fixed" and j.mimic not in kept:
            log.warning("%s: joint '%s' mimics fixed joint '%s'; keeping '%s' so the mimic target exists",
                        source, j.name, j.mimic, j.mimic)
            kept.add(j.mimic)
    return kept


def count(robot: etree._Element, tree: RobotModel, source: str) -> ModelCounts:
    """Bodies, massless links and fixed joints of a parsed URDF."""
    nodes = {n.get("name"): n for n in robot.findall("link")}
    bodies = [name for name in tree.links if name != WORLD_LINK]
    massless = sum(1 for name in bodies if link_inertial(nodes[name], source)[0] <= 0.0)
    return ModelCounts(len(bodies), massless, sum(1 for j in tree.joints.values() if j.type == "fixed"))


# --- the optimizer --------------------------------------------------------------------------
def optimize_model(model: RobotModel, keep_joints: Iterable[str] = (),
                   keep_links: Iterable[str] = ()) -> OptimizedModel:
    """Merge bodies joined by fixed joints and turn massless links into frames (see module doc); the
    optimized robot is the result's ``model`` (``model`` itself is not changed).

    ``keep_joints``: fixed joints to keep as locked joints (force-torque
    sensor joints); those marked in ``<gazebo reference>`` blocks are kept
    anyway. ``keep_links``: links that must stay bodies (their fixed parent
    joint is kept). ``model.source`` names the description in errors and warnings.
    """
    return _optimize(_working_copy(model.element), keep_joints, keep_links, model.source)


def optimize_urdf(urdf_xml: str, keep_joints: Iterable[str] = (), keep_links: Iterable[str] = (),
                  source: str = "URDF") -> OptimizedModel:
    """:func:`optimize_model` of URDF text (one parse); ``source`` names it in errors and warnings."""
    return optimize_model(RobotModel.from_urdf(urdf_xml, source), keep_joints, keep_links)


def _working_copy(robot: etree._Element) -> etree._Element:
    """A copy of ``robot`` for the optimizer to rewrite, without the whitespace between elements (as
    :func:`~eels_gz.description.model.parse_xml` reads it, so that its output is indented anew)."""
    robot = copy.deepcopy(robot)
    for el in robot.iter():
        if len(el) and el.text is not None and not el.text.strip():
            el.text = None
        if el.tail is not None and not el.tail.strip():
            el.tail = None
    return robot


def _optimize(robot: etree._Element, keep_joints, keep_links, source: str) -> OptimizedModel:
    """The optimizer on ``robot``, a working copy it rewrites in place."""
    tree = RobotModel(robot, source)
    before = count(robot, tree, source)
    kept = _kept_fixed(robot, tree, keep_joints, keep_links, source)
    links = {n.get("name"): n for n in robot.findall("link")}
    joints = {n.get("name"): n for n in robot.findall("joint")}

    body_of: dict[str, str] = {}
    pose_in_body: dict[str, np.ndarray] = {}
    removed: list[str] = []
    for link in tree.topological_links():
        jname = tree.parent_joint.get(link)
        joint = tree.joints.get(jname) if jname else None
        if joint is not None and joint.type == "fixed" and jname not in kept:
            T = read_origin(joints[jname], f"joint '{jname}'", source)
            body_of[link] = body_of[joint.parent]
            pose_in_body[link] = pose_in_body[joint.parent] @ T
            removed.append(jname)
        else:
            body_of[link] = link
            pose_in_body[link] = np.eye(4)
    merged: dict[str, list[str]] = {}
    for link in tree.topological_links():
        merged.setdefault(body_of[link], []).append(link)

    for body, members in merged.items():
        if len(members) == 1:
            continue
        parts = [(*link_inertial(links[m], source), pose_in_body[m]) for m in members]
        if any(p[0] > 0.0 for p in parts[1:]):
            write_inertial(links[body], *combine_inertials(parts))
        for m in members[1:]:
            for el in links[m].findall("visual") + links[m].findall("collision"):
                write_origin(el, pose_in_body[m] @ read_origin(el, f"link '{m}' <{el.tag}>", source))
                links[body].append(el)
    for jname, joint in tree.joints.items():
        if jname in removed or body_of[joint.parent] == joint.parent:
            continue
        node = joints[jname]
        node.find("parent").set("link", body_of[joint.parent])
        write_origin(node, pose_in_body[joint.parent] @ read_origin(node, f"joint '{jname}'", source))
    for jname in removed:
        robot.remove(joints[jname])
    for body, members in merged.items():
        for m in members[1:]:
            robot.remove(links[m])
    _repoint_gazebo(robot, tree, body_of, pose_in_body, set(removed), source)

    out_tree = RobotModel(robot, source)
    massless = tuple(b for b in merged if b != WORLD_LINK and link_inertial(links[b], source)[0] <= 0.0)
    if massless:
        log.warning("%s: massless bodies remain (DART cannot simulate a massless body with DOFs reliably; "
                    "give them an <inertial> or fix them to a massive body): %s", source, ", ".join(massless))
    frames = {link: Frame(link, body_of[link], _readonly(pose_in_body[link])) for link in tree.links}
    urdf = etree.tostring(robot, encoding="unicode", pretty_print=True)
    return OptimizedModel(
        urdf=urdf,
        model=RobotModel(robot, source, urdf=urdf),
        frames=frames,
        merged={b: tuple(m) for b, m in merged.items()},
        removed_joints=tuple(removed),
        kept_fixed_joints=tuple(j for j in tree.joints if j in kept),
        massless_bodies=massless,
        before=before,
        after=count(robot, out_tree, source),
    )


def optimize_description(description: Description, keep_joints: Iterable[str] = (),
                         keep_links: Iterable[str] = ()) -> tuple[Description, OptimizedModel]:
    """Optimize a processed :class:`Description`: its URDF and its ``<gazebo reference>`` blocks.

    The reference blocks take part (fixed joints they mark survive, those of
    merged links are re-pointed) and come back split off, as
    :func:`~eels_gz.description.xacro_loader.split_gazebo` leaves them.
    Model-level ``<gazebo>`` blocks are returned unchanged. The optimized description carries its
    model (the optimizer's tree, not parsed again), as does the result.
    """
    robot = _working_copy(description.model.element)
    for block in description.references:
        robot.append(_working_copy(block))
    result = _optimize(robot, keep_joints, keep_links, description.source)
    references = robot.findall("gazebo")
    for block in references:
        robot.remove(block)
    urdf = etree.tostring(robot, encoding="unicode", pretty_print=True)
    model = RobotModel(robot, description.source, urdf=urdf)
    return (dataclasses.replace(description, urdf=urdf, references=references, _model=model),
            dataclasses.replace(result, model=model))


def _readonly(T: np.ndarray) -> np.ndarray:
    T = T.copy()
    T.flags.writeable = False
    return T


def _sdf_pose(el: etree._Element, source: str) -> np.ndarray:
    if el.get("rotation_format", "euler_rpy") != "euler_rpy":
        raise DescriptionError(f"{source}: <gazebo> sensor <pose rotation_format='{el.get('rotation_format')}'> "
                               "cannot be re-pointed by the optimizer; use euler_rpy")
    v = read_floats(el.text, 6, "<gazebo> sensor <pose>", source)
    if el.get("degrees", "false").strip().lower() in ("true", "1"):
        v[3:] = np.radians(v[3:])
    return pose_matrix(v[:3], v[3:])


def _repoint_gazebo(robot, tree: RobotModel, body_of, pose_in_body, removed: set[str], source: str) -> None:
    """Re-point ``<gazebo reference>`` blocks of merged links and drop those of contracted joints."""
    for block in robot.findall("gazebo"):
        ref = block.get("reference")
        if ref is None:
            continue
        if ref in removed:
            log.warning("%s: <gazebo reference='%s'> refers to a fixed joint the optimizer contracted; dropped "
                        "(mark it <preserveFixedJoint>true</preserveFixedJoint> or pass it in keep_joints)",
                        source, ref)
            robot.remove(block)
            continue
        if ref not in body_of or body_of[ref] == ref:
            continue
        body, T = body_of[ref], pose_in_body[ref]
        block.set("reference", body)
        for sensor in block.findall("sensor"):
            pose = sensor.find("pose")
            if pose is not None and pose.get("relative_to"):
                continue  # relative to a named frame, not to the link
            if pose is None:
                pose = etree.SubElement(sensor, "pose")
                P = T
            else:
                P = T @ _sdf_pose(pose, source)
            for attr in ("degrees", "rotation_format"):
                pose.attrib.pop(attr, None)
            pose.text = _fmt([*P[:3, 3], *matrix_rpy(P[:3, :3])])
        surface = [el.tag for el in block if isinstance(el.tag, str) and el.tag in SURFACE_TAGS]
        if surface:
            log.warning("%s: <gazebo reference='%s'> sets %s; '%s' was merged into body '%s', so these now apply "
                        "to all of that body", source, ref, ", ".join(f"<{t}>" for t in surface), ref, body)
