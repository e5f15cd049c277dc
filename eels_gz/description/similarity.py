"""Structural similarity of two URDFs (EELS-DARTS §2.1.5, launch-time changes).

A user-corrected description (``--urdf FILE``) is accepted only if it is
structurally similar to the variant's baseline: the same tree (the same link
names, each link with the same parent link through the same joint), the same
joint names and the same joint types. Masses, inertias, axes, origins, limits
and meshes may differ. A ``<mimic>`` coupling is structure too (it removes a
DOF), so the mimicked joint must be the same; its multiplier and offset are
parameters and may differ.

This module also holds :func:`parse_tree`, the structural reading of a URDF
(links, joints, root, with malformed trees refused clearly) that the
multibody optimizer shares.
"""

from __future__ import annotations

from dataclasses import dataclass

from lxml import etree

from eels_gz.errors import DescriptionError

JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")


@dataclass(frozen=True)
class JointInfo:
    """The structural part of a URDF ``<joint>``."""

    name: str
    type: str
    parent: str
    child: str
    mimic: str | None  # name of the mimicked joint, if any


@dataclass(frozen=True)
class UrdfTree:
    """Links and joints of a URDF, checked to form one tree.

    ``links`` and ``joints`` keep document order; ``parent_joint`` maps each
    non-root link to the joint whose child it is.
    """

    name: str
    roots: tuple[str, ...]  # one, unless parsed with allow_forest=True
    links: tuple[str, ...]
    joints: dict[str, JointInfo]
    parent_joint: dict[str, str]

    @property
    def root(self) -> str:
        return self.roots[0]

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


def parse_xml(urdf_xml: str, source: str) -> etree._Element:
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


def parse_tree(robot: etree._Element, source: str, allow_forest: bool = False) -> UrdfTree:
    """Read the tree of a parsed ``<robot>``; refuse anything that is not one tree.

    Refused, each with a DescriptionError naming ``source`` and the link or
    joint: duplicate names, a joint without type, parent or child, an unknown
    joint type, a joint naming a link that does not exist, a link that is the
    child of two joints, a mimic naming an unknown joint, several roots
    (unless ``allow_forest``, used to report a removed joint as a difference),
    and cycles.
    """
    links: list[str] = []
    for node in robot.findall("link"):
        name = _named(node, "link", source)
        if name in links:
            raise DescriptionError(f"{source}: link '{name}' is defined twice")
        links.append(name)
    if not links:
        raise DescriptionError(f"{source}: the URDF has no <link>")
    link_set = set(links)
    joints: dict[str, JointInfo] = {}
    parent_joint: dict[str, str] = {}
    for node in robot.findall("joint"):
        name = _named(node, "joint", source)
        if name in joints:
            raise DescriptionError(f"{source}: joint '{name}' is defined twice")
        kind = node.get("type")
        if kind not in JOINT_TYPES:
            raise DescriptionError(
                f"{source}: joint '{name}' has type '{kind}', expected one of {', '.join(JOINT_TYPES)}")
        parent = _joint_link(node, "parent", name, source)
        child = _joint_link(node, "child", name, source)
        for role, link in (("parent", parent), ("child", child)):
            if link not in link_set:
                raise DescriptionError(f"{source}: joint '{name}' names {role} link '{link}', which does not exist")
        if child in parent_joint:
            raise DescriptionError(
                f"{source}: link '{child}' is the child of two joints, '{parent_joint[child]}' and '{name}'")
        mimic_el = node.find("mimic")
        mimic = None if mimic_el is None else mimic_el.get("joint")
        if mimic_el is not None and not mimic:
            raise DescriptionError(f"{source}: joint '{name}' has a <mimic> without a joint attribute")
        parent_joint[child] = name
        joints[name] = JointInfo(name, kind, parent, child, mimic)
    for j in joints.values():
        if j.mimic is not None and j.mimic not in joints:
            raise DescriptionError(f"{source}: joint '{j.name}' mimics joint '{j.mimic}', which does not exist")
    roots = [link for link in links if link not in parent_joint]
    if len(roots) > 1 and not allow_forest:
        raise DescriptionError(
            f"{source}: the URDF has {len(roots)} root links ({', '.join(repr(r) for r in roots)}); "
            "expected one tree with a single root")
    if roots:
        tree = UrdfTree(robot.get("name", "robot"), tuple(roots), tuple(links), joints, parent_joint)
        reached = set(tree.topological_links())
        stray = [link for link in links if link not in reached]
        if not stray:
            return tree
        start = stray[0]
    else:
        start = links[0]
    # every link off the root's tree has one parent, so walking up from it ends in a cycle
    path, link = [], start
    while link not in path:
        path.append(link)
        link = joints[parent_joint[link]].parent
    cycle = path[path.index(link):]
    raise DescriptionError(
        f"{source}: the joints form a cycle through links {' -> '.join(repr(c) for c in cycle + [cycle[0]])}; "
        "a URDF must be a tree")


def read_tree(urdf_xml: str, source: str, allow_forest: bool = False) -> UrdfTree:
    """Parse and check URDF text (see :func:`parse_tree`)."""
    return parse_tree(parse_xml(urdf_xml, source), source, allow_forest)


def compare_structure(baseline_urdf: str, user_urdf: str, user_file: str = "the user URDF") -> list[str]:
    """Human-readable structural differences of ``user_urdf`` from ``baseline_urdf``; empty if similar.

    ``user_file`` names the user's description in the messages. A malformed
    URDF (either one) raises DescriptionError naming it.
    """
    base = read_tree(baseline_urdf, "the baseline URDF")
    # a joint removed from the user file leaves its child as a second root: report
    # that as a difference (naming the joint) rather than only as a malformed tree
    user = read_tree(user_urdf, user_file, allow_forest=True)
    diffs: list[str] = []
    if len(user.roots) > 1:
        diffs.append(f"{user_file} has {len(user.roots)} root links "
                     f"({', '.join(repr(r) for r in user.roots)}), expected one tree rooted at '{base.root}'")
    user_links = set(user.links)
    base_links = set(base.links)
    for link in base.links:
        if link not in user_links:
            diffs.append(f"link '{link}' is missing from {user_file}")
    for link in user.links:
        if link not in base_links:
            diffs.append(f"link '{link}' is in {user_file} but not in the baseline")
    for name, bj in base.joints.items():
        uj = user.joints.get(name)
        if uj is None:
            diffs.append(f"joint '{name}' is missing from {user_file}")
            continue
        if uj.type != bj.type:
            diffs.append(f"joint '{name}' is '{uj.type}' in {user_file}, expected '{bj.type}' as in the baseline")
        if uj.child != bj.child:
            diffs.append(f"joint '{name}' has child link '{uj.child}' in {user_file}, "
                         f"expected '{bj.child}' as in the baseline")
        if uj.mimic != bj.mimic:
            got = f"mimics '{uj.mimic}'" if uj.mimic else "mimics no joint"
            want = f"'{bj.mimic}'" if bj.mimic else "no mimic"
            diffs.append(f"joint '{name}' {got} in {user_file}, expected {want} as in the baseline")
    for name in user.joints:
        if name not in base.joints:
            diffs.append(f"joint '{name}' is in {user_file} but not in the baseline")
    for link in base.links:
        if link not in user_links:
            continue
        bp, up = base.parent_link(link), user.parent_link(link)
        if bp == up:
            continue
        got = f"parent '{up}' (through joint '{user.parent_joint[link]}')" if up else "no parent (it is the root)"
        want = f"'{bp}'" if bp else "no parent (the root)"
        diffs.append(f"link '{link}' has {got} in {user_file}, expected {want} as in the baseline")
    return diffs


def check_similar(baseline_urdf: str, user_urdf: str, user_file: str) -> None:
    """Raise DescriptionError listing every difference if ``user_urdf`` is not structurally similar."""
    diffs = compare_structure(baseline_urdf, user_urdf, user_file)
    if diffs:
        lines = "\n".join(f"  - {d}" for d in diffs)
        raise DescriptionError(
            f"{user_file} is not structurally similar to the baseline description "
            f"(same tree, joint names and joint types are required; parameters may differ):\n{lines}")
