"""`eels-gz compare`: the same scenario under stock and screw contact, the
Fig. 14-style comparison of the tail pose (issue 5). Shortened to 5 s."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner
from PIL import Image

from eels_gz.cli import main
from eels_gz.cli.compare import differences, tail_track

ARGS = ["compare", "--robot", "eels_1_0_front_only", "--world", "ice_plane", "--scenario", "surface_traverse"]


@pytest.fixture(scope="module")
def compared(tmp_path_factory):
    out = tmp_path_factory.mktemp("compare")
    res = CliRunner().invoke(main, [*ARGS, "--duration", "5", "--out", str(out), "--json"])
    assert res.exit_code == 0, res.output
    return out, json.loads(res.output[res.output.index("{"):])


def test_compare_writes_json_and_figure(compared):
    out, result = compared
    assert json.loads((out / "compare.json").read_text()) == result
    assert set(result["models"]) == {"stock", "screw"}
    for model, m in result["models"].items():
        summary = json.loads((out / model / "summary.json").read_text())
        assert summary["settings"]["resolved"]["contact"] == model
        assert m["status"] == "ok" and m["sim_time"] == pytest.approx(5.0)
        # the final pose is the run's own final base pose
        final = summary["final_base_pose"]
        assert [m["final_pose"]["x"], m["final_pose"]["y"]] == pytest.approx(final["position"][:2], abs=1e-12)
        assert m["final_pose"]["yaw"] == pytest.approx(final["rpy"][2], abs=1e-9)
        assert m["path_length"] >= np.hypot(m["final_pose"]["x"], m["final_pose"]["y"]) - 1e-12
    for axis in ("x", "y", "yaw"):
        d = result["difference"][axis]
        assert 0.0 <= d["rms"] <= d["max"]
    with Image.open(out / "compare.png") as im:
        assert im.size[0] > 800 and im.size[1] > 500
        assert len(set(np.asarray(im.convert("L")).ravel().tolist())) > 10  # drawn, not blank


def test_differences_are_screw_minus_stock_sample_by_sample(compared):
    out, result = compared
    (t0, p0), (t1, p1) = tail_track(out / "stock" / "log.mcap"), tail_track(out / "screw" / "log.mcap")
    assert np.array_equal(t0, t1)
    assert result["models"]["screw"]["samples"] == len(t1)
    d = differences(p0, p1)
    for axis, i in (("x", 0), ("y", 1), ("yaw", 2)):
        assert d[axis]["max"] == pytest.approx(np.abs(p1[:, i] - p0[:, i]).max(), abs=1e-15)
        assert result["difference"][axis] == d[axis]


def test_the_two_contact_models_differ(compared):
    """From t = 3 s every screw spins at 3 rad/s: the screw model drives the
    crescent along its screws, while under stock contact the screws roll the
    robot sideways, so the tails part by centimetres within 2 s."""
    _, result = compared
    assert max(result["difference"]["x"]["max"], result["difference"]["y"]["max"]) > 0.01


@pytest.mark.parametrize("extra, message", [
    (["--robot", "wheel_rig", "--scenario", "hold"], "the soil model (rovers), not 'wheel_rig'"),
    # a rover compares the soil model with rigid contact (issue 34): it needs a soil
    (["--robot", "archimede", "--scenario", "hold"], "name the soil, --set soil.params=NAME"),
    (["--scenario", "no_such"], "unknown scenario 'no_such'"),
    (["--set", "log.mcap=false"], "log.mcap must be true"),
    (["--robot", "archimede", "--contact", "rft", "--set", "soil.params=eac1a"],
     "compare's contact model is one of screw, rft for an EELS robot, got 'rft' for 'archimede'"),
])
def test_bad_compare_input_is_named(tmp_path, extra, message):
    res = CliRunner().invoke(main, [*ARGS, "--duration", "0.01", "--out", str(tmp_path), *extra])
    assert res.exit_code == 2
    assert message in res.output


def test_compare_under_rft_runs_stock_against_the_granular_screws(tmp_path):
    """--contact rft: the screws in granular ground (resistive force theory) against stock contact, in
    rft/ and stock/; the rft run's summary says it ran the rft contact, and the difference is
    rft - stock, sample by sample."""
    out = tmp_path / "rft"
    res = CliRunner().invoke(main, ["compare", "--robot", "eels_1_0_alternating", "--world", "soil_bin",
                                    "--scenario", "screw_spin", "--contact", "rft", "--duration", "0.3",
                                    "--out", str(out), "--json"])
    assert res.exit_code == 0, res.output
    result = json.loads((out / "compare.json").read_text())
    assert set(result["models"]) == {"stock", "rft"} and result["difference"]["of"] == "rft - stock"
    for model in ("stock", "rft"):
        summary = json.loads((out / model / "summary.json").read_text())
        assert summary["settings"]["resolved"]["contact"] == model and summary["status"] == "ok"
    (_, p0), (_, p1) = tail_track(out / "stock" / "log.mcap"), tail_track(out / "rft" / "log.mcap")
    assert result["difference"]["x"]["max"] == pytest.approx(np.abs(p1[:, 0] - p0[:, 0]).max(), abs=1e-15)
    assert not (out / "screw").exists()
