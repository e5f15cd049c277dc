"""Contact parameters set key by key (``contact.mu``, ``contact.ev_a``, ...): a key set on its own
replaces that key of the named set, in ``eels-gz run --set`` as in a configuration file; the run
writes the resolved set to its folder and the screw contact plugin reads that file; bad keys and
values are errors naming the key (and the valid ones)."""

from __future__ import annotations

import json

import pytest
import yaml
from click.testing import CliRunner

from eels_gz import config
from eels_gz.cli import main
from eels_gz.contact.params import KEYS, load_contact_params
from eels_gz.errors import ConfigError
from eels_gz.run.resolve import resolve_run
from eels_gz.run.runner import prepare

SMALL = {"robot": {"name": "eels_1_0_front_only", "n_modules": 2}, "duration": 0.01,
         "contact": {"model": "screw"}, "log": {"mcap": False, "plot": False}}


def test_a_key_set_on_its_own_replaces_that_key_of_the_set_the_plugin_reads(tmp_path):
    cfg = config.resolve(None, SMALL, ["contact.mu=0.12", "contact.ev_a=4", "contact.params=ice_regulated"])
    prep = prepare(resolve_run(cfg, tmp_path))
    try:
        plugin = next(s.system for s in prep.sim.systems if s.module == "screw_contact")
        expected = {**load_contact_params("ice_regulated").to_dict(), "mu": 0.12, "ev_a": 4.0}
        assert plugin.params.to_dict() == expected  # the plugin's own parameters: the set, two keys replaced
        assert load_contact_params(tmp_path / "contact.yaml").to_dict() == expected  # written resolved
        assert prep.settings["resolved"]["contact_params"] == expected  # and recorded in summary.json
        assert prep.settings["config"]["contact"] == {"model": "screw", "params": "ice_regulated", "mu": 0.12,
                                                      "ev_a": 4}
    finally:
        prep.sim.close()


def test_without_keys_the_named_set_is_used_as_it_is(tmp_path):
    prep = prepare(resolve_run(config.resolve(None, SMALL), tmp_path))
    try:
        plugin = next(s.system for s in prep.sim.systems if s.module == "screw_contact")
        assert plugin.params == load_contact_params("ice")
        assert not (tmp_path / "contact.yaml").exists()
    finally:
        prep.sim.close()


def test_run_cli_with_a_contact_key_records_it(tmp_path):
    out = tmp_path / "run"
    res = CliRunner().invoke(main, ["run", "--robot", "eels_1_0_front_only", "--n-modules", "2", "--duration",
                                    "0.01", "--contact", "screw", "--set", "contact.mu=0.11", "--set",
                                    "log.mcap=false", "--out", str(out), "--json"])
    assert res.exit_code == 0, res.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["settings"]["resolved"]["contact_params"]["mu"] == 0.11
    assert yaml.safe_load((out / "contact.yaml").read_text())["mu"] == 0.11


@pytest.mark.parametrize("item, message", [
    ("contact.muu=0.1", "unknown config key 'contact.muu'; valid keys here: contact.model, contact.params, "
                        + ", ".join(f"contact.{k}" for k in KEYS)),
    ("contact.mu=-0.1", "'contact.mu' = -0.1 is out of range; expected a friction coefficient >= 0"),
    ("contact.ev_a=0", "'contact.ev_a' = 0 is out of range"),
    ("contact.points_ring=2.5", "'contact.points_ring' must be an integer >= 1"),
    ("contact.k=stiff", "'contact.k' must be a stiffness > 0 in N/m, got 'stiff'"),
])
def test_bad_contact_keys_name_the_key(item, message):
    with pytest.raises(ConfigError) as err:
        config.resolve(None, None, [item])
    assert message in str(err.value)
    assert f"--set {item}" in str(err.value)


def test_contact_keys_need_the_screw_model(tmp_path):
    cfg = config.resolve(None, {**SMALL, "contact": {"model": "stock"}}, ["contact.mu=0.1"])
    with pytest.raises(ConfigError, match=r"contact.mu set parameters of the screw contact, but contact.model "
                                          r"is 'stock'"):
        prepare(resolve_run(cfg, tmp_path))


def test_a_null_key_keeps_the_set_value():
    cfg = config.resolve(None, None, ["contact.mu=0.1", "contact.mu=null"])
    assert "mu" not in cfg["contact"]
