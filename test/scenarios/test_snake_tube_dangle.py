"""Scenario ``tube_dangle``: EELS 1.5 hangs from three tethers inside ``tube``.

In equilibrium the tethers carry the whole robot: their summed force equals
m g, with m the sum of the simulated bodies' masses (from the xacro), within
the issue's 1 %. The robot hangs clear of the ice: no sample point of any
collision cylinder more than the issue's 5 mm inside it. The run is checked
to stay still (the tethers' bounce is damped: the base turns at less than
0.01 rad/s at the end), so the average is a static one; and to stay level
over the 6 s run (hung from its two ends only it buckled sideways and
rolled over after 2.7 s: see config/scenarios/tube_dangle.yaml).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from eels_gz import config
from eels_gz.errors import ConfigError
from eels_gz.run.runner import run
from eels_gz.scenarios import PlacementContext
from eels_gz.scenarios.tube_dangle import place

FORCE_TOL = 0.01  # the 1 %
PENETRATION_MAX = 0.005  # m, the bound


@pytest.fixture(scope="module")
def dangled(tmp_path_factory):
    out = tmp_path_factory.mktemp("tube_dangle")
    cfg = config.resolve(overrides={"scenario": {"name": "tube_dangle"}, "sensors": {"enabled": False},
                                    "log": {"mcap": False, "plot": True}})
    summary = run(cfg, out)
    return summary, json.loads((out / "metrics.json").read_text()), out


def test_static_tether_force_is_the_weight(dangled):
    summary, m, _ = dangled
    assert summary["status"] == "ok"
    assert m["weight_n"] == pytest.approx(m["robot_mass_kg"] * 9.80665)
    total = np.array(m["tether_force_total_n"])
    # upward, and equal to m g within 1 % (the horizontal part is the residual sway, small)
    assert abs(m["tether_force_vertical_n"] - m["weight_n"]) <= FORCE_TOL * m["weight_n"], m
    assert np.linalg.norm(total[:2]) <= FORCE_TOL * m["weight_n"]
    # each of the three tethers carries a real share of it (the middle one most)
    assert all(t > 0.1 * m["weight_n"] for t in m["tether_tension_n"])
    # level at the end: no sideways buckling or roll (1 mrad)
    roll, pitch, _ = summary["final_base_pose"]["rpy"]
    assert abs(roll) < 1e-3 and summary["sim_time"] == pytest.approx(6.0)


def test_the_robot_hangs_inside_the_tube_without_touching(dangled):
    _, m, out = dangled
    assert m["min_clearance_m"] > -PENETRATION_MAX
    # it hangs near the bore's axis height (0.6 m), well clear of the bottom
    assert m["min_clearance_settled_m"] > 0.1
    assert (out / "tube_dangle.png").exists()


def test_tube_dangle_needs_tethers():
    ctx = PlacementContext(params={}, scenario={"params": {}}, robot="eels_1_5", model=None, world_file="",
                           terrain=None, gravity=None)
    with pytest.raises(ConfigError, match="needs 'tethers:'"):
        place(ctx)
