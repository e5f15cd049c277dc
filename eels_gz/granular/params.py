"""Granular media for resistive force theory, from ``config/granular/<name>.yaml``, checked key by key.

Keys: ``zeta`` [N/m^3] (required: the medium's scaling factor of the generic
RFT stresses, Li, Zhang & Goldman 2013, ``eels_gz.granular.rft``), and the
optional ``velocity_reg`` [m/s], ``leading_band`` (dimensionless) and the
screw's surface resolution ``blade_elements_per_turn``, ``blade_rows``,
``core_axial``, ``core_ring`` (counts), whose defaults are defined here only.

The loader follows ``eels_gz.soil.params``: an unknown key, a missing key or a
value out of range raises ConfigError naming the file, the key and what was
expected.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from eels_gz.errors import ConfigError
from eels_gz.paths import asset
from eels_gz.yamlio import load as load_yaml

_EXPONENT = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)[eE][+-]?\d+")


@dataclass(frozen=True)
class GranularParams:
    """A granular medium for RFT (SI units).

    zeta: the medium's scaling factor, N/m^3: a horizontal plate pushed
    straight down at depth |z| feels zeta |z| per unit area.
    velocity_reg: the speed below which the RFT stress fades to zero (the
    velocity's regularisation, ``rft`` module docstring), m/s. Default 5 mm/s:
    a quarter of NEO's slowest field speed on sand (2.2 cm/s, Table I); a
    screw's blade tip at 3 rad/s and 0.09 m moves at 0.27 m/s, 54 times
    faster, so its stress is the rate-independent one within 0.02 %.
    leading_band: the width, in n . u, of the ramp that turns a trailing
    element into a leading one (0.05: about 3 degrees).
    blade_elements_per_turn, blade_rows: the screw blade's surface elements
    per turn of the helix and across its height (each on both faces);
    core_axial, core_ring: the screw core's elements along and around it.
    Defaults (36, 3, 8, 24): 10 degrees per blade element, 330 elements per
    screw of EELS 1.0 with counter-rotating pairs; against 11 times as many
    (144, 8, 24, 96), the mean wrench over a turn of that screw spinning at
    3 rad/s with its axis 6 cm above the MMS sand differs by at most 1 % (its
    thrust, lift and drag torque; measured when these were chosen).
    """

    zeta: float
    velocity_reg: float = 0.005
    leading_band: float = 0.05
    blade_elements_per_turn: int = 36
    blade_rows: int = 3
    core_axial: int = 8
    core_ring: int = 24

    def __post_init__(self) -> None:
        for f in fields(self):
            _check(f.name, getattr(self, f.name), "GranularParams")

    def to_dict(self) -> dict:
        return asdict(self)


# key -> (lower, lower inclusive?, upper, upper inclusive?, integer?, meaning for the message)
_RANGES: dict[str, tuple[float, bool, float, bool, bool, str]] = {
    "zeta": (0.0, False, math.inf, False, False, "a scaling factor > 0 in N/m^3"),
    "velocity_reg": (0.0, False, math.inf, False, False, "a regularisation speed > 0 in m/s"),
    "leading_band": (0.0, False, 1.0, True, False, "a ramp width in (0, 1] (of n . v / |v|)"),
    "blade_elements_per_turn": (4, True, 3600, True, True, "an integer count in [4, 3600]"),
    "blade_rows": (1, True, 100, True, True, "an integer count in [1, 100]"),
    "core_axial": (1, True, 1000, True, True, "an integer count in [1, 1000]"),
    "core_ring": (3, True, 3600, True, True, "an integer count in [3, 3600]"),
}
KEYS = tuple(_RANGES)
REQUIRED = ("zeta",)
OPTIONAL = {f.name: f.default for f in fields(GranularParams) if f.name not in REQUIRED}


def _check(key: str, value: object, source: str, label: str | None = None) -> None:
    low, low_in, high, high_in, integer, meaning = _RANGES[key]
    label = label or key
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (integer and value != int(value)):
        raise ConfigError(f"{source}: '{label}' must be {meaning}, got {value!r}")
    if (not math.isfinite(value) or value < low or (value == low and not low_in)
            or value > high or (value == high and not high_in)):
        raise ConfigError(f"{source}: '{label}' = {value!r} is out of range; expected {meaning}")


def granular_config_path(path_or_name: str | Path) -> Path:
    """A YAML path as given, or ``config/granular/<name>.yaml`` for a bare name."""
    text = str(path_or_name)
    if text.endswith((".yaml", ".yml")) or "/" in text or Path(text).is_file():
        if not Path(text).is_file():
            raise ConfigError(f"granular medium file '{text}' does not exist")
        return Path(text)
    path = asset("config", "granular", f"{text}.yaml")
    if not path.is_file():
        raise ConfigError(f"unknown granular medium '{text}' (no {path}); available: "
                          f"{', '.join(granular_names()) or 'none'}")
    return path


def granular_names() -> list[str]:
    """The media shipped in ``config/granular/``."""
    return sorted(p.stem for p in asset("config", "granular").glob("*.yaml"))


def _value(key: str, value: object) -> object:
    if isinstance(value, str) and _EXPONENT.fullmatch(value.strip()):
        value = float(value)  # YAML 1.1 reads "2.5e5" as a string
    return value


def _typed(key: str, value: float) -> float | int:
    return int(value) if _RANGES[key][4] else float(value)


def load_granular_params(path_or_name: str | Path) -> GranularParams:
    """Read and check a medium (a path, or a name under config/granular/); ConfigError naming the file
    and the key on an unknown, missing or out-of-range key."""
    path = granular_config_path(path_or_name)
    data = load_yaml(path)
    source = str(path)
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: expected a mapping of granular medium parameters, got {type(data).__name__}")
    unknown = [str(k) for k in data if k not in _RANGES]
    if unknown:
        raise ConfigError(f"{source}: unknown granular key(s) {', '.join(unknown)}; valid keys: {', '.join(KEYS)}")
    missing = [k for k in REQUIRED if k not in data]
    if missing:
        raise ConfigError(f"{source}: missing granular key(s) {', '.join(missing)}")
    values = {}
    for key in KEYS:
        value = _value(key, data.get(key, OPTIONAL.get(key)))
        _check(key, value, source)
        values[key] = _typed(key, value)
    return GranularParams(**values)


def check_granular_value(key: str, value: object, source: str) -> None:
    """Check one key set on its own (e.g. ``granular.zeta=2e6``)."""
    if key not in _RANGES:
        raise ConfigError(f"{source}: unknown granular key 'granular.{key}'; valid keys: "
                          f"{', '.join('granular.' + k for k in KEYS)}")
    _check(key, _value(key, value), source, f"granular.{key}")


def resolve_granular_params(path_or_name: str | Path, overrides: dict | None = None) -> GranularParams:
    """The medium ``path_or_name`` with the keys of ``overrides`` replaced, checked."""
    params = load_granular_params(path_or_name)
    if not overrides:
        return params
    for key, value in overrides.items():
        check_granular_value(key, value, f"granular parameters over '{path_or_name}'")
    values = params.to_dict()
    values.update({k: _typed(k, _value(k, v)) for k, v in overrides.items()})
    return GranularParams(**values)


def write_granular_params(params: GranularParams, path: str | Path, header: str = "") -> Path:
    """Write a full medium (every key) as YAML that :func:`load_granular_params` reads back."""
    import yaml

    path = Path(path)
    text = "".join(f"# {line}\n" for line in header.splitlines())
    path.write_text(text + yaml.safe_dump(params.to_dict(), sort_keys=False))
    return path
