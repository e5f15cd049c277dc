"""The snake scenarios as gz-sim systems (issue 32): what the conversion added beyond each scenario's
own tests.

- Placement before the run: ``leader_follower`` lays the robot on its S-curve from arc length 0 and
  ``sidewind`` sets the gait's shape of t = 0 where the robot was spawned; ``placement.json`` holds
  exactly those joints and that base position (the pure functions' numbers, compared exactly: the
  record is written from the same Placement the run moves the robot to).
- Bad scenario parameters are a ConfigError naming the parameter before any system loads (exit 2
  from the CLI), not a system failing to configure.
- A system the robot's description loads itself (``wheel_rig``) and the scenario names under
  ``systems:`` runs once; its run ends with the measuring window, or, cut shorter, reports why it
  has no figures.
"""

from __future__ import annotations

import json

import pytest

from eels_gz import config
from eels_gz.config import load_yaml
from eels_gz.errors import ConfigError
from eels_gz.paths import asset
from eels_gz.run import runner
from eels_gz.scenarios import leader_follower as lf
from eels_gz.scenarios import sidewind
from eels_gz.snake.chain import SnakeChain


def run(tmp_path, name: str, duration: float, **params):
    cfg = config.resolve(overrides={"scenario": {"name": name, **params}, "duration": duration,
                                    "sensors": {"enabled": False}, "log": {"mcap": False, "plot": False}})
    seen = {}
    original = runner.prepare

    def spy(*a, **k):
        seen["prep"] = prep = original(*a, **k)
        seen["urdf"] = prep.sim.robot_source_urdf
        seen["spawn"] = prep.sim.frame_world_pose(SnakeChain.from_urdf(prep.sim.robot_source_urdf).root) \
            if "module_1_bend" in prep.sim.robot_source_urdf else None  # the snake's base as spawned
        return prep

    runner.prepare = spy
    try:
        summary = runner.run(cfg, tmp_path)
    finally:
        runner.prepare = original
    return summary, seen


def test_leader_follower_starts_laid_on_its_path(tmp_path):
    summary, seen = run(tmp_path, "leader_follower", 0.01)
    placed = json.loads((tmp_path / "placement.json").read_text())
    assert summary["status"] == "ok" and placed["status"] == "ok"
    chain = SnakeChain.from_urdf(seen["urdf"])
    params = load_yaml(asset("config", "scenarios", "leader_follower.yaml"))["params"]
    cfg = lf.check_params(params)
    start = lf.start_shape(chain, lf.planned_path(chain, cfg, float(seen["spawn"][2, 3])), cfg)
    assert placed["joints"] == start.angles
    assert placed["base_pose"]["position"] == start.base_pose[:3, 3].tolist()
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    # the one control update of these 10 ms ran in the first step, from the laid shape (the tail at arc
    # length ~0), sampled after it, as the controller this system replaces did (whose figures it
    # reproduces), although gz-sim reports no joint position before that step's physics
    assert metrics["motion_control"]["updates"] == 1 and metrics["travelled_m"] == pytest.approx(0.0, abs=1e-3)
    assert metrics["duration_s"] == pytest.approx(seen["prep"].sim.dt, abs=1e-12)


def test_sidewind_starts_in_the_gaits_first_shape_where_it_was_spawned(tmp_path):
    summary, seen = run(tmp_path, "sidewind", 0.01)
    placed = json.loads((tmp_path / "placement.json").read_text())
    assert summary["status"] == "ok" and placed["status"] == "ok"
    gait = sidewind.gait_for(SnakeChain.from_urdf(seen["urdf"]))
    assert placed["joints"] == gait.setpoints(0.0)
    assert placed["base_pose"]["position"] == seen["spawn"][:3, 3].tolist()


@pytest.mark.parametrize("name, key, value", [
    ("leader_follower", "speed", 0.0), ("leader_follower", "path_wavelength", -1.0),
    ("sidewind", "warmup", -1.0)])
def test_bad_parameters_are_a_config_error_before_the_systems_load(tmp_path, name, key, value):
    loaded = []
    original = runner.Simulation

    def watch(*a, **k):
        loaded.append(True)
        return original(*a, **k)

    runner.Simulation = watch
    try:
        with pytest.raises(ConfigError, match=key):
            run(tmp_path, name, 0.01, **{key: value})
    finally:
        runner.Simulation = original
    assert not loaded


def test_a_path_past_the_joint_limits_is_named(tmp_path):
    with pytest.raises(ConfigError, match="past the limits of module_"):
        run(tmp_path, "leader_follower", 0.01, path_amplitude=3.0, path_wavelength=1.0)


def test_the_rigs_own_system_runs_once_and_ends_the_run(tmp_path):
    summary, seen = run(tmp_path / "full", "wheel_rig", 20.0)
    modules = [s.module for s in seen["prep"].sim.systems]
    assert modules.count("wheel_rig") == 1
    end = next(s.system for s in seen["prep"].sim.systems if s.module == "wheel_rig").window_end()
    assert summary["status"] == "ok" and summary["sim_time"] == pytest.approx(end, abs=1e-9)
    assert "measuring window ended" in summary["message"]
    metrics = json.loads((tmp_path / "full" / "metrics.json").read_text())
    assert "drawbar_pull_N" in metrics and "message" not in metrics


def test_a_rig_run_cut_before_its_window_says_why_it_has_no_figures(tmp_path):
    summary, _ = run(tmp_path, "wheel_rig", 0.05)
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert summary["status"] == "ok" and summary["sim_time"] == pytest.approx(0.05, abs=1e-9)
    assert set(metrics) == {"scenario", "status", "message"} and "measuring window" in metrics["message"]
