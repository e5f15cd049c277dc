"""Soil sets: the three shipped sets load with the contract keys, every number in
them carries a comment, and every bad-YAML path gives a ConfigError naming the
file, the key and what was expected."""

from __future__ import annotations

import re

import pytest

from eels_gz.errors import ConfigError
from eels_gz.paths import asset
from eels_gz.soil.params import (KEYS, REQUIRED, SoilParams, check_soil_value, load_soil_params,
                                 resolve_soil_params, soil_names)

CONTRACT = ("k_c", "k_phi", "n", "cohesion", "friction_angle_deg", "shear_modulus_K", "c1", "c2")
GOOD = dict(k_c=990.0, k_phi=1528430.0, n=1.1, cohesion=1040.0, friction_angle_deg=28.0,
            shear_modulus_K=0.01, c1=0.43, c2=0.32)


def write(tmp_path, entries: dict, name="soil.yaml"):
    path = tmp_path / name
    path.write_text("".join(f"{k}: {v}\n" for k, v in entries.items()))
    return path


def test_the_issue_sets_are_shipped_with_the_contract_keys():
    assert {"eac1a", "lava_gravel", "dry_sand"} <= set(soil_names())
    assert REQUIRED == CONTRACT
    for name in ("eac1a", "lava_gravel", "dry_sand"):
        p = load_soil_params(name)
        assert p == load_soil_params(asset("config", "soil", f"{name}.yaml"))
        assert isinstance(p, SoilParams)


@pytest.mark.parametrize("name", ["eac1a", "lava_gravel", "dry_sand"])
def test_every_value_has_its_source_in_a_comment(name):
    """Each key line carries a comment, or the comment block right above it does (its source)."""
    lines = asset("config", "soil", f"{name}.yaml").read_text().splitlines()
    for i, line in enumerate(lines):
        if re.match(r"^\w+:", line):
            above = lines[i - 1] if i else ""
            assert "#" in line or above.startswith("#") or (i > 1 and lines[i - 2].startswith("#")) \
                or re.match(r"^\w+:", above), f"{name}.yaml line {i + 1} has no source comment: {line}"


def test_wong_dry_sand_values():
    p = load_soil_params("dry_sand")
    assert (p.n, p.k_c, p.k_phi, p.cohesion, p.friction_angle_deg) == (1.1, 990.0, 1528430.0, 1040.0, 28.0)


def test_unknown_key_names_file_and_key(tmp_path):
    path = write(tmp_path, {**GOOD, "kphi": 3.0})
    with pytest.raises(ConfigError, match=rf"{re.escape(str(path))}: unknown soil key\(s\) kphi; valid keys: k_c"):
        load_soil_params(path)


def test_missing_key_names_file_and_key(tmp_path):
    entries = dict(GOOD)
    del entries["shear_modulus_K"]
    path = write(tmp_path, entries)
    with pytest.raises(ConfigError, match=rf"{re.escape(str(path))}: missing soil key\(s\) shear_modulus_K"):
        load_soil_params(path)


@pytest.mark.parametrize("key, value, expected", [
    ("n", 0.0, "sinkage exponent in \\(0, 3\\]"),
    ("friction_angle_deg", 95.0, "friction angle in \\[0, 90\\) degrees"),
    ("shear_modulus_K", -0.01, "shear deformation modulus > 0 in m"),
    ("cohesion", "soft", "cohesion >= 0 in Pa"),
    ("c1", 1.5, "Wong-Reece coefficient in \\[0, 1\\]"),
    ("k_phi", ".nan", "frictional modulus"),
    ("density", -1.0, "bulk density >= 0"),
])
def test_out_of_range_names_file_key_and_range(tmp_path, key, value, expected):
    path = write(tmp_path, {**GOOD, key: value})
    with pytest.raises(ConfigError, match=rf"{re.escape(str(path))}: '{key}'.*{expected}"):
        load_soil_params(path)


def test_no_load_bearing_modulus(tmp_path):
    path = write(tmp_path, {**GOOD, "k_c": 0.0, "k_phi": 0.0})
    with pytest.raises(ConfigError, match=rf"{re.escape(str(path))}: .*'k_c' and 'k_phi' are both 0"):
        load_soil_params(path)


def test_not_a_mapping_and_unknown_name(tmp_path):
    path = tmp_path / "list.yaml"
    path.write_text("- 1\n- 2\n")
    with pytest.raises(ConfigError, match="expected a mapping of soil parameters"):
        load_soil_params(path)
    with pytest.raises(ConfigError, match="unknown soil parameter set 'clay'.*available: .*dry_sand"):
        load_soil_params("clay")


def test_exponent_strings_and_overrides(tmp_path):
    path = write(tmp_path, {**GOOD, "k_phi": "1.5e6"})
    assert load_soil_params(path).k_phi == 1.5e6
    p = resolve_soil_params("eac1a", {"cohesion": 800})
    assert p.cohesion == 800.0 and p.k_phi == load_soil_params("eac1a").k_phi
    with pytest.raises(ConfigError, match="unknown soil key 'soil.cohesionn'"):
        check_soil_value("cohesionn", 1.0, "--set")
    with pytest.raises(ConfigError, match="'soil.n' = 4.0 is out of range"):
        resolve_soil_params("eac1a", {"n": 4.0})
    assert set(KEYS) >= set(CONTRACT)
