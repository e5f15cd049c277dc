"""Seed 004's soil sets and the slope campaign that sweeps them (issue 44): one source per number.

config/soil/<set>.yaml gives each value and its source, config/sweeps/archimede_slopes.yaml the range
each unpublished value is swept over: every shipped value lies inside its range, each soil's cases
sweep the same keys over the same ranges, the high-grouser wheel's estimated lug height (its xacro) is
the top of its swept range, and every case pairs the soil and the wheel its labels name. The campaign's
soils do not come from `calibrate soil`: no set says it was identified from the paper's slips."""

from __future__ import annotations

import re

import pytest

from eels_gz import registry
from eels_gz.description.model import RobotModel
from eels_gz.description.xacro_loader import process_xacro
from eels_gz.paths import asset
from eels_gz.rover.from_urdf import soil_contact_wheels
from eels_gz.soil.params import load_soil_params
from eels_gz.sweep import load_spec

SPEC = load_spec(asset("config", "sweeps", "archimede_slopes.yaml"))
SOILS = {"A": "lava_gravel", "B": "eac1a"}
WHEELS = {"A": "low_grousers", "B": "high_grousers"}


def cases():
    """(labels, {key: dispersion}) of each case."""
    return [(labels, {d.key: d for d in case}) for labels, case in zip(SPEC.case_labels, SPEC.case_dispersions())]


def test_every_case_pairs_the_soil_and_wheel_its_labels_name():
    seen = set()
    for labels, ds in cases():
        assert ds["soil.params"].values == (SOILS[labels["soil"]],)
        assert ds["robot.xacro_args.wheels"].values == (WHEELS[labels["wheel"]],)
        off = "robot.xacro_args.grouser_terms" in ds
        assert off == (labels["grousers"] == "off") and (not off or ds["robot.xacro_args.grouser_terms"].values ==
                                                         ("false",))
        seen.add((labels["wheel"], labels["soil"], labels["grousers"], labels["mode"]))
    # the setups in the paper's three drive modes, the 2x2 cross and both setups with the grousers off
    assert {(w, s, g, m) for w, s, g, m in seen if g == "on" and w == s} == {
        (x, x, "on", m) for x in "AB" for m in ("straight", "lateral", "parallel")}
    assert {("A", "B", "on", "straight"), ("B", "A", "on", "straight"), ("A", "A", "off", "straight"),
            ("B", "B", "off", "straight")} <= seen and len(seen) == 10


@pytest.mark.parametrize("soil", sorted(SOILS))
def test_each_soils_values_lie_in_its_swept_ranges(soil):
    params = load_soil_params(SOILS[soil]).to_dict()
    ranges = [{k: d for k, d in ds.items() if k.startswith("soil.") and d.random} for labels, ds in cases()
              if labels["soil"] == soil]
    assert all(r == ranges[0] for r in ranges)  # the same keys and ranges in every case of that soil
    for key, d in ranges[0].items():
        lo, hi = d.values
        assert lo <= params[key[len("soil."):]] <= hi, (soil, key, d.values)
    assert len(ranges[0]) >= 9


def test_the_high_grouser_lug_estimate_tops_its_swept_range():
    entry = registry.robot("archimede")
    urdf = process_xacro(entry.path, entry.args(None, wheels="high_grousers", soil="eac1a", gazebo="true"))
    height = soil_contact_wheels(RobotModel.from_urdf(urdf, "archimede"))[0][0]["lug_height"]
    for labels, ds in cases():
        d = ds.get("robot.xacro_args.lug_height")
        assert (d is not None) == (labels["wheel"] == "B" and labels["grousers"] == "on")
        if d is not None:
            assert d.values[1] == height and 0.0 < d.values[0] < height


@pytest.mark.parametrize("soil", sorted(SOILS.values()))
def test_no_campaign_soil_is_identified_from_the_papers_slip(soil):
    text = asset("config", "soil", f"{soil}.yaml").read_text()
    key_lines = [line for line in text.splitlines() if re.match(r"^[a-z_0-9]+:", line)]
    assert key_lines and not re.search(r"^# .*IDENTIFIED from", text, re.M)
    assert "calibrate soil` is not used here" in text
