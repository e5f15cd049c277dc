"""Mobility failure in the host (EELS-DARTS §4.3.1): EELS 1.5 held vertical
and forced to tip, half a degree per step, through the 60 deg threshold of
config/snake.yaml. The watch must stay ``ok`` up to 60 deg and fail at the
first step past it; the runner ends a run with that status."""

from __future__ import annotations

import json
import math

import numpy as np

from eels_gz import config
from eels_gz.run.resolve import resolve_run
from eels_gz.run.runner import prepare, run
from eels_gz.scenarios.mobility_watch import MobilityWatch, threshold_from
from eels_gz.snake.chain import axis_rotation
from eels_gz.snake.params import load_snake_params


def test_mobility_failure_triggers_past_the_threshold_and_not_before():
    cfg = config.resolve(overrides={"robot": {"name": "eels_1_5"}, "sensors": {"enabled": False}})
    sim = prepare(resolve_run(cfg)).sim
    threshold = threshold_from({})
    assert threshold == load_snake_params().mobility.threshold
    watch = MobilityWatch(threshold)
    g = np.asarray(sim.world.getGravity(), float)
    # tail axis (x) pointing down the gravity line, then tipped by `tilt` about y
    down = axis_rotation(np.array([0.0, 1.0, 0.0]), math.pi / 2)
    first_failure = None
    tilts = np.radians(np.arange(40.0, 80.0, 0.5))
    for tilt in tilts:
        pose = np.eye(4)
        pose[:3, :3] = axis_rotation(np.array([0.0, 1.0, 0.0]), -tilt) @ down
        pose[:3, 3] = (0.0, 0.0, 5.0)
        sim.place_robot(pose, {}, "base_link")
        sim.step()
        end = watch.check(sim.time, sim.frame_world_pose(watch.link)[:3, :3], g)
        # the check reads the state after the step: the angle it saw
        seen = watch.angles[-1]
        if end is not None and first_failure is None:
            first_failure = seen
            assert "deg from the gravity line" in end  # the system ends the run with mobility_failure
        if first_failure is None:
            assert seen <= threshold + 1e-12  # never before the threshold
    assert first_failure is not None and first_failure > threshold
    # the first failure is within one 0.5 deg step (plus 1 ms of free fall rotation) of 60 deg
    assert first_failure - threshold < math.radians(0.6)


def test_a_run_ends_with_status_mobility_failure(tmp_path):
    """moulin_descent with a threshold of 1e-3 rad: the helix's tail axis is
    far from vertical, so the first check ends the run with the status."""
    cfg = config.resolve(overrides={"scenario": {"name": "moulin_descent", "helix": 1.0, "z_start": -2.0,
                                                 "mobility_threshold": 1e-3, "placement_timeout": 0.05},
                                    "duration": 0.5, "sensors": {"enabled": False},
                                    "log": {"mcap": False, "plot": False}})
    summary = run(cfg, tmp_path)
    # placement cannot finish in 50 ms: that status wins and names the timeout
    assert summary["status"] == "placement_failed" and "timeout" in summary["message"]
    cfg["scenario"]["placement_timeout"] = 0.0
    cfg["scenario"]["z_start"] = -2.0
    summary = run(cfg, tmp_path / "b")
    assert summary["status"] == "mobility_failure", summary.get("message")
    metrics = json.loads((tmp_path / "b" / "metrics.json").read_text())
    assert metrics["status"] == "mobility_failure"
    assert metrics["max_axis_gravity_angle_deg"] > math.degrees(1e-3)
    # the placed helix's hold analysis (eels_gz.snake.holding): screws on the wall, and the normal
    # force their Coulomb grip along the threads would need far above what placement leaves (it falls)
    hold = metrics["hold_analysis"]
    assert hold["screws_in_contact"] >= 3
    assert 0.0 < hold["along_thread_share_mean"] <= 1.0 and 0.0 <= hold["squeeze_balance"]
    assert hold["holding_normal_force_n"] > 2.0 * hold["normal_force_n"]
