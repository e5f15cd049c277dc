"""eels_gz.yamlio parses with libyaml's parser where PyYAML has it (a run's start, issue 36): every
YAML file of the package gives the same data as PyYAML's own parser (yaml.safe_load), a duplicate
key is still refused, and a syntax error keeps PyYAML's own words and line (libyaml's differ: the
text is parsed again by PyYAML's parser)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from eels_gz import yamlio
from eels_gz.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted(p for folder in ("config", "urdf", "worlds", "models", "examples") if (ROOT / folder).is_dir()
               for p in (ROOT / folder).rglob("*.y*ml"))
BAD = ("a: [1, 2", "a:\n\t- 1", "a: b: c", "x: \x07", "- a\nb: 1", "a: 'open")


def test_libyaml_parses_when_pyyaml_has_it():
    if yaml.__with_libyaml__:  # PyYAML's wheels and Debian's python3-yaml are built with it
        assert issubclass(yamlio._FastUniqueKeyLoader, yaml.CSafeLoader)
    else:
        assert yamlio._FastUniqueKeyLoader is yamlio._UniqueKeyLoader


class _PyYamlWithExponents(yaml.SafeLoader):
    """PyYAML's own parser with eels_gz's one documented difference: 1e6 is a number (YAML 1.2's reading)."""


_PyYamlWithExponents.add_implicit_resolver("tag:yaml.org,2002:float", yamlio._EXPONENT_FLOAT, list("-+.0123456789"))


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_shipped_yaml_file_gives_pyyamls_data(path):
    text = path.read_text(encoding="utf-8")
    assert yamlio.loads(text, str(path)) == yaml.load(text, Loader=_PyYamlWithExponents)


def test_a_number_in_exponent_form_is_a_number():
    """YAML 1.1 (PyYAML) reads 1e6 and 3.05e6 as text; every file eels_gz reads means them as numbers."""
    assert yamlio.loads("a: [1e6, -2E-3, 3.05e6, .5e1, 7, 1.5, x1e6, 1e]") == \
        {"a": [1e6, -2e-3, 3.05e6, 5.0, 7, 1.5, "x1e6", "1e"]}


def test_the_shipped_files_are_found():
    assert len(FILES) >= 20 and any(p.name == "eels_variants.yaml" for p in FILES)


@pytest.mark.parametrize("text", BAD)
def test_a_syntax_error_keeps_pyyamls_words_and_line(text):
    with pytest.raises(yaml.YAMLError) as ours:
        yamlio.loads(text, "bad.yaml")
    with pytest.raises(yaml.YAMLError) as pyyaml:
        yaml.load(text, Loader=yaml.SafeLoader)
    assert type(ours.value) is type(pyyaml.value) and str(ours.value) == str(pyyaml.value)


def test_a_duplicate_key_is_still_refused_with_its_lines():
    with pytest.raises(ConfigError, match=r"bad.yaml:3: duplicate key 'b' \(first at line 2\)"):
        yamlio.loads("a:\n  b: 1\n  b: 2\n", "bad.yaml")
