"""Structural similarity of two URDFs (EELS-DARTS §2.1.5, launch-time changes).

A user-corrected description (``--urdf FILE``) is accepted only if it is
structurally similar to the variant's baseline: the same tree (the same link
names, each link with the same parent link through the same joint), the same
joint names and the same joint types. Masses, inertias, axes, origins, limits
and meshes may differ. A ``<mimic>`` coupling is structure too (it removes a
DOF), so the mimicked joint must be the same; its multiplier and offset are
parameters and may differ.

The structure is read by :class:`~eels_gz.description.model.RobotModel`, which refuses malformed
trees clearly.
"""

from __future__ import annotations

from eels_gz.description.model import RobotModel
from eels_gz.errors import DescriptionError


def compare_structure(baseline_urdf: str, user_urdf: str, user_file: str = "the user URDF") -> list[str]:
    """Human-readable structural differences of ``user_urdf`` from ``baseline_urdf``; empty if similar.

    ``user_file`` names the user's description in the messages. A malformed
    URDF (either one) raises DescriptionError naming it.
    """
    base = RobotModel.from_urdf(baseline_urdf, "the baseline URDF")
    # a joint removed from the user file leaves its child as a second root: report
    # that as a difference (naming the joint) rather than only as a malformed tree
    user = RobotModel.from_urdf(user_urdf, user_file, allow_forest=True)
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
