"""Snake kinematic chain from the URDF: straight line at zero angles with the
lengths of urdf/eels_variants.yaml, single bends and twist-then-bend against
hand-computed rotations, screw axes and pairs, screw geometry from the xacro's
<screw> elements, and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from eels_gz.description.assemble import robot_description
from eels_gz.errors import DescriptionError, RegistryError, SnakeModelError
from eels_gz.registry import eels_variants, robot, screw_handedness
from eels_gz.snake.chain import SnakeChain, axis_rotation, cross3, screw_geometries

# Poses are products of ~n_modules 4x4 transforms with entries O(1 m):
# rounding ~1e-16 per product, so 1e-12 m is a generous bound.
TOL = 1e-12


def description(variant: str, n_modules: int | None = None, contact: str = "screw"):
    return robot_description(robot(variant), n_modules=n_modules, gazebo=True, xacro_args={"contact": contact})


@pytest.fixture(scope="module")
def front_only():
    return SnakeChain.from_urdf(description("eels_1_0_front_only").urdf)


@pytest.fixture(scope="module")
def v10():
    return eels_variants()["eels_1_0_front_only"]


def test_zero_angles_straight_line_with_variant_lengths(front_only, v10):
    n = v10["n_modules"]
    module = v10["yoke"]["length"] + v10["shell"]["length"]
    expected_x = [0.0] + [v10["tail"]["length"] + k * module for k in range(n)] \
        + [v10["tail"]["length"] + n * module]
    pts = front_only.module_points()
    assert front_only.n_modules == n
    np.testing.assert_allclose(pts[:, 0], expected_x, atol=TOL)
    np.testing.assert_allclose(pts[:, 1:], 0.0, atol=TOL)
    np.testing.assert_allclose(front_only.segment_lengths(), np.diff(expected_x), atol=TOL)
    for T in front_only.module_frames():
        np.testing.assert_allclose(T[:3, :3], np.eye(3), atol=TOL)


@pytest.mark.parametrize("k, a", [(1, 0.3), (4, -0.55), (10, 0.7)])
def test_single_bend_rotates_the_rest_about_z(front_only, k, a):
    straight = front_only.module_points()
    bent = front_only.module_points({f"module_{k}_bend": a})
    Rz = np.array([[math.cos(a), -math.sin(a), 0], [math.sin(a), math.cos(a), 0], [0, 0, 1]])
    pivot = straight[k]  # point k is bend joint k
    expected = straight.copy()
    expected[k + 1:] = pivot + (straight[k + 1:] - pivot) @ Rz.T
    np.testing.assert_allclose(bent, expected, atol=TOL)
    frames = front_only.module_frames({f"module_{k}_bend": a})
    np.testing.assert_allclose(frames[k - 1][:3, :3], Rz, atol=TOL)


def test_twist_then_bend_is_a_pitch(front_only):
    # twist module 3 by +pi/2: module 4's bend axis z becomes Rx(pi/2) z = -y, so
    # a bend a lifts the rest: direction (cos a, 0, sin a).
    a = 0.4
    pts = front_only.module_points({"module_3_twist": math.pi / 2, "module_4_bend": a})
    seg = pts[5] - pts[4]
    np.testing.assert_allclose(seg / np.linalg.norm(seg), [math.cos(a), 0.0, math.sin(a)], atol=TOL)
    np.testing.assert_allclose(pts[:5, 1:], 0.0, atol=TOL)


def test_base_pose_moves_everything_rigidly(front_only):
    rng = np.random.default_rng(3)
    T = np.eye(4)
    T[:3, :3] = axis_rotation(np.array([0.3, -0.5, 0.8]) / np.linalg.norm([0.3, -0.5, 0.8]), 1.1)
    T[:3, 3] = rng.normal(size=3)
    q = {f"module_{i}_bend": 0.1 * i for i in range(1, 11)} | {"module_2_twist": 0.5}
    local = front_only.module_points(q)
    world = front_only.module_points(q, T)
    np.testing.assert_allclose(world, local @ T[:3, :3].T + T[:3, 3], atol=TOL)


def test_axis_rotation_is_rodrigues():
    rng = np.random.default_rng(5)
    for _ in range(5):
        u = rng.normal(size=3)
        u /= np.linalg.norm(u)
        a = rng.uniform(-3, 3)
        K = np.array([[0, -u[2], u[1]], [u[2], 0, -u[0]], [-u[1], u[0], 0]])
        expected = np.eye(3) + math.sin(a) * K + (1 - math.cos(a)) * K @ K
        np.testing.assert_allclose(axis_rotation(u, a), expected, atol=1e-14)


def test_screw_axes_and_counter_rotating_pairs():
    desc = description("eels_1_0_alternating", n_modules=3)
    chain = SnakeChain.from_urdf(desc.urdf)
    axes = chain.screw_axes({"module_2_bend": 0.3})
    assert set(axes) == {f"module_{i}_screw{s}_link" for i in (1, 2, 3) for s in ("", "_rear")}
    rear = axes["module_2_screw_rear_link"]
    assert (rear.actuated, rear.multiplier) == ("module_2_screw", -1.0)
    assert (axes["module_2_screw_link"].actuated, axes["module_2_screw_link"].multiplier) == ("module_2_screw", 1.0)
    np.testing.assert_allclose(axes["module_1_screw_link"].axis, [1, 0, 0], atol=TOL)
    np.testing.assert_allclose(axes["module_2_screw_link"].axis, [math.cos(0.3), math.sin(0.3), 0], atol=TOL)
    # the mimic follows its master: q_rear = -q_front
    assert chain.angles({"module_2_screw": 1.5})["module_2_screw_rear"] == -1.5


def test_screw_geometry_from_the_xacro_matches_the_variant_record():
    desc = description("eels_1_0_alternating", n_modules=2)
    geoms = screw_geometries(desc.gazebo)
    rec = eels_variants()["eels_1_0_alternating"]["screw"]
    assert set(geoms) == {"module_1_screw_link", "module_1_screw_rear_link",
                          "module_2_screw_link", "module_2_screw_rear_link"}
    for link, g in geoms.items():
        assert (g.radius, g.length, g.lead_angle) == (rec["radius"], rec["length"], rec["lead_angle"])
        assert g.handedness == (-rec["handedness"] if "rear" in link else rec["handedness"])


SCREWED = [name for name, v in eels_variants().items() if v.get("screws")]


@pytest.mark.parametrize("variant", SCREWED)
def test_screw_hands_follow_the_variant_pattern(variant):
    """Module i's screw has screw.handedness * screw_hands[(i - 1) % len], its rear screw the other hand
    (urdf/eels.gazebo.xacro), and registry.screw_handedness (the geometry under stock contact) agrees."""
    rec = eels_variants()[variant]
    hands = rec["screw_hands"]
    assert set(hands) <= {1, -1} and hands
    n = 2 * len(hands) + 1  # every entry of the pattern used twice, and the cycle's restart
    geoms = screw_geometries(description(variant, n_modules=n).gazebo)
    for i in range(1, n + 1):
        front = rec["screw"]["handedness"] * hands[(i - 1) % len(hands)]
        assert geoms[f"module_{i}_screw_link"].handedness == front == screw_handedness(rec, f"module_{i}_screw_link")
        if rec["screws"] == 2:
            rear = f"module_{i}_screw_rear_link"
            assert geoms[rear].handedness == -front == screw_handedness(rec, rear)


def test_eels_1_5_screws_alternate_hands():
    geoms = screw_geometries(description("eels_1_5", n_modules=4).gazebo)
    assert [geoms[f"module_{i}_screw_link"].handedness for i in range(1, 5)] == [1, -1, 1, -1]


@pytest.mark.parametrize("link", ["module_x_screw_link", "module_1_shell", "module_2_screw"])
def test_screw_handedness_refuses_a_link_that_is_not_a_screw(link):
    with pytest.raises(RegistryError, match=f"'{link}' is not a screw link"):
        screw_handedness(eels_variants()["eels_1_5"], link)


def test_screw_handedness_refuses_a_variant_without_screws():
    with pytest.raises(RegistryError, match="is not a screw link of an EELS variant with screws"):
        screw_handedness(eels_variants()["mini_eels_1_0"], "module_1_screw_link")


def test_fts_bodies_lengthen_their_segments():
    rec = eels_variants()["eels_1_5"]
    chain = SnakeChain.from_urdf(description("eels_1_5").urdf)
    module = rec["yoke"]["length"] + rec["shell"]["length"]
    seg = chain.segment_lengths()
    fts_after = list(range(rec["fts"]["every"], rec["n_modules"], rec["fts"]["every"]))
    for i in range(1, rec["n_modules"]):  # segment i runs from bend i to bend i + 1
        extra = rec["fts"]["length"] if i in fts_after else 0.0
        assert seg[i] == pytest.approx(module + extra, abs=TOL)


def test_unknown_joint_is_refused(front_only):
    with pytest.raises(SnakeModelError, match="unknown joint.*module_99_bend"):
        front_only.module_points({"module_99_bend": 0.1})
    with pytest.raises(SnakeModelError, match="not finite"):
        front_only.module_points({"module_1_bend": float("nan")})


BASE = """<robot name="r"><link name="base_link"/><link name="a"/>
<joint name="{name}" type="{type}"><parent link="base_link"/><child link="a"/>{extra}</joint></robot>"""


@pytest.mark.parametrize("name, jtype, extra, match", [
    ("module_1_bend", "floating", "", "type 'floating'"),
    ("module_1_bend", "revolute", '<axis xyz="0 0 0"/>', "zero axis"),
    ("module_1_bend", "revolute", '<axis xyz="0 1"/>', "axis xyz is '0 1'"),
    ("module_2_bend", "revolute", '<axis xyz="0 0 1"/>', r"module_1_bend .. module_n_bend"),
])
def test_malformed_urdf_is_refused(name, jtype, extra, match):
    with pytest.raises(DescriptionError, match=match):
        SnakeChain.from_urdf(BASE.format(name=name, type=jtype, extra=extra), "bad.urdf")


def _reference_poses(chain: SnakeChain, q: dict, base: np.ndarray) -> dict:
    """Link poses composed one 4x4 product at a time (parent @ origin @ motion), as URDF defines them."""
    values, poses = chain.angles(q), {chain.root: base}
    pending = list(chain.joints.values())
    while pending:
        for j in [j for j in pending if j.parent in poses]:
            M = np.eye(4)
            if j.type in ("revolute", "continuous"):
                M[:3, :3] = axis_rotation(j.axis, values[j.name])
            elif j.type == "prismatic":
                M[:3, 3] = j.axis * values[j.name]
            poses[j.child] = poses[j.parent] @ j.origin @ M
            pending.remove(j)
    return poses


def test_compiled_kinematics_compose_the_joints_as_urdf_does(front_only):
    """chain_poses (one numba call) against the joint-by-joint product, EELS 1.0 with every bend, twist and
    screw at random angles, and a prismatic joint of a small tree (TOL: rounding of ~n products)."""
    rng = np.random.default_rng(11)
    base = np.eye(4)
    base[:3, :3] = axis_rotation(np.array([0.0, 0.6, 0.8]), 0.7)
    base[:3, 3] = [1.0, -2.0, 0.3]
    q = {name: rng.uniform(-0.6, 0.6) for name, j in front_only.joints.items() if j.type in ("revolute", "continuous")
         and j.mimic is None}
    got, ref = front_only.link_poses(q, base), _reference_poses(front_only, q, base)
    assert set(got) == set(ref)
    for link in ref:
        np.testing.assert_allclose(got[link], ref[link], atol=TOL, err_msg=link)
    frames = front_only.joint_frames(q, base)
    j = front_only.joints["module_3_bend"]
    np.testing.assert_allclose(frames[j.name][0], (ref[j.parent] @ j.origin)[:3, 3], atol=TOL)
    tree = SnakeChain.from_urdf("""<robot name="r"><link name="base_link"/><link name="a"/><link name="b"/>
        <joint name="module_1_bend" type="revolute"><parent link="base_link"/><child link="a"/>
          <origin xyz="0.1 0 0" rpy="0 0 0.3"/><axis xyz="0 0 1"/></joint>
        <joint name="slide" type="prismatic"><parent link="a"/><child link="b"/>
          <origin xyz="0.2 0.1 0" rpy="0.4 0 0"/><axis xyz="0 0.6 0.8"/></joint></robot>""", "tree.urdf")
    q = {"module_1_bend": 0.5, "slide": 0.25}
    for link, T in _reference_poses(tree, q, base).items():
        np.testing.assert_allclose(tree.link_poses(q, base)[link], T, atol=TOL, err_msg=link)


def test_cross3_is_numpys_cross_to_the_bit():
    rng = np.random.default_rng(2)
    for a, b in rng.normal(size=(200, 2, 3)):
        assert np.array_equal(cross3(a, b), np.cross(a, b))
