"""Structural similarity (EELS-DARTS §2.1.5): a user URDF is accepted when it has
the baseline's tree, joint names and joint types; parameters may differ.
Every rejection names the joint or link and what differs."""

from __future__ import annotations

import pytest
from lxml import etree

from eels_gz import registry
from eels_gz.description.model import RobotModel
from eels_gz.description.similarity import check_similar, compare_structure
from eels_gz.description.xacro_loader import load_description
from eels_gz.errors import DescriptionError

USER = "my_eels.urdf"
ROBOT = "eels_1_0_front_only"
N_MODULES = 4  # enough for a middle module with a neighbour on each side


@pytest.fixture(scope="module")
def baseline() -> str:
    entry = registry.robot(ROBOT)
    return load_description(entry.path, dict(entry.xacro_args, n_modules=str(N_MODULES))).urdf


def edited(urdf: str, edit) -> str:
    robot = etree.fromstring(urdf.encode())
    edit(robot)
    return etree.tostring(robot, encoding="unicode")


def joint(robot, name):
    (node,) = robot.xpath(f"joint[@name='{name}']")
    return node


def link(robot, name):
    (node,) = robot.xpath(f"link[@name='{name}']")
    return node


def _set_mass(robot):
    link(robot, "module_2_shell").find("inertial/mass").set("value", "7.25")


def _set_axis(robot):
    joint(robot, "module_2_bend").find("axis").set("xyz", "0 1 0")


def _set_origin_and_limits(robot):
    joint(robot, "module_3_twist").find("origin").set("xyz", "0.1 0.02 0")
    joint(robot, "module_3_twist").find("limit").set("upper", "1.0")


def _set_mesh(robot):
    geometry = link(robot, "module_1_shell").find("visual/geometry")
    geometry.clear()
    etree.SubElement(geometry, "mesh", filename="package://eels_gz/models/shell.stl")


@pytest.mark.parametrize("edit", [_set_mass, _set_axis, _set_origin_and_limits, _set_mesh],
                         ids=["mass", "axis", "origin_and_limits", "mesh"])
def test_parameter_changes_are_accepted(baseline, edit):
    user = edited(baseline, edit)
    assert user != baseline
    assert compare_structure(baseline, user, USER) == []
    check_similar(baseline, user, USER)  # does not raise


def test_identical_description_is_similar(baseline):
    assert compare_structure(baseline, baseline) == []


def _remove_screw(robot):
    robot.remove(joint(robot, "module_3_screw"))
    robot.remove(link(robot, "module_3_screw_link"))


def test_removed_joint_and_link_are_named(baseline):
    with pytest.raises(DescriptionError) as err:
        check_similar(baseline, edited(baseline, _remove_screw), USER)
    text = str(err.value)
    assert f"{USER} is not structurally similar" in text
    assert f"joint 'module_3_screw' is missing from {USER}" in text
    assert f"link 'module_3_screw_link' is missing from {USER}" in text


def test_removed_joint_alone_leaves_a_second_root_and_is_named(baseline):
    user = edited(baseline, lambda r: r.remove(joint(r, "module_3_twist")))
    diffs = compare_structure(baseline, user, USER)
    assert f"joint 'module_3_twist' is missing from {USER}" in diffs
    assert any(d.startswith(f"{USER} has 2 root links ('base_link', 'module_3_shell')") for d in diffs)
    assert any(d.startswith("link 'module_3_shell' has no parent (it is the root)") for d in diffs)


def test_changed_joint_type_is_named(baseline):
    user = edited(baseline, lambda r: joint(r, "module_2_bend").set("type", "prismatic"))
    assert compare_structure(baseline, user, USER) == [
        f"joint 'module_2_bend' is 'prismatic' in {USER}, expected 'revolute' as in the baseline"]


def test_reparented_link_is_named(baseline):
    user = edited(baseline, lambda r: joint(r, "module_4_bend").find("parent").set("link", "module_2_shell"))
    assert compare_structure(baseline, user, USER) == [
        f"link 'module_4_yoke' has parent 'module_2_shell' (through joint 'module_4_bend') in {USER}, "
        "expected 'module_3_shell' as in the baseline"]


def test_renamed_joint_and_added_mimic_are_named(baseline):
    def edit(robot):
        joint(robot, "module_1_twist").set("name", "module_1_roll")
        etree.SubElement(joint(robot, "module_2_screw"), "mimic", joint="module_1_screw", multiplier="-1")

    diffs = compare_structure(baseline, edited(baseline, edit), USER)
    assert diffs == [
        f"joint 'module_1_twist' is missing from {USER}",
        f"joint 'module_2_screw' mimics 'module_1_screw' in {USER}, expected no mimic as in the baseline",
        f"joint 'module_1_roll' is in {USER} but not in the baseline",
    ]


def test_several_differences_are_all_listed(baseline):
    def edit(robot):
        joint(robot, "module_1_bend").set("type", "continuous")
        _remove_screw(robot)

    with pytest.raises(DescriptionError) as err:
        check_similar(baseline, edited(baseline, edit), USER)
    lines = [ln for ln in str(err.value).splitlines() if ln.startswith("  - ")]
    assert len(lines) == 3, str(err.value)


# --- malformed user URDFs: a clear error naming the file and the problem ---------------------
def _l(name: str) -> str:
    return f'<link name="{name}"/>'


def _j(name: str, parent: str, child: str, kind: str = "revolute") -> str:
    return f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/></joint>'


MALFORMED = {
    "not_xml": ("<robot name='x'><link name='a'>", "not well-formed XML"),
    "not_robot": ("<sdf version='1.9'><model name='m'/></sdf>", "URDF root element must be <robot>, got <sdf>"),
    "no_links": ("<robot name='x'/>", "the URDF has no <link>"),
    "unknown_link": (f"<robot name='x'>{_l('a')}{_j('j', 'a', 'ghost')}</robot>",
                     "joint 'j' names child link 'ghost', which does not exist"),
    "cycle": (f"<robot name='x'>{_l('r')}{_l('a')}{_l('b')}{_j('ja', 'b', 'a')}{_j('jb', 'a', 'b')}</robot>",
              "the joints form a cycle through links 'a' -> 'b' -> 'a'"),
    "two_parents": (f"<robot name='x'>{_l('a')}{_l('b')}{_l('c')}{_j('j1', 'a', 'c')}{_j('j2', 'b', 'c')}</robot>",
                    "link 'c' is the child of two joints, 'j1' and 'j2'"),
    "duplicate_link": (f"<robot name='x'>{_l('a')}{_l('a')}</robot>", "link 'a' is defined twice"),
    "duplicate_joint": (f"<robot name='x'>{_l('a')}{_l('b')}{_l('c')}{_j('j', 'a', 'b')}{_j('j', 'a', 'c')}</robot>",
                        "joint 'j' is defined twice"),
    "bad_type": (f"<robot name='x'>{_l('a')}{_l('b')}{_j('j', 'a', 'b', 'hinge')}</robot>",
                 "joint 'j' has type 'hinge', expected one of revolute"),
    "no_parent": ("<robot name='x'><link name='a'/><link name='b'/><joint name='j' type='fixed'>"
                  "<child link='b'/></joint></robot>", "joint 'j' has no <parent link=...>"),
    "unnamed_link": ("<robot name='x'><link/></robot>", "<link> without a name attribute"),
    "bad_mimic": (f"<robot name='x'>{_l('a')}{_l('b')}<joint name='j' type='revolute'><parent link='a'/>"
                  "<child link='b'/><mimic joint='k'/></joint></robot>", "joint 'j' mimics joint 'k', which does not"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_user_urdf_gives_a_clear_error(baseline, case):
    text, needle = MALFORMED[case]
    with pytest.raises(DescriptionError, match=f"^{USER}") as err:
        check_similar(baseline, text, USER)
    assert needle in str(err.value)


def test_two_roots_are_refused(baseline):
    two_roots = f"<robot name='x'>{_l('a')}{_l('b')}</robot>"
    with pytest.raises(DescriptionError, match=f"{USER}: the URDF has 2 root links \\('a', 'b'\\)"):
        RobotModel.from_urdf(two_roots, USER)
    with pytest.raises(DescriptionError, match=f"{USER} has 2 root links \\('a', 'b'\\)"):
        check_similar(baseline, two_roots, USER)


def test_malformed_baseline_is_named_as_the_baseline():
    with pytest.raises(DescriptionError, match="the baseline URDF: not well-formed XML"):
        compare_structure("<robot", f"<robot name='x'>{_l('a')}</robot>", USER)
