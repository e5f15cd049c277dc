"""Physically invalid input is an error, not a run that ends ``ok`` (issue 45, class 2).

A robot description or a world is checked where it is read (eels_gz/description/validity.py,
used by the description's and the SDF world's readers): a geometry, inertia, limit or world value
that is not finite, not positive where it must be, or a lower limit above its upper is an error
(exit 2) naming the file, the element and what was expected, for ``run``, ``export`` and
``compare`` alike; an implausible but valid value is a warning naming its range. NaN anywhere in
the state or the world is a divergence."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from faults_cli import SMALL, cli
from lxml import etree

REPO = Path(__file__).resolve().parents[2]
SHORT = ("--duration", "0.02")


@pytest.fixture(scope="module")
def small_urdf(tmp_path_factory) -> str:
    res = cli("describe", *SMALL)
    assert res.exit_code == 0, res.output
    return res.stdout


def edited(urdf: str, folder: Path, xpath: str, attr: str, value: str, name: str = "robot.urdf") -> Path:
    """``urdf`` with ``attr`` of the first element at ``xpath`` set to ``value``, written to ``folder``."""
    root = etree.fromstring(urdf.encode())
    root.xpath(xpath)[0].set(attr, value)
    path = folder / name
    path.write_bytes(etree.tostring(root))
    return path


BAD_URDF = [
    ("//collision/geometry/cylinder", "radius", "-0.07", "radius", "base_link"),
    ("//collision/geometry/cylinder", "radius", "0", "radius", "base_link"),
    ("//collision/geometry/cylinder", "length", "nan", "length", "base_link"),
    ("//inertial/mass", "value", "1e308", "mass", "base_link"),
    ("//inertial/mass", "value", "-5", "mass", "base_link"),
    ("//inertial/inertia", "ixx", "inf", "ixx", "base_link"),
    ("//joint[@name='module_1_bend']/limit", "lower", "0.9", "lower", "module_1_bend"),
    ("//joint[@name='module_1_bend']/origin", "xyz", "0.2 nan 0", "xyz", "module_1_bend"),
]


@pytest.mark.parametrize("xpath, attr, value, word, owner", BAD_URDF,
                         ids=[f"{a}={v}" for _, a, v, _, _ in BAD_URDF])
def test_an_invalid_robot_description_is_refused(small_urdf, tmp_path, xpath, attr, value, word, owner):
    urdf = edited(small_urdf, tmp_path, xpath, attr, value)
    res = cli("run", *SMALL, *SHORT, "--urdf", urdf, "--out", tmp_path / "r")
    assert res.exit_code == 2, res.output
    assert str(urdf) in res.output and word in res.output and f"'{owner}'" in res.output, res.output
    assert "Traceback" not in res.output
    assert not (tmp_path / "r").exists()


def test_an_implausible_but_valid_mass_is_a_warning_with_its_range(small_urdf, tmp_path, caplog):
    urdf = edited(small_urdf, tmp_path, "//inertial/mass", "value", "5e5")
    with caplog.at_level("WARNING"):
        res = cli("run", *SMALL, *SHORT, "--urdf", urdf, "--out", tmp_path / "r", "--no-optimize")
    said = res.output + caplog.text
    assert "'base_link'" in said and "500000 kg" in said and "plausible range 0.0001 to 10000 kg" in said, said


def world_with(tmp_path: Path, old: str, new: str) -> Path:
    text = (REPO / "worlds" / "ice_plane.sdf").read_text()
    assert old in text
    path = tmp_path / "bad.sdf"
    path.write_text(text.replace(old, new))
    return path


BAD_WORLD = [
    ("<gravity>0 0 -9.80665</gravity>", "<gravity>0 0 nan</gravity>", "<gravity>"),
    ("<gravity>0 0 -9.80665</gravity>", "<gravity>0 0 -1e300</gravity>", "<gravity>"),
    ("<size>200 200</size>", "<size>200 inf</size>", "<size>"),
    ("<max_step_size>0.001</max_step_size>", "<max_step_size>nan</max_step_size>", "<max_step_size>"),
]


@pytest.mark.parametrize("old, new, element", BAD_WORLD, ids=[n for _, n, _ in BAD_WORLD])
@pytest.mark.parametrize("command", ["run", "export", "compare"])
def test_an_invalid_world_is_refused_by_every_command(tmp_path, old, new, element, command):
    world = world_with(tmp_path, old, new)
    args = {"run": ("run", *SMALL, *SHORT),
            "export": ("export", "--scenario", "screw_spin", *SMALL[:2]),
            "compare": ("compare", *SMALL, *SHORT)}[command]
    res = cli(*args, "--world", world, "--out", tmp_path / "o")
    assert res.exit_code == 2, res.output
    assert str(world) in res.output and element in res.output and "Traceback" not in res.output, res.output
    assert not (tmp_path / "o").exists()


def small_robot():
    from eels_gz import registry
    from eels_gz.dart.simulation import RobotSpec
    from eels_gz.description.assemble import robot_description

    entry = registry.robot("eels_1_0_front_only")
    return RobotSpec(name="eels", description=robot_description(entry, n_modules=2), pose="auto")


def test_nan_in_the_state_is_a_divergence():
    from eels_gz.dart.simulation import Simulation
    from eels_gz.errors import SimulationDiverged

    with Simulation(REPO / "worlds" / "ice_plane.sdf", small_robot()) as sim:
        sim.step()
        q = sim.robot_skeleton.getPositions()
        q[-1] = np.nan  # a joint position, its velocity finite
        sim.robot_skeleton.setPositions(q)
        with pytest.raises(SimulationDiverged, match="not finite"):
            for _ in range(3):
                sim.step()


def test_nan_gravity_set_while_running_is_a_divergence():
    from eels_gz.dart.simulation import Simulation
    from eels_gz.errors import SimulationDiverged

    with Simulation(REPO / "worlds" / "ice_plane.sdf", small_robot()) as sim:
        sim.step()
        with pytest.raises(SimulationDiverged, match="gravity"):
            sim.set_gravity([0.0, 0.0, float("nan")])
            sim.step()


def test_every_shipped_robot_and_world_is_valid_and_plausible(caplog):
    """The checks refuse no robot or world of the registry, and warn on none."""
    from eels_gz import registry
    from eels_gz.description.assemble import robot_description
    from eels_gz.description.validity import check_urdf
    from eels_gz.sdf_reader import load_world

    for name in registry.ROBOTS:
        desc = robot_description(registry.robot(name))
        assert check_urdf(desc.model.element, desc.source) == [], name
    with caplog.at_level("WARNING", logger="eels_gz.sdf_reader"):
        for name in registry.WORLDS:
            load_world(registry.world_path(name))
    assert not caplog.records, caplog.text
