"""Screw contact parameters from ``config/contact/<name>.yaml``, checked key by key."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike

from eels_gz.yamlio import load as load_yaml
from eels_gz.contact.laws import ev_norm_of_load
from eels_gz.errors import ConfigError
from eels_gz.paths import asset

DEFAULT = "ice"
# The packed record the compiled wrench kernel reads (``ContactParams.packed``): float64 values at these
# offsets. PACK_LAW holds the friction law, LAW_REGULATED (``kernel.py``) or LAW_BRISTLE (``stick.py``).
PACK_MU, PACK_EV_A, PACK_EV_B, PACK_K, PACK_C, PACK_V_EPS, PACK_STICK_LENGTH, PACK_ROLL_ARM, PACK_LAW = range(9)
PACK_SIZE = 9
LAW_REGULATED, LAW_BRISTLE = 0.0, 1.0
_EXPONENT = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)[eE][+-]?\d+")


@dataclass(frozen=True)
class ContactParams:
    """Screw–terrain contact parameters (SI units).

    mu: friction coefficient along the threads (dimensionless).
    ev_a, ev_b: across-thread ratio |e_v| = ev_a + ev_b F_n, F_n the total
    normal load on one screw (ev_a dimensionless, ev_b in 1/N).
    k: penalty stiffness per contact point (N/m); c: damping per point (N s/m).
    v_eps: friction regulator speed (m/s); 0 is the unregulated Eq. 6.
    points_axial: stations along each screw; points_ring: points around each
    station (the first one faces "down"); points_per_screw is their product.
    stick_length: bristle length z0 of the stick-slip law (m, ``stick.py``);
    0 (the key may be left out) uses the regulator instead.
    roll_arm: rolling resistance of the embedded blades (m, ``point_terms.py``):
    the largest offset of the normal force from the contact line, so that a
    screw of load F_n starts to roll at the moment roll_arm F_n; 0 (the key
    may be left out): a line contact that does not resist rolling.
    """

    mu: float
    ev_a: float
    ev_b: float
    k: float
    c: float
    v_eps: float
    points_axial: int
    points_ring: int
    stick_length: float = 0.0
    roll_arm: float = 0.0

    def __post_init__(self) -> None:
        for f in fields(self):
            _check(f.name, getattr(self, f.name), "ContactParams")

    @property
    def points_per_screw(self) -> int:
        return self.points_axial * self.points_ring

    def ev_norm(self, f_n: ArrayLike) -> np.ndarray:
        """|e_v| at screw load ``f_n`` (N), clamped as in ``ev_norm_of_load``."""
        return ev_norm_of_load(f_n, self.ev_a, self.ev_b)

    def to_dict(self) -> dict:
        return asdict(self)

    @property
    def law(self) -> float:
        """The friction law: LAW_BRISTLE when ``stick_length > 0``, else LAW_REGULATED."""
        return LAW_BRISTLE if self.stick_length > 0.0 else LAW_REGULATED

    def packed(self) -> np.ndarray:
        """The parameters as one read-only float64 record, (PACK_SIZE,) at the ``PACK_*`` offsets, in
        the units of the fields: what the compiled wrench kernel takes. Built once per set (the set is
        frozen) and returned again on later calls."""
        record = self.__dict__.get("_packed")
        if record is None or record.flags.writeable:  # (an unpickled copy comes back writeable)
            record = np.empty(PACK_SIZE)
            record[PACK_MU], record[PACK_EV_A], record[PACK_EV_B] = self.mu, self.ev_a, self.ev_b
            record[PACK_K], record[PACK_C], record[PACK_V_EPS] = self.k, self.c, self.v_eps
            record[PACK_STICK_LENGTH], record[PACK_ROLL_ARM] = self.stick_length, self.roll_arm
            record[PACK_LAW] = self.law
            record.flags.writeable = False
            object.__setattr__(self, "_packed", record)
        return record


# key -> (integer?, lower bound, lower bound inclusive?, meaning for the message)
_RANGES: dict[str, tuple[bool, float, bool, str]] = {
    "mu": (False, 0.0, True, "a friction coefficient >= 0"),
    "ev_a": (False, 0.0, False, "an intercept > 0 (|e_v| at zero load)"),
    "ev_b": (False, 0.0, True, "a slope >= 0 in 1/N (|e_v| grows with load, EELS-DARTS Fig. 6)"),
    "k": (False, 0.0, False, "a stiffness > 0 in N/m"),
    "c": (False, 0.0, True, "a damping >= 0 in N s/m"),
    "v_eps": (False, 0.0, True, "a regulator speed >= 0 in m/s"),
    "points_axial": (True, 1, True, "an integer >= 1"),
    "points_ring": (True, 1, True, "an integer >= 1"),
    "stick_length": (False, 0.0, True, "a bristle length >= 0 in m (0: the regulator)"),
    "roll_arm": (False, 0.0, True, "a rolling-resistance arm >= 0 in m (0: no rolling resistance)"),
}
KEYS = tuple(_RANGES)
OPTIONAL = {"stick_length": 0.0, "roll_arm": 0.0}  # keys a file may leave out, with their defaults


def _check(key: str, value: object, source: str, label: str | None = None) -> None:
    integer, low, inclusive, meaning = _RANGES[key]
    label = label or key
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (integer and not isinstance(value, int)):
        raise ConfigError(f"{source}: '{label}' must be {meaning}, got {value!r}")
    if not math.isfinite(value) or value < low or (value == low and not inclusive):
        raise ConfigError(f"{source}: '{label}' = {value!r} is out of range; expected {meaning}")


def contact_config_path(path_or_name: str | Path = DEFAULT) -> Path:
    """A YAML path as given, or ``config/contact/<name>.yaml`` for a bare name."""
    text = str(path_or_name)
    if text.endswith((".yaml", ".yml")) or "/" in text or Path(text).is_file():
        return Path(text)
    path = asset("config", "contact", f"{text}.yaml")
    if not path.is_file():
        names = sorted(p.stem for p in asset("config", "contact").glob("*.yaml"))
        raise ConfigError(
            f"unknown contact parameter set '{text}' (no {path}); available: {', '.join(names) or 'none'}"
        )
    return path


# Sets a run has resolved, by their file's absolute path, while the run builds its systems
# (``resolved_contact_sets``): ``load_contact_params`` hands these on instead of reading the file again.
_RESOLVED: dict[str, ContactParams] = {}


@contextmanager
def resolved_contact_sets(sets: dict[str | Path, ContactParams]) -> Iterator[None]:
    """Within the block, ``load_contact_params`` of one of these files (a path, or a name under
    config/contact/) returns the given, already resolved set without reading the file: a run resolves
    its contact parameters once (file and ``contact.*`` overrides) and its screw contact system, which
    reads ``<contact_params>`` in ``configure`` as it must under Gazebo, gets that set. Outside the
    block (and under Gazebo) the file is read."""
    keys = [str(contact_config_path(k).resolve()) for k in sets]
    saved = {k: _RESOLVED[k] for k in keys if k in _RESOLVED}
    _RESOLVED.update(zip(keys, sets.values()))
    try:
        yield
    finally:
        for k in keys:
            _RESOLVED.pop(k, None)
        _RESOLVED.update(saved)


def load_contact_params(path_or_name: str | Path = DEFAULT) -> ContactParams:
    """Read and check a contact parameter file (a path, or a name under config/contact/).

    Every key of ``ContactParams`` is required; unknown keys and out-of-range
    values raise ConfigError naming the file, the key and the allowed range.
    A set the current run has resolved (``resolved_contact_sets``) is returned as it is.
    """
    path = contact_config_path(path_or_name)
    if _RESOLVED:
        resolved = _RESOLVED.get(str(path.resolve()))
        if resolved is not None:
            return resolved
    data = load_yaml(path)
    source = str(path)
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: expected a mapping of contact parameters, got {type(data).__name__}")
    unknown = [str(k) for k in data if k not in _RANGES]
    if unknown:
        raise ConfigError(f"{source}: unknown contact key(s) {', '.join(unknown)}; valid keys: {', '.join(KEYS)}")
    missing = [k for k in KEYS if k not in data and k not in OPTIONAL]
    if missing:
        raise ConfigError(f"{source}: missing contact key(s) {', '.join(missing)}")
    values = {}
    for key in KEYS:
        value = data.get(key, OPTIONAL.get(key))
        if isinstance(value, str) and _EXPONENT.fullmatch(value.strip()):
            value = float(value)  # YAML 1.1 reads "2.5e4" as a string
        _check(key, value, source)
        values[key] = float(value) if not _RANGES[key][0] else value
    return ContactParams(**values)


def check_contact_value(key: str, value: object, source: str) -> None:
    """Check one contact key (``mu``, ``ev_a``, ...) set on its own, e.g. ``--set contact.mu=0.12``:
    ConfigError naming the key and the valid ones if it is unknown, or its range if the value is out of it."""
    if key not in _RANGES:
        raise ConfigError(f"{source}: unknown contact key 'contact.{key}'; valid keys: "
                          f"{', '.join('contact.' + k for k in KEYS)}")
    _check(key, value, source, f"contact.{key}")


def resolve_contact_params(path_or_name: str | Path, overrides: dict | None = None,
                           base: ContactParams | None = None) -> ContactParams:
    """The set ``path_or_name`` with the keys of ``overrides`` (e.g. ``{"mu": 0.12}``) replaced, checked.
    ``base``: that set as already read from ``path_or_name`` (then the file is not read again)."""
    params = base if base is not None else load_contact_params(path_or_name)
    if not overrides:
        return params
    for key, value in overrides.items():
        check_contact_value(key, value, f"contact parameters over '{path_or_name}'")
    values = params.to_dict()
    values.update({k: (v if _RANGES[k][0] else float(v)) for k, v in overrides.items()})
    return ContactParams(**values)


def write_contact_params(params: ContactParams, path: str | Path, header: str = "") -> Path:
    """Write a full parameter set (every key) as YAML that :func:`load_contact_params` reads back."""
    import yaml

    path = Path(path)
    text = "".join(f"# {line}\n" for line in header.splitlines())
    path.write_text(text + yaml.safe_dump(params.to_dict(), sort_keys=False))
    return path
