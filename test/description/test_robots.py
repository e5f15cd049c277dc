"""Every registry robot: xacro -> URDF -> real libsdformat -> DART host.

Expected DOF, mass and length are computed from the xacro's own properties
(read from the file, never copied here), so the test fails if the macro and
its properties disagree."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest
from lxml import etree

from eels_gz import registry
from eels_gz.description.xacro_loader import load_description, process_xacro
from eels_gz.errors import DescriptionError, RegistryError
from eels_gz.host.simulation import RobotSpec, Simulation

XACRO_NS = "{http://www.ros.org/wiki/xacro}"
IGN = shutil.which("ign")
MODULE_COUNTS = (1, 4, 10)


def xacro_properties(path) -> dict[str, float]:
    """Numeric <xacro:property> values of a xacro file."""
    props = {}
    for node in etree.parse(str(path)).getroot().iter(XACRO_NS + "property"):
        try:
            props[node.get("name")] = float(node.get("value"))
        except (TypeError, ValueError):
            pass
    return props


def description(name: str, n_modules: int, gazebo: bool = True):
    entry = registry.robot(name)
    args = dict(entry.xacro_args, n_modules=str(n_modules), gazebo="true" if gazebo else "false")
    return entry, load_description(entry.path, args)


@pytest.mark.skipif(IGN is None, reason="libsdformat's `ign` CLI is not installed (make test installs it)")
@pytest.mark.parametrize("n_modules", MODULE_COUNTS)
@pytest.mark.parametrize("name", sorted(registry.ROBOTS))
def test_libsdformat_accepts_description(name, n_modules, tmp_path):
    entry = registry.robot(name)
    urdf = process_xacro(entry.path, dict(entry.xacro_args, n_modules=str(n_modules), gazebo="true"))
    f = tmp_path / f"{name}_{n_modules}.urdf"
    f.write_text(urdf)
    res = subprocess.run([IGN, "sdf", "-k", str(f)], capture_output=True, text=True, timeout=60)
    output = res.stdout + res.stderr
    errors = [line for line in output.splitlines() if "Error" in line or "Warning" in line]
    assert res.returncode == 0 and "Valid." in res.stdout, output
    assert not errors, "\n".join(errors)


@pytest.mark.parametrize("n_modules", MODULE_COUNTS)
def test_eels_front_only_dofs_mass_and_length(n_modules):
    entry, desc = description("eels_1_0_front_only", n_modules, gazebo=False)
    p = xacro_properties(entry.path)
    sim = Simulation(registry.world_path("ice_plane"), RobotSpec(entry.name, desc))
    skel = sim.robot_skeleton
    # floating base + (bend, twist, screw) per module
    assert skel.getNumDofs() == 6 + 3 * n_modules
    expected_mass = p["tail_mass"] + n_modules * (p["yoke_mass"] + p["shell_mass"] + p["screw_mass"])
    assert skel.getMass() == pytest.approx(expected_mass, rel=1e-12)
    # length at the zero configuration: tip of the last shell minus the tail's start
    tip = skel.getBodyNode(f"module_{n_modules}_shell").getWorldTransform().matrix()[0, 3] + p["shell_length"]
    base = skel.getBodyNode("base_link").getWorldTransform().matrix()[0, 3]
    expected_length = p["tail_length"] + n_modules * (p["yoke_length"] + p["shell_length"])
    assert tip - base == pytest.approx(expected_length, abs=1e-9)


def test_eels_1_0_scale_matches_the_papers():
    """NEO and EELS-DARTS: about 4 m and 100 kg for 10 modules, 36 DOF."""
    entry, desc = description("eels_1_0_front_only", 10, gazebo=False)
    sim = Simulation(registry.world_path("ice_plane"), RobotSpec(entry.name, desc))
    assert sim.robot_skeleton.getNumDofs() == 36
    assert 90.0 <= sim.robot_skeleton.getMass() <= 110.0
    p = xacro_properties(entry.path)
    assert 3.6 <= p["tail_length"] + 10 * (p["yoke_length"] + p["shell_length"]) <= 4.4


def test_robot_settles_on_ice_without_drift():
    """Held by joint control on ice, the robot comes to rest on its screws:
    base height equals the blade radius (contact penetration in DART is
    below 1 mm at this load), and nothing moves by more than 1 mm over 2 s."""
    entry, desc = description("eels_1_0_front_only", 10)
    p = xacro_properties(entry.path)
    sim = Simulation(registry.world_path("ice_plane"), RobotSpec(entry.name, desc))
    for _ in range(200):
        sim.step()
    q0 = sim.robot_skeleton.getPositions().copy()
    for _ in range(2000):
        sim.step()
    q = sim.robot_skeleton.getPositions()
    assert np.all(np.isfinite(q))
    assert q[5] == pytest.approx(p["screw_radius"], abs=1e-3)
    assert np.max(np.abs(q[3:6] - q0[3:6])) < 1e-3
    assert np.max(np.abs(sim.robot_skeleton.getVelocities())) < 1e-2


def test_unknown_robot_is_named():
    with pytest.raises(RegistryError, match=r"unknown robot 'eels_9'.*eels_1_0_front_only"):
        registry.robot("eels_9")


def test_non_integer_module_count_is_a_clear_error():
    entry = registry.robot("eels_1_0_front_only")
    with pytest.raises(DescriptionError, match=r"eels\.urdf\.xacro: xacro failed.*n_modules"):
        process_xacro(entry.path, dict(entry.xacro_args, n_modules="three"))


def test_malformed_xacro_names_the_file(tmp_path):
    bad = tmp_path / "broken.urdf.xacro"
    bad.write_text('<robot name="x" xmlns:xacro="http://www.ros.org/wiki/xacro"><link name="a">\n</robot>')
    with pytest.raises(DescriptionError, match=r"broken\.urdf\.xacro: xacro failed"):
        process_xacro(bad)


def test_missing_description_file(tmp_path):
    with pytest.raises(DescriptionError, match=r"does not exist"):
        load_description(tmp_path / "nope.urdf.xacro")
