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
