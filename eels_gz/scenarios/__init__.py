"""Scenarios: what a scenario run adds to a robot in a world.

A scenario runs as gz-sim systems (``systems:`` in its YAML, modules of
``plugins_py/``; :mod:`eels_gz.scenarios.plugin_elements` writes their ``<plugin>``
elements for ``run`` and ``export``), with its pure parts here, one module per
system of the same name: ``METRICS`` (the keys its ``metrics()`` writes to
``metrics.json``), ``check_params(params)`` if it has parameters to check (the run
calls it before the systems load: a ConfigError naming the parameter), the metric
computations, the plot, and ``place(ctx)`` when
the scenario sets the robot's start before the run (``placement:``), given a
:class:`PlacementContext` and returning a :class:`Placement`. Nothing here
imports the engine or the host.

A scenario's ``params`` are its resolved ``params:`` (numbers, SI units and radians;
``--set scenario.NAME=VALUE`` overrides them), which its systems read from their
``<params>`` element.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Callable

from eels_gz.errors import ConfigError


# status of a run whose robot lost its hold and slid or fell (wall_climb, moulin_descent)
SLIP_FAILURE = "slip_failure"


@dataclass
class Placement:
    """A robot's start, found before the run: ``base_pose`` (4x4, the world pose of the description's
    root link), ``joints`` (rad or m by joint name; held there from the first step), ``report``
    (JSON-able figures of how it was found) and ``status`` ("ok", or e.g. "placement_failed", which
    ends the run before its first step with ``message``)."""

    base_pose: Any
    joints: dict[str, float]
    report: dict = field(default_factory=dict)
    status: str = "ok"
    message: str = ""


@dataclass
class PlacementContext:
    """What ``place(ctx)`` is given: the scenario's resolved ``params`` and mapping, the robot's registry
    name, its robot ``model`` (eels_gz.description.model.RobotModel of the URDF as given: every link and
    frame), the world file, the world's terrain field
    (eels_gz.terrain, or None), gravity (3,), ``settle``: the engine's settling step for placements
    that need it (gravity off, attraction springs; supplied by eels_gz.run.placing.settle), or None:
    ``settle(base_pose, joints, params: eels_gz.snake.params.PlacementParams) -> Placement``, the
    robot laid there and settled against the terrain, status ``placement_failed`` on a timeout; and
    ``base_pose``: the world pose (4x4) of the description's root link as the robot was spawned (the
    run's ``robot.pose``), or None."""

    params: dict[str, float]
    scenario: dict
    robot: str
    model: Any
    world_file: str
    terrain: Any
    gravity: Any
    settle: Callable[..., Placement] | None = None
    base_pose: Any = None


def pure_module(name: str):
    """``eels_gz.scenarios.<name>``, or None when there is none."""
    try:
        return importlib.import_module(f"eels_gz.scenarios.{name}")
    except ModuleNotFoundError as exc:
        if exc.name != f"eels_gz.scenarios.{name}":
            raise
        return None


def scenario_metrics(scenario: dict, source: str) -> tuple[str, ...]:
    """The top-level keys the scenario's systems (their pure modules' ``METRICS``) write to metrics.json."""
    from eels_gz.scenarios.plugin_elements import system_entries

    if scenario.get("systems"):
        keys: list[str] = []
        for module, _ in system_entries(scenario, source):
            mod = pure_module(module)
            keys += [k for k in getattr(mod, "METRICS", ()) if k not in keys]
        return tuple(keys)
    return ()


def scenario_lead_in_s(scenario: dict | None, source: str = "scenario") -> float:
    """The simulated seconds the scenario's systems run before its timed run (the longest of their pure
    modules' ``lead_in_s(params)``; 0 for none): the embedded host steps them as the run's setup, and a
    Gazebo world runs them from its first step, so a Gazebo run of ``duration`` s takes ``lead-in +
    duration`` s of world time."""
    from eels_gz.scenarios.plugin_elements import system_entries

    if not scenario or not scenario.get("systems"):
        return 0.0
    params = dict(scenario.get("params") or {})
    lead_in = [getattr(pure_module(module), "lead_in_s", None) for module, _ in system_entries(scenario, source)]
    return max((float(f(params)) for f in lead_in if f is not None), default=0.0)


def check_scenario_params(scenario: dict, source: str) -> None:
    """Check the scenario's ``params`` with each of its systems' pure modules that offers
    ``check_params(params)`` (a ConfigError naming the parameter), before the systems load."""
    from eels_gz.scenarios.plugin_elements import system_entries

    for module, _ in system_entries(scenario, source):
        check = getattr(pure_module(module), "check_params", None)
        if check is not None:
            check(dict(scenario.get("params") or {}))


def param(params: dict[str, float], name: str, source: str) -> float:
    """A required scenario parameter, or a ConfigError naming it."""
    if name not in params:
        raise ConfigError(f"{source}: the scenario's controller needs parameter '{name}' in its params: "
                          f"(has {', '.join(sorted(params)) or 'none'})")
    return float(params[name])
