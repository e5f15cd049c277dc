"""`--set soil.params=NAME` and `--set soil.<key>=VALUE` (issue 34), checked as contact parameters are:
an unknown key or set and an out-of-range value name the setting; the same checks run on a sweep's
dispersions before anything runs (eels_gz/sweep/spec.py)."""

from __future__ import annotations

import pytest

from eels_gz import config
from eels_gz.errors import ConfigError
from eels_gz.run.runner import check_soil
from eels_gz.registry import robot
from eels_gz.soil.params import KEYS, load_soil_params
from eels_gz.sweep import parse_spec
from eels_gz.sweep.spec import check_spec

RIG = {"scenario": "wheel_rig", "soil": {"params": "lava_gravel"}}


def test_soil_section_takes_a_set_and_its_keys():
    cfg = config.resolve(None, None, ["soil.params=eac1a", "soil.cohesion=800", "soil.k_phi=2.5e5"])
    assert cfg["soil"] == {"params": "eac1a", "cohesion": 800, "k_phi": 2.5e5}
    assert config.soil_overrides(cfg["soil"]) == {"cohesion": 800, "k_phi": 2.5e5}
    params = check_soil(cfg["soil"], robot("archimede"))
    assert params == load_soil_params("eac1a").__class__(**{**load_soil_params("eac1a").to_dict(),
                                                            "cohesion": 800.0, "k_phi": 2.5e5})
    # null removes an override; the default is no soil at all
    assert "cohesion" not in config.resolve(None, None, ["soil.cohesion=800", "soil.cohesion=null"])["soil"]
    assert check_soil(config.resolve()["soil"], robot("archimede")) is None


@pytest.mark.parametrize("sets, message", [
    (["soil.cohesoin=1"], "unknown config key 'soil.cohesoin'; valid keys here: soil.params, "
                          + ", ".join(f"soil.{k}" for k in KEYS)),
    (["soil.friction_angle_deg=95"], "'soil.friction_angle_deg' = 95 is out of range; expected a friction angle"),
    (["soil.n=0"], "'soil.n' = 0 is out of range"),
    (["soil.c1=high"], "'soil.c1' must be a Wong-Reece coefficient in [0, 1], got 'high'"),
    (["soil.params=3"], "'soil.params' expects a str"),
])
def test_bad_soil_settings_name_the_key(sets, message):
    with pytest.raises(ConfigError) as err:
        config.resolve(None, None, sets)
    assert message in str(err.value)


@pytest.mark.parametrize("soil, name, message", [
    ({"params": "basalt"}, "archimede", "unknown soil parameter set 'basalt'"),
    ({"params": None, "cohesion": 5.0}, "archimede", "soil.cohesion set keys of a soil set, but no set is named"),
    ({"params": "eac1a"}, "rocky7", "'rocky7' takes no soil"),
])
def test_a_soil_the_run_cannot_use_is_refused(soil, name, message):
    with pytest.raises(ConfigError, match=message):
        check_soil(soil, robot(name))


def spec(**dispersions) -> dict:
    return {"base": dict(RIG), "samples": 3, "seed": 1, "metrics": ["drawbar_pull_N"],
            "dispersions": dispersions}


def test_soil_keys_and_sets_are_sweep_dispersions():
    s = parse_spec(spec(**{"soil.cohesion": {"uniform": [0.0, 2000.0]},
                           "soil.params": {"choice": ["eac1a", "lava_gravel"]}}), "soil.yaml")
    check_spec(s)
    samples = s.expand()
    assert len(samples) == 3
    assert all(0.0 <= x.inputs["soil.cohesion"] <= 2000.0 for x in samples)


@pytest.mark.parametrize("dispersions, message", [
    ({"soil.cohesion": {"uniform": [-100.0, 5.0]}}, "dispersions.soil.cohesion = -100.0: 'soil.cohesion' = -100.0 "
                                                    "is out of range"),
    ({"soil.params": {"choice": ["eac1a", "basalt"]}}, "dispersions.soil.params = 'basalt': unknown soil "
                                                       "parameter set 'basalt'"),
    ({"soil.k_x": {"grid": [1.0]}}, "unknown config key 'soil.k_x'"),
])
def test_bad_soil_dispersions_name_the_key(dispersions, message):
    with pytest.raises(ConfigError) as err:
        check_spec(parse_spec(spec(**dispersions), "soil.yaml"))
    assert message in str(err.value)
