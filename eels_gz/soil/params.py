"""Soil parameter sets from ``config/soil/<name>.yaml``, checked key by key.

The keys of a set are a contract (issue 34): ``k_c`` [N/m^(n+1)], ``k_phi``
[N/m^(n+2)], ``n``, ``cohesion`` [Pa], ``friction_angle_deg``,
``shear_modulus_K`` [m], ``c1``, ``c2``. A set may add ``density`` [kg/m^3]
(the bulldozing resistance's and the lugs' soil weight), the model's
regularisation scales, ``slip_speed_reg`` [m/s], ``normal_damping`` [s/m] and
``shear_damping_time`` [s], and the keys of issue 44's grouser and slip-sinkage
terms, ``slip_sinkage_n1``, ``interface_friction_ratio``, ``grain_size`` [m] and
``lug_trap_ratio``; those have defaults (``OPTIONAL``) defined here only, the
grouser keys' defaults giving back the model before issue 44.

Read and checked as the contact sets are (``eels_gz.paramsets``): an unknown
key, a missing key or a value out of range raises ConfigError naming the
file, the key and what was expected.
"""

from __future__ import annotations

import math
from dataclasses import MISSING, asdict, dataclass, fields
from pathlib import Path

from eels_gz.errors import ConfigError
from eels_gz.paramsets import Bounds, ParamSetKind, write_param_set


@dataclass(frozen=True)
class SoilParams:
    """A terramechanics soil set (SI units; see ``eels_gz.soil.wong_reece`` for the equations).

    k_c: Bekker cohesive modulus, N/m^(n+1); k_phi: frictional modulus,
    N/m^(n+2); n: sinkage exponent; p = (k_c / b + k_phi) z^n.
    cohesion: Mohr-Coulomb c, Pa; friction_angle_deg: internal friction
    angle phi, degrees. shear_modulus_K: Janosi-Hanamoto shear deformation
    modulus K, m. c1, c2: Wong-Reece maximum-stress angle
    theta_m = (c1 + c2 s) theta_1.
    density: bulk density, kg/m^3 (lateral bulldozing, Ishigami et al. 2007).
    slip_speed_reg: the travel speed over which the Wong-Reece geometry turns
    from one direction to the other (and the bulldozing with the lateral
    slip's sign), m/s: the force stays continuous through v = 0.
    normal_damping: Hunt-Crossley coefficient alpha of the normal load,
    W (1 + alpha * sinking speed), s/m.
    shear_damping_time: the damper beside Janosi's shear spring that holds a
    wheel at rest, s (``wong_reece.shear_state_step``).
    slip_sinkage_n1: n1 of the slip-sinkage exponent N = n + n1 s (Ding et al.
    2011; ``wong_reece``), 0 for none.
    interface_friction_ratio: delta / phi of the wheel-grain interface (and
    c_a / c), in (0, 1]; 1: the rim shears the soil as the soil itself does.
    grain_size: d50 of the grains, m (0: finer than any lug).
    lug_trap_ratio: the lug height, in grains, from which the soil between
    the lugs is carried with the wheel (``eels_gz.soil.grousers``), > 1.

    Defaults of the three numerical keys, and why (Archimede, 6.57 kg on four
    wheels, 16 N each, dt = 1 ms): slip_speed_reg 2 cm/s, a fifth of the
    paper's slowest wheel speed (1.2 rad/s x 0.085 m), turns the compaction
    resistance (about 2.3 N) into a 115 N s/m damper below it, dt c / m = 0.26
    on the 0.45 kg hub and wheel alone (< 2, stable), weak enough that a
    wheel held at rest settles onto its shear spring within seconds (at 5 mm/s
    it still crept after 10 s: test_soil_model); normal_damping 5 s/m gives c = alpha W
    = 80 N s/m on a sinkage stiffness near 2 kN/m, a damping ratio of about
    0.7 on a 1.6 kg corner; shear_damping_time 10 ms damps the wheel's spin on
    the shear spring (k r^2 ~ 3 N m/rad, I = 7.2e-4 kg m^2) at a ratio of
    about 0.3, with dt t_d k r^2 / I = 0.04 << 2.
    """

    k_c: float
    k_phi: float
    n: float
    cohesion: float
    friction_angle_deg: float
    shear_modulus_K: float
    c1: float
    c2: float
    density: float = 1500.0
    slip_speed_reg: float = 0.02
    normal_damping: float = 5.0
    shear_damping_time: float = 0.01
    slip_sinkage_n1: float = 0.0
    interface_friction_ratio: float = 1.0
    grain_size: float = 0.0
    lug_trap_ratio: float = 10.0

    def __post_init__(self) -> None:
        for f in fields(self):
            SOIL.check(f.name, getattr(self, f.name), "SoilParams")
        if self.k_c <= 0.0 and self.k_phi <= 0.0:
            raise ConfigError("SoilParams: 'k_c' and 'k_phi' are both 0; the soil would carry no load")

    @property
    def friction_angle(self) -> float:
        """phi in radians."""
        return math.radians(self.friction_angle_deg)

    def to_dict(self) -> dict:
        return asdict(self)


SOIL = ParamSetKind("soil", "soil", {
    "k_c": Bounds(0.0, True, "a cohesive modulus >= 0 in N/m^(n+1)"),
    "k_phi": Bounds(0.0, True, "a frictional modulus >= 0 in N/m^(n+2)"),
    "n": Bounds(0.0, False, "a sinkage exponent in (0, 3]", 3.0, True),
    "cohesion": Bounds(0.0, True, "a cohesion >= 0 in Pa"),
    "friction_angle_deg": Bounds(0.0, True, "a friction angle in [0, 90) degrees", 90.0, False),
    "shear_modulus_K": Bounds(0.0, False, "a shear deformation modulus > 0 in m"),
    "c1": Bounds(0.0, True, "a Wong-Reece coefficient in [0, 1]", 1.0, True),
    "c2": Bounds(-1.0, True, "a Wong-Reece coefficient in [-1, 1]", 1.0, True),
    "density": Bounds(0.0, True, "a bulk density >= 0 in kg/m^3"),
    "slip_speed_reg": Bounds(0.0, False, "a regularisation speed > 0 in m/s"),
    "normal_damping": Bounds(0.0, True, "a Hunt-Crossley coefficient >= 0 in s/m"),
    "shear_damping_time": Bounds(0.0, True, "a damping time >= 0 in s"),
    "slip_sinkage_n1": Bounds(0.0, True, "a slip-sinkage coefficient in [0, 3]", 3.0, True),
    "interface_friction_ratio": Bounds(0.0, False, "a ratio delta / phi in (0, 1]", 1.0, True),
    "grain_size": Bounds(0.0, True, "a grain size >= 0 in m"),
    "lug_trap_ratio": Bounds(1.0, False, "a lug height in grains > 1"),
}, optional={f.name: f.default for f in fields(SoilParams) if f.default is not MISSING})
KEYS = tuple(SOIL.keys)
OPTIONAL = SOIL.optional
REQUIRED = tuple(k for k in KEYS if k not in OPTIONAL)


def soil_config_path(path_or_name: str | Path) -> Path:
    """A YAML path as given, or ``config/soil/<name>.yaml`` for a bare name."""
    return SOIL.path(path_or_name)


def soil_names() -> list[str]:
    """The soil sets shipped in ``config/soil/``."""
    return SOIL.names()


def load_soil_params(path_or_name: str | Path) -> SoilParams:
    """Read and check a soil set (a path, or a name under config/soil/).

    The contract keys are required; unknown keys and out-of-range values raise
    ConfigError naming the file, the key and the allowed range.
    """
    path = soil_config_path(path_or_name)
    values = SOIL.read(path)
    try:
        return SoilParams(**values)
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None


def check_soil_value(key: str, value: object, source: str) -> None:
    """Check one soil key set on its own (e.g. ``soil.cohesion=800``)."""
    SOIL.check_setting(key, value, source)


def resolve_soil_params(path_or_name: str | Path, overrides: dict | None = None) -> SoilParams:
    """The set ``path_or_name`` with the keys of ``overrides`` replaced, checked."""
    params = load_soil_params(path_or_name)
    if not overrides:
        return params
    return SoilParams(**SOIL.with_settings(params.to_dict(), overrides, f"soil parameters over '{path_or_name}'"))


def write_soil_params(params: SoilParams, path: str | Path, header: str = "") -> Path:
    """Write a full soil set (every key) as YAML that :func:`load_soil_params` reads back."""
    return write_param_set(params.to_dict(), path, header)
