"""The link tree of a URDF (pure): its root link."""

from __future__ import annotations

from lxml import etree

from eels_gz.errors import DescriptionError


def root_link(urdf: str, source: str = "<urdf>") -> str:
    """The root link of a URDF: the one link no joint has as its child."""
    try:
        root = etree.fromstring(urdf.encode())
    except etree.XMLSyntaxError as exc:
        raise DescriptionError(f"{source}: not a URDF: {exc}") from None
    children = {j.find("child").get("link") for j in root.iter("joint") if j.find("child") is not None}
    roots = [lk.get("name") for lk in root.iter("link") if lk.get("name") not in children]
    if len(roots) != 1:
        raise DescriptionError(f"{source}: a URDF has one root link, this one has {len(roots)} ({', '.join(roots)})")
    return roots[0]


def fixed_carrier(urdf: str, link: str, present, source: str = "<urdf>"):
    """The link that carries ``link`` in a model whose fixed joints may have been merged (gz-sim's
    URDF import lumps a link into its parent across a fixed joint; so does the embedded host's
    optimizer): ``(carrier, T_carrier_link)``, the first of ``link`` and its ancestors across fixed
    joints for which ``present(name)`` is true, and the pose (4x4) of ``link`` in it. A link that is not
    in the URDF, or one reached only across a moving joint, is a DescriptionError naming it."""
    import numpy as np

    from eels_gz.description.optimizer import read_origin

    try:
        root = etree.fromstring(urdf.encode())
    except etree.XMLSyntaxError as exc:
        raise DescriptionError(f"{source}: not a URDF: {exc}") from None
    if link not in {lk.get("name") for lk in root.iter("link")}:
        raise DescriptionError(f"{source}: '{link}' is not a link of the robot")
    parent_joint = {j.find("child").get("link"): j for j in root.iter("joint") if j.find("child") is not None}
    T = np.eye(4)
    name = link
    while not present(name):
        joint = parent_joint.get(name)
        if joint is None or joint.get("type") != "fixed":
            raise DescriptionError(f"{source}: link '{link}' is not a link of the simulated model, nor fixed to one")
        T = read_origin(joint, f"joint '{joint.get('name')}'", source) @ T
        name = joint.find("parent").get("link")
    return name, T


def total_mass(urdf: str, source: str = "<urdf>") -> float:
    """The robot's mass (kg): the sum of its links' ``<inertial><mass>`` (the optimizer conserves it)."""
    from eels_gz.description.optimizer import link_inertial

    try:
        root = etree.fromstring(urdf.encode())
    except etree.XMLSyntaxError as exc:
        raise DescriptionError(f"{source}: not a URDF: {exc}") from None
    return float(sum(link_inertial(link, source)[0] for link in root.iter("link")))
