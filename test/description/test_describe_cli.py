"""`eels-gz describe` and the launch-time model options of `eels-gz run`."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner
from lxml import etree

from eels_gz import registry
from eels_gz.cli import main
from eels_gz.description.xacro_loader import process_xacro

IGN = shutil.which("ign")


def cli(*args):
    return CliRunner().invoke(main, list(args))


def test_describe_urdf_follows_the_module_count():
    res = cli("describe", "--robot", "eels_1_0_front_only", "--n-modules", "3")
    assert res.exit_code == 0, res.output
    robot = etree.fromstring(res.stdout.encode())
    joints = {j.get("name") for j in robot.iter("joint")}
    assert "module_3_screw" in joints and "module_4_bend" not in joints
    assert not list(robot.iter("gazebo"))  # the robot file view carries no simulator tags


def test_describe_optimized_has_no_fixed_joints_left():
    res = cli("describe", "--robot", "eels_1_0_alternating", "--n-modules", "2", "--optimized")
    assert res.exit_code == 0, res.output
    robot = etree.fromstring(res.stdout.encode())
    assert [j.get("name") for j in robot.iter("joint") if j.get("type") == "fixed"] == []


@pytest.mark.skipif(IGN is None, reason="libsdformat's `ign` CLI is not installed (make test installs it)")
def test_describe_sdf_keeps_force_torque_joints_and_sensors():
    """Through real libsdformat: the FTS joints survive as fixed joints
    (<preserveFixedJoint>), and every declared sensor is in the SDF."""
    res = cli("describe", "--robot", "eels_1_5", "--n-modules", "5", "--format", "sdf")
    assert res.exit_code == 0, res.output
    sdf = etree.fromstring(res.stdout.encode())
    joints = {j.get("name"): j.get("type") for j in sdf.iter("joint")}
    assert joints["fts_2_joint"] == "fixed" and joints["fts_4_joint"] == "fixed"
    sensors = {s.get("name"): s.get("type") for s in sdf.iter("sensor")}
    assert sensors == {"fts_2": "force_torque", "fts_4": "force_torque"}
    head = cli("describe", "--robot", "eels_1_0_alternating", "--n-modules", "2", "--format", "sdf")
    names = {s.get("name") for s in etree.fromstring(head.stdout.encode()).iter("sensor")}
    assert {"imu", "lidar", "stereo_1_left", "stereo_4_right"} <= names


@pytest.mark.parametrize("args,message", [
    (("--robot", "eels_2_0"), "unknown robot 'eels_2_0'"),
    (("--robot", "eels_1_5", "--n-modules", "0"), "'--n-modules': must be a whole number >= 1"),
    (("--robot", "eels_1_5", "--n-modules", "-2"), "'--n-modules': must be a whole number >= 1"),
    (("--robot", "eels_1_5", "--n-modules", "four"), "'four' is not a valid integer"),  # --n-modules INTEGER
    (("--robot", "rocky7", "--n-modules", "3"), "'rocky7' has no modules"),
    (("--robot", "eels_1_5", "--set-arg", "fts"), "--set-arg expects NAME=VALUE"),
])
def test_describe_bad_input_exits_2_with_a_message(args, message):
    res = cli("describe", *args)
    assert res.exit_code == 2
    assert message in res.stderr


def test_run_with_n_modules_and_a_user_urdf(tmp_path):
    """A user URDF with a changed mass runs and is what the host loaded; one
    with a removed joint is refused with the joint named."""
    entry = registry.robot("eels_1_0_front_only")
    base = process_xacro(entry.path, entry.args(2, gazebo="false"))
    heavier = tmp_path / "heavier.urdf"
    heavier.write_text(base.replace('<mass value="5.0"/>', '<mass value="7.0"/>', 1))  # the tail cap
    res = cli("run", "--robot", entry.name, "--n-modules", "2", "--urdf", str(heavier), "--duration", "0.05",
              "--out", str(tmp_path / "ok"), "--json", "--set", "log.plot=false")
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout[res.stdout.index("{"):])
    assert summary["settings"]["resolved"]["robot_description"] == str(heavier)
    assert summary["settings"]["resolved"]["dofs"] == 6 + 3 * 2
    root = etree.fromstring(base.encode())
    root.remove(next(j for j in root.iter("joint") if j.get("name") == "module_1_twist"))
    broken = tmp_path / "no_twist.urdf"
    broken.write_text(etree.tostring(root, encoding="unicode"))
    res = cli("run", "--robot", entry.name, "--n-modules", "2", "--urdf", str(broken), "--duration", "0.05",
              "--out", str(tmp_path / "bad"))
    assert res.exit_code == 2
    assert "module_1_twist" in res.stderr and "no_twist.urdf" in res.stderr


@pytest.mark.parametrize("contact", ["screw", "stock", "rft"])
def test_run_contact_switch(contact, tmp_path):
    res = cli("run", "--robot", "eels_1_0_front_only", "--n-modules", "2", "--contact", contact, "--duration", "0.05",
              "--out", str(tmp_path), "--json", "--set", "log.plot=false")
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout[res.stdout.index("{"):])
    assert summary["settings"]["resolved"]["contact"] == contact
    assert ("screw_contact" in summary["settings"]["resolved"]["systems"]) == (contact == "screw")
    assert ("rft_contact" in summary["settings"]["resolved"]["systems"]) == (contact == "rft")


def test_run_contact_screw_on_a_rover_is_refused(tmp_path):
    res = cli("run", "--robot", "archimede", "--contact", "screw", "--duration", "0.05", "--out", str(tmp_path))
    assert res.exit_code == 2 and "applies to EELS robots only" in res.stderr
