"""YAML as eels_gz reads it: every configuration, scenario, sweep spec and registry file.

PyYAML keeps the last of two equal keys in a mapping without a word, so a
setting written twice (``mu: 0.1`` ... ``mu: 0.2``) silently takes the second.
Here a duplicate key is an error naming the file, the key and both lines; a
file that is not text (a binary picked by mistake) is an error naming it,
never a ``UnicodeDecodeError``.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import yaml

from eels_gz.errors import ConfigError

_MERGE = "tag:yaml.org,2002:merge"


class _UniqueKeys:
    """A loader's mapping construction refusing a key that appears twice in one mapping (merge keys
    ``<<`` are YAML's own way to override, and stay allowed)."""

    source = "<yaml>"

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            seen: dict[Any, int] = {}
            for key_node, _ in node.value:
                if key_node.tag == _MERGE or not isinstance(key_node, yaml.ScalarNode):
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    first = seen.get(key)
                except TypeError:  # an unhashable key: PyYAML says so itself
                    continue
                line = key_node.start_mark.line + 1
                if first is not None:
                    raise ConfigError(f"{self.source}:{line}: duplicate key '{key}' (first at line {first}); "
                                      "YAML would silently keep the last value: keep one of them")
                seen[key] = line
        return super().construct_mapping(node, deep=deep)


class _UniqueKeyLoader(_UniqueKeys, yaml.SafeLoader):
    """yaml.SafeLoader refusing duplicate keys: PyYAML's own parser, whose words a syntax error keeps."""


# libyaml's parser when PyYAML was built with it (its wheels are): the same documents, parsed 10x
# faster (a run's two files took 0.07 s of its start with PyYAML's Python parser); the construction,
# and so the duplicate-key check, is the same Python
_FastUniqueKeyLoader = (type("_FastUniqueKeyLoader", (_UniqueKeys, yaml.CSafeLoader), {})
                        if getattr(yaml, "__with_libyaml__", False) else _UniqueKeyLoader)


# YAML 1.1 reads a number in exponent form without a decimal point (1e6, -2E-3) as a string; in every
# file eels_gz reads such a number is meant as a number (YAML 1.2 reads it so), never as text
_EXPONENT_FLOAT = re.compile(r"^[-+]?([0-9]+(\.[0-9]*)?|\.[0-9]+)[eE][-+]?[0-9]+$")
for _loader in {_UniqueKeyLoader, _FastUniqueKeyLoader}:
    _loader.add_implicit_resolver("tag:yaml.org,2002:float", _EXPONENT_FLOAT, list("-+.0123456789"))


def _load(loader_class, text: str, source: str) -> Any:
    loader = loader_class(text)
    loader.source = source
    try:
        return loader.get_single_data()
    except RecursionError:  # a document nested thousands deep: no setting is
        raise ConfigError(f"{source}: nested too deeply (Python's recursion limit); eels_gz's files are "
                          "mappings and lists a few levels deep") from None
    finally:
        loader.dispose()


def loads(text: str, source: str = "<yaml>") -> Any:
    """Parse YAML ``text`` (from ``source``, named in errors) as yaml.safe_load does, refusing duplicate
    keys. Syntax errors stay yaml.YAMLError for the caller to word: PyYAML's own parser's (libyaml's
    words and lines differ), so a text libyaml refuses is parsed again by it."""
    try:
        return _check_depth(_load(_FastUniqueKeyLoader, text, source), source)
    except yaml.YAMLError:
        if _FastUniqueKeyLoader is _UniqueKeyLoader:
            raise
    return _check_depth(_load(_UniqueKeyLoader, text, source), source)


MAX_DEPTH = 64  # levels of nested mappings and lists; eels_gz's own files use a few


def _check_depth(data: Any, source: str) -> Any:
    """``data``, or ConfigError when it nests deeper than MAX_DEPTH (measured without recursion: a
    document nested thousands deep would otherwise end in a RecursionError wherever it is copied)."""
    todo = [(data, 1)]
    while todo:
        node, depth = todo.pop()
        if isinstance(node, (dict, list)):
            if depth > MAX_DEPTH:
                raise ConfigError(f"{source}: nested more than {MAX_DEPTH} levels deep; eels_gz's files are "
                                  "mappings and lists a few levels deep")
            todo.extend((v, depth + 1) for v in (node.values() if isinstance(node, dict) else node))
    return data


def load(path: str | Path, what: str = "config file") -> Any:
    """Read and parse the YAML file ``path`` (a ``what``, named in errors): ConfigError naming it for an
    unreadable or binary file, a syntax error (with its line) or a duplicate key."""
    from eels_gz.paths import read_text

    path = Path(path)
    text = read_text(path, what, "YAML", ConfigError)
    if text in _parsed:  # a run reads the same files several times (defaults, scenario, contact set)
        return copy.deepcopy(_parsed[text])
    try:
        data = loads(text, str(path))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise ConfigError(f"{where}: invalid YAML: {getattr(exc, 'problem', exc)}") from None
    if len(_parsed) >= 64:
        _parsed.clear()
    _parsed[text] = data
    return copy.deepcopy(data)


_parsed: dict[str, Any] = {}  # load's parses by file text (the text is the key: never stale)
