"""Granular media for resistive force theory, from ``config/granular/<name>.yaml``, checked key by key.

Keys: ``zeta`` [N/m^3] (required: the medium's scaling factor of the generic
RFT stresses, Li, Zhang & Goldman 2013, ``eels_gz.granular.rft``), and the
optional ``velocity_reg`` [m/s], ``leading_band`` (dimensionless) and the
screw's surface resolution ``blade_elements_per_turn``, ``blade_rows``,
``core_axial``, ``core_ring`` (counts), whose defaults are defined here only.

Read and checked as the contact and soil sets are (``eels_gz.paramsets``): an
unknown key, a missing key or a value out of range raises ConfigError naming
the file, the key and what was expected.
"""

from __future__ import annotations

from dataclasses import MISSING, asdict, dataclass, fields
from pathlib import Path

from eels_gz.paramsets import Bounds, ParamSetKind, write_param_set


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
            GRANULAR.check(f.name, getattr(self, f.name), "GranularParams")

    def to_dict(self) -> dict:
        return asdict(self)


def _count(low: int, high: int) -> Bounds:
    return Bounds(low, True, f"an integer count in [{low}, {high}]", high, True, integer=True, whole_floats=True)


GRANULAR = ParamSetKind("granular", "granular", {
    "zeta": Bounds(0.0, False, "a scaling factor > 0 in N/m^3"),
    "velocity_reg": Bounds(0.0, False, "a regularisation speed > 0 in m/s"),
    "leading_band": Bounds(0.0, False, "a ramp width in (0, 1] (of n . v / |v|)", 1.0, True),
    "blade_elements_per_turn": _count(4, 3600),
    "blade_rows": _count(1, 100),
    "core_axial": _count(1, 1000),
    "core_ring": _count(3, 3600),
}, optional={f.name: f.default for f in fields(GranularParams) if f.default is not MISSING}, noun="medium")
KEYS = tuple(GRANULAR.keys)
OPTIONAL = GRANULAR.optional
REQUIRED = tuple(k for k in KEYS if k not in OPTIONAL)


def granular_config_path(path_or_name: str | Path) -> Path:
    """A YAML path as given, or ``config/granular/<name>.yaml`` for a bare name."""
    return GRANULAR.path(path_or_name)


def granular_names() -> list[str]:
    """The media shipped in ``config/granular/``."""
    return GRANULAR.names()


def load_granular_params(path_or_name: str | Path) -> GranularParams:
    """Read and check a medium (a path, or a name under config/granular/); ConfigError naming the file
    and the key on an unknown, missing or out-of-range key."""
    return GranularParams(**GRANULAR.read(granular_config_path(path_or_name)))


def check_granular_value(key: str, value: object, source: str) -> None:
    """Check one key set on its own (e.g. ``granular.zeta=2e6``)."""
    GRANULAR.check_setting(key, value, source)


def resolve_granular_params(path_or_name: str | Path, overrides: dict | None = None) -> GranularParams:
    """The medium ``path_or_name`` with the keys of ``overrides`` replaced, checked."""
    params = load_granular_params(path_or_name)
    if not overrides:
        return params
    return GranularParams(**GRANULAR.with_settings(params.to_dict(), overrides,
                                                   f"granular parameters over '{path_or_name}'"))


def write_granular_params(params: GranularParams, path: str | Path, header: str = "") -> Path:
    """Write a full medium (every key) as YAML that :func:`load_granular_params` reads back."""
    return write_param_set(params.to_dict(), path, header)
