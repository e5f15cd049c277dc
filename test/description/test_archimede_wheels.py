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
from eels_gz.paths import asset

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


# the soil contact's wheels (urdf/archimede_wheels.xacro): low_grousers from the authors' published mesh
# (85 mm wide, 16 lugs 1-2.6 mm above a domed rim of 79-82 mm: the dome's mean 80.5 mm, the lugs' mean 1.8 mm),
# high_grousers at Table 1's tip radius with the estimated 12.5 mm lugs (Fig. 8b not readable here)
LUGS = {"low_grousers": (0.0805 + 0.0018, 0.085, 0.0018, 16), "high_grousers": (0.093, 0.085, 0.0125, 16)}
SOIL_WHEEL = re.compile(r'<wheel link="(\w+)" lug_count="(\d+)" lug_height="([0-9.eE+-]+)" radius="([0-9.eE+-]+)" '
                        r'width="([0-9.eE+-]+)"/>')


def soil_wheels(text: str) -> list[tuple]:
    return [(link, float(r), float(b), float(hg), int(n)) for link, n, hg, r, b in SOIL_WHEEL.findall(text)]


@pytest.mark.parametrize("wheels", sorted(DIAMETER))
def test_the_soil_contact_gets_the_wheels_real_shape(wheels):
    """Every corner's soil wheel has the set's tip radius, width, lug height and count, while the rover's own
    radius (collision, steering, odometry: the paper's slip) stays Table 1's nominal one; the rig's soil wheel
    for that set is the rover's; lug_height replaces the set's keeping the tips; grouser_terms reaches the
    system."""
    text = urdf(wheels, soil="eac1a", world_file="w.sdf")
    got = soil_wheels(text)
    assert [g[0] for g in got] == [f"{c}_wheel_link" for c in sorted(CORNERS)]
    assert all(g[1:] == pytest.approx(LUGS[wheels]) for g in got)
    assert "<grousers>true</grousers>" in text
    rig = process_xacro(asset("urdf", "wheel_rig.urdf.xacro"), {"wheels": wheels, "normal_load": "16", "gravity":
                                                               "9.8", "soil": "eac1a", "world_file": "w.sdf"})
    assert [g[1:] for g in soil_wheels(rig)] == [got[0][1:]]
    swept = soil_wheels(urdf(wheels, soil="eac1a", world_file="w.sdf", lug_height="0.006", grouser_terms="false"))
    assert swept[0][1:] == pytest.approx((LUGS[wheels][0], 0.085, 0.006, 16))
    assert "<grousers>false</grousers>" in urdf(wheels, soil="eac1a", world_file="w.sdf", grouser_terms="false")
    test_wheel_set_geometry_is_the_papers(wheels)


def test_bad_lug_arguments_are_named():
    with pytest.raises(DescriptionError, match=r"lug_height must be in \(0, 0.093\) m, got 0.2"):
        urdf("high_grousers", soil="eac1a", world_file="w.sdf", lug_height="0.2")
    with pytest.raises(DescriptionError, match="grouser_terms must be true or false, got 'maybe'"):
        urdf("high_grousers", soil="eac1a", world_file="w.sdf", grouser_terms="maybe")


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
