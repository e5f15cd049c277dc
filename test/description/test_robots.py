"""Every registry robot: xacro -> URDF -> real libsdformat -> DART host.

Expected DOF, mass and length are computed from the variant records of
urdf/eels_variants.yaml (read here, never copied), so the test fails if the
macros and their parameters disagree."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

from eels_gz import registry
from eels_gz.description.assemble import robot_description
from eels_gz.description.xacro_loader import load_description, process_xacro
from eels_gz.errors import DescriptionError, RegistryError
from eels_gz.dart.simulation import RobotSpec, Simulation

IGN = shutil.which("ign")
MODULE_COUNTS = (1, 4, 10)
EELS = sorted(n for n, r in registry.ROBOTS.items() if r.family == "eels")
VARIANTS = registry.eels_variants()


def description_cases():
    """(robot, n_modules) for every robot: module counts for modular ones."""
    for name, entry in sorted(registry.ROBOTS.items()):
        if entry.n_modules is None:
            yield name, None
        else:
            yield from ((name, n) for n in MODULE_COUNTS)


def host(name: str, n_modules=None, gazebo: bool = False, optimize: bool = True, **args) -> Simulation:
    entry = registry.robot(name)
    desc = robot_description(entry, n_modules=n_modules, xacro_args=args, gazebo=gazebo)
    # the description's kinematics: counter-rotating pairs as <mimic> says (physics.mimic: exact)
    return Simulation(registry.world_path("ice_plane"), RobotSpec(name, desc, optimize=optimize), mimic="exact")


def fts_modules(v: dict, n: int) -> list[int]:
    return [] if not v["fts"] else list(range(v["fts"]["every"], n, v["fts"]["every"]))


def expected_mass(v: dict, n: int, head: bool) -> float:
    """Sum of the variant's masses, from its record."""
    module = v["shell"]["mass"] + (v["yoke"]["mass"] if v["twist"] else 0.0)
    module += v["screws"] * (v["screw"]["mass"] if v["screws"] else 0.0)
    m = v["tail"]["mass"] + n * module + len(fts_modules(v, n)) * (v["fts"]["mass"] if v["fts"] else 0.0)
    if v["crossbar"]:
        m += v["crossbar"]["mass"] + v["crossbar"]["box"]["mass"]
    if v["cap"]:
        m += v["cap"]["mass"]
    if head:
        m += v["head_unit"]["mass"]
    return m


def expected_dofs(v: dict, n: int) -> int:
    """Independent DOF: 6 free + per module bend, twist and one screw DOF (a pair is one DOF)."""
    return 6 + n * (1 + int(v["twist"]) + int(v["screws"] > 0))


@pytest.mark.skipif(IGN is None, reason="libsdformat's `ign` CLI is not installed (make test installs it)")
@pytest.mark.parametrize("name,n_modules", list(description_cases()))
def test_libsdformat_accepts_description(name, n_modules, tmp_path):
    entry = registry.robot(name)
    urdf = process_xacro(entry.path, entry.args(n_modules, gazebo="true"))
    f = tmp_path / f"{name}_{n_modules}.urdf"
    f.write_text(urdf)
    res = subprocess.run([IGN, "sdf", "-k", str(f)], capture_output=True, text=True, timeout=60)
    output = res.stdout + res.stderr
    errors = [line for line in output.splitlines() if "Error" in line or "Warning" in line]
    assert res.returncode == 0 and "Valid." in res.stdout, output
    assert not errors, "\n".join(errors)


@pytest.mark.parametrize("n_modules", MODULE_COUNTS)
@pytest.mark.parametrize("name", EELS)
def test_eels_dofs_mass_and_length(name, n_modules):
    v = VARIANTS[name]
    sim = host(name, n_modules)
    skel = sim.robot_skeleton
    independent = skel.getNumDofs() - sum(len(c.couplings) for c in sim.couplings)
    assert independent == expected_dofs(v, n_modules)
    assert skel.getMass() == pytest.approx(expected_mass(v, n_modules, v["head"]), rel=1e-12)
    # length at the zero configuration, tail start to the last shell's front
    base = sim.frame_world_pose("base_link")[0, 3]
    tip = sim.frame_world_pose(f"module_{n_modules}_shell")[0, 3] + v["shell"]["length"]
    module = v["shell"]["length"] + (v["yoke"]["length"] if v["twist"] else 0.0)
    fts = len(fts_modules(v, n_modules)) * (v["fts"]["length"] if v["fts"] else 0.0)
    assert tip - base == pytest.approx(v["tail"]["length"] + n_modules * module + fts, abs=1e-9)


def test_eels_1_0_scale_matches_the_papers():
    """NEO and EELS-DARTS: about 4 m and 100 kg for 10 modules, 36 DOF (front-only)."""
    sim = host("eels_1_0_front_only")
    assert sim.robot_skeleton.getNumDofs() == 36
    assert 90.0 <= sim.robot_skeleton.getMass() <= 110.0
    v = VARIANTS["eels_1_0_front_only"]
    assert 3.6 <= v["tail"]["length"] + 10 * (v["yoke"]["length"] + v["shell"]["length"]) <= 4.4


def test_head_carries_sensor_frames_and_optional():
    with_head = host("eels_1_0_alternating", 2)
    without = host("eels_1_0_alternating", 2, head="false")
    h = VARIANTS["eels_1_0_alternating"]["head_unit"]
    assert with_head.robot_skeleton.getMass() - without.robot_skeleton.getMass() == pytest.approx(h["mass"], rel=1e-12)
    frames = with_head.robot_frames
    names = {"imu_link", "lidar_link"} | {f"stereo_{i}_{s}" for i in range(1, h["stereo_pairs"] + 1)
                                          for s in ("left", "right")}
    assert names <= set(frames)
    # the lidar sits at the head's tip: length of the head ahead of the last shell's front
    tip = with_head.frame_world_pose("module_2_shell")[0, 3] + VARIANTS["eels_1_0_alternating"]["shell"]["length"]
    assert with_head.frame_world_pose("lidar_link")[0, 3] - tip == pytest.approx(h["length"], abs=1e-12)


def test_eels_1_5_force_torque_joints_survive_and_are_configurable():
    sim = host("eels_1_5", 6, gazebo=True)
    skel = sim.robot_skeleton
    assert [j for j in (skel.getJoint(i).getName() for i in range(skel.getNumJoints())) if j.startswith("fts_")] == \
        ["fts_2_joint", "fts_4_joint"]
    assert {s[1] for s in sim.sensor_specs if s[2] == "force_torque"} == {"fts_2", "fts_4"}
    custom = host("eels_1_5", 6, gazebo=True, fts="1,5")
    names = {custom.robot_skeleton.getJoint(i).getName() for i in range(custom.robot_skeleton.getNumJoints())}
    assert {"fts_1_joint", "fts_5_joint"} <= names and "fts_2_joint" not in names


def test_driven_counter_rotating_pair_stays_counter_rotating():
    """A torque on the front screw only, both screws of the pair in contact with
    the ice (different loads): after 2 s of spin the rear screw is at exactly
    minus the front's angle (bound: 1e-6 rad, the issue's; the host's coupling
    is exact up to round-off, ~1e-12 rad)."""
    sim = host("eels_1_0_alternating", 1, head="false")
    skel = sim.robot_skeleton
    front, rear = skel.getJoint("module_1_screw"), skel.getJoint("module_1_screw_rear")
    for _ in range(2000):
        front.setForce(0, 4.0)
        sim.step()
    assert abs(front.getPosition(0)) > 1.0  # it did spin
    assert abs(front.getPosition(0) + rear.getPosition(0)) < 1e-6
    assert abs(front.getVelocity(0) + rear.getVelocity(0)) < 1e-6


@pytest.mark.parametrize("name", sorted(registry.ROBOTS))
def test_robot_settles_on_ice(name):
    """Every robot, at its default size and held by its controllers, comes to
    rest on ice_plane: finite state, nothing faster than 5 cm/s or 0.05 rad/s
    after 1.5 s, and nothing below the ice."""
    sim = host(name, gazebo=True)
    for _ in range(1500):
        sim.step()
    skel = sim.robot_skeleton
    assert np.all(np.isfinite(skel.getPositions()))
    # screws and wheels may coast; check the shape and the base
    v = skel.getVelocities()
    assert np.max(np.abs(v[:6])) < 0.05
    assert skel.getCOM()[2] > 0.0


@pytest.mark.parametrize("name", EELS)
def test_joint_gains_within_explicit_step_stability(name):
    """The joint-control D term (velocity-mode P) acts explicitly once per
    step; a DOF is stable alone while dt * K_d * (M^-1)_jj < 2. The bound 1.6
    keeps a margin for the coupling between DOFs and with contacts (EELS 1.0's
    bend loop, 1.56, is the largest that settles in test_robot_settles_on_ice)."""
    sim = host(name, gazebo=True)
    jc = next(s.system for s in sim.systems if s.module == "joint_control")
    skel = sim.robot_skeleton
    minv = np.diag(skel.getInvMassMatrix())
    rate_gain = np.where(jc.velocity_mode, jc.pid.p, jc.pid.d)
    for joint_name, k in zip(jc.names, rate_gain):
        j = skel.getJoint(joint_name).getIndexInSkeleton(0)
        assert sim.dt * k * minv[j] <= 1.6, f"{name}: joint {joint_name}: dt*K*Minv = {sim.dt * k * minv[j]:.2f}"


@pytest.mark.parametrize("name", EELS)
def test_joint_gains_within_explicit_step_stability_of_the_coupled_loops(name):
    """config/joint_control.yaml's rule itself: the rate gains K (D term, velocity-mode P) act
    explicitly once per step, so the controlled DOFs together are stable only while
    dt * max eig(K^1/2 M^-1 K^1/2) < 2, M^-1 the inverse mass matrix's block of those DOFs without a
    mimic constraint (gz-sim's DART has none). The per-DOF check above misses the modes that couple
    them: EELS 1.0 alternating's screws at p 3.0 and its twist joints share a shell-roll mode at 2.22,
    and chattered at period 2 once its pairs were not mimic-coupled (2.17 at p 2.9 chattered, 2.00
    at p 2.5 did not). 1.9 keeps a margin; the largest now is EELS 1.0 front-only's bend chain, 1.84."""
    sim = host(name, gazebo=True)
    jc = next(s.system for s in sim.systems if s.module == "joint_control")
    skel = sim.robot_skeleton
    idx = np.array([skel.getJoint(n).getIndexInSkeleton(0) for n in jc.names])
    root_k = np.sqrt(np.where(jc.velocity_mode, jc.pid.p, jc.pid.d))
    block = np.asarray(skel.getInvMassMatrix())[np.ix_(idx, idx)]
    largest = np.linalg.eigvalsh(sim.dt * root_k[:, None] * block * root_k[None, :]).max()
    assert largest <= 1.9, f"{name}: dt max eig(K M^-1) = {largest:.2f}"


def test_robot_optimizer_switch_keeps_mass_and_cuts_bodies():
    on = host("eels_1_0_alternating", 2)
    off = host("eels_1_0_alternating", 2, optimize=False)
    assert on.robot_skeleton.getNumBodyNodes() < off.robot_skeleton.getNumBodyNodes()
    pose = on.frame_world_pose("stereo_3_left")
    assert np.allclose(pose, off.robot_skeleton.getBodyNode("stereo_3_left").getWorldTransform().matrix(), atol=1e-12)


def test_user_urdf_is_checked_against_the_baseline(tmp_path):
    entry = registry.robot("eels_1_0_front_only")
    base = process_xacro(entry.path, entry.args(2, gazebo="false"))
    heavier = tmp_path / "heavier.urdf"
    heavier.write_text(base.replace('<mass value="5.5"/>', '<mass value="6.0"/>', 1))
    desc = robot_description(entry, n_modules=2, urdf_file=heavier, gazebo=False)
    assert desc.source == str(heavier)
    missing = tmp_path / "missing.urdf"
    from lxml import etree
    root = etree.fromstring(base.encode())
    root.remove(next(j for j in root.iter("joint") if j.get("name") == "module_2_twist"))
    missing.write_text(etree.tostring(root, encoding="unicode"))
    with pytest.raises(DescriptionError, match=r"module_2_twist"):
        robot_description(entry, n_modules=2, urdf_file=missing, gazebo=False)
    broken = tmp_path / "broken.urdf"
    broken.write_text("<robot name='x'><link name='a'></robot>")
    with pytest.raises(DescriptionError, match=r"broken\.urdf"):
        robot_description(entry, n_modules=2, urdf_file=broken, gazebo=False)


def test_unknown_robot_and_variant_are_named():
    with pytest.raises(RegistryError, match=r"unknown robot 'eels_9'.*eels_1_0_front_only"):
        registry.robot("eels_9")
    with pytest.raises(DescriptionError, match=r"unknown EELS variant 'eels_2_0'; expected one of: eels_1_0_alternating"):
        process_xacro(registry.robot("eels_1_5").path, {"variant": "eels_2_0"})


@pytest.mark.parametrize("bad", [0, -3, "three", 2.5, "1.5"])
def test_bad_module_count_is_a_clear_error(bad):
    entry = registry.robot("eels_1_0_front_only")
    with pytest.raises(RegistryError, match=r"n_modules must be a whole number >= 1"):
        entry.args(bad)
    # the xacro itself refuses it too, for users who call xacro directly
    with pytest.raises(DescriptionError, match=r"n_modules must be a whole number >= 1"):
        process_xacro(entry.path, {"variant": entry.name, "n_modules": str(bad)})


def test_module_count_on_a_rover_and_bad_fts_are_refused():
    with pytest.raises(RegistryError, match=r"'archimede' has no modules"):
        registry.robot("archimede").args(4)
    with pytest.raises(DescriptionError, match=r"fts must list module indices in 1\.\.3"):
        process_xacro(registry.robot("eels_1_5").path, {"variant": "eels_1_5", "n_modules": "4", "fts": "2,4"})
    with pytest.raises(DescriptionError, match=r"only for eels_1_5"):
        process_xacro(registry.robot("eels_1_5").path, {"variant": "eels_concept", "fts": "2"})


def test_malformed_xacro_names_the_file(tmp_path):
    bad = tmp_path / "broken.urdf.xacro"
    bad.write_text('<robot name="x" xmlns:xacro="http://www.ros.org/wiki/xacro"><link name="a">\n</robot>')
    with pytest.raises(DescriptionError, match=r"broken\.urdf\.xacro: xacro failed"):
        process_xacro(bad)


def test_missing_description_file(tmp_path):
    with pytest.raises(DescriptionError, match=r"does not exist"):
        load_description(tmp_path / "nope.urdf.xacro")
