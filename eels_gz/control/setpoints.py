"""Time-stamped joint set points, as written in scenario files.

A scenario's ``setpoints`` is a list of keyframes::

    setpoints:
      - t: 0.0
        position: {"module_[0-9]+_bend": 0.0}
      - t: 2.0
        position: {"module_[13579]_bend": 0.2}
        velocity: {"module_[0-9]+_screw": 3.0}

A scenario may declare numeric ``params`` with their defaults; a keyframe
time or value may then be a parameter, optionally scaled::

    params: {screw_rate: 3.0, t_reverse: 5.0}
    setpoints:
      - t: 0.0
        velocity: {"module_[0-9]+_screw": screw_rate}
      - t: t_reverse
        velocity: {"module_[0-9]+_screw": -screw_rate}   # also "0.5*screw_rate"

``eels-gz run --set scenario.screw_rate=2.0`` overrides a default.

Keys are joint names or regular expressions (full match). A keyframe's
values hold from its time ``t`` (s) until a later keyframe changes them
(zero-order hold); ``ramp: true`` on a keyframe interpolates positions
linearly from the previous keyframe instead. Positions are rad (or m),
velocities rad/s (or m/s).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from eels_gz.errors import ConfigError

# tethers: eels_gz/snake/tethers.py (applied by the system plugins_py/tethers.py, named in systems:);
# systems: gz-sim systems of plugins_py/ the run loads on the robot (eels_gz/scenarios/plugin_elements.py);
# placement: a module of eels_gz/scenarios/ whose place(ctx) sets the start before the run;
# pose: the robot's start [x, y, z, roll, pitch, yaw] (m, rad) unless the run sets robot.pose;
# soil: the soil set (config/soil/) unless the run sets soil.params;
# granular: the medium (config/granular/) of contact.model rft unless the run sets granular.params;
# robots: the robot families (eels, rover) or registry names the scenario is made for (any, if absent);
# needs: what it needs of its robot, [screws] (eels_gz/run/compatibility.py checks both);
# ranges: {param: [low, high]}, the valid range of a parameter a run may set (else |value| <= 1e6)
SCENARIO_KEYS = {"description", "robot", "world", "duration", "setpoints", "params", "tethers",
                 "contact", "pose", "soil", "granular", "systems", "placement", "robots", "needs", "ranges"}
NEEDS = ("screws",)
CONTACT_KEYS = {"model", "params"}
KEYFRAME_KEYS = {"t", "position", "velocity", "ramp"}
_PARAM_EXPR = re.compile(r"\s*(?:([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*\*\s*|([+-]))?([A-Za-z_]\w*)\s*")


@dataclass(frozen=True)
class Keyframe:
    t: float
    position: dict[int, float]
    velocity: dict[int, float]
    ramp: bool


class SetpointSchedule:
    """Set points for a fixed list of joints, looked up by simulated time."""

    def __init__(self, joint_names: list[str], keyframes: list[dict], source: str = "<setpoints>"):
        self.names = list(joint_names)
        self.source = source
        self.frames = [self._frame(k, i) for i, k in enumerate(keyframes)]
        times = [f.t for f in self.frames]
        if times != sorted(times):
            raise ConfigError(f"{source}: setpoint times must be non-decreasing, got {times}")
        n = len(self.names)
        # per keyframe: the full target vectors after applying it (NaN = no target)
        self._pos, self._vel = [], []
        pos, vel = np.full(n, np.nan), np.full(n, np.nan)
        for f in self.frames:
            pos, vel = pos.copy(), vel.copy()
            for j, v in f.position.items():
                pos[j] = v
            for j, v in f.velocity.items():
                vel[j] = v
            self._pos.append(pos)
            self._vel.append(vel)
        self._times = np.array(times)
        self._held = (np.inf, -np.inf, None)  # (from, until, targets) of the last held keyframe

    def _match(self, pattern: str, where: str) -> list[int]:
        try:
            rx = re.compile(pattern)
        except re.error as exc:
            raise ConfigError(f"{where}: bad joint pattern '{pattern}': {exc}") from None
        hits = [i for i, name in enumerate(self.names) if rx.fullmatch(name)]
        if not hits:
            raise ConfigError(f"{where}: joint pattern '{pattern}' matches no joint of the robot "
                              f"(joints: {', '.join(self.names)})")
        return hits

    def _frame(self, raw: dict, index: int) -> Keyframe:
        where = f"{self.source}: setpoints[{index}]"
        if not isinstance(raw, dict):
            raise ConfigError(f"{where}: expected a mapping with t, position and/or velocity")
        unknown = set(raw) - KEYFRAME_KEYS
        if unknown:
            raise ConfigError(f"{where}: unknown keys {sorted(unknown)}; expected {sorted(KEYFRAME_KEYS)}")
        try:
            t = float(raw["t"])
        except (KeyError, TypeError, ValueError):
            raise ConfigError(f"{where}: needs a numeric time 't' in seconds") from None
        maps = {}
        for kind in ("position", "velocity"):
            values: dict[int, float] = {}
            for pattern, value in (raw.get(kind) or {}).items():
                if not isinstance(value, (int, float)) or isinstance(value, bool) or not np.isfinite(value):
                    raise ConfigError(f"{where}: {kind} of '{pattern}' must be a finite number, got {value!r}")
                for j in self._match(str(pattern), where):
                    values[j] = float(value)
            maps[kind] = values
        return Keyframe(t, maps["position"], maps["velocity"], bool(raw.get("ramp", False)))

    def at(self, t: float) -> tuple[np.ndarray, np.ndarray]:
        """(positions, velocities) targets at time t; NaN where no target is set.
        The arrays are the schedule's own: read them, do not write them."""
        lo, hi, held = self._held
        if lo <= t < hi:  # the same keyframe as last time, and no ramp: nothing to compute
            return held
        n = len(self.names)
        k = int(np.searchsorted(self._times, t, side="right")) - 1
        if k < 0:
            held = (np.full(n, np.nan), np.full(n, np.nan))
            self._held = (-np.inf, self._times[0] if len(self._times) else np.inf, held)
            return held
        pos = self._pos[k]
        nxt = k + 1
        if nxt >= len(self.frames) or not self.frames[nxt].ramp:
            self._held = (self._times[k], self._times[nxt] if nxt < len(self.frames) else np.inf,
                          (pos, self._vel[k]))
            return pos, self._vel[k]
        if nxt < len(self.frames) and self.frames[nxt].ramp:
            t0, t1 = self._times[k], self._times[nxt]
            a = (t - t0) / (t1 - t0) if t1 > t0 else 1.0
            target = self._pos[nxt]
            both = ~np.isnan(pos) & ~np.isnan(target)
            pos = np.where(both, (1 - a) * np.nan_to_num(pos) + a * np.nan_to_num(target), pos)
        return pos, self._vel[k]


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and bool(np.isfinite(value))


def _param_ranges(ranges, declared: dict, path: Path) -> dict[str, tuple[float, float]]:
    """A scenario's ``ranges:`` ({param: [low, high]}), checked against its parameters."""
    if ranges is None:
        return {}
    if not isinstance(ranges, dict) or not all(
            k in declared and isinstance(v, list) and len(v) == 2 and all(_number(x) for x in v) and v[0] <= v[1]
            for k, v in ranges.items()):
        raise ConfigError(f"{path}: 'ranges' must map parameters of 'params' to [low, high], got {ranges!r}")
    return {str(k): (float(v[0]), float(v[1])) for k, v in ranges.items()}


def _resolve_params(declared, overrides: dict, path: Path, ranges=None) -> dict[str, float]:
    from eels_gz.ranges import SCENARIO_PARAM_MAX

    declared = {} if declared is None else declared
    if not isinstance(declared, dict):
        raise ConfigError(f"{path}: 'params' must map parameter names to default numbers")
    for name, value in declared.items():
        if not _PARAM_EXPR.fullmatch(str(name)) or not str(name).isidentifier():
            raise ConfigError(f"{path}: parameter name '{name}' must be an identifier")
        if not (_number(value) or isinstance(value, bool)):
            raise ConfigError(f"{path}: parameter '{name}' needs a finite number as default (or true/false "
                              f"for a switch), got {value!r}")
    # a switch (a parameter declared true or false) takes true or false and resolves to 1.0 or 0.0
    switches = {str(k) for k, v in declared.items() if isinstance(v, bool)}
    params = {str(k): float(v) for k, v in declared.items()}
    limits = _param_ranges(ranges, params, path)
    for name, value in overrides.items():
        if name not in params:
            valid = ", ".join(sorted(params)) or "none"
            raise ConfigError(f"{path}: scenario has no parameter '{name}' (its parameters: {valid})")
        if name in switches and not isinstance(value, bool):
            raise ConfigError(f"{path}: parameter '{name}' is a switch: it must be true or false, got {value!r}")
        if name not in switches and not _number(value):
            raise ConfigError(f"{path}: parameter '{name}' must be a finite number, got {value!r}")
        low, high = limits.get(name, (-SCENARIO_PARAM_MAX, SCENARIO_PARAM_MAX))
        if not low <= float(value) <= high:
            raise ConfigError(f"{path}: parameter '{name}' must be from {low:g} to {high:g}"
                              + ("" if name in limits else " (a parameter's range unless its scenario gives one)")
                              + f", got {float(value):g}")
        params[name] = float(value)
    return params


def _substitute(value, params: dict[str, float], where: str):
    """A keyframe number, or ``[factor*]name`` / ``-name`` of a parameter."""
    if not isinstance(value, str):
        return value
    m = _PARAM_EXPR.fullmatch(value)
    if m is None or m.group(3) not in params:
        valid = ", ".join(sorted(params)) or "none declared"
        raise ConfigError(f"{where}: '{value}' is neither a number nor a scenario parameter "
                          f"(NAME, -NAME or FACTOR*NAME; parameters: {valid})")
    factor = float(m.group(1)) if m.group(1) else (-1.0 if m.group(2) == "-" else 1.0)
    return factor * params[m.group(3)]


def load_scenario(path: str | Path, params: dict | None = None) -> dict:
    """Read and check a scenario YAML file (keys: see SCENARIO_KEYS).

    ``params`` override the file's parameter defaults; the returned mapping
    has every parameter reference in ``setpoints`` replaced by its number and
    ``params`` holding the values used.
    """
    from eels_gz.yamlio import load

    path = Path(path)
    data = load(path, "scenario")  # ConfigError naming the file: unreadable, not YAML, a duplicate key
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a scenario must be a mapping with 'setpoints'")
    unknown = set(data) - SCENARIO_KEYS
    if unknown:
        raise ConfigError(f"{path}: unknown scenario keys {sorted(unknown)}; expected {sorted(SCENARIO_KEYS)}")
    if not isinstance(data.get("setpoints", []), list):
        raise ConfigError(f"{path}: 'setpoints' must be a list of keyframes")
    contact = data.get("contact")
    if contact is not None and (not isinstance(contact, dict) or set(contact) - CONTACT_KEYS
                                or not all(isinstance(v, str) and v for v in contact.values())):
        raise ConfigError(f"{path}: 'contact' must map {sorted(CONTACT_KEYS)} to names "
                          f"(e.g. {{model: screw, params: ice_grip}}), got {contact!r}")
    granular = data.get("granular")
    if granular is not None and not (isinstance(granular, str) and granular):
        raise ConfigError(f"{path}: 'granular' must name a medium of config/granular/ (e.g. mars_simulant_mms), "
                          f"got {granular!r}")
    for key, allowed in (("robots", None), ("needs", NEEDS)):
        value = data.get(key)
        if value is not None and not (isinstance(value, list) and value and all(
                isinstance(v, str) and (allowed is None or v in allowed) for v in value)):
            raise ConfigError(f"{path}: '{key}' must be a list of "
                              + ("robot families (eels, rover) or robot names" if allowed is None else
                                 f"{', '.join(allowed)}") + f", got {value!r}")
    pose = data.get("pose")
    if pose is not None and not (isinstance(pose, list) and len(pose) == 6 and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in pose)):
        raise ConfigError(f"{path}: 'pose' must be the robot's start [x, y, z, roll, pitch, yaw] (m, rad), "
                          f"got {pose!r}")
    values = _resolve_params(data.get("params"), dict(params or {}), path, data.get("ranges"))
    data["params"] = values
    frames = []
    for i, frame in enumerate(data.get("setpoints") or []):
        where = f"{path}: setpoints[{i}]"
        if isinstance(frame, dict):
            frame = dict(frame)
            if "t" in frame:
                frame["t"] = _substitute(frame["t"], values, where + ".t")
            for kind in ("position", "velocity"):
                if isinstance(frame.get(kind), dict):
                    frame[kind] = {k: _substitute(v, values, f"{where}.{kind}[{k}]") for k, v in frame[kind].items()}
        frames.append(frame)
    data["setpoints"] = frames
    return data
