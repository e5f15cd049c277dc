"""``leader_follower`` on ice (issues 8 and 33): EELS 1.0 front-only follows an
S-curve head first, path tracker + leader-follower shape + screw motion
control, over the whole 5 m path of config/scenarios/leader_follower.yaml.

CI run: the full TRAVEL = 5 m (the scenario's ``travel``, read from the
file) at SPEED = 0.1 m/s commanded, twice the scenario's 0.05 m/s (NEO's
field speeds: 1-7.6 cm/s) so that the run takes 50 s simulated. Contact:
the scenario's own, the default ice (issue 33: one ice for every scenario;
its across-thread line, identified from the papers' hardware behaviours,
lets the screws barely slip across their blades, which NEO's no-slip
controllers assume, and keeps static friction).

The bound is issue 33's, NEO's hardware on synthetic ice (Table II, tests
1-9): mean <= 6.7 cm and max <= 30 cm over every module point (tail end,
bend joints, head end) and every control period of the run. Issue 8's
tighter bound of this project (mean 3 cm, max 10 cm) was met on
``ice_grip``, a set with no static friction that no test uses any more; on
the default ice the robot's tail end strays further while the first S is
laid (docs/scenarios.md gives the figures).
"""

from __future__ import annotations

import json

import pytest

from eels_gz import config
from eels_gz.config import load_yaml
from eels_gz.run.runner import run
from eels_gz.paths import asset

SPEED = 0.1  # m/s commanded along the path (module docstring)
MEAN_MAX, MAX_MAX = 0.067, 0.30  # m, issue 33's bound: NEO Table II, tests 1-9


def scenario_travel() -> float:
    return float(load_yaml(asset("config", "scenarios", "leader_follower.yaml"))["params"]["travel"])


@pytest.fixture(scope="module")
def metrics(tmp_path_factory):
    out = tmp_path_factory.mktemp("leader_follower")
    cfg = config.resolve(overrides={"scenario": {"name": "leader_follower", "speed": SPEED},
                                    "sensors": {"enabled": False},
                                    "log": {"mcap": False, "plot": True}})
    summary = run(cfg, out)
    m = json.loads((out / "metrics.json").read_text())
    m["summary"] = summary
    m["png"] = (out / "leader_follower.png").exists()
    return m


def test_run_follows_the_whole_path_and_reports_table_ii_form(metrics):
    travel = scenario_travel()
    assert travel == pytest.approx(5.0)  # the issue's 5 m path
    assert metrics["status"] == "ok" and "travelled" in metrics["summary"]["message"]
    assert metrics["travelled_m"] >= travel
    # the screws drive the robot at the commanded speed (no slip): within 5 % on average
    assert metrics["average_speed_m_s"] == pytest.approx(SPEED, rel=0.05)
    points = metrics["tracking_error_per_point"]
    assert list(points)[0] == "tail" and list(points)[-1] == "head" and len(points) == 12
    for v in points.values():
        assert 0.0 <= v["mean_m"] <= v["max_m"] and v["std_m"] >= 0.0
    assert metrics["png"]


def test_issue_bound_neo_table_ii_mean_6_7cm_max_30cm(metrics):
    e = metrics["tracking_error"]
    assert e["mean_m"] <= MEAN_MAX, e
    assert e["max_m"] <= MAX_MAX, e
    for name, v in metrics["tracking_error_per_point"].items():
        assert v["max_m"] <= MAX_MAX, (name, v)
