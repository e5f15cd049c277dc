"""Placement before the run, the run's side: a scenario's ``place(ctx)`` (``placement:`` in its YAML, a
module of eels_gz/scenarios/) finds the robot's start, which the run then starts from and
``placement.json`` in the run folder records for the Gazebo export and launch; the shipped placements
(config/placements/, written by tools/shipped_placements.py) stand in for it where the engine is not
installed.

``ctx.settle`` (:func:`settle`) runs the engine's settling loop (:func:`eels_gz.dart.terrain_start.settle`,
on the pure parts of :mod:`eels_gz.snake.settling`) and returns its outcome as a :class:`Placement`. The
robot's resting pose without a scenario placement (``robot.pose: auto``) is :mod:`eels_gz.spawn`'s
arithmetic, applied with the engine by :mod:`eels_gz.dart.terrain_start`.

``placement.json``: ``base_pose`` (the description's root link in the world: ``position`` [m],
``orientation_wxyz``, ``rpy`` [rad]), ``joints`` {name: rad or m}, ``report`` (the scenario's own
figures of how it placed), ``status`` and ``message``.
"""

from __future__ import annotations

import functools
import json
import logging
from pathlib import Path

import numpy as np

from eels_gz.errors import ConfigError
from eels_gz.rotations import matrix_to_quat, quat_rpy
from eels_gz.scenarios import Placement, PlacementContext, pure_module
from eels_gz.scenarios.plugin_elements import system_entries
from eels_gz.snake.params import PlacementParams

log = logging.getLogger(__name__)
PLACEMENT_FILE = "placement.json"
PLACEMENT_FAILED = "placement_failed"


def settle(sim, terrain, base_pose, joints: dict[str, float], params: PlacementParams,
           resample_every: int | None = None) -> Placement:
    """The robot of ``sim`` laid at ``base_pose`` with ``joints`` and settled against ``terrain`` (a
    distance field) by the engine's settling loop (:func:`eels_gz.dart.terrain_start.settle`): the
    settled :class:`Placement` (every 1-DOF joint of the robot's chain), status ``placement_failed`` on a
    timeout. Its ``report`` is the settling's: ``converged``, ``timed_out``, ``time`` (s),
    ``penetration_m``, ``message``. ``resample_every``: steps between choices of the sample points
    (default: the loop's). The engine is imported here, not with the module: the export reads shipped
    placements on a machine without it."""
    from eels_gz.dart import terrain_start

    more = {} if resample_every is None else {"resample_every": resample_every}
    pose, angles, report = terrain_start.settle(sim, terrain, base_pose, joints, params, **more)
    figures = {"converged": report.converged, "timed_out": report.timed_out, "time": report.time,
               "penetration_m": report.penetration, "message": report.message}
    return Placement(pose, angles, report=figures, status="ok" if report.converged else PLACEMENT_FAILED,
                     message="" if report.converged else report.message)


def settler(sim, terrain):
    """``ctx.settle`` for a placement on ``sim``: ``settle(base_pose, joints, params)``."""
    return functools.partial(settle, sim, terrain)


def placement_record(p: Placement) -> dict:
    """``placement.json``'s content for ``p``."""
    T = np.asarray(p.base_pose, float)
    q = matrix_to_quat(T[:3, :3])
    return {"base_pose": {"position": [float(v) for v in T[:3, 3]], "orientation_wxyz": [float(v) for v in q],
                          "rpy": [float(v) for v in quat_rpy(q)]},
            "joints": {k: float(v) for k, v in p.joints.items()}, "report": p.report, "status": p.status,
            "message": p.message}


def place(sim, prep, out: Path | None, settle=None) -> Placement | None:
    """Run the scenario's placement on ``sim`` (the run's simulation, before its first timed step), move
    the robot there and write ``out/placement.json``; None when the scenario places nothing.
    ``settle``: ``ctx.settle`` (default: :func:`settle` on ``sim``). The
    scenario's own systems do not run while a placement steps the simulation: they start with the run."""
    scenario = prep.scenario
    name = scenario.get("placement") if scenario else None
    if not name:
        return None
    where = prep.scenario_file or "scenario"
    module = pure_module(str(name))
    if module is None or not hasattr(module, "place"):
        raise ConfigError(f"{where}: placement '{name}' is not a module of eels_gz/scenarios/ with place(ctx)")
    model = sim.robot_source_model
    ctx = PlacementContext(params=dict(scenario["params"]), scenario=scenario, robot=prep.settings["config"]["robot"]["name"],
                           model=model,
                           world_file=prep.settings["resolved"]["world_file"], terrain=prep.terrain,
                           gravity=sim.gravity,
                           settle=settle if settle is not None else settler(sim, prep.terrain),
                           base_pose=sim.frame_world_pose(model.root))
    modules = {m for m, _ in system_entries(scenario, where)}
    with sim.systems_held([s for s in sim.systems if s.module in modules and s.entity == sim.robot_entity]):
        placed = module.place(ctx)
    if not isinstance(placed, Placement):
        raise ConfigError(f"{where}: eels_gz/scenarios/{name}.py place() returned {type(placed).__name__}, "
                          "not a Placement")
    if placed.status == "ok":  # at rest, as a Gazebo world starts it (its export carries no velocities)
        sim.place_robot(placed.base_pose, placed.joints, model.root)
        # and with systems that keep nothing of the placement's steps: gz-sim loads the exported world's
        # systems anew (a contact model's stick history, a controller's integrators)
        sim.reset_systems()
    if out is not None:
        Path(out, PLACEMENT_FILE).write_text(json.dumps(placement_record(placed), indent=2))
    return placed


# --- shipped placements: a Gazebo machine without the engine ---------------------------------------------
# A scenario placed with the engine (``placement:`` whose place() settles the robot with gravity off and
# springs to the terrain) cannot be placed where dartpy is not installed: a ROS 2 + Gazebo machine, which
# needs no dartpy. The placements of the shipped scenarios' own configurations (and the few others listed
# in tools/shipped_placements.py) are therefore shipped in config/placements/<scenario>.json, keyed by
# :func:`placement_key`; test/worlds/test_shipped_placements.py recomputes each with the engine.

PLACEMENTS_DIR = ("config", "placements")
# the resolved configuration's sections that decide where a placement puts the robot (not duration,
# sensors, log, ROS or the host's own settings)
PLACEMENT_SECTIONS = ("robot", "world", "contact", "soil", "granular", "scenario", "physics")


def placement_key(cfg: dict) -> str:
    """A stable key (sha256 hex) of what decides a placement, from a resolved configuration (the
    resolution's ``cfg`` with ``scenario`` as the scenario's name and resolved parameters, and ``physics.dt``
    resolved). Files named by path (a world SDF, a URDF) are keyed by their content, so the key is the
    same on every machine and install prefix."""
    import hashlib

    from eels_gz import registry

    def content(path) -> str:
        return "sha256:" + hashlib.sha256(Path(path).read_bytes()).hexdigest()

    key = {section: cfg.get(section) for section in PLACEMENT_SECTIONS}
    key["robot"] = dict(key["robot"] or {})
    if key["robot"].get("urdf"):
        key["robot"]["urdf"] = content(key["robot"]["urdf"])
    world = str(key["world"])
    if world not in registry.WORLDS:
        key["world"] = content(registry.world_path(world))
    text = json.dumps(key, sort_keys=True, default=float, allow_nan=True)
    return hashlib.sha256(text.encode()).hexdigest()


def shipped_placements_file(scenario: str) -> Path:
    from eels_gz.paths import asset

    return asset(*PLACEMENTS_DIR, f"{scenario}.json")


def shipped_placement(scenario: str, key: str) -> Placement | None:
    """The shipped placement of ``scenario`` for the configuration of ``key``, or None."""
    path = shipped_placements_file(scenario)
    if not path.is_file():
        return None
    try:
        records = json.loads(path.read_text())["placements"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{path}: not a shipped-placements file ({exc}); tools/shipped_placements.py "
                          "writes it") from None
    for entry in records:
        if entry.get("key") == key:
            return placement_from_record(entry["placement"])
    return None


def placement_from_record(record: dict) -> Placement:
    """The :class:`Placement` a ``placement.json`` record (:func:`placement_record`) holds."""
    from eels_gz.rotations import quat_to_matrix

    pose = record["base_pose"]
    T = np.eye(4)
    T[:3, :3] = quat_to_matrix(np.asarray(pose["orientation_wxyz"], float))
    T[:3, 3] = pose["position"]
    return Placement(T, {k: float(v) for k, v in record["joints"].items()}, dict(record.get("report") or {}),
                     record.get("status", "ok"), record.get("message", ""))
