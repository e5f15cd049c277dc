"""Archimede's two wheel sets (seed 004 §3.3, Table 1; REFERENCE.md §4 and §7),
chosen by the xacro argument ``wheels``: each goes xacro -> URDF -> real
libsdformat -> DART, its wheels collide and steer with half the paper's
diameter, and the rover comes to rest on ice with its wheel centres one
radius above the ice."""

from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pytest

from eels_gz import registry
from eels_gz.description.assemble import robot_description
from eels_gz.description.xacro_loader import process_xacro
from eels_gz.errors import DescriptionError
from eels_gz.dart.simulation import RobotSpec, Simulation

IGN = shutil.which("ign")
# seed 004 Table 1 (REFERENCE.md §4: the table prints "mm", the values are metres)
DIAMETER = {"low_grousers": 0.170, "high_grousers": 0.186}
CORNERS = ("fl", "fr", "rl", "rr")
SETTLE_STEPS = 1500  # 1.5 s at ice_plane's 1 ms step, as test_rovers.py
REST_TOL = 2e-3  # m: the wheel sphere's penetration into the ice under a 16 N corner load stays below 2 mm


def urdf(wheels: str, **extra: str) -> str:
    entry = registry.robot("archimede")
    return process_xacro(entry.path, entry.args(None, gazebo="true", wheels=wheels, **extra))


@pytest.mark.parametrize("wheels", sorted(DIAMETER))
def test_wheel_set_geometry_is_the_papers(wheels):
    text = urdf(wheels)
    radius = 0.5 * DIAMETER[wheels]
    spheres = [float(r) for r in re.findall(r"<sphere radius=\"([0-9.eE+-]+)\"", text)]
    assert len(spheres) == 4 and all(r == pytest.approx(radius, abs=1e-12) for r in spheres)
    plugin_radii = [float(r) for r in re.findall(r"<wheel_radius>\s*([0-9.eE+-]+)\s*</wheel_radius>", text)]
    assert len(plugin_radii) == 2 and all(r == pytest.approx(radius, abs=1e-12) for r in plugin_radii)


@pytest.mark.skipif(IGN is None, reason="libsdformat's `ign` CLI is not installed (make test installs it)")
@pytest.mark.parametrize("soil", ["", "eac1a"])
@pytest.mark.parametrize("wheels", sorted(DIAMETER))
def test_libsdformat_accepts_wheel_set(wheels, soil, tmp_path):
    """Each wheel set, with stock contact and with the soil contact system (soil:=eac1a)."""
    f = tmp_path / f"archimede_{wheels}_{soil}.urdf"
    f.write_text(urdf(wheels, soil=soil, world_file=str(registry.world_path("ice_plane"))))
    res = subprocess.run([IGN, "sdf", "-k", str(f)], capture_output=True, text=True, timeout=60)
    output = res.stdout + res.stderr
    assert res.returncode == 0 and "Valid." in res.stdout, output
    assert not [line for line in output.splitlines() if "Error" in line or "Warning" in line], output


@pytest.mark.parametrize("wheels", sorted(DIAMETER))
def test_wheel_set_rests_on_ice_in_dart(wheels):
    entry = registry.robot("archimede")
    desc = robot_description(entry, xacro_args={"wheels": wheels}, gazebo=True)
    sim = Simulation(registry.world_path("ice_plane"), RobotSpec("archimede", desc))
    for _ in range(SETTLE_STEPS):
        sim.step()
    skel = sim.robot_skeleton
    assert np.all(np.isfinite(skel.getPositions()))
    assert np.max(np.abs(skel.getVelocities()[:6])) < 0.05
    heights = [skel.getBodyNode(f"{c}_wheel_link").getWorldTransform().translation()[2] for c in CORNERS]
    assert heights == [pytest.approx(0.5 * DIAMETER[wheels], abs=REST_TOL)] * 4


def test_unknown_wheel_set_is_named():
    with pytest.raises(DescriptionError, match="wheels must be one of high_grousers, low_grousers, got 'tracks'"):
        urdf("tracks")
