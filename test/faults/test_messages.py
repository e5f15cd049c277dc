"""The trial's tracebacks (issue 31) are messages with exit 2: an --out that names no folder of its
own, robot.xacro_args that is not a mapping, a binary --config or drag CSV; and a key written twice
in any YAML file the package reads is refused, naming the file, the key and both lines."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml
from faults_cli import SMALL, cli

from eels_gz.errors import ConfigError

REPO = Path(__file__).resolve().parents[2]
SHORT = ("--duration", "0.02")
BINARY = bytes(range(256)) * 4  # not UTF-8 from byte 128 on


def no_traceback(res) -> None:
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output and "Error:" not in res.output.replace("Error: Invalid value", ""), res.output
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)


@pytest.mark.parametrize("out, message", [
    (".", "--out '.' must name a folder of its own"),
    ("/", "--out '/' must name a folder of its own"),
    ("", "--out is empty; it must name a folder"),
])
@pytest.mark.parametrize("command", ["run", "compare"])
def test_an_out_that_names_no_folder(tmp_path, monkeypatch, command, out, message):
    monkeypatch.chdir(tmp_path)
    res = cli(command, *SMALL, *SHORT, "--out", out)
    no_traceback(res)
    assert message in res.output, res.output
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("value", ["hello", "[1,2]", "{head: ["])
def test_xacro_args_must_be_a_mapping(tmp_path, value):
    res = cli("run", *SMALL, *SHORT, "--set", f"robot.xacro_args={value}", "--out", tmp_path / "r")
    no_traceback(res)
    assert "'robot.xacro_args' must be a mapping of xacro argument names to values" in res.output, res.output
    assert not (tmp_path / "r").exists()


def test_a_binary_config_file(tmp_path):
    config = tmp_path / "settings.yaml"
    config.write_bytes(BINARY)
    res = cli("run", *SMALL, *SHORT, "--config", config, "--out", tmp_path / "r")
    no_traceback(res)
    assert f"{config}: not a YAML text file (byte 128 is not UTF-8 text)" in res.output, res.output


def test_a_binary_drag_csv(tmp_path):
    drags = tmp_path / "drags.csv"
    drags.write_bytes(BINARY)
    res = cli("calibrate", "friction", drags)
    no_traceback(res)
    assert f"{drags}: not a CSV text file" in res.output, res.output


def test_a_duplicate_key_in_a_config_file_is_refused(tmp_path):
    config = tmp_path / "settings.yaml"
    config.write_text("duration: 1\nphysics:\n  dt: 0.001\n  # the same key again, further down\n  dt: 0.002\n")
    res = cli("run", *SMALL, "--config", config, "--out", tmp_path / "r")
    no_traceback(res)
    assert f"{config}:5: duplicate key 'dt' (first at line 3)" in res.output, res.output
    assert not (tmp_path / "r").exists()


def test_a_duplicate_key_in_a_sweep_spec_is_refused(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text("base: {duration: 0.1}\nsamples: 2\nsamples: 3\n")
    res = cli("sweep", spec, "--out", tmp_path / "s")
    no_traceback(res)
    assert f"{spec}:3: duplicate key 'samples' (first at line 2)" in res.output, res.output


def test_a_duplicate_key_in_a_scenario_or_contact_file_is_refused(tmp_path):
    from eels_gz.contact.params import load_contact_params
    from eels_gz.control.setpoints import load_scenario

    contact = tmp_path / "ice.yaml"
    contact.write_text((REPO / "config" / "contact" / "ice.yaml").read_text() + "\nmu: 0.9\n")
    with pytest.raises(ConfigError, match=r"ice.yaml:\d+: duplicate key 'mu' \(first at line \d+\)"):
        load_contact_params(contact)
    scenario = tmp_path / "scene.yaml"
    scenario.write_text((REPO / "config" / "scenarios" / "screw_spin.yaml").read_text() + "\nsetpoints: []\n")
    with pytest.raises(ConfigError, match=r"scene.yaml:\d+: duplicate key 'setpoints'"):
        load_scenario(scenario)


def test_merge_keys_are_not_duplicates():
    from eels_gz.yamlio import loads

    assert loads("a: &x {k: 1, j: 2}\nb:\n  <<: *x\n  k: 3\n") == {"a": {"k": 1, "j": 2}, "b": {"k": 3, "j": 2}}
    assert loads("a: 1\nb: 1\n") == yaml.safe_load("a: 1\nb: 1\n")


def test_the_shipped_yaml_files_have_no_duplicate_keys():
    from eels_gz.yamlio import load

    files = [p for folder in ("config", "urdf") for p in (REPO / folder).rglob("*.yaml")]
    assert len(files) > 10
    for path in files:
        load(path)  # raises ConfigError naming the file and both lines
