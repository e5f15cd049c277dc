"""Named parameter sets in ``config/<folder>/<name>.yaml``, checked key by key.

One shape serves the screw contact's sets (``eels_gz.contact.params``) and the soil sets
(``eels_gz.soil.params``): a set is a flat mapping of numbers; a bare name means a file of the
package's config folder, anything else a path; every key has a range; unknown keys, missing required
ones and out-of-range values raise ConfigError naming the file (or the ``--set`` key) and what was
expected. Each kind keeps its own dataclass and its own public functions: this module only reads,
checks and writes the mapping.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

from eels_gz.errors import ConfigError
from eels_gz.paths import asset
from eels_gz.yamlio import load as load_yaml

_EXPONENT = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)[eE][+-]?\d+")


@dataclass(frozen=True)
class Bounds:
    """The allowed values of one key: [low, high] with each end open or closed; ``meaning`` completes
    "must be ..." in messages (e.g. "a friction coefficient >= 0")."""

    low: float
    low_inclusive: bool
    meaning: str
    high: float = math.inf
    high_inclusive: bool = False
    integer: bool = False  # a count: an int (a float with an integral value too, with ``whole_floats``)
    whole_floats: bool = False

    def check(self, value: object, source: str, label: str) -> None:
        if isinstance(value, str) and _EXPONENT.fullmatch(value.strip()):
            value = float(value)  # YAML 1.1 (and a --set value) reads "2.5e4" as a string
        if isinstance(value, bool) or not isinstance(value, (int, float)) or (self.integer and not (
                isinstance(value, int) or (self.whole_floats and math.isfinite(value) and value == int(value)))):
            raise ConfigError(f"{source}: '{label}' must be {self.meaning}, got {value!r}")
        if (not math.isfinite(value) or value < self.low or (value == self.low and not self.low_inclusive)
                or value > self.high or (value == self.high and not self.high_inclusive)):
            raise ConfigError(f"{source}: '{label}' = {value!r} is out of range; expected {self.meaning}")

    def convert(self, value) -> float | int:
        value = float(value) if isinstance(value, str) else value
        return int(value) if self.integer else float(value)


@dataclass(frozen=True)
class ParamSetKind:
    """One kind of parameter set: ``kind`` names it in messages ("contact", "soil") and is the prefix
    of its ``--set`` keys; its files are ``config/<folder>/*.yaml``; ``keys`` maps every key to its
    bounds; ``optional`` gives the keys a file may leave out, with their defaults."""

    kind: str
    folder: str
    keys: dict[str, Bounds]
    optional: dict[str, float]
    noun: str = "parameter set"  # what one set is called in messages ("medium" for the granular ones)

    def path(self, path_or_name: str | Path) -> Path:
        """A YAML path as given (ConfigError if there is no such file), or ``config/<folder>/<name>.yaml``
        for a bare name."""
        text = str(path_or_name)
        if text.endswith((".yaml", ".yml")) or "/" in text or Path(text).is_file():
            if not Path(text).is_file():
                raise ConfigError(f"{self.kind} {self.noun} file '{text}' does not exist")
            return Path(text)
        path = asset("config", self.folder, f"{text}.yaml")
        if not path.is_file():
            raise ConfigError(f"unknown {self.kind} {self.noun} '{text}' (no {path}); available: "
                              f"{', '.join(self.names()) or 'none'}")
        return path

    def names(self) -> list[str]:
        """The sets shipped in ``config/<folder>/``."""
        return sorted(p.stem for p in asset("config", self.folder).glob("*.yaml"))

    def check(self, key: str, value: object, source: str, label: str | None = None) -> None:
        self.keys[key].check(value, source, label or key)

    def check_setting(self, key: str, value: object, source: str) -> None:
        """One key set on its own, e.g. ``--set soil.cohesion=800``: named with the kind's prefix."""
        if key not in self.keys:
            raise ConfigError(f"{source}: unknown {self.kind} key '{self.kind}.{key}'; valid keys: "
                              f"{', '.join(f'{self.kind}.{k}' for k in self.keys)}")
        self.check(key, value, source, f"{self.kind}.{key}")

    def read(self, path: Path) -> dict[str, float | int]:
        """Every key of the set in file ``path`` (optional ones defaulted), checked."""
        data = load_yaml(path)
        source = str(path)
        if not isinstance(data, dict):
            what = f"{self.kind} parameters" if self.noun == "parameter set" else f"{self.kind} {self.noun} parameters"
            raise ConfigError(f"{source}: expected a mapping of {what}, got {type(data).__name__}")
        unknown = [str(k) for k in data if k not in self.keys]
        if unknown:
            raise ConfigError(f"{source}: unknown {self.kind} key(s) {', '.join(unknown)}; valid keys: "
                              f"{', '.join(self.keys)}")
        missing = [k for k in self.keys if k not in data and k not in self.optional]
        if missing:
            raise ConfigError(f"{source}: missing {self.kind} key(s) {', '.join(missing)}")
        values = {}
        for key, bounds in self.keys.items():
            value = data.get(key, self.optional.get(key))
            bounds.check(value, source, key)
            values[key] = bounds.convert(value)
        return values

    def with_settings(self, values: dict, overrides: dict, source: str) -> dict:
        """``values`` with the keys of ``overrides`` replaced, each checked as a ``--set`` key."""
        for key, value in overrides.items():
            self.check_setting(key, value, source)
        return {**values, **{k: self.keys[k].convert(v) for k, v in overrides.items()}}


def write_param_set(values: dict, path: str | Path, header: str = "") -> Path:
    """Write a full set (every key) as YAML that :meth:`ParamSetKind.read` reads back; ``header`` as comments."""
    import yaml

    path = Path(path)
    text = "".join(f"# {line}\n" for line in header.splitlines())
    path.write_text(text + yaml.safe_dump(values, sort_keys=False))
    return path
