"""`eels-gz run --contact rft` (issue 34, item 9): EELS 1.0 with counter-rotating pairs (ten modules) spinning
its screws on the soil bin, whose level is the grains' surface, the medium the run names. The robot is pushed
along its axis the way its threads advance (as on ice under the screw contact, test_screw_propulsion), slower
than without slip, and reversing the screws reverses it (with fewer modules the tail, which keeps the engine's
contact with the bin's rigid surface, carries much of the weight and the advance is lost in the robot's
rocking); the run records the medium it used; bad granular settings stop with exit 2 naming them, before any
output is written."""

from __future__ import annotations

import json

import yaml
from click.testing import CliRunner

from eels_gz.cli import main

BASE = ["--robot", "eels_1_0_alternating", "--world", "soil_bin", "--scenario", "screw_spin",
        "--contact", "rft", "--duration", "2", "--set", "log.plot=false", "--set", "robot.xacro_args.head=false"]
LEAD = 2 * 3.141592653589793 * 0.09 * 0.36502849483042454  # m per turn: 2 pi r tan(0.35), EELS 1.0's screw


def run(tmp_path, *extra: str, name="run"):
    out = tmp_path / name
    return CliRunner().invoke(main, ["run", *BASE, "--out", str(out), *extra]), out


def test_screws_in_sand_push_the_robot_along_their_threads(tmp_path):
    res, out = run(tmp_path, "--set", "granular.params=mars_simulant_mms", "--set", "granular.zeta=3e6")
    assert res.exit_code == 0, res.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "ok"
    medium = summary["settings"]["resolved"]["granular_params"]
    assert medium["zeta"] == 3e6
    assert yaml.safe_load((out / "granular.yaml").read_text())["zeta"] == 3e6
    forward = json.loads((out / "metrics.json").read_text())["advance_m"]
    # 3 rad/s for 2 s is 0.95 turn: at most a lead without slip
    assert 0.0 < forward < 0.95 * LEAD
    res, out = run(tmp_path, "--set", "scenario.screw_rate=-3.0", name="reversed")  # the default medium
    assert res.exit_code == 0, res.output
    backward = json.loads((out / "metrics.json").read_text())["advance_m"]
    assert -0.95 * LEAD < backward < 0.0


def test_bad_granular_settings_exit_2_naming_them(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("zeta: 1e6\nangle_of_repose: 30\n")
    cases = [
        (["--set", "granular.params=quicksand"], "unknown granular medium 'quicksand'"),
        (["--set", "granular.zeta=-1"], "granular.zeta"),
        (["--set", f"granular.params={bad}"], "angle_of_repose"),
        (["--contact", "screw", "--set", "granular.params=poppy_seeds_lp"], "contact.model rft"),
    ]
    for i, (extra, words) in enumerate(cases):
        res, out = run(tmp_path, *extra, name=f"bad{i}")
        assert res.exit_code == 2, (extra, res.output)
        assert words in res.output, res.output
        assert "Traceback" not in res.output
        assert not out.exists()
