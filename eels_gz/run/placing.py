"""Placement before the run: a scenario's ``place(ctx)`` (``placement:`` in its YAML, a module of
eels_gz/scenarios/) finds the robot's start, which the run then starts from and ``placement.json`` in
the run folder records for the Gazebo export and launch.

``placement.json``: ``base_pose`` (the description's root link in the world: ``position`` [m],
``orientation_wxyz``, ``rpy`` [rad]), ``joints`` {name: rad or m}, ``report`` (the scenario's own
figures of how it placed), ``status`` and ``message``.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np

from eels_gz.description.urdf_tree import root_link
from eels_gz.errors import ConfigError
from eels_gz.rotations import matrix_to_quat, quat_rpy
from eels_gz.run.placement import settler
from eels_gz.scenarios import Placement, PlacementContext, pure_module
from eels_gz.scenarios.systems import system_entries

log = logging.getLogger(__name__)
PLACEMENT_FILE = "placement.json"


def placement_record(p: Placement) -> dict:
    """``placement.json``'s content for ``p``."""
    T = np.asarray(p.base_pose, float)
    q = matrix_to_quat(T[:3, :3])
    return {"base_pose": {"position": [float(v) for v in T[:3, 3]], "orientation_wxyz": [float(v) for v in q],
                          "rpy": [float(v) for v in quat_rpy(q)]},
            "joints": {k: float(v) for k, v in p.joints.items()}, "report": p.report, "status": p.status,
            "message": p.message}


def _already_there(sim, placed: Placement, root: str) -> bool:
    """Whether the robot is exactly where ``placed`` says (a placement that settled it on the engine
    reports the state it left): it then goes on from there at its settled speed (below the settling
    threshold) instead of being put there again at rest."""
    from eels_gz.dart.body_points import joint_positions

    if not np.array_equal(sim.frame_world_pose(root), np.asarray(placed.base_pose, float)):
        return False
    now = joint_positions(sim, placed.joints)
    return len(now) == len(placed.joints) and all(now[k] == v for k, v in placed.joints.items())


def place(sim, prep, out: Path | None, settle=None) -> Placement | None:
    """Run the scenario's placement on ``sim`` (the run's simulation, before its first timed step), move
    the robot there and write ``out/placement.json``; None when the scenario places nothing.
    ``settle``: ``ctx.settle`` (default: eels_gz.run.placement's settling loop on ``sim``). The
    scenario's own systems do not run while a placement steps the simulation: they start with the run."""
    scenario = prep.scenario
    name = scenario.get("placement") if scenario else None
    if not name:
        return None
    where = prep.scenario_file or "scenario"
    module = pure_module(str(name))
    if module is None or not hasattr(module, "place"):
        raise ConfigError(f"{where}: placement '{name}' is not a module of eels_gz/scenarios/ with place(ctx)")
    urdf = sim.robot_source_urdf
    ctx = PlacementContext(params=dict(scenario["params"]), scenario=scenario, robot=prep.settings["config"]["robot"]["name"],
                           urdf=urdf, source=sim.robot_description.source,
                           world_file=prep.settings["resolved"]["world_file"], terrain=prep.terrain,
                           gravity=np.asarray(sim.world.getGravity(), float),
                           settle=settle if settle is not None else settler(sim, prep.terrain),
                           base_pose=sim.frame_world_pose(root_link(urdf)))
    modules = {m for m, _ in system_entries(scenario, where)}
    with sim.systems_held([s for s in sim.systems if s.module in modules and s.entity == sim.robot_entity]):
        placed = module.place(ctx)
    if not isinstance(placed, Placement):
        raise ConfigError(f"{where}: eels_gz/scenarios/{name}.py place() returned {type(placed).__name__}, "
                          "not a Placement")
    root = root_link(urdf)
    if placed.status == "ok" and not _already_there(sim, placed, root):
        sim.place_robot(placed.base_pose, placed.joints, root)
    if out is not None:
        Path(out, PLACEMENT_FILE).write_text(json.dumps(placement_record(placed), indent=2))
    return placed
