"""Combinations that mean nothing are refused, alike by every command (issue 45, class 3).

One check (eels_gz/run/compatibility.py) of the robot's kind against the scenario's, the contact
model against the robot's screws, and a soil world against the soil set, shared by ``run``,
``export``, ``compare`` and ``sweep``: exit 2 before anything is built or written, the message
naming the settings and what would fit."""

from __future__ import annotations

import pytest
import yaml
from faults_cli import cli

SHORT = ("--duration", "0.05")
CASES = [
    # (robot, scenario, world, contact, soil, words in the message)
    ("archimede", "screw_spin", None, None, None, ("screw_spin", "archimede", "EELS robots")),
    ("eels_1_5", "rover_drive", None, None, None, ("rover_drive", "eels_1_5", "rover")),
    ("eels_1_5", "wheel_rig", None, None, None, ("wheel_rig", "eels_1_5")),
    ("mini_eels_1_0", "screw_spin", None, None, None, ("screw_spin", "mini_eels_1_0", "screws")),
    ("mini_eels_1_0", None, None, "screw", None, ("mini_eels_1_0", "screws", "stock")),
    ("mini_eels_1_0", None, "soil_bin", "rft", None, ("mini_eels_1_0", "screws", "rft")),
    ("archimede", None, "sandbox_10", None, None, ("sandbox_10", "archimede", "soil.params")),
]
IDS = [f"{r}-{s or ''}-{w or ''}-{c or ''}" for r, s, w, c, _, _ in CASES]


def args_of(robot, scenario, world, contact) -> list[str]:
    args = ["--robot", robot]
    if scenario:
        args += ["--scenario", scenario]
    if world:
        args += ["--world", world]
    if contact:
        args += ["--contact", contact]
    return args


@pytest.mark.parametrize("robot, scenario, world, contact, soil, words", CASES, ids=IDS)
def test_run_refuses_a_combination_that_means_nothing(tmp_path, robot, scenario, world, contact, soil, words):
    res = cli("run", *args_of(robot, scenario, world, contact), *SHORT, "--out", tmp_path / "r")
    assert res.exit_code == 2, res.output
    assert all(w in res.output for w in words) and "Traceback" not in res.output, res.output
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("robot, scenario, world, contact, soil, words",
                         [c for c in CASES if c[1] is not None and c[3] != "rft"],
                         ids=[i for c, i in zip(CASES, IDS) if c[1] is not None and c[3] != "rft"])
def test_export_refuses_what_run_refuses(tmp_path, robot, scenario, world, contact, soil, words):
    res = cli("export", *args_of(robot, scenario, world, contact), "--out", tmp_path / "x")
    assert res.exit_code == 2, res.output
    assert all(w in res.output for w in words), res.output
    assert not (tmp_path / "x").exists()


def test_compare_refuses_before_its_first_run(tmp_path):
    res = cli("compare", "--robot", "mini_eels_1_0", *SHORT, "--out", tmp_path / "c")
    assert res.exit_code == 2 and "mini_eels_1_0" in res.output and "screws" in res.output, res.output
    assert not (tmp_path / "c").exists()
    res = cli("compare", "--robot", "archimede", "--scenario", "screw_spin", *SHORT, "--set", "soil.params=eac1a",
              "--out", tmp_path / "c")
    assert res.exit_code == 2 and "screw_spin" in res.output, res.output
    assert not (tmp_path / "c").exists()


def test_sweep_refuses_before_any_sample(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump({"base": {"robot": {"name": "archimede"}, "scenario": {"name": "screw_spin"},
                                             "duration": 0.05},
                                    "samples": 2, "seed": 1, "dispersions": {"scenario.screw_rate": {"uniform": [1, 2]}},
                                    "metrics": ["real_time_factor"]}))
    res = cli("sweep", spec, "--out", tmp_path / "s", "--workers", "1")
    assert res.exit_code == 2 and "screw_spin" in res.output and "archimede" in res.output, res.output
    assert not (tmp_path / "s").exists()


def test_the_soil_worlds_take_a_rover_with_a_soil_or_rigid_on_purpose(tmp_path):
    ok = cli("run", "--robot", "archimede", "--world", "sandbox_10", "--set", "soil.params=eac1a", *SHORT,
             "--out", tmp_path / "a")
    assert ok.exit_code == 0, ok.output
    rigid = cli("run", "--robot", "archimede", "--world", "sandbox_10", "--set", "soil.params=''", *SHORT,
                "--out", tmp_path / "b")
    assert rigid.exit_code == 0, rigid.output
