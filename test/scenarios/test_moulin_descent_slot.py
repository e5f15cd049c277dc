"""``moulin_descent`` in the moulin's slot: placed by the placement algorithm, it
holds and down-climbs on its screws.

The contract (issue 8): placement settles into non-penetrating contact (every
sample point less than 5 mm in) within the timeout, then the robot down-climbs
and the run reports the distance. The screws turn at the rates that lower each
at ``climb_speed`` with no slip across its blade; the tail must descend at least
DESCENT_RATIO_MIN of that in 4 s (the rest is slip across the blades at the
finite |e_v| of the default ice; figures in docs/scenarios.md). Facing
walls let the bends squeeze the contacts: their squeeze balance is near 0
(SQUEEZE_MAX; the helix's is 0.13).
"""

from __future__ import annotations

import json

import pytest

from eels_gz import config, registry
from eels_gz.config import load_yaml
from eels_gz.errors import ConfigError
from eels_gz.run.runner import run

PENETRATION_MAX = 0.005  # m, the placement bound
DESCENT_TIME = 4.0  # s after a 1 s hold
DESCENT_RATIO_MIN = 0.5
SQUEEZE_MAX = 0.05


def test_placed_in_the_slot_it_holds_and_down_climbs(tmp_path):
    speed = load_yaml(registry.scenario_path("moulin_descent"))["params"]["climb_speed"]
    cfg = config.resolve(overrides={"scenario": {"name": "moulin_descent", "hold_time": 1.0},
                                    "duration": 1.0 + DESCENT_TIME, "sensors": {"enabled": False},
                                    "log": {"mcap": False, "plot": False}})
    run(cfg, tmp_path)
    m = json.loads((tmp_path / "metrics.json").read_text())
    assert m["status"] == "ok"
    placement = m["placement"]
    assert placement["converged"] and placement["penetration_m"] < PENETRATION_MAX, placement["message"]
    assert m["hold_drift_m"] < 0.01  # the wall_climb bound, over the 1 s hold
    assert speed < 0 and m["descended_m"] >= DESCENT_RATIO_MIN * abs(speed) * DESCENT_TIME
    assert m["descent_rate_m_s"] == pytest.approx(m["descended_m"] / DESCENT_TIME, rel=1e-6)
    hold = m["hold_analysis"]
    assert hold["screws_in_contact"] >= 4 and hold["squeeze_balance"] < SQUEEZE_MAX
    assert m["max_axis_gravity_angle_deg"] < 30.0


def test_a_start_outside_the_shaft_is_refused(tmp_path):
    cfg = config.resolve(overrides={"scenario": {"name": "moulin_descent", "z_start": 5.0}, "duration": 0.01,
                                    "sensors": {"enabled": False}, "log": {"mcap": False, "plot": False}})
    with pytest.raises(ConfigError, match="moulin_descent: no pair of walls facing each other"):
        run(cfg, tmp_path)
