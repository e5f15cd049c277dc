"""``leader_follower`` on ice (issue 8): EELS 1.0 front-only follows an
S-curve head first, path tracker + leader-follower shape + screw motion
control.

CI leg: TRAVEL m of path at a commanded SPEED (raised from NEO's 1-7.6 cm/s
for CI), default config/contact/ice.yaml. What works is asserted: the run
ends when the tail has travelled the leg, the metrics are in NEO Table II
form for all 12 module points (mean <= max, std >= 0) and the plot is written.

The issue's bound (mean <= 3 cm, max <= 10 cm over 5 m) is NOT met yet and
is kept, unloosened, as a strict xfail. Measured: on default ice at 0.2 m/s
over 0.5 m (this leg), mean 24 cm and max 66 cm (achieved speed 3.6 cm/s:
the screws slip); over 1 m, mean 26 cm and max 72 cm; with |e_v| = 300 at 0.05 m/s over 0.5 m, mean 6.3 cm and max 28 cm,
the error growing from tail to head. See the report: the shape's
time-varying term and the tail-anchored fit are the suspects.
"""

from __future__ import annotations

import json

import pytest

from eels_gz import config
from eels_gz.host.runner import run

SPEED = 0.2  # m/s commanded along the path
TRAVEL = 0.5  # m of tail travel in CI


@pytest.fixture(scope="module")
def metrics(tmp_path_factory):
    out = tmp_path_factory.mktemp("leader_follower")
    cfg = config.resolve(overrides={"scenario": {"name": "leader_follower", "speed": SPEED, "travel": TRAVEL},
                                    "contact": {"model": "screw"}, "sensors": {"enabled": False},
                                    "log": {"mcap": False, "plot": True}})
    summary = run(cfg, out)
    m = json.loads((out / "metrics.json").read_text())
    m["summary"] = summary
    m["png"] = (out / "leader_follower.png").exists()
    return m


def test_run_follows_the_leg_and_reports_table_ii_form(metrics):
    assert metrics["status"] == "ok" and "travelled" in metrics["summary"]["message"]
    assert metrics["travelled_m"] >= TRAVEL
    points = metrics["tracking_error_per_point"]
    assert list(points)[0] == "tail" and list(points)[-1] == "head" and len(points) == 12
    for v in points.values():
        assert 0.0 <= v["mean_m"] <= v["max_m"] and v["std_m"] >= 0.0
    assert metrics["png"]


@pytest.mark.xfail(strict=True, reason="issue 8 bound not met yet: measured mean 6-26 cm, max 28-72 cm (module doc)")
def test_issue_bound_mean_3cm_max_10cm(metrics):
    assert metrics["tracking_error"]["mean_m"] <= 0.03
    assert metrics["tracking_error"]["max_m"] <= 0.10
