"""Snake locomotion parameters from ``config/snake.yaml``, checked key by key.

Every section and key is required; unknown sections or keys, wrong types and
out-of-range values raise :class:`~eels_gz.errors.ConfigError` naming the
file, the key and what was expected. Units: SI, angles in radians.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from eels_gz.config import load_yaml
from eels_gz.errors import ConfigError
from eels_gz.paths import asset

SUBSPACES = ("planar", "se3")


@dataclass(frozen=True)
class SerpenoidParams:
    """NEO Eq. 1: offsets ``beta_*`` (rad), amplitudes ``amplitude_*`` (rad),
    spatial frequency ``omega_s`` (rad per module), temporal frequency
    ``omega_t`` (rad/s), odd-module phase ``delta`` (rad), and the twist set
    point magnitude ``twist_offset`` (rad) that rolls adjacent modules apart."""

    beta_even: float
    beta_odd: float
    amplitude_even: float
    amplitude_odd: float
    omega_s: float
    omega_t: float
    delta: float
    twist_offset: float


@dataclass(frozen=True)
class MotionControlParams:
    """NEO Eq. 2-5: ``condition_max`` bounds the condition number of the
    scaled constraint matrix; ``subspace`` is ``planar`` or ``se3``."""

    condition_max: float
    subspace: str


@dataclass(frozen=True)
class PathTrackerParams:
    """Proportional gains (1/s) on the Horn-fit translation and rotation, and
    the feed-forward speed along the path (m/s)."""

    k_position: float
    k_rotation: float
    speed: float


@dataclass(frozen=True)
class PlacementParams:
    """EELS-DARTS §2.2.6: spring stiffness (N/m per point), settling speed
    threshold (m/s) held for ``hold_time`` (s), ``timeout`` (s), sample points
    per collision cylinder, crescent total bend (rad), helix radius and pitch (m)."""

    stiffness: float
    speed_threshold: float
    hold_time: float
    timeout: float
    samples_per_link: int
    crescent_bend: float
    helix_radius: float
    helix_pitch: float


@dataclass(frozen=True)
class MobilityParams:
    """EELS-DARTS §4.3.1: failure when the ``link``'s x axis is more than
    ``threshold`` (rad) from the gravity line."""

    threshold: float
    link: str


@dataclass(frozen=True)
class SnakeParams:
    serpenoid: SerpenoidParams
    motion_control: MotionControlParams
    path_tracker: PathTrackerParams
    placement: PlacementParams
    mobility: MobilityParams


def _real(pred: Callable[[float], bool], meaning: str):
    return (float, pred, meaning)


_ANY = _real(lambda v: True, "a finite number")
_NONNEG = _real(lambda v: v >= 0.0, "a finite number >= 0")
_POS = _real(lambda v: v > 0.0, "a finite number > 0")

# section -> (dataclass, key -> (type, predicate, meaning))
_SPEC: dict[str, tuple[type, dict]] = {
    "serpenoid": (SerpenoidParams, {
        "beta_even": _ANY, "beta_odd": _ANY,
        "amplitude_even": _NONNEG, "amplitude_odd": _NONNEG,
        "omega_s": _ANY, "omega_t": _ANY, "delta": _ANY,
        "twist_offset": _real(lambda v: abs(v) <= math.pi, "an angle in [-pi, pi] rad"),
    }),
    "motion_control": (MotionControlParams, {
        "condition_max": _real(lambda v: v > 1.0, "a condition number > 1"),
        "subspace": (str, lambda v: v in SUBSPACES, f"one of {', '.join(SUBSPACES)}"),
    }),
    "path_tracker": (PathTrackerParams, {"k_position": _NONNEG, "k_rotation": _NONNEG, "speed": _NONNEG}),
    "placement": (PlacementParams, {
        "stiffness": _POS, "speed_threshold": _POS, "hold_time": _NONNEG, "timeout": _POS,
        "samples_per_link": (int, lambda v: v >= 1, "an integer >= 1"),
        "crescent_bend": _ANY, "helix_radius": _POS, "helix_pitch": _NONNEG,
    }),
    "mobility": (MobilityParams, {
        "threshold": _real(lambda v: 0.0 < v <= math.pi / 2, "an angle in (0, pi/2] rad"),
        "link": (str, lambda v: bool(v), "a link name"),
    }),
}


def _value(section: str, key: str, value: object, source: str):
    kind, pred, meaning = _SPEC[section][1][key]
    where = f"{source}: '{section}.{key}'"
    if kind is str:
        ok = isinstance(value, str)
    elif kind is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    else:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if not ok:
        raise ConfigError(f"{where} must be {meaning}, got {value!r}")
    value = float(value) if kind is float else value
    if not pred(value):
        raise ConfigError(f"{where} = {value!r} is out of range; expected {meaning}")
    return value


def parse_snake_params(data: object, source: str) -> SnakeParams:
    """Check a parsed mapping (the YAML's content) and build :class:`SnakeParams`."""
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: expected a mapping of sections {', '.join(_SPEC)}, got {type(data).__name__}")
    unknown = [str(k) for k in data if k not in _SPEC]
    if unknown:
        raise ConfigError(f"{source}: unknown section(s) {', '.join(unknown)}; valid sections: {', '.join(_SPEC)}")
    sections = {}
    for section, (cls, keys) in _SPEC.items():
        body = data.get(section)
        if not isinstance(body, dict):
            raise ConfigError(f"{source}: section '{section}' is missing or not a mapping; expected keys "
                              f"{', '.join(keys)}")
        bad = [str(k) for k in body if k not in keys]
        if bad:
            raise ConfigError(f"{source}: unknown key(s) {', '.join(f'{section}.{k}' for k in bad)}; "
                              f"valid keys: {', '.join(keys)}")
        missing = [k for k in keys if k not in body]
        if missing:
            raise ConfigError(f"{source}: missing key(s) {', '.join(f'{section}.{k}' for k in missing)}")
        sections[section] = cls(**{k: _value(section, k, body[k], source) for k in keys})
    return SnakeParams(**sections)


def snake_config_path() -> Path:
    return asset("config", "snake.yaml")


def load_snake_params(path: str | Path | None = None) -> SnakeParams:
    """Read and check ``path`` (default ``config/snake.yaml``)."""
    path = Path(path) if path is not None else snake_config_path()
    return parse_snake_params(load_yaml(path), str(path))
