"""Run configuration: defaults from config/run_defaults.yaml, a user YAML
file, and ``--set KEY=VALUE`` overrides, merged with that precedence and
checked key by key."""

from __future__ import annotations

import copy
import math
import re
from pathlib import Path
from typing import Any

import yaml

from eels_gz import yamlio
from eels_gz.errors import ConfigError
from eels_gz.paths import asset
from eels_gz.ranges import check_config_number, check_pose

# Keys whose values are free-form mappings (their sub-keys are not checked).
FREE_FORM = {"robot.xacro_args", "scenario"}
# The scenario section: ``name`` plus the scenario's own parameters, which
# the scenario file checks (eels_gz.control.setpoints.load_scenario).
# Types of keys whose default is null (others are checked against their default's type).
NULLABLE = {
    "duration": float,
    "scenario": str,
    "robot.n_modules": int,
    "robot.urdf": str,
    "physics.dt": float,
    "physics.collision_detector": str,
    "physics.solver": str,
    "ros.rate": float,
    "contact.model": str,
    "contact.params": str,
    "soil.params": str,
    "granular.params": str,
    "sim.reset_at": float,
}
DETECTORS = ("ode", "bullet", "fcl", "dart")
PLUGIN_ERRORS = ("stop", "disable")
HOSTS = ("embedded", "gazebo")  # sim.host: the embedded DART host, or gz-sim (eels_gz.gazebo)
SOLVERS = ("dantzig", "pgs")
MIMIC = ("none", "exact")  # physics.mimic (eels_gz.dart.couplings.MIMIC; a test keeps the two equal)
POSITIVE = ("duration", "physics.dt", "physics.max_velocity", "log.rate")  # ros.*: start_ros checks them
_EXPONENT = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)[eE][+-]?\d+")


def load_yaml(path: str | Path) -> Any:
    """Read a YAML file, turning I/O and syntax errors, a binary file and a duplicate key into
    ConfigError naming the file (eels_gz.yamlio, which keeps each file's parse for the process)."""
    return yamlio.load(path)


def defaults() -> dict:
    return load_yaml(asset("config", "run_defaults.yaml"))


def _flat_keys(tree: dict, prefix: str = "") -> list[str]:
    keys = []
    for k, v in tree.items():
        key = prefix + k
        if isinstance(v, dict) and key not in FREE_FORM:
            keys += _flat_keys(v, key + ".")
        else:
            keys.append(key)
    return keys


def _check_type(key: str, value: Any, default: Any, source: str) -> None:
    if key == "scenario":
        _check_scenario(value, source)
        return
    if key == "robot.xacro_args" and value is not None and not isinstance(value, dict):
        raise ConfigError(f"{source}: 'robot.xacro_args' must be a mapping of xacro argument names to values, "
                          f"e.g. --set robot.xacro_args.head=true, got {value!r}")
    if value is None or key in FREE_FORM:
        return
    if key == "physics.collision_detector" and value not in DETECTORS:
        raise ConfigError(f"{source}: '{key}' must be one of {', '.join(DETECTORS)}, got {value!r}")
    if key == "physics.solver" and value not in SOLVERS:
        raise ConfigError(f"{source}: '{key}' must be one of {', '.join(SOLVERS)}, got {value!r}")
    if key == "physics.mimic" and value not in MIMIC:
        raise ConfigError(f"{source}: '{key}' must be one of {', '.join(MIMIC)}, got {value!r}")
    if key == "sim.host" and value not in HOSTS:
        raise ConfigError(f"{source}: '{key}' must be one of {', '.join(HOSTS)}, got {value!r}")
    if key == "sim.plugin_errors" and value not in PLUGIN_ERRORS:
        raise ConfigError(f"{source}: '{key}' must be one of {', '.join(PLUGIN_ERRORS)}, got {value!r}")
    if key == "sim.reset_at" and (isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0):
        raise ConfigError(f"{source}: '{key}' must be a positive time in seconds, got {value!r}")
    if key == "sim.reset_at":
        check_config_number(key, value, source)
    if default is None:
        default = NULLABLE[key]()
    if key == "robot.pose":
        ok = value == "auto" or (
            isinstance(value, list)
            and len(value) == 6
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
        )
        if not ok:
            raise ConfigError(f"{source}: robot.pose must be 'auto' or a list of 6 numbers, got {value!r}")
        if value != "auto" and not all(math.isfinite(v) for v in value):
            raise ConfigError(f"{source}: robot.pose must hold finite numbers, got {value!r}")
        if value != "auto":
            check_pose(value, source)
        return
    if isinstance(default, bool):
        ok = isinstance(value, bool)
    elif isinstance(default, (int, float)):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    else:
        ok = isinstance(value, type(default))
    if not ok:
        raise ConfigError(f"{source}: '{key}' expects a {type(default).__name__}, got {value!r}")
    if isinstance(default, float) and not math.isfinite(value):
        raise ConfigError(f"{source}: '{key}' must be a finite number, got {value!r}")
    if isinstance(default, float) and key in POSITIVE and not value > 0:
        raise ConfigError(f"{source}: '{key}' must be positive, got {value!r}")
    check_config_number(key, value, source)  # its documented range (eels_gz/ranges.py)


def _check_scenario(value: Any, source: str) -> None:
    if not isinstance(value, dict):
        raise ConfigError(f"{source}: 'scenario' must be a mapping with 'name' and parameters, got {value!r}")
    name = value.get("name")
    if name is not None and not isinstance(name, str):
        raise ConfigError(f"{source}: 'scenario.name' expects a scenario name, got {name!r}")
    for key, v in value.items():
        if key != "name" and not isinstance(v, (int, float)):  # bool is an int: a switch (true/false)
            raise ConfigError(f"{source}: scenario parameter 'scenario.{key}' must be a number or true/false, "
                              f"got {v!r}")


# sections whose parameter-set keys may be set one by one (``contact.mu``, ``soil.cohesion``,
# ``granular.zeta``): section -> the module whose ``KEYS`` and ``check_<section>_value`` define them.
# Each key overrides that key of the set ``<section>.params`` names (eels_gz.paramsets).
_PARAM_SETS = {"contact": "eels_gz.contact.params", "soil": "eels_gz.soil.params",
               "granular": "eels_gz.granular.params"}


def _param_set_module(section: str):
    import importlib

    return importlib.import_module(_PARAM_SETS[section])


def set_keys(section: str) -> tuple[str, ...]:
    """The keys of ``section``'s parameter sets, each settable on its own as ``<section>.<key>``."""
    return _param_set_module(section).KEYS


def _set_param_key(section: str, target: dict, key: str, value: Any, source: str) -> None:
    """``<section>.<key>`` (e.g. contact.mu): checked against the key's range; null removes the override."""
    if value is None:
        target.pop(key, None)
        return
    if isinstance(value, str) and _EXPONENT.fullmatch(value.strip()):
        value = float(value)
    getattr(_param_set_module(section), f"check_{section}_value")(key, value, source)
    target[key] = copy.deepcopy(value)


def set_overrides(section: str, values: dict) -> dict:
    """The keys of ``section``'s parameter set a configuration sets on their own, beside its model and params."""
    keys = set_keys(section)
    return {k: v for k, v in values.items() if k in keys and v is not None}


def contact_overrides(contact: dict) -> dict:
    """The contact keys a configuration sets on their own (``contact.mu``...), beside model and params."""
    return set_overrides("contact", contact)


def soil_overrides(soil: dict) -> dict:
    """The soil keys a configuration sets on their own (``soil.cohesion``...), beside params."""
    return set_overrides("soil", soil)


def granular_overrides(granular: dict) -> dict:
    """The granular keys a configuration sets on their own (``granular.zeta``...), beside params."""
    return set_overrides("granular", granular)


def _merge(base: dict, update: dict, ref: dict, source: str, prefix: str = "") -> None:
    if not isinstance(update, dict):
        raise ConfigError(f"{source}: expected a mapping at '{prefix.rstrip('.') or '<top>'}', got {update!r}")
    section = prefix.rstrip(".")
    own = set_keys(section) if section in _PARAM_SETS else ()
    for k, v in update.items():
        key = prefix + str(k)
        if k not in ref and str(k) in own:
            _set_param_key(section, base, str(k), v, source)
            continue
        if k not in ref:
            valid = ", ".join(_flat_keys(ref, prefix) + [prefix + n for n in own])
            raise ConfigError(f"{source}: unknown config key '{key}'; valid keys here: {valid}")
        if key == "scenario" and (v is None or isinstance(v, str)):
            v = {"name": v}  # `scenario: NAME`, the short form
        if key == "robot" and isinstance(v, str):
            v = {"name": v}  # `robot: NAME`, the short form of robot.name
        if isinstance(ref[k], dict) and key not in FREE_FORM:
            _merge(base[k], v, ref[k], source, key + ".")
        elif key in FREE_FORM and isinstance(v, dict) and isinstance(base[k], dict):
            merged = {**base[k], **copy.deepcopy(v)}  # free-form sections merge key by key
            _check_type(key, merged, ref[k], source)
            base[k] = merged
        else:
            _check_type(key, v, ref[k], source)
            base[k] = copy.deepcopy(v)


def parse_set(item: str) -> tuple[list[str], Any]:
    """Split ``a.b.c=VALUE``; VALUE is parsed as YAML (numbers, booleans, lists)."""
    if "=" not in item:
        raise ConfigError(f"--set '{item}': expected KEY=VALUE, e.g. --set physics.dt=0.002")
    key, raw = item.split("=", 1)
    if not key:
        raise ConfigError(f"--set '{item}': empty key")
    try:
        value = yamlio.loads(raw, f"--set {item}") if raw else None
    except yaml.YAMLError:
        value = raw
    if isinstance(value, str) and _EXPONENT.fullmatch(value.strip()):
        # YAML 1.1 reads "1e-9" as a string; numbers in exponent form are meant as numbers
        value = float(value)
    return key.split("."), value


def resolve(config_file: str | Path | None = None, overrides: dict | None = None,
            sets: list[str] | tuple[str, ...] = ()) -> dict:
    """Merge defaults <- config file <- overrides (CLI flags) <- --set items."""
    ref = defaults()
    cfg = copy.deepcopy(ref)
    if config_file is not None:
        data = load_yaml(config_file)
        if data is not None:
            _merge(cfg, data, ref, str(config_file))
    if overrides:
        _merge(cfg, overrides, ref, "command line")
    for item in sets:
        path, value = parse_set(item)
        set_key(cfg, ".".join(path), value, f"--set {item}", ref)
    return cfg


def set_key(cfg: dict, key: str, value: Any, source: str, ref: dict | None = None) -> None:
    """Set one dotted ``key`` of a resolved configuration to ``value`` (already parsed), checked as
    ``--set`` checks it; ``source`` starts the message of an error."""
    path = key.split(".")
    nested: dict = {}
    node = nested
    for part in path[:-1]:
        node = node.setdefault(part, {})
    node[path[-1]] = value
    _merge(cfg, nested, ref if ref is not None else defaults(), source)


def save(cfg: dict, path: str | Path) -> None:
    """Write ``cfg`` as YAML (the layout of config/run_defaults.yaml)."""
    Path(path).write_text(yaml.safe_dump(cfg, sort_keys=False))
