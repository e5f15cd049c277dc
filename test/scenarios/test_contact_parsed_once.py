"""A run resolves its contact parameters once: the file ``contact.params`` names is read once on the
whole path of ``eels-gz run`` (the set with its ``--set contact.*`` keys, the step's stability check,
summary.json and the screw contact system's ``configure`` all use that one resolved set), and the
resolved set is still written to the run folder (``contact.yaml``) when keys are set on their own.
The parses are counted by wrapping the YAML loader of eels_gz.contact.params, which reads every
contact parameter file. Before this, one run read it three times (four with ``contact.*`` keys)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

import eels_gz.contact.params as contact_params
from eels_gz.cli import main
from eels_gz.contact.params import load_contact_params


@pytest.fixture
def parses(monkeypatch) -> list[str]:
    """The contact parameter files read, one entry per read."""
    read: list[str] = []
    loader = contact_params.load_yaml

    def counting(path, *args, **kwargs):
        read.append(Path(path).name)
        return loader(path, *args, **kwargs)

    monkeypatch.setattr(contact_params, "load_yaml", counting)
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
    with contact_params.resolved_contact_sets({"ice": load_contact_params("ice_regulated")}):
        assert load_contact_params("ice") == load_contact_params("ice_regulated")  # handed on, not read
    assert load_contact_params("ice").stick_length > 0.0  # read again: the block is over
    assert parses == ["ice.yaml", "ice_regulated.yaml", "ice_regulated.yaml", "ice.yaml"]
