"""Soil parameter sets from ``config/soil/<name>.yaml``, checked key by key.

The keys of a set are a contract (issue 34): ``k_c`` [N/m^(n+1)], ``k_phi``
[N/m^(n+2)], ``n``, ``cohesion`` [Pa], ``friction_angle_deg``,
``shear_modulus_K`` [m], ``c1``, ``c2``. A set may add ``density`` [kg/m^3]
(the bulldozing resistance's soil weight) and the model's two regularisation
scales, ``slip_speed_reg`` [m/s], ``normal_damping`` [s/m] and
``shear_damping_time`` [s]; those four
have defaults (``OPTIONAL``) defined here only.

The loader follows ``eels_gz.contact.params``: an unknown key, a missing key
or a value out of range raises ConfigError naming the file, the key and what
was expected.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from eels_gz.yamlio import load as load_yaml
from eels_gz.errors import ConfigError
from eels_gz.paths import asset

_EXPONENT = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)[eE][+-]?\d+")


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

    def __post_init__(self) -> None:
        for f in fields(self):
            _check(f.name, getattr(self, f.name), "SoilParams")
        if self.k_c <= 0.0 and self.k_phi <= 0.0:
            raise ConfigError("SoilParams: 'k_c' and 'k_phi' are both 0; the soil would carry no load")

    @property
    def friction_angle(self) -> float:
        """phi in radians."""
        return math.radians(self.friction_angle_deg)

    def to_dict(self) -> dict:
        return asdict(self)


# key -> (lower, lower inclusive?, upper, upper inclusive?, meaning for the message)
_RANGES: dict[str, tuple[float, bool, float, bool, str]] = {
    "k_c": (0.0, True, math.inf, False, "a cohesive modulus >= 0 in N/m^(n+1)"),
    "k_phi": (0.0, True, math.inf, False, "a frictional modulus >= 0 in N/m^(n+2)"),
    "n": (0.0, False, 3.0, True, "a sinkage exponent in (0, 3]"),
    "cohesion": (0.0, True, math.inf, False, "a cohesion >= 0 in Pa"),
    "friction_angle_deg": (0.0, True, 90.0, False, "a friction angle in [0, 90) degrees"),
    "shear_modulus_K": (0.0, False, math.inf, False, "a shear deformation modulus > 0 in m"),
    "c1": (0.0, True, 1.0, True, "a Wong-Reece coefficient in [0, 1]"),
    "c2": (-1.0, True, 1.0, True, "a Wong-Reece coefficient in [-1, 1]"),
    "density": (0.0, True, math.inf, False, "a bulk density >= 0 in kg/m^3"),
    "slip_speed_reg": (0.0, False, math.inf, False, "a regularisation speed > 0 in m/s"),
    "normal_damping": (0.0, True, math.inf, False, "a Hunt-Crossley coefficient >= 0 in s/m"),
    "shear_damping_time": (0.0, True, math.inf, False, "a damping time >= 0 in s"),
}
KEYS = tuple(_RANGES)
REQUIRED = ("k_c", "k_phi", "n", "cohesion", "friction_angle_deg", "shear_modulus_K", "c1", "c2")
OPTIONAL = {f.name: f.default for f in fields(SoilParams) if f.name not in REQUIRED}


def _check(key: str, value: object, source: str, label: str | None = None) -> None:
    low, low_in, high, high_in, meaning = _RANGES[key]
    label = label or key
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"{source}: '{label}' must be {meaning}, got {value!r}")
    if (not math.isfinite(value) or value < low or (value == low and not low_in)
            or value > high or (value == high and not high_in)):
        raise ConfigError(f"{source}: '{label}' = {value!r} is out of range; expected {meaning}")


def soil_config_path(path_or_name: str | Path) -> Path:
    """A YAML path as given, or ``config/soil/<name>.yaml`` for a bare name."""
    text = str(path_or_name)
    if text.endswith((".yaml", ".yml")) or "/" in text or Path(text).is_file():
        return Path(text)
    path = asset("config", "soil", f"{text}.yaml")
    if not path.is_file():
        names = sorted(p.stem for p in asset("config", "soil").glob("*.yaml"))
        raise ConfigError(f"unknown soil parameter set '{text}' (no {path}); available: {', '.join(names) or 'none'}")
    return path


def soil_names() -> list[str]:
    """The soil sets shipped in ``config/soil/``."""
    return sorted(p.stem for p in asset("config", "soil").glob("*.yaml"))


def load_soil_params(path_or_name: str | Path) -> SoilParams:
    """Read and check a soil set (a path, or a name under config/soil/).

    The contract keys are required; unknown keys and out-of-range values raise
    ConfigError naming the file, the key and the allowed range.
    """
    path = soil_config_path(path_or_name)
    data = load_yaml(path)
    source = str(path)
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: expected a mapping of soil parameters, got {type(data).__name__}")
    unknown = [str(k) for k in data if k not in _RANGES]
    if unknown:
        raise ConfigError(f"{source}: unknown soil key(s) {', '.join(unknown)}; valid keys: {', '.join(KEYS)}")
    missing = [k for k in REQUIRED if k not in data]
    if missing:
        raise ConfigError(f"{source}: missing soil key(s) {', '.join(missing)}")
    values = {}
    for key in KEYS:
        value = data.get(key, OPTIONAL.get(key))
        if isinstance(value, str) and _EXPONENT.fullmatch(value.strip()):
            value = float(value)  # YAML 1.1 reads "2.5e4" as a string
        _check(key, value, source)
        values[key] = float(value)
    try:
        return SoilParams(**values)
    except ConfigError as exc:
        raise ConfigError(f"{source}: {exc}") from None


def check_soil_value(key: str, value: object, source: str) -> None:
    """Check one soil key set on its own (e.g. ``soil.cohesion=800``)."""
    if key not in _RANGES:
        raise ConfigError(f"{source}: unknown soil key 'soil.{key}'; valid keys: "
                          f"{', '.join('soil.' + k for k in KEYS)}")
    _check(key, value, source, f"soil.{key}")


def resolve_soil_params(path_or_name: str | Path, overrides: dict | None = None) -> SoilParams:
    """The set ``path_or_name`` with the keys of ``overrides`` replaced, checked."""
    params = load_soil_params(path_or_name)
    if not overrides:
        return params
    for key, value in overrides.items():
        check_soil_value(key, value, f"soil parameters over '{path_or_name}'")
    values = params.to_dict()
    values.update({k: float(v) for k, v in overrides.items()})
    return SoilParams(**values)


def write_soil_params(params: SoilParams, path: str | Path, header: str = "") -> Path:
    """Write a full soil set (every key) as YAML that :func:`load_soil_params` reads back."""
    import yaml

    path = Path(path)
    text = "".join(f"# {line}\n" for line in header.splitlines())
    path.write_text(text + yaml.safe_dump(params.to_dict(), sort_keys=False))
    return path
