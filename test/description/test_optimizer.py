"""Multibody optimizer (EELS-DARTS §2.1.4): merged bodies conserve mass, centre of
mass and inertia; every original link stays a queryable frame; locked
force-torque joints survive.

The reference is computed here, independently of the optimizer's code: a
small forward-kinematics pass over the *unoptimized* URDF (scipy rotations,
URDF semantics: a link without <inertial> has no mass). DART is not used for
the reference because its URDF loader gives a link without <inertial> a
phantom 1 kg body; it is used as a second, independent reader of the
*optimized* URDF.

Tolerance, everywhere: 1e-9 relative (the issue's bound). The optimizer
writes every number as the shortest decimal that reads back to the same
double, so the only error is floating-point rounding in a few dozen
operations (~1e-15 relative); 1e-9 leaves six orders of margin and still
catches any real mistake (a missed rotation or parallel-axis term is O(1)).
"""

from __future__ import annotations

import logging

import numpy as np
import pytest
from lxml import etree
from scipy.spatial.transform import Rotation

from eels_gz import registry
from eels_gz.description.optimizer import optimize_description, optimize_urdf
from eels_gz.description.xacro_loader import load_description, split_gazebo
from eels_gz.errors import DescriptionError

REL = 1e-9  # see module docstring


# --- independent reference: URDF forward kinematics and mass properties ---------------------
def _origin(el) -> np.ndarray:
    o = el.find("origin")
    T = np.eye(4)
    if o is not None:
        T[:3, :3] = Rotation.from_euler("xyz", [float(v) for v in o.get("rpy", "0 0 0").split()]).as_matrix()
        T[:3, 3] = [float(v) for v in o.get("xyz", "0 0 0").split()]
    return T


def _motion(joint, q: float) -> np.ndarray:
    T = np.eye(4)
    kind = joint.get("type")
    axis_el = joint.find("axis")
    axis = np.array([float(v) for v in (axis_el.get("xyz") if axis_el is not None else "1 0 0").split()])
    if kind in ("revolute", "continuous"):
        T[:3, :3] = Rotation.from_rotvec(axis / np.linalg.norm(axis) * q).as_matrix()
    elif kind == "prismatic":
        T[:3, 3] = axis / np.linalg.norm(axis) * q
    return T


def world_poses(urdf: str, q: dict[str, float] | None = None) -> dict[str, np.ndarray]:
    """World pose of every link, root at the identity, joint positions ``q`` (0 if absent)."""
    robot = etree.fromstring(urdf.encode())
    q = q or {}
    joints = robot.findall("joint")
    children = {j.find("child").get("link") for j in joints}
    (root,) = [link.get("name") for link in robot.findall("link") if link.get("name") not in children]
    poses = {root: np.eye(4)}
    pending = list(joints)
    while pending:
        j = pending.pop(0)
        parent, child = j.find("parent").get("link"), j.find("child").get("link")
        if parent not in poses:
            pending.append(j)
            continue
        poses[child] = poses[parent] @ _origin(j) @ _motion(j, q.get(j.get("name"), 0.0))
    return poses


def link_mass(link) -> tuple[float, np.ndarray, np.ndarray]:
    """Mass, com and inertia about the com, in the link frame (no <inertial>: massless)."""
    el = link.find("inertial")
    if el is None:
        return 0.0, np.zeros(3), np.zeros((3, 3))
    T = _origin(el)
    i = {k: float(v) for k, v in el.find("inertia").attrib.items()}
    I = np.array([[i["ixx"], i["ixy"], i["ixz"]], [i["ixy"], i["iyy"], i["iyz"]], [i["ixz"], i["iyz"], i["izz"]]])
    return float(el.find("mass").get("value")), T[:3, 3], T[:3, :3] @ I @ T[:3, :3].T


def mass_properties(urdf: str, poses: dict[str, np.ndarray], links=None):
    """Total mass, centre of mass and inertia about the origin of the frame ``poses`` are given in."""
    robot = etree.fromstring(urdf.encode())
    m_tot, first, second = 0.0, np.zeros(3), np.zeros((3, 3))
    for link in robot.findall("link"):
        if links is not None and link.get("name") not in links:
            continue
        m, c, I = link_mass(link)
        T = poses[link.get("name")]
        c_w, I_w = T[:3, :3] @ c + T[:3, 3], T[:3, :3] @ I @ T[:3, :3].T
        m_tot += m
        first += m * c_w
        second += I_w + m * (c_w @ c_w * np.eye(3) - np.outer(c_w, c_w))
    return m_tot, (first / m_tot if m_tot else first), second


def assert_mass_properties_equal(got, want, length_scale: float):
    (m, c, I), (m0, c0, I0) = got, want
    assert m == pytest.approx(m0, rel=REL)
    assert np.linalg.norm(c - c0) <= REL * max(np.linalg.norm(c0), length_scale)
    assert np.linalg.norm(I - I0) <= REL * np.linalg.norm(I0)


def optimized_world_poses(model, q=None) -> dict[str, np.ndarray]:
    """World pose of every original link through the optimized model and its frames table."""
    bodies = world_poses(model.urdf, q)
    return {name: bodies[f.body] @ f.pose for name, f in model.frames.items()}


# --- a hand-made robot: rotated and nested fixed joints, massless sensor links ---------------
def _inertial(m, xyz, rpy, ixx, iyy, izz, ixy=0.0, ixz=0.0, iyz=0.0) -> str:
    return (f'<inertial><origin xyz="{xyz}" rpy="{rpy}"/><mass value="{m}"/>'
            f'<inertia ixx="{ixx}" iyy="{iyy}" izz="{izz}" ixy="{ixy}" ixz="{ixz}" iyz="{iyz}"/></inertial>')


def _box(name: str, xyz: str, rpy: str) -> str:
    return (f'<collision name="{name}"><origin xyz="{xyz}" rpy="{rpy}"/>'
            f'<geometry><box size="0.1 0.2 0.3"/></geometry></collision>')


def _joint(name, kind, parent, child, xyz, rpy, extra="") -> str:
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{xyz}" rpy="{rpy}"/>{extra}</joint>')


GAZEBO_SENSORS = (
    '<gazebo reference="imu_link"><sensor name="imu" type="imu"><pose>0.01 -0.02 0.03 0.1 0.2 0.3</pose>'
    '</sensor></gazebo>'
    '<gazebo reference="cam_optical"><sensor name="cam" type="camera"/></gazebo>'
)


def gimbal_urdf(fts_gazebo: str = "") -> str:
    """base --fixed(rotated)--> plate --fixed--> bracket --fixed--> imu_link (no inertial)
                                                 bracket --revolute--> arm --fixed--> tool --fixed--> cam_optical (mass 0)
       base --fixed--> fts_link --fixed--> mount"""
    links = [
        f'<link name="base">{_inertial(3.0, "0.1 -0.05 0.02", "0.2 -0.1 0.4", 0.05, 0.07, 0.09, 0.001, -0.002, 0.003)}'
        f'{_box("base_box", "0 0 0.1", "0 0 0.3")}</link>',
        f'<link name="plate">{_inertial(1.2, "0.03 0.01 -0.02", "1.0 0.5 -0.7", 0.01, 0.02, 0.025)}'
        f'{_box("plate_box", "0.05 0 0", "0.4 0.3 0.2")}<visual><origin xyz="0.01 0.02 0.03" rpy="0 1.2 0"/>'
        '<geometry><sphere radius="0.05"/></geometry></visual></link>',
        f'<link name="bracket">{_inertial(0.4, "0 0.02 0", "0 0 0", 0.001, 0.002, 0.0015, 0.0001)}</link>',
        '<link name="imu_link"/>',
        f'<link name="arm">{_inertial(2.0, "0.25 0 0", "0 0.3 0", 0.01, 0.2, 0.2)}</link>',
        f'<link name="tool">{_inertial(0.5, "0 0 0.05", "0.5 0 0", 0.002, 0.002, 0.001)}'
        f'{_box("tool_box", "0 0.01 0.02", "0.1 0.2 0.3")}'
        # composed with j_tool's pitch of -pi/2 this lands on the rpy gimbal lock
        f'{_box("tool_flat", "0.01 0 0", "0.3 0 0")}</link>',
        f'<link name="cam_optical">{_inertial(0.0, "0 0 0", "0 0 0", 0, 0, 0)}</link>',
        f'<link name="fts_link">{_inertial(0.2, "0 0 0.01", "0 0 0", 1e-4, 1e-4, 1e-4)}</link>',
        f'<link name="mount">{_inertial(0.7, "0.02 0 0", "0 0 0.9", 0.003, 0.004, 0.005)}'
        f'{_box("mount_box", "0 0 -0.05", "0 0 0")}</link>',
    ]
    joints = [
        _joint("j_plate", "fixed", "base", "plate", "0.2 0.1 0.3", "0.3 -0.5 1.1"),
        _joint("j_bracket", "fixed", "plate", "bracket", "0 0 0.12", "1.5707963267948966 0.2 0"),
        _joint("j_imu", "fixed", "bracket", "imu_link", "0.01 0.02 0.03", "0 0 3.0"),
        _joint("j_arm", "revolute", "bracket", "arm", "0.05 0 0", "0 0.4 -0.2",
               '<axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="10" velocity="1"/>'),
        _joint("j_tool", "fixed", "arm", "tool", "0.5 0 0", "0 -1.5707963267948966 0"),
        _joint("j_cam", "fixed", "tool", "cam_optical", "0 0 0.1", "-1.5707963267948966 0 -1.5707963267948966"),
        _joint("j_fts", "fixed", "base", "fts_link", "-0.2 0 0", "0 0 3.141592653589793"),
        _joint("j_mount", "fixed", "fts_link", "mount", "0 0 0.03", "0.1 0.2 0.3"),
    ]
    return f'<robot name="gimbal">{"".join(links)}{"".join(joints)}{GAZEBO_SENSORS}{fts_gazebo}</robot>'


def collision_world_poses(urdf: str, poses) -> dict[str, np.ndarray]:
    robot = etree.fromstring(urdf.encode())
    return {c.get("name"): poses[link.get("name")] @ _origin(c)
            for link in robot.findall("link") for c in link.findall("collision")}


def test_gimbal_merges_to_two_bodies_and_counts():
    model = optimize_urdf(gimbal_urdf())
    assert model.merged == {"base": ("base", "plate", "bracket", "imu_link", "fts_link", "mount"),
                            "arm": ("arm", "tool", "cam_optical")}
    assert set(model.removed_joints) == {"j_plate", "j_bracket", "j_imu", "j_tool", "j_cam", "j_fts", "j_mount"}
    # 9 links, 2 of them massless (imu_link without <inertial>, cam_optical with mass 0), 7 fixed joints
    assert (model.before.bodies, model.before.massless_links, model.before.fixed_joints) == (9, 2, 7)
    assert (model.after.bodies, model.after.massless_links, model.after.fixed_joints) == (2, 0, 0)
    robot = etree.fromstring(model.urdf.encode())
    assert [j.get("name") for j in robot.findall("joint")] == ["j_arm"]
    assert robot.find("joint/parent").get("link") == "base"


@pytest.mark.parametrize("q_arm", [0.0, 0.7])
def test_gimbal_conserves_mass_properties_about_world_origin(q_arm):
    urdf = gimbal_urdf()
    model = optimize_urdf(urdf)
    q = {"j_arm": q_arm}
    want = mass_properties(urdf, world_poses(urdf, q))
    got = mass_properties(model.urdf, world_poses(model.urdf, q))
    assert_mass_properties_equal(got, want, length_scale=1.0)


def test_gimbal_conserves_mass_properties_about_each_merged_origin():
    urdf = gimbal_urdf()
    model = optimize_urdf(urdf)
    for body, members in model.merged.items():
        poses = {name: model.frames[name].pose for name in members}
        want = mass_properties(urdf, poses, links=members)
        got = mass_properties(model.urdf, {body: np.eye(4)}, links=[body])
        assert_mass_properties_equal(got, want, length_scale=1.0)


@pytest.mark.parametrize("q_arm", [0.0, -0.6])
def test_frames_and_collisions_keep_their_world_pose(q_arm):
    urdf = gimbal_urdf()
    model = optimize_urdf(urdf)
    q = {"j_arm": q_arm}
    before, after = world_poses(urdf, q), optimized_world_poses(model, q)
    assert set(after) == set(before)
    for name in before:
        np.testing.assert_allclose(after[name], before[name], atol=REL, err_msg=name)
    before_c = collision_world_poses(urdf, before)
    after_c = collision_world_poses(model.urdf, world_poses(model.urdf, q))
    assert set(after_c) == set(before_c)
    for name in before_c:
        np.testing.assert_allclose(after_c[name], before_c[name], atol=REL, err_msg=name)


def _sensor_world_pose(urdf: str, poses, sensor: str) -> np.ndarray:
    robot = etree.fromstring(urdf.encode())
    for block in robot.findall("gazebo"):
        for s in block.findall("sensor"):
            if s.get("name") == sensor:
                pose = s.find("pose")
                v = [float(x) for x in pose.text.split()] if pose is not None else [0.0] * 6
                T = np.eye(4)
                T[:3, :3] = Rotation.from_euler("xyz", v[3:]).as_matrix()
                T[:3, 3] = v[:3]
                return poses[block.get("reference")] @ T
    raise AssertionError(f"sensor {sensor} not found")


@pytest.mark.parametrize("sensor, body", [("imu", "base"), ("cam", "arm")])
def test_gazebo_sensor_blocks_follow_their_link(sensor, body):
    urdf = gimbal_urdf()
    model = optimize_urdf(urdf)
    robot = etree.fromstring(model.urdf.encode())
    refs = {s.get("name"): g.get("reference") for g in robot.findall("gazebo") for s in g.findall("sensor")}
    assert refs[sensor] == body
    np.testing.assert_allclose(_sensor_world_pose(model.urdf, world_poses(model.urdf), sensor),
                               _sensor_world_pose(urdf, world_poses(urdf), sensor), atol=REL)


FTS_MARKS = {
    "keep_joints": "",
    "preserveFixedJoint": '<gazebo reference="j_fts"><preserveFixedJoint>true</preserveFixedJoint></gazebo>',
    "force_torque sensor": '<gazebo reference="j_fts"><sensor name="fts" type="force_torque"/></gazebo>',
}


@pytest.mark.parametrize("mark", sorted(FTS_MARKS))
def test_force_torque_joint_survives_as_locked_joint(mark):
    urdf = gimbal_urdf(FTS_MARKS[mark])
    model = optimize_urdf(urdf, keep_joints=["j_fts"] if mark == "keep_joints" else ())
    robot = etree.fromstring(model.urdf.encode())
    fts = robot.find("joint[@name='j_fts']")
    assert fts is not None and fts.get("type") == "fixed"
    assert model.kept_fixed_joints == ("j_fts",)
    # the sensor body keeps what is rigidly fixed below it
    assert model.merged["fts_link"] == ("fts_link", "mount")
    assert model.after.bodies == 3 and model.after.fixed_joints == 1
    # the locked body alone: fts_link + mount about the fts_link origin
    want = mass_properties(urdf, {n: model.frames[n].pose for n in ("fts_link", "mount")}, links=("fts_link", "mount"))
    got = mass_properties(model.urdf, {"fts_link": np.eye(4)}, links=["fts_link"])
    assert_mass_properties_equal(got, want, length_scale=1.0)
    for name, T in world_poses(urdf).items():
        np.testing.assert_allclose(optimized_world_poses(model)[name], T, atol=REL, err_msg=name)


def test_keep_links_keeps_a_link_a_body():
    model = optimize_urdf(gimbal_urdf(), keep_links=["tool"])
    assert model.frames["tool"].body == "tool"
    assert model.frames["cam_optical"].body == "tool"
    assert "j_tool" in model.kept_fixed_joints


def test_optimized_urdf_reads_the_same_in_dart():
    """DART, an independent URDF reader, sees the merged inertia (off-diagonal signs included)."""
    from eels_gz.dart.dart_build import load_urdf

    urdf = gimbal_urdf()
    model = optimize_urdf(urdf)
    skel = load_urdf(model.urdf, "gimbal", "gimbal", {})
    assert skel.getNumBodyNodes() == 2
    q_arm = 0.35
    skel.getJoint("j_arm").setPosition(0, q_arm)
    m0, c0, I0 = mass_properties(urdf, world_poses(urdf, {"j_arm": q_arm}))
    I = np.zeros((3, 3))
    for b in range(skel.getNumBodyNodes()):
        body = skel.getBodyNode(b)
        T = body.getWorldTransform().matrix()
        R = T[:3, :3]
        c = T[:3, :3] @ body.getLocalCOM() + T[:3, 3]
        I += R @ body.getInertia().getMoment() @ R.T + body.getMass() * (c @ c * np.eye(3) - np.outer(c, c))
    assert skel.getMass() == pytest.approx(m0, rel=REL)
    assert np.linalg.norm(skel.getCOM() - c0) <= REL * 1.0
    assert np.linalg.norm(I - I0) <= REL * np.linalg.norm(I0)
    # a frame through DART's body pose and the frames table: the tool at its reference pose
    tool = skel.getBodyNode("arm").getWorldTransform().matrix() @ model.frames["tool"].pose
    np.testing.assert_allclose(tool, world_poses(urdf, {"j_arm": q_arm})["tool"], atol=REL)


def test_optimize_description_takes_its_reference_blocks_along():
    """The host's path: a Description with <gazebo reference> blocks split off."""
    desc = split_gazebo(gimbal_urdf(FTS_MARKS["force_torque sensor"]), "gimbal.urdf")
    assert len(desc.references) == 3
    out, model = optimize_description(desc)
    assert model.kept_fixed_joints == ("j_fts",)  # marked only in a split-off block
    assert etree.fromstring(out.urdf.encode()).findall("gazebo") == []
    refs = {s.get("name"): b.get("reference") for b in out.references for s in b.findall("sensor")}
    assert refs == {"imu": "base", "cam": "arm", "fts": "j_fts"}
    assert (out.name, out.source, out.gazebo) == (desc.name, desc.source, desc.gazebo)


# --- every robot in the registry -------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(registry.ROBOTS))
def test_registry_robot_conserves_mass_properties(name):
    entry = registry.ROBOTS[name]
    urdf = load_description(entry.path, entry.xacro_args).urdf
    model = optimize_urdf(urdf)
    before = world_poses(urdf)
    after = optimized_world_poses(model)
    extent = max(np.linalg.norm(T[:3, 3]) for T in before.values()) + 1.0
    want = mass_properties(urdf, before)
    assert_mass_properties_equal(mass_properties(model.urdf, world_poses(model.urdf)), want, extent)
    for body, members in model.merged.items():
        local = {n: model.frames[n].pose for n in members}
        assert_mass_properties_equal(mass_properties(model.urdf, {body: np.eye(4)}, links=[body]),
                                     mass_properties(urdf, local, links=members), extent)
    for link, T in before.items():
        np.testing.assert_allclose(after[link], T, atol=REL * extent, err_msg=link)
    # no fixed joint is left unless kept, and every body carries mass
    assert model.after.fixed_joints == len(model.kept_fixed_joints)
    assert model.after.bodies == model.before.bodies - len(model.removed_joints)
    assert model.massless_bodies == ()


# --- links that cannot go, mimics, gazebo joint blocks -------------------------------------
def test_massless_link_on_movable_joint_is_left_and_named(caplog):
    urdf = ('<robot name="r"><link name="a">' + _inertial(1.0, "0 0 0", "0 0 0", 1, 1, 1) + '</link>'
            '<link name="gimbal_x"/><link name="b">' + _inertial(1.0, "0 0 0", "0 0 0", 1, 1, 1) + '</link>'
            + _joint("jx", "revolute", "a", "gimbal_x", "0 0 0", "0 0 0",
                     '<axis xyz="1 0 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/>')
            + _joint("jy", "continuous", "gimbal_x", "b", "0 0 0", "0 0 0", '<axis xyz="0 1 0"/>') + "</robot>")
    with caplog.at_level(logging.WARNING, logger="eels_gz.description.optimizer"):
        model = optimize_urdf(urdf, source="gimbal.urdf")
    assert model.massless_bodies == ("gimbal_x",)
    assert model.after.bodies == 3 and model.after.massless_links == 1
    assert "gimbal_x" in caplog.text and "gimbal.urdf" in caplog.text


def test_mimic_of_a_fixed_joint_keeps_the_target(caplog):
    urdf = ('<robot name="r"><link name="a">' + _inertial(1.0, "0 0 0", "0 0 0", 1, 1, 1) + '</link>'
            '<link name="b">' + _inertial(1.0, "0 0 0", "0 0 0", 1, 1, 1) + '</link>'
            '<link name="c">' + _inertial(1.0, "0 0 0", "0 0 0", 1, 1, 1) + '</link>'
            + _joint("jf", "fixed", "a", "b", "1 0 0", "0 0 0")
            + _joint("jm", "continuous", "a", "c", "0 1 0", "0 0 0", '<axis xyz="0 0 1"/><mimic joint="jf"/>')
            + "</robot>")
    with caplog.at_level(logging.WARNING, logger="eels_gz.description.optimizer"):
        model = optimize_urdf(urdf)
    assert model.kept_fixed_joints == ("jf",) and model.removed_joints == ()
    assert "jm" in caplog.text and "jf" in caplog.text


def test_gazebo_block_of_a_contracted_joint_is_dropped_with_a_warning(caplog):
    urdf = gimbal_urdf('<gazebo reference="j_mount"><provideFeedback>true</provideFeedback></gazebo>')
    with caplog.at_level(logging.WARNING, logger="eels_gz.description.optimizer"):
        model = optimize_urdf(urdf)
    assert not etree.fromstring(model.urdf.encode()).findall("gazebo[@reference='j_mount']")
    assert "j_mount" in caplog.text


def test_world_root_is_not_merged_into():
    urdf = ('<robot name="r"><link name="world"/><link name="a">' + _inertial(1.0, "0 0 0", "0 0 0", 1, 1, 1)
            + '</link>' + _joint("anchor", "fixed", "world", "a", "0 0 1", "0 0 0") + "</robot>")
    model = optimize_urdf(urdf)
    assert model.kept_fixed_joints == ("anchor",)
    assert model.before.bodies == 1  # the world link is not a body


# --- error paths ------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs, needle", [
    ({"keep_joints": ["j_nope"]}, "keep_joints names 'j_nope'"),
    ({"keep_links": ["nope"]}, "keep_links names 'nope'"),
])
def test_unknown_keep_names_are_refused(kwargs, needle):
    with pytest.raises(DescriptionError, match=needle):
        optimize_urdf(gimbal_urdf(), **kwargs)


@pytest.mark.parametrize("bad, needle", [
    ('<mass value="-1"/>', "link 'a' <inertial> needs <mass value=...> >= 0"),
    ('<mass value="heavy"/>', "link 'a' mass is 'heavy'"),
    ('<mass value="1"/><origin xyz="0 0" rpy="0 0 0"/>', "link 'a' inertial origin xyz is '0 0'"),
])
def test_bad_inertial_is_refused_naming_the_link(bad, needle):
    urdf = f'<robot name="r"><link name="a"><inertial>{bad}</inertial></link></robot>'
    with pytest.raises(DescriptionError, match="my.urdf: " + needle.replace("(", r"\(").replace(".", r"\.")):
        optimize_urdf(urdf, source="my.urdf")


def test_malformed_urdf_is_refused_naming_the_source():
    with pytest.raises(DescriptionError, match="my.urdf: not well-formed XML"):
        optimize_urdf("<robot", source="my.urdf")
    with pytest.raises(DescriptionError, match="my.urdf: the URDF has 2 root links"):
        optimize_urdf('<robot name="r"><link name="a"/><link name="b"/></robot>', source="my.urdf")
