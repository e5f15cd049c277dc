"""Issue 31 §5/§7: a sweep is checked before any sample runs. A metric that neither summary.json nor
the scenario's metrics.json holds is refused (it used to run the whole campaign and exit 0 with an
empty column), and an error about a base setting names that setting (a bad ``base.robot`` was
reported under the last key of base)."""

from __future__ import annotations

import json

import pytest
from faults_cli import SMALL, cli

from eels_gz.errors import ConfigError
from eels_gz.sweep.spec import load_spec

SPEC = """base:
  duration: 0.1
  robot: {robot}
  scenario: screw_spin
  log.mcap: false
dispersions:
  contact.mu: {{grid: [0.1, 0.2]}}
  contact.model: {{grid: [screw]}}
metrics: [{metrics}]
"""


def write(tmp_path, robot="eels_1_0_front_only", metrics="advance_m"):
    path = tmp_path / "spec.yaml"
    path.write_text(SPEC.format(robot=robot, metrics=metrics))
    return path


def test_a_metric_the_scenario_writes_is_accepted(tmp_path):
    load_spec(write(tmp_path, metrics="advance_m, sim_time, settings.dt"))


def test_an_unknown_metric_is_refused_before_anything_runs(tmp_path):
    spec = write(tmp_path, metrics="advance_m, no_such_metric")
    with pytest.raises(ConfigError, match=r"metrics: 'no_such_metric' .* scenario 'screw_spin' .*advance_m"):
        load_spec(spec)
    out = tmp_path / "sweep"
    res = cli("sweep", spec, "--out", out)
    assert res.exit_code == 2, res.output
    assert "no_such_metric" in res.output and "Traceback" not in res.output
    assert not out.exists() and not (tmp_path / "sweep.partial").exists(), "a refused sweep wrote its folder"


def test_a_scenario_metric_without_a_scenario_is_refused(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text("base: {duration: 0.1}\ndispersions:\n  contact.mu: {grid: [0.1]}\n"
                    "  contact.model: {grid: [screw]}\nmetrics: [advance_m]\n")
    with pytest.raises(ConfigError, match="runs no scenario"):
        load_spec(spec)


def test_a_bad_base_robot_is_reported_under_base_robot(tmp_path):
    with pytest.raises(ConfigError) as err:
        load_spec(write(tmp_path, robot="nosuch"))
    assert ": base.robot: unknown robot 'nosuch'" in str(err.value), str(err.value)


@pytest.mark.parametrize("scenario", ["screw_spin", "sidewind"])
def test_the_declared_metrics_are_what_a_run_writes(tmp_path, scenario):
    """A scenario's METRICS (what the check above trusts) hold every key of its run's metrics.json, and
    the run writes more than the two every metrics.json has (some keys are only for too short runs,
    e.g. sidewind's duration_s)."""
    out = tmp_path / "run"
    res = cli("run", *SMALL, "--scenario", scenario, "--duration", "0.2", "--set", "log.mcap=false",
              "--set", "log.plot=false", "--out", out)
    assert res.exit_code == 0, res.output
    written = set(json.loads((out / "metrics.json").read_text()))
    from eels_gz.sweep.commands import scenario_metric_keys

    declared = set(scenario_metric_keys({"name": scenario}))
    assert written <= declared, f"written but not declared: {written - declared}"
    assert len(written) > 2
