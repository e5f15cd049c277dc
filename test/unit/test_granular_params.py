"""Granular media (config/granular/, eels_gz.granular.params): the shipped media load, every value carries its
source in a comment, and every bad file or key gives a ConfigError naming the file (or setting), the key and
what was expected."""

from __future__ import annotations

import pytest

from eels_gz.errors import ConfigError
from eels_gz.granular.params import (GranularParams, check_granular_value, granular_names, load_granular_params,
                                     resolve_granular_params)
from eels_gz.paths import asset

SHIPPED = ("mars_simulant_mms", "poppy_seeds_lp", "poppy_seeds_cp")


def write(tmp_path, text: str, name="medium.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_the_shipped_media_load():
    assert set(SHIPPED) <= set(granular_names())
    for name in SHIPPED:
        p = load_granular_params(name)
        assert isinstance(p, GranularParams) and p.zeta > 0.0
    # LP poppy seeds yield less than CP ones (the paper's looser packing)
    assert load_granular_params("poppy_seeds_lp").zeta < load_granular_params("poppy_seeds_cp").zeta


@pytest.mark.parametrize("name", SHIPPED)
def test_every_value_has_its_source_in_a_comment(name):
    lines = asset("config", "granular", f"{name}.yaml").read_text().splitlines()
    values = [i for i, line in enumerate(lines) if line and not line.startswith("#")]
    assert values
    for i in values:
        assert "#" in lines[i] or lines[i - 1].startswith("#"), lines[i]


@pytest.mark.parametrize("text, words", [
    ("zeta: 1e6\nfriction: 0.3\n", ["unknown granular key", "friction", "zeta"]),
    ("velocity_reg: 0.01\n", ["missing granular key", "zeta"]),
    ("zeta: -5\n", ["'zeta' = -5", "> 0 in N/m^3"]),
    ("zeta: 1e6\nblade_rows: 2.5\n", ["'blade_rows'", "integer"]),
    ("zeta: 1e6\nleading_band: 0\n", ["'leading_band'", "(0, 1]"]),
    ("zeta: [1, 2]\n", ["'zeta'", "N/m^3"]),
    ("- zeta\n", ["expected a mapping"]),
])
def test_bad_files_name_the_file_and_the_key(tmp_path, text, words):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as err:
        load_granular_params(path)
    message = str(err.value)
    assert str(path) in message
    for word in words:
        assert word in message, message


def test_unknown_names_and_missing_files_are_refused():
    with pytest.raises(ConfigError, match="unknown granular medium 'quicksand'.*mars_simulant_mms"):
        load_granular_params("quicksand")
    with pytest.raises(ConfigError, match="does not exist"):
        load_granular_params("/nonexistent/medium.yaml")


def test_keys_set_on_their_own_are_checked_and_replace_the_file_s():
    p = resolve_granular_params("poppy_seeds_lp", {"zeta": "2e5", "blade_rows": 4})
    assert p.zeta == 2e5 and p.blade_rows == 4 and isinstance(p.blade_rows, int)
    with pytest.raises(ConfigError, match="unknown granular key 'granular.mu'"):
        check_granular_value("mu", 1.0, "--set")
    with pytest.raises(ConfigError, match="'granular.velocity_reg' = 0"):
        check_granular_value("velocity_reg", 0, "--set")
