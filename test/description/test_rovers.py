"""Archimede and Rocky 7: naming contract, DOF, mass, steering limits and the
differential, in the embedded host on ``ice_plane``.

Expected values come from the xacro's own properties (read from the file,
never copied here) or from the papers (REFERENCE.md §4 Archimede, §5 ROAMS).
The libsdformat check (xacro -> URDF -> ``ign sdf -k``) runs for every
registry robot in test_robots.py.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import yaml
from lxml import etree

from eels_gz import registry
from eels_gz.description.xacro_loader import load_description, process_xacro, split_gazebo
from eels_gz.gzapi import gzsim
from eels_gz.dart.simulation import AUTO_CLEARANCE, RobotSpec, Simulation
from eels_gz.paths import asset

XACRO_NS = "{http://www.ros.org/wiki/xacro}"
ICE = registry.world_path("ice_plane")
SETTLE_STEPS = 1500  # 1.5 s at ice_plane's 1 ms step: transients of the 1 mm auto-pose drop decay below 1e-9


@dataclass(frozen=True)
class Rover:
    """What the papers say about a rover, and how its description names things."""

    name: str
    corners: tuple[str, ...]  # wheel corner ids
    steered: tuple[str, ...]  # corners with a steering joint
    leader: str  # differential: the follower mimics the leader with multiplier -1
    follower: str
    independent_dofs: int  # from the paper
    mass_counts: dict[str, int]  # xacro mass property -> how many links carry it


ROVERS = {
    r.name: r
    for r in (
        # Archimede §2: a body, two legs on a differential (1 DOF), four steered
        # and driven wheels: 6 free + 1 + 4 + 4.
        Rover("archimede", ("fl", "fr", "rl", "rr"), ("fl", "fr", "rl", "rr"),
              "left_leg_joint", "right_leg_joint", 6 + 1 + 4 + 4,
              {"body_mass": 1, "leg_mass": 2, "hub_mass": 4, "wheel_mass": 4}),
        # ROAMS §2: 6 free, 3 internal (gamma0 differential, gamma1 and gamma2
        # bogies), 2 steering, 6 drive.
        Rover("rocky7", ("fl", "fr", "ml", "mr", "rl", "rr"), ("fl", "fr"),
              "left_rocker_joint", "right_rocker_joint", 6 + 3 + 2 + 6,
              {"body_mass": 1, "rocker_mass": 2, "bogie_mass": 2, "hub_mass": 2, "wheel_mass": 6}),
        # the MSL-like layout on the same chassis: rear wheels steered too
        Rover("msl_like", ("fl", "fr", "ml", "mr", "rl", "rr"), ("fl", "fr", "rl", "rr"),
              "left_rocker_joint", "right_rocker_joint", 6 + 3 + 4 + 6,
              {"body_mass": 1, "rocker_mass": 2, "bogie_mass": 2, "hub_mass": 4, "wheel_mass": 6}),
    )
}


def xacro_properties(path) -> dict[str, float]:
    """Numeric <xacro:property> values of a xacro file (expressions are skipped, but a property that only
    names another, ``${other}``, takes its value, also from a file it includes)."""
    root = etree.parse(str(path)).getroot()
    text = {}
    for inc in root.iter(XACRO_NS + "include"):
        for node in etree.parse(str(Path(path).parent / inc.get("filename"))).getroot().iter(XACRO_NS + "property"):
            text[node.get("name")] = node.get("value")
    props = {}
    for node in root.iter(XACRO_NS + "property"):
        name, value = node.get("name"), node.get("value")
        text[name] = text.get(value[2:-1], value) if value and re.fullmatch(r"\$\{\w+\}", value) else value
        try:
            props[name] = float(text[name])
        except (TypeError, ValueError):
            pass
    if "wheel_sets" in text:  # archimede: half the diameter of the default wheel set (argument wheels)
        default = root.find(f"{XACRO_NS}arg[@name='wheels']").get("default")
        props["wheel_radius"] = 0.5 * float(dict(re.findall(r"(\w+)=([0-9.]+)", text["wheel_sets"]))[default])
    return props


def urdf_tree(name: str):
    entry = registry.robot(name)
    return etree.fromstring(process_xacro(entry.path, entry.xacro_args).encode())


def joint(tree, name: str):
    found = tree.find(f"joint[@name='{name}']")
    assert found is not None, f"joint '{name}' is missing"
    return found


def simulation(name: str, urdf: str | None = None) -> Simulation:
    entry = registry.robot(name)
    desc = load_description(entry.path, entry.xacro_args)
    if urdf is not None:
        desc = split_gazebo(urdf, desc.source)
    # the description's kinematics: its differential as <mimic> says (physics.mimic: exact), no systems
    return Simulation(ICE, RobotSpec(name, desc), mimic="exact")


def world_pitch(body) -> float:
    """Rotation of a body about the world y axis (rad), from its world rotation."""
    R = body.getWorldTransform().rotation()
    return math.atan2(-R[2, 0], math.hypot(R[0, 0], R[1, 0]))


def run_pushed(sim: Simulation, rover: Rover, torque: float, steps: int) -> None:
    """Step with ``torque`` (N m) on the differential's leader joint while the
    steering and drive motors hold zero speed (powered, as on the rover)."""
    ecm = sim.ecm
    model = gzsim.Model(sim.robot_entity)
    held = [gzsim.Joint(model.joint_by_name(ecm, f"{c}_wheel_joint")) for c in rover.corners]
    held += [gzsim.Joint(model.joint_by_name(ecm, f"{c}_steer_joint")) for c in rover.steered]
    leader = gzsim.Joint(model.joint_by_name(ecm, rover.leader))
    for _ in range(steps):
        for j in held:
            j.set_velocity(ecm, [0.0])
        leader.set_force(ecm, [torque])
        sim.step()


# --- structure ---------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(ROVERS))
def test_registered_as_floating_base_without_modules(name):
    entry = registry.robot(name)
    assert entry.floating_base
    assert "n_modules" not in entry.xacro_args
    assert getattr(entry, "n_modules", None) is None


@pytest.mark.parametrize("name", sorted(ROVERS))
def test_naming_contract(name):
    """Steering joints about z, drive joints about y, wheel collision a
    sphere of the wheel radius (visual: a cylinder of it), fixed wheels
    without a steering joint."""
    rover = ROVERS[name]
    p = xacro_properties(registry.robot(name).path)
    tree = urdf_tree(name)
    children = {j.find("child").get("link") for j in tree.iter("joint")}
    roots = [link.get("name") for link in tree.iter("link") if link.get("name") not in children]
    assert roots == ["base_link"]
    steer_joints = sorted(j.get("name") for j in tree.iter("joint") if j.get("name").endswith("_steer_joint"))
    assert steer_joints == sorted(f"{c}_steer_joint" for c in rover.steered)
    for c in rover.corners:
        wheel = joint(tree, f"{c}_wheel_joint")
        assert wheel.get("type") == "continuous"
        assert wheel.find("axis").get("xyz") == "0 1 0"
        assert wheel.find("child").get("link") == f"{c}_wheel_link"
        sphere = tree.find(f"link[@name='{c}_wheel_link']/collision/geometry/sphere")
        assert float(sphere.get("radius")) == p["wheel_radius"]
        cyl = tree.find(f"link[@name='{c}_wheel_link']/visual/geometry/cylinder")
        assert float(cyl.get("radius")) == p["wheel_radius"]
        if c in rover.steered:
            steer = joint(tree, f"{c}_steer_joint")
            assert steer.get("type") == "revolute"
            assert steer.find("axis").get("xyz") == "0 0 1"
            assert steer.find("child").get("link") == f"{c}_steer_link"
            assert wheel.find("parent").get("link") == f"{c}_steer_link"
    mimic = joint(tree, rover.follower).find("mimic")
    assert mimic.get("joint") == rover.leader and float(mimic.get("multiplier")) == -1.0


@pytest.mark.parametrize("name", sorted(ROVERS))
def test_wheels_sit_on_their_steering_axes_and_roll_forward(name):
    """At the zero pose each wheel centre is straight below its steering axis
    (the plugins take the axis x, y as the wheel's contact point), the axle
    is the world y axis, and the wheel rests at its radius above the ground
    plane of the auto pose (1 mm clearance). A positive rate about +y rolls
    the centre along +x: v = omega x (0, 0, R) gives v_x = omega R."""
    rover = ROVERS[name]
    p = xacro_properties(registry.robot(name).path)
    skel = simulation(name).robot_skeleton
    for c in rover.corners:
        wheel = skel.getBodyNode(f"{c}_wheel_link").getWorldTransform().matrix()
        np.testing.assert_allclose(wheel[:3, 1], [0.0, 1.0, 0.0], atol=1e-12)
        if c in rover.steered:
            axis = skel.getJoint(f"{c}_steer_joint")
            frame = axis.getChildBodyNode().getWorldTransform().matrix()
            np.testing.assert_allclose(wheel[:2, 3], frame[:2, 3], atol=1e-12)
            np.testing.assert_allclose(frame[:3, 2], [0.0, 0.0, 1.0], atol=1e-12)
    heights = [skel.getBodyNode(f"{c}_wheel_link").getWorldTransform().translation()[2] for c in rover.corners]
    np.testing.assert_allclose(heights, p["wheel_radius"] + AUTO_CLEARANCE, atol=1e-12)


@pytest.mark.parametrize("name", sorted(ROVERS))
def test_host_dofs_and_mass(name):
    """DART counts the mimic joint's DOF too; the independent count is the
    paper's. The mass is the sum of the xacro's mass properties."""
    rover = ROVERS[name]
    p = xacro_properties(registry.robot(name).path)
    skel = simulation(name).robot_skeleton
    n_mimic = len(urdf_tree(name).findall("joint/mimic"))
    assert n_mimic == 1
    assert skel.getNumDofs() - n_mimic == rover.independent_dofs
    mass_props = {k for k in p if k.endswith("_mass")}
    assert mass_props == set(rover.mass_counts), "every mass property of the xacro is counted once"
    expected = sum(p[k] * n for k, n in rover.mass_counts.items())
    assert skel.getMass() == pytest.approx(expected, rel=1e-12)


# --- Archimede: Table 1, Table 2, motors -------------------------------------
def test_archimede_geometry_from_table1():
    """Steering axes at (+-wheelbase/2, +-track/2) about the body centre."""
    p = xacro_properties(registry.robot("archimede").path)
    skel = simulation("archimede").robot_skeleton
    base = skel.getBodyNode("base_link").getWorldTransform().translation()
    for c, sx, sy in (("fl", 1, 1), ("fr", 1, -1), ("rl", -1, 1), ("rr", -1, -1)):
        axis = skel.getJoint(f"{c}_steer_joint").getChildBodyNode().getWorldTransform().translation()
        np.testing.assert_allclose(axis[:2] - base[:2], [sx * p["wheelbase"] / 2, sy * p["track"] / 2], atol=1e-12)


def test_archimede_steering_limits_are_table2():
    """Table 2 with its minus signs restored (REFERENCE §4): wheels 1 and 3
    [-33.7, +93.0] deg, wheels 2 and 4 [-93.0, +33.7] deg; here fr and rl,
    fl and rr. Table 2 prints tenths of a degree, so a limit agrees if it is
    within half a tenth, 0.05 deg (the authors' radians, printed to 1e-4 rad,
    carry 0.003 deg of rounding; 0.5875 rad = 33.66 deg agrees).

    The assignment is checked by what it must allow: in-place rotation needs
    every wheel across its radius vector (angle atan2(y, x) + 90 deg, or that
    minus 180 deg with the rate reversed) and lateral driving needs +-90 deg.
    """
    tree = urdf_tree("archimede")
    table2 = {"fr": (-33.7, 93.0), "rl": (-33.7, 93.0), "fl": (-93.0, 33.7), "rr": (-93.0, 33.7)}
    skel = simulation("archimede").robot_skeleton
    base = skel.getBodyNode("base_link").getWorldTransform().translation()
    for c, (lo_deg, hi_deg) in table2.items():
        limit = joint(tree, f"{c}_steer_joint").find("limit")
        lo, hi = float(limit.get("lower")), float(limit.get("upper"))
        assert math.degrees(lo) == pytest.approx(lo_deg, abs=0.05)
        assert math.degrees(hi) == pytest.approx(hi_deg, abs=0.05)
        x, y = skel.getJoint(f"{c}_steer_joint").getChildBodyNode().getWorldTransform().translation()[:2] - base[:2]
        spin = math.atan2(y, x) + math.pi / 2
        assert any(lo <= a <= hi for a in (spin, spin - math.pi)), f"{c} cannot take the in-place angle"
        assert any(lo <= a <= hi for a in (math.pi / 2, -math.pi / 2)), f"{c} cannot steer to 90 deg"


def rover_motors(name: str) -> dict:
    """The motor block of config/rover_control.yaml, the one source of the motor limits."""
    with open(asset("config", "rover_control.yaml")) as f:
        return yaml.safe_load(f)["motors"][name]


def test_archimede_motor_limits():
    """DYNAMIXEL XM430-W350-R on every steering and drive joint: effort the
    stall torque, velocity the no-load speed, rpm * 2 pi / 60 rad/s, both
    from config/rover_control.yaml (REFERENCE §4: 57 rpm, 4.8 N m)."""
    m = rover_motors("archimede")
    assert (m["speed_rpm"], m["stall_torque"]) == (57.0, 4.8)
    tree = urdf_tree("archimede")
    for c in ROVERS["archimede"].corners:
        for kind in ("steer", "wheel"):
            limit = joint(tree, f"{c}_{kind}_joint").find("limit")
            assert float(limit.get("effort")) == pytest.approx(m["stall_torque"], rel=1e-12)
            assert float(limit.get("velocity")) == pytest.approx(m["speed_rpm"] * 2 * math.pi / 60, rel=1e-12)


def test_rocky7_motor_limits_come_from_the_config():
    m = rover_motors("rocky7")
    tree = urdf_tree("rocky7")
    for c in ROVERS["rocky7"].corners:
        limit = joint(tree, f"{c}_wheel_joint").find("limit")
        assert (float(limit.get("effort")), float(limit.get("velocity"))) == (m["drive_torque"], m["drive_speed"])
    for c in ROVERS["rocky7"].steered:
        limit = joint(tree, f"{c}_steer_joint").find("limit")
        assert (float(limit.get("effort")), float(limit.get("velocity"))) == (m["steer_torque"], m["steer_speed"])


def test_rocky7_wheels_are_roams_size():
    """ROAMS: six wheels of 13 cm diameter."""
    tree = urdf_tree("rocky7")
    radii = [float(c.get("radius")) for c in tree.iterfind("link/collision/geometry/sphere")]
    assert len(radii) == 6
    assert [2 * r for r in radii] == pytest.approx([0.13] * 6, abs=1e-12)


# --- in the host ---------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(ROVERS))
def test_settles_with_every_wheel_on_the_ground(name):
    """Dropped from the 1 mm auto-pose clearance with free joints, the rover
    comes to rest on all its wheels: each wheel centre at the wheel radius.
    Tolerance: DART's contact constraint leaves a resting penetration of
    CFM g dt^2 / ERP = 1e-5 * 9.81 * 1e-6 / 0.01 ~ 1e-8 m (DART 6 defaults
    CFM 1e-5 relative, ERP 0.01, error allowance 0); 1e-6 m bounds it with
    a factor 100. At rest means every joint speed below 1e-6 (m or rad)/s,
    i.e. under 4 mm per hour."""
    rover = ROVERS[name]
    p = xacro_properties(registry.robot(name).path)
    sim = simulation(name)
    for _ in range(SETTLE_STEPS):
        sim.step()
    skel = sim.robot_skeleton
    assert np.all(np.isfinite(skel.getPositions())) and np.all(np.isfinite(skel.getVelocities()))
    for c in rover.corners:
        z = skel.getBodyNode(f"{c}_wheel_link").getWorldTransform().translation()[2]
        assert z == pytest.approx(p["wheel_radius"], abs=1e-6), c
    assert np.max(np.abs(skel.getVelocities())) < 1e-6
    assert abs(world_pitch(skel.getBodyNode("base_link"))) < 1e-6


# N m on the leader joint, below what lifts a wheel (wheel load x lever: about
# 16 N x 0.72 m = 12 N m for Archimede, 17 N x 0.375 m = 7 N m for Rocky 7)
PUSH = 3.0


@pytest.mark.parametrize("name", sorted(ROVERS))
def test_differential_holds_the_body_under_a_pushed_leg(name):
    """A torque between the body and one leg (rocker) is carried by the
    differential to the other leg and into the ground: the legs stay
    mirrored, q_follower = -q_leader within 1e-6 rad, the body stays level
    and every wheel stays down.

    Without the coupling the same torque pitches the body until the pivots
    reach their limits (checked below on the description with <mimic>
    removed), so a level body is the differential's doing. Level here means
    |pitch| < 1e-3 rad: contact compliance (1e-8 m, above) gives pitches
    of order 1e-7 rad, and the host's coupling leaves jitter of order
    1e-5 rad under load; the bound is 300 times below the pitch without
    the differential. A wheel is down if its centre is within 1e-5 m of its
    radius (the jitter moves wheel centres by microns; a lifted wheel would
    be millimetres up)."""
    rover = ROVERS[name]
    p = xacro_properties(registry.robot(name).path)
    sim = simulation(name)
    run_pushed(sim, rover, PUSH, SETTLE_STEPS)
    skel = sim.robot_skeleton
    q_lead = skel.getJoint(rover.leader).getPosition(0)
    q_follow = skel.getJoint(rover.follower).getPosition(0)
    assert np.all(np.isfinite(skel.getPositions()))
    assert abs(q_follow + q_lead) < 1e-6
    assert abs(world_pitch(skel.getBodyNode("base_link"))) < 1e-3
    for c in rover.corners:
        z = skel.getBodyNode(f"{c}_wheel_link").getWorldTransform().translation()[2]
        assert z == pytest.approx(p["wheel_radius"], abs=1e-5), c

    entry = registry.robot(name)
    uncoupled = re.sub(r"<mimic[^>]*/>", "", load_description(entry.path, entry.xacro_args).urdf)
    free = simulation(name, uncoupled)
    run_pushed(free, rover, PUSH, SETTLE_STEPS)
    limit = float(joint(urdf_tree(name), rover.leader).find("limit").get("upper"))
    assert abs(world_pitch(free.robot_skeleton.getBodyNode("base_link"))) == pytest.approx(limit, abs=1e-2)
