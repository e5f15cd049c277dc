"""config/snake.yaml loader: the shipped file loads, and every kind of bad
input (unknown section or key, missing key, wrong type, out of range, not a
mapping, unreadable file) raises ConfigError naming the file and key."""

from __future__ import annotations

import copy
import math

import pytest
import yaml

from eels_gz.errors import ConfigError
from eels_gz.paths import asset
from eels_gz.snake.params import SnakeParams, load_snake_params, parse_snake_params


@pytest.fixture(scope="module")
def shipped() -> dict:
    return yaml.safe_load(asset("config", "snake.yaml").read_text())


def test_shipped_file_loads_as_written(shipped):
    p = load_snake_params()
    assert isinstance(p, SnakeParams)
    for section, body in shipped.items():
        for key, value in body.items():
            assert getattr(getattr(p, section), key) == value
    assert p.mobility.threshold == pytest.approx(math.radians(60.0), abs=1e-15)  # EELS-DARTS §4.3.1


def mutate(data: dict, section: str, key: str, value):
    out = copy.deepcopy(data)
    out[section][key] = value
    return out


@pytest.mark.parametrize("section, key, value, match", [
    ("serpenoid", "amplitude_even", -0.1, r"serpenoid.amplitude_even' = -0.1 is out of range"),
    ("serpenoid", "omega_t", "fast", r"serpenoid.omega_t' must be a finite number"),
    ("serpenoid", "delta", float("nan"), r"serpenoid.delta' must be a finite number"),
    ("serpenoid", "twist_offset", 4.0, r"twist_offset.*\[-pi, pi\]"),
    ("motion_control", "condition_max", 1.0, r"condition_max.*> 1"),
    ("motion_control", "subspace", "3d", r"subspace.*one of planar, se3"),
    ("path_tracker", "k_position", -1.0, r"k_position.*>= 0"),
    ("placement", "stiffness", 0.0, r"placement.stiffness.*> 0"),
    ("placement", "samples_per_link", 2.5, r"samples_per_link' must be an integer"),
    ("placement", "samples_per_link", True, r"samples_per_link' must be an integer"),
    ("placement", "timeout", -3.0, r"timeout.*> 0"),
    ("mobility", "threshold", 2.0, r"mobility.threshold.*\(0, pi/2\]"),
    ("mobility", "link", 3, r"mobility.link' must be a link name"),
])
def test_bad_values_are_refused(shipped, section, key, value, match):
    with pytest.raises(ConfigError, match="snake.yaml: '.*" + match):
        parse_snake_params(mutate(shipped, section, key, value), "snake.yaml")


def test_unknown_and_missing_keys(shipped):
    with pytest.raises(ConfigError, match=r"unknown key\(s\) placement.stifness; valid keys: stiffness"):
        parse_snake_params(mutate(shipped, "placement", "stifness", 1.0), "f.yaml")
    data = copy.deepcopy(shipped)
    del data["mobility"]["threshold"]
    with pytest.raises(ConfigError, match=r"missing key\(s\) mobility.threshold"):
        parse_snake_params(data, "f.yaml")
    data = copy.deepcopy(shipped)
    data["gaits"] = {}
    with pytest.raises(ConfigError, match=r"unknown section\(s\) gaits; valid sections: serpenoid"):
        parse_snake_params(data, "f.yaml")
    data = copy.deepcopy(shipped)
    del data["path_tracker"]
    with pytest.raises(ConfigError, match="section 'path_tracker' is missing"):
        parse_snake_params(data, "f.yaml")
    with pytest.raises(ConfigError, match="f.yaml: expected a mapping"):
        parse_snake_params([1, 2], "f.yaml")


def test_file_errors(tmp_path):
    with pytest.raises(ConfigError, match="cannot read config file"):
        load_snake_params(tmp_path / "absent.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("serpenoid: [unclosed\n")
    with pytest.raises(ConfigError, match="bad.yaml:.*invalid YAML"):
        load_snake_params(bad)
