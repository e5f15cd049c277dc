"""surface_traverse metrics (issue 8): the watching system sends no
command (the joint-control plugin never gets an external set point, so the
scenario's set points, which ``eels-gz compare`` depends on, are what
runs), and its metrics agree with the runner's own summary."""

from __future__ import annotations

import json

import numpy as np
import pytest

from eels_gz import config
from eels_gz.run.runner import run
from snake_probe import system  # test helper (test/scenarios/snake_probe.py)

DURATION = 4.0  # s: the crescent ramp (0-2 s), the hold, the first second of forward spin (from 3 s)


@pytest.fixture(scope="module")
def traverse(tmp_path_factory):
    out = tmp_path_factory.mktemp("traverse")
    cfg = config.resolve(overrides={"scenario": {"name": "surface_traverse"}, "duration": DURATION,
                                    "contact": {"model": "screw"}, "sensors": {"enabled": False},
                                    "log": {"mcap": False, "plot": True}})
    from eels_gz.run import runner

    seen = {}
    original = runner.prepare

    def spy(*a, **k):  # keep the simulation to look at its joint-control plugin afterwards
        seen["prep"] = original(*a, **k)
        return seen["prep"]

    runner.prepare = spy
    try:
        summary = run(cfg, out)
    finally:
        runner.prepare = original
    return summary, json.loads((out / "metrics.json").read_text()), seen["prep"].sim, out


def test_the_watching_system_sends_no_commands(traverse):
    _, _, sim, _ = traverse
    assert system(sim, "joint_control").has_external is False


def test_metrics_agree_with_the_summary(traverse):
    summary, metrics, _, out = traverse
    assert metrics["status"] == "ok" and (out / "surface_traverse.png").exists()
    assert metrics["final_tail_pose"]["position_m"] == pytest.approx(summary["final_base_pose"]["position"],
                                                                     abs=1e-12)
    assert metrics["final_tail_pose"]["yaw_rad"] == pytest.approx(summary["final_base_pose"]["rpy"][2], abs=1e-9)
    phases = metrics["phases"]
    assert [p["start_s"] for p in phases] == [0.0, 2.0, 3.0]  # the keyframes before the 4 s end
    total = np.sum([p["displacement_m"] for p in phases], axis=0)
    # the path is at least as long as the straight line it joins
    assert metrics["tail_path_length_m"] >= np.linalg.norm(total[:2]) - 1e-12
    # the screws spin from 3 s: that phase moves the tail more than the held shape before it
    assert np.linalg.norm(phases[2]["displacement_m"][:2]) > np.linalg.norm(phases[1]["displacement_m"][:2])
