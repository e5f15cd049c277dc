"""A run resolves its contact parameters once: the file ``contact.params`` names is read once on the
whole path of ``eels-gz run`` (the set with its ``--set contact.*`` keys, the step's stability check,
summary.json and the screw contact system's ``configure`` all use that one resolved set), and the
resolved set is still written to the run folder (``contact.yaml``) when keys are set on their own.
The parses are counted by wrapping the YAML loader of eels_gz.paramsets, which reads every
contact (and soil) parameter file. Before this, one run read it three times (four with ``contact.*`` keys)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

import eels_gz.paramsets as paramsets
from eels_gz.cli import main
from eels_gz.contact.params import load_contact_params, resolved_contact_sets


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


def test_outside_a_run_the_file_is_read(tmp_path, parses):
    """The hand-over is scoped to the run's setup: after it (and under Gazebo, where the plugin reads
    ``<contact_params>`` in configure) each load reads the file."""
    load_contact_params("ice")
    with resolved_contact_sets({"ice": load_contact_params("ice_regulated")}):
        assert load_contact_params("ice") == load_contact_params("ice_regulated")  # handed on, not read
    assert load_contact_params("ice").stick_length > 0.0  # read again: the block is over
    assert parses == ["ice.yaml", "ice_regulated.yaml", "ice_regulated.yaml", "ice.yaml"]


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
