"""The `granular` section of a run's configuration (`granular.params`, `granular.<key>`): checked key by key
as the soil section is, resolved for contact.model rft only (a medium for another model is refused), and
checked the same way on a sweep's dispersions before anything runs."""

from __future__ import annotations

import pytest

from eels_gz import config
from eels_gz.errors import ConfigError
from eels_gz.granular.params import KEYS, load_granular_params
from eels_gz.run.resolve import GRANULAR_FALLBACK, check_granular, scenario_defaults
from eels_gz.sweep import parse_spec
from eels_gz.sweep.spec import check_spec

BASE = {"robot": {"name": "eels_1_0_alternating", "n_modules": 2}, "scenario": "screw_spin",
        "contact": {"model": "rft"}}


def test_granular_section_takes_a_medium_and_its_keys():
    cfg = config.resolve(None, None, ["contact.model=rft", "granular.params=poppy_seeds_lp", "granular.zeta=3e5",
                                      "granular.blade_rows=4"])
    assert cfg["granular"] == {"params": "poppy_seeds_lp", "zeta": 3e5, "blade_rows": 4}
    p = check_granular(cfg["granular"], "rft")
    assert (p.zeta, p.blade_rows, p.velocity_reg) == (3e5, 4, load_granular_params("poppy_seeds_lp").velocity_reg)
    # under rft a null medium is the scenario's, else the fallback; under another model it stays null
    rft = scenario_defaults(config.resolve(None, None, ["contact.model=rft"]), None)
    assert rft["granular"]["params"] == GRANULAR_FALLBACK
    assert scenario_defaults(config.resolve(), None)["granular"]["params"] is None
    assert check_granular(config.resolve()["granular"], "stock") is None


@pytest.mark.parametrize("sets, message", [
    (["granular.zetta=1"], "unknown config key 'granular.zetta'; valid keys here: granular.params, "
                           + ", ".join(f"granular.{k}" for k in KEYS)),
    (["granular.zeta=0"], "'granular.zeta' = 0 is out of range"),
    (["granular.core_ring=2.5"], "'granular.core_ring' must be an integer count"),
    (["granular.params=3"], "'granular.params' expects a str"),
])
def test_bad_granular_settings_name_the_key(sets, message):
    with pytest.raises(ConfigError) as err:
        config.resolve(None, None, sets)
    assert message in str(err.value)


def spec(**dispersions) -> dict:
    return {"base": dict(BASE), "samples": 3, "seed": 1, "metrics": ["advance_m"], "dispersions": dispersions}


def test_granular_keys_and_media_are_sweep_dispersions():
    s = parse_spec(spec(**{"granular.zeta": {"uniform": [1e6, 3e6]},
                           "granular.params": {"choice": ["mars_simulant_mms", "poppy_seeds_cp"]}}), "g.yaml")
    check_spec(s)
    assert all(1e6 <= x.inputs["granular.zeta"] <= 3e6 for x in s.expand())


@pytest.mark.parametrize("dispersions, message", [
    ({"granular.zeta": {"uniform": [-1.0, 5.0]}}, "'granular.zeta' = -1.0 is out of range"),
    ({"granular.params": {"choice": ["mars_simulant_mms", "quicksand"]}}, "unknown granular medium 'quicksand'"),
])
def test_bad_granular_dispersions_name_the_key(dispersions, message):
    with pytest.raises(ConfigError) as err:
        check_spec(parse_spec(spec(**dispersions), "g.yaml"))
    assert message in str(err.value)


def test_a_medium_for_another_contact_model_is_refused_by_a_sweep():
    base = dict(BASE, contact={"model": "screw"}, granular={"params": "poppy_seeds_lp"})
    with pytest.raises(ConfigError, match="contact.model rft"):
        check_spec(parse_spec({"base": base, "samples": 1, "seed": 1, "metrics": ["advance_m"],
                               "dispersions": {"granular.zeta": {"uniform": [1e6, 2e6]}}}, "g.yaml"))
