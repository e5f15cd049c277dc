"""A run resolves its parameter sets once: the file ``contact.params`` (``soil.params``,
``granular.params``) names is read once on the whole path of ``eels-gz run`` (the set with its
``--set contact.*`` keys, the step's stability check, summary.json and the contact system's
``configure``, which gets the set from the host context ``ecm.param_sets``, all use that one resolved
set), and the resolved set is still written to the run folder (``contact.yaml``) when keys are set on
their own. The parses are counted by wrapping the YAML loader of eels_gz.paramsets, which reads every
contact, soil and granular parameter file. Before issue 42 one run read its contact set three times
(four with ``contact.*`` keys); before issue 46 a rover's soil set three times and a granular medium twice."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

import eels_gz.paramsets as paramsets
from eels_gz.cli import main
from eels_gz.contact.params import ContactParams, load_contact_params
from eels_gz.granular.params import load_granular_params
from eels_gz.gzapi import gzsim
from eels_gz.soil.params import load_soil_params


@pytest.fixture
def parses(monkeypatch) -> list[str]:
    """The contact parameter files read, one entry per read."""
    read: list[str] = []
    loader = paramsets.load_yaml

    def counting(path, *args, **kwargs):
        read.append(Path(path).name)
        return loader(path, *args, **kwargs)

    monkeypatch.setattr(paramsets, "load_yaml", counting)
    return read


@pytest.mark.parametrize("keys", [[], ["--set", "contact.mu=0.11", "--set", "contact.ev_a=4"]])
def test_one_run_reads_its_contact_parameters_once(tmp_path, parses, keys):
    out = tmp_path / "run"
    res = CliRunner().invoke(main, ["run", "--robot", "eels_1_0_front_only", "--n-modules", "2", "--duration",
                                    "0.01", "--contact", "screw", "--set", "contact.params=ice_regulated", *keys,
                                    "--set", "log.mcap=false", "--set", "log.plot=false", "--out", str(out),
                                    "--json"])
    assert res.exit_code == 0, res.output
    assert parses == ["ice_regulated.yaml"]  # once, for the whole run
    parses.clear()
    expected = load_contact_params("ice_regulated").to_dict()
    if keys:
        expected.update(mu=0.11, ev_a=4.0)
        assert yaml.safe_load((out / "contact.yaml").read_text()) == expected  # written resolved, as before
    else:
        assert not (out / "contact.yaml").exists()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "ok"
    assert summary["settings"]["resolved"]["contact_params"] == expected


@pytest.mark.parametrize("args, name, key", [
    (["--scenario", "rover_drive", "--set", "soil.params=dry_sand"], "dry_sand.yaml", "soil_params"),  # archimede
    (["--scenario", "screw_spin", "--contact", "rft"], "mars_simulant_mms.yaml", "granular_params"),  # rft medium
])
def test_one_run_reads_its_soil_or_granular_set_once(tmp_path, parses, args, name, key):
    out = tmp_path / "run"
    res = CliRunner().invoke(main, ["run", *args, "--duration", "0.01", "--set", "log.mcap=false", "--set",
                                    "log.plot=false", "--out", str(out), "--json"])
    assert res.exit_code == 0, res.output
    assert parses == [name]  # once, for the whole run: the system got the resolved set from the host
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "ok"
    load = load_soil_params if key == "soil_params" else load_granular_params
    assert summary["settings"]["resolved"][key] == load(name[:-len(".yaml")]).to_dict()  # the set it ran with


def test_outside_a_run_the_file_is_read(parses):
    """Without a host context (and under Gazebo, where the plugin reads ``<contact_params>`` in
    configure) each load reads the file: no cache keyed by path. The host context hands a set only
    to the element naming the source it was resolved from."""
    load_contact_params("ice")
    load_contact_params("ice")
    assert parses == ["ice.yaml", "ice.yaml"]
    ecm = gzsim.EntityComponentManager()
    given = ContactParams(**{**load_contact_params("ice").to_dict(), "mu": 0.3})
    ecm.param_sets = {"contact_params": gzsim.ResolvedSet("ice", given)}
    assert gzsim.resolved_set(ecm, "contact_params", "ice") is given
    assert gzsim.resolved_set(ecm, "contact_params", "ice_regulated") is None  # another set: read its file
    assert gzsim.resolved_set(ecm, "soil_params", "ice") is None


def test_a_sweep_reads_the_set_once_per_sample_run(tmp_path, parses):
    """A sweep's samples in one worker: each sample's settings are checked (the set read on the first
    check only, while the file is unchanged) and its run resolves the set once. Before: a check and
    three reads in each run, per sample."""
    from eels_gz.sweep.commands import _CHECKED_CONTACT_SETS
    from eels_gz.sweep.execute import Job, run_job

    _CHECKED_CONTACT_SETS.clear()  # as in a fresh worker
    base = [("robot.name", "eels_1_0_front_only", "base.robot"), ("robot.n_modules", 2, "base.robot.n_modules"),
            ("duration", 0.01, "base.duration"), ("contact.model", "screw", "base.contact.model"),
            ("contact.params", "ice_regulated", "base.contact.params"), ("log.mcap", False, "base.log.mcap"),
            ("log.plot", False, "base.log.plot")]
    mus = (0.1, 0.12, 0.14)
    for i, mu in enumerate(mus):
        items = base + [("contact.mu", mu, "dispersions.contact.mu")]
        row = run_job(Job("run", items, str(tmp_path / "samples" / f"{i:05d}"), str(tmp_path), i, 7, 0,
                          {"contact.mu": mu}, ("settings.resolved.contact_params.mu",)))
        assert row["status"] == "ok" and row["settings.resolved.contact_params.mu"] == mu
    assert parses == ["ice_regulated.yaml"] * (1 + len(mus))  # the first check, then one per run
