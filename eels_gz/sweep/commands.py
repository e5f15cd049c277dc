"""What one sample of a campaign runs: ``eels-gz run`` (the default) or ``eels-gz rover drive``.

A command turns dotted settings into a checked configuration (:meth:`settings`), runs it into the
sample's own run folder (:meth:`run`, in the Ray worker's process) and says where the metrics are
read from (``summary.json``, then ``metrics.json``). The run folder follows the rules of every run
folder (:class:`eels_gz.outputs.RunFolder`): written aside and renamed into place, whatever the run's
status; a sample rerun by ``--resume`` replaces what a killed attempt left.
"""

from __future__ import annotations

import contextlib
import json
import math
from pathlib import Path
from typing import Any

from eels_gz.errors import ConfigError, EelsError

# the keys every run's summary.json may hold (eels_gz.run.runner._summary); others come from metrics.json
RUN_SUMMARY_KEYS = ("status", "sim_time", "setup_sim_time", "wall_time", "setup_wall_time", "finish_wall_time",
                    "real_time_factor", "steps",
                    "final_base_pose", "settings", "files", "message", "error", "resets", "disabled_systems",
                    "unwritten", "ros")


# the keys every metrics.json holds besides its systems' METRICS (eels_gz.run.runner._system_outputs)
METRICS_FILE_KEYS = ("scenario", "status")


def scenario_metric_keys(scfg: dict) -> tuple[str, ...]:
    """The top-level keys of the metrics.json a run of the scenario section ``scfg`` (name and
    parameters) writes: none without a scenario or without systems."""
    from eels_gz import registry
    from eels_gz.control.setpoints import load_scenario
    from eels_gz.scenarios import scenario_metrics

    name = scfg.get("name")
    if not name:
        return ()
    path = registry.scenario_path(name)
    scenario = load_scenario(path, {k: v for k, v in scfg.items() if k != "name"})
    keys = scenario_metrics(scenario, str(path))
    return (*METRICS_FILE_KEYS, *keys) if scenario.get("systems") else ()


class _KeyedError(Exception):
    """An error of a run configuration's check and the dotted key it is about (None: unknown)."""

    def __init__(self, key: str | None, error: EelsError):
        super().__init__(str(error))
        self.key, self.error = key, error


@contextlib.contextmanager
def _about(key: str):
    """Tag an EelsError raised inside with the configuration ``key`` it is about."""
    try:
        yield
    except EelsError as exc:
        raise _KeyedError(key, exc) from None


def _source_of(items: list[tuple[str, Any, str]], key: str | None) -> str | None:
    """The source of the last item that set ``key`` (``robot: NAME`` sets robot.name; a section sets
    its keys), or None when no item did (the value is a default)."""
    if key is None:
        return None
    for k, _, source in reversed(items):
        if k == key or key.startswith(k + ".") or k.startswith(key + "."):
            return source
    return None


def _prefixed(exc: EelsError, where: str | None) -> ConfigError:
    text = str(exc)
    return ConfigError(text if where is None or text.startswith(where) else f"{where}: {text}")


_CHECKED_CONTACT_SETS: dict[tuple, object] = {}  # (name, file, its mtime and size) -> the set read from it


def _check_contact_set(name: str, overrides: dict) -> None:
    """Check the contact set ``name`` with ``overrides`` replaced (ConfigError naming the file or the key),
    reading the file once per process while it is unchanged: a sweep checks every sample's settings
    (before the campaign and again in the sample's worker) and the sample's run then resolves the set
    itself, once (eels_gz.run.runner), so this check need not read it again for every sample."""
    from eels_gz.contact.params import contact_config_path, load_contact_params, resolve_contact_params

    path = contact_config_path(name)  # an unknown set name raises here
    try:
        stat = path.stat()
        key = (str(name), str(path.resolve()), stat.st_mtime_ns, stat.st_size)
    except OSError:  # unreadable: reading it names the problem
        key = None
    base = _CHECKED_CONTACT_SETS.get(key) if key is not None else None
    if base is None:
        base = load_contact_params(name)
        if key is not None:
            _CHECKED_CONTACT_SETS[key] = base
    resolve_contact_params(name, overrides, base=base)


class RunCommand:
    """``eels-gz run``: the settings are a run configuration (config/run_defaults.yaml)."""

    name = "run"
    seed_key = "sensors.seed"  # the sample's seed goes here unless the spec sets it

    def settings(self, items: list[tuple[str, Any, str]], complete: bool = True) -> dict:
        """The configuration the items give (run defaults <- items in order), checked as far as can be
        done without building the robot: keys, types, the robot, world, scenario and its parameters,
        the contact model and parameter set (``complete`` makes no difference: a run needs no key)."""
        from eels_gz import config

        cfg = config.resolve()
        where = None
        for key, value, source in items:
            where = source
            config.set_key(cfg, key, value, source)
        try:
            self._check(cfg)
        except _KeyedError as exc:
            raise _prefixed(exc.error, _source_of(items, exc.key) or where or "base") from None
        return cfg

    @staticmethod
    def _check(cfg: dict) -> dict | None:
        """The checks of :meth:`_checks`, each error tagged with the configuration key it is about."""
        try:
            return RunCommand._checks(cfg)
        except _KeyedError:
            raise
        except EelsError as exc:
            raise _KeyedError(None, exc) from None

    @staticmethod
    def _checks(cfg: dict) -> dict | None:
        from eels_gz import registry
        from eels_gz.config import contact_overrides
        from eels_gz.control.setpoints import load_scenario
        from eels_gz.run.resolve import check_granular
        from eels_gz.run.runner import CONTACT_MODELS, check_soil, scenario_defaults

        scfg = cfg["scenario"]
        scenario = None
        with _about("scenario"):
            if scfg.get("name"):
                scenario = load_scenario(registry.scenario_path(scfg["name"]),
                                         {k: v for k, v in scfg.items() if k != "name"})
        resolved = scenario_defaults(cfg, scenario)
        with _about("robot.name"):
            entry = registry.robot(resolved["robot"]["name"])
        with _about("robot.n_modules"):
            if resolved["robot"]["n_modules"] is not None:
                registry.check_n_modules(entry, resolved["robot"]["n_modules"])
        with _about("world"):
            world = registry.world_path(resolved["world"])
        contact = resolved["contact"]
        with _about("contact.model"):
            if contact["model"] not in CONTACT_MODELS:
                raise ConfigError(f"contact.model must be one of {', '.join(CONTACT_MODELS)}, "
                                  f"got {contact['model']!r}")
        with _about("robot.name"):  # the combination, as a run checks it (eels_gz/run/compatibility.py)
            from eels_gz.run.compatibility import check_combination
            from eels_gz.run.resolve import _world_soil_default

            soil = _world_soil_default(resolved, entry, world)["soil"].get("params")
            check_combination(entry, scfg.get("name"), scenario, contact["model"], world, soil)
        with _about("contact"):
            overrides = contact_overrides(contact)
            if overrides and contact["model"] != "screw":
                raise ConfigError(f"contact.{next(iter(overrides))} sets a parameter of the screw contact, but "
                                  f"contact.model is '{contact['model']}'")
            _check_contact_set(contact["params"], overrides)
        with _about("soil"):
            check_soil(resolved["soil"], entry)
        with _about("granular"):
            check_granular(resolved.get("granular") or {}, contact["model"])
        return scenario

    def check_metrics(self, spec, items_list: list[list]) -> None:
        """A metric that is not a key of summary.json must come from metrics.json, whose keys are what the
        scenario's systems declare they write (``METRICS`` of their pure modules, eels_gz.scenarios):
        refused, before any sample runs, when a scenario of the campaign (each value the campaign may
        give, as :func:`eels_gz.sweep.spec.check_spec` tries them: ``items_list``, its
        ``representative_items``) does not write it."""
        others = [m for m in spec.metrics if m.split(".")[0] not in RUN_SUMMARY_KEYS]
        if not others:
            return
        seen: dict[tuple, tuple[str | None, tuple[str, ...]]] = {}
        for items in items_list:
            scfg = self.settings(items)["scenario"]
            key = tuple(sorted((k, repr(v)) for k, v in scfg.items()))
            if key not in seen:
                seen[key] = (scfg.get("name"), scenario_metric_keys(scfg))
        for metric in others:
            for name, keys in seen.values():
                if metric.split(".")[0] in keys:
                    continue
                writes = (f"its systems write metrics.json keys {', '.join(keys)}" if keys else
                          "it has no systems, so its runs write no metrics.json")
                raise ConfigError(f"{spec.source}: metrics: '{metric}' is neither a key of summary.json (its keys: "
                                  f"{', '.join(RUN_SUMMARY_KEYS)}) nor of metrics.json in the runs of "
                                  + (f"scenario '{name}' ({writes})" if name else
                                     "the campaign, which runs no scenario (set scenario.name for a metrics.json)"))

    @staticmethod
    def steps(cfg: dict) -> float | None:
        """The steps a sample of settings ``cfg`` takes (its duration over its step), for the campaign's
        estimate (eels_gz.ranges.say_estimate); None when they cannot be known before it runs."""
        from eels_gz import registry
        from eels_gz.control.setpoints import load_scenario
        from eels_gz.run.resolve import run_duration, scenario_defaults
        from eels_gz.sdf_reader import load_world

        scfg = cfg["scenario"]
        scenario = load_scenario(registry.scenario_path(scfg["name"]), {k: v for k, v in scfg.items()
                                                                           if k != "name"}) if scfg.get("name") else None
        resolved = scenario_defaults(cfg, scenario)
        # the plan's duration and step (eels_gz.run.resolve), without building the robot's description
        dt = load_world(registry.world_path(resolved["world"])).step(resolved["physics"]["dt"])
        return run_duration(resolved, scenario) / dt

    def run(self, cfg: dict, folder: Path) -> tuple[str, str | None]:
        """Run ``cfg`` into ``folder``; (status, message) from its summary, or ``input_error`` when the
        run was refused before it began (nothing written)."""
        from eels_gz.errors import RunInterrupted
        from eels_gz.run.hosts import run
        from eels_gz.outputs import RunFolder

        try:
            with RunFolder(folder, overwrite=True, what="sweep sample") as out:
                run(cfg, out.path, final_dir=folder)
        except Exception as exc:  # the summary, when the run began, says what happened
            if read_json(folder / "summary.json") is None:
                if isinstance(exc, RunInterrupted):
                    return "interrupted", str(exc)
                if isinstance(exc, EelsError):
                    return "input_error", str(exc)
                return "error", f"{type(exc).__name__}: {exc}"
        summary = read_json(folder / "summary.json") or {}
        message = summary.get("message") or (summary.get("error") or {}).get("message")
        return summary.get("status", "incomplete"), message

    @staticmethod
    def documents(folder: Path) -> list[dict]:
        return [d for d in (read_json(folder / "summary.json"), read_json(folder / "metrics.json")) if d]


# the settings of a rover drive (`eels-gz rover drive` options) and their defaults; None: required
ROVER_SETTINGS = {"robot": "archimede", "path": None, "speed": None, "world": "ice_plane",
                  "mode": "general_ackermann", "scale": 1.0}
ROVER_TYPES = {"robot": str, "path": str, "speed": float, "world": str, "mode": str, "scale": float}
# what a rover drive sample's summary.json holds (the drive record without its time series)
ROVER_SUMMARY_KEYS = ("status", "message", "sim_time", "speed", "distance", "end_error", "end_error_relative",
                      "saturated", "max_wheel_rate", "slip", "robot", "path", "rate", "world", "slope_deg", "scale",
                      "mode", "file")
SERIES = ("t", "ground_truth", "odometry", "slip_samples", "nominal")


class RoverDriveCommand:
    """``eels-gz rover drive``: the settings are its options (ROVER_SETTINGS; ``world`` may be
    ``slope:DEG``, generated into the sample's folder, where a drive stops 1 m before the slope's
    edge as in the rover campaign)."""

    name = "rover drive"
    seed_key = None  # a drive draws no random numbers

    def settings(self, items: list[tuple[str, Any, str]], complete: bool = True) -> dict:
        """The drive's settings (ROVER_SETTINGS <- items in order), checked; ``complete=False`` checks
        only the keys and types given (base alone may leave the dispersed keys out)."""
        out = dict(ROVER_SETTINGS)
        where = None
        for key, value, source in items:
            where = source
            if key not in ROVER_SETTINGS:
                raise ConfigError(f"{source}: unknown rover drive setting '{key}'; valid keys: "
                                  f"{', '.join(ROVER_SETTINGS)}")
            kind = ROVER_TYPES[key]
            ok = isinstance(value, str) if kind is str else (
                isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value))
            if not ok:
                raise ConfigError(f"{source}: '{key}' expects a {'name' if kind is str else 'finite number'}, "
                                  f"got {value!r}")
            out[key] = float(value) if kind is float else value
        missing = [k for k, v in out.items() if v is None]
        if not complete:
            return out
        if missing:
            raise ConfigError(f"{where or 'base'}: rover drive setting(s) {', '.join(missing)} missing "
                              "(give them in base or disperse them)")
        try:
            self._check(out)
        except EelsError as exc:
            raise _prefixed(exc, where or "base") from None
        return out

    @staticmethod
    def _check(s: dict) -> None:
        from eels_gz import registry
        from eels_gz.run.drive_runs import path_segments, slope_angle

        entry = registry.robot(s["robot"])
        if entry.family != "rover":
            raise ConfigError(f"robot '{s['robot']}' is not a rover")
        path_segments(s["path"], s["scale"])
        if not s["speed"] > 0:
            raise ConfigError(f"speed must be a positive wheel rate in rad/s, got {s['speed']}")
        if s["world"].startswith("slope:"):
            slope_angle(s["world"])
        else:
            registry.world_path(s["world"])

    def check_metrics(self, spec, items_list: list[list]) -> None:
        bad = [m for m in spec.metrics if m.split(".")[0] not in ROVER_SUMMARY_KEYS]
        if bad:
            raise ConfigError(f"{spec.source}: metrics: '{bad[0]}' is not a key of a rover drive's summary "
                              f"(its keys: {', '.join(ROVER_SUMMARY_KEYS)})")

    def run(self, s: dict, folder: Path) -> tuple[str, str | None]:
        from eels_gz.run.drive_runs import drive_sample
        from eels_gz.outputs import RunFolder, begin_result, write_result

        with RunFolder(folder, overwrite=True, what="sweep sample") as out:
            begin_result(out.path / "summary.json", "rover drive")
            record = drive_sample(s, out.path, final=folder)
            brief = {k: record[k] for k in ROVER_SUMMARY_KEYS if k in record}
            status = brief["status"]
            if status.startswith("diverged: "):
                brief["status"], brief["message"] = "diverged", status[len("diverged: "):]
            write_result(out.path / "summary.json", json.dumps(brief, indent=2))
        return brief["status"], brief.get("message")

    @staticmethod
    def documents(folder: Path) -> list[dict]:
        return [d for d in (read_json(folder / "summary.json"),) if d]


COMMANDS = {c.name: c for c in (RunCommand(), RoverDriveCommand())}


def command(name: Any, source: str = "<spec>"):
    if name not in COMMANDS:
        raise ConfigError(f"{source}: command: unknown command {name!r}; expected one of "
                          f"{', '.join(repr(c) for c in COMMANDS)}")
    return COMMANDS[name]


def read_json(path: Path) -> dict | None:
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
