"""Placement before the run (EELS-DARTS §2.2.6, eels_gz/run/placing.py: ``ctx.settle``).

EELS 1.0 (front-only screws) is laid on a helix inside ``tube`` and inside
``moulin`` and settled with gravity off by the springs to the nearest
terrain point. Checks, with the engine's native (stock) contact, which is
rigid: the monitor reports convergence within config/snake.yaml's timeout
and every sample point is outside the ice or less than the issue's 5 mm in.
A timeout too short to settle gives a report that says so, not an exception.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from eels_gz import config
from eels_gz.run.placing import settle
from eels_gz.run.resolve import resolve_run
from eels_gz.run.runner import prepare
from eels_gz.scenarios.moulin_descent import bore_center
from eels_gz.snake.chain import SnakeChain
from eels_gz.snake.params import load_snake_params
from eels_gz.snake.settling import helix_shape, sample_points
from eels_gz.terrain.world_terrain import find_terrain_field

PENETRATION_MAX = 0.005  # m, the bound
TUBE_AXIS_Z = 0.6  # m, worlds/tube.sdf (model://tube/terrain.json)
HELIX_RADIUS = {"tube": 0.45, "moulin": 0.5}  # m: screws (0.09 m) start clear of the 0.6 / 0.8 m walls


def _placed(world: str, timeout: float | None = None):
    cfg = config.resolve(overrides={"robot": {"name": "eels_1_0_front_only"}, "world": world,
                                    "sensors": {"enabled": False}})
    sim = prepare(resolve_run(cfg)).sim
    chain = SnakeChain.from_urdf(sim.robot_source_urdf, sim.robot_description.source)
    terrain = find_terrain_field(sim.spec)
    params = replace(load_snake_params().placement, helix_radius=HELIX_RADIUS[world])
    if timeout is not None:
        params = replace(params, timeout=timeout)
    if world == "tube":
        center, axis, ref = (-1.0, 0.0, TUBE_AXIS_Z), (1.0, 0.0, 0.0), (0.0, 0.0, -1.0)
    else:
        center, axis, ref = bore_center(terrain, -2.0), (0.0, 0.0, -1.0), (1.0, 0.0, 0.0)
    shape = helix_shape(chain, params.helix_radius, params.helix_pitch, center, axis, ref)
    start = sample_points(chain, shape.angles, shape.base_pose, terrain, params.samples_per_link)
    placed = settle(sim, terrain, shape.base_pose, shape.angles, params)
    # the settled placement is the robot's state
    assert np.allclose(placed.base_pose, sim.frame_world_pose(chain.root), atol=1e-12)
    end = sample_points(chain, placed.joints, placed.base_pose, terrain, params.samples_per_link)
    return {"report": placed.report, "placed": placed, "params": params, "start": terrain.query(start.points)[0],
            "end": terrain.query(end.points)[0], "sim": sim}


@pytest.mark.parametrize("world", ["tube", "moulin"])
def test_helix_settles_into_contact_without_penetration(world):
    run = _placed(world)
    report = run["report"]
    assert report["converged"] and run["placed"].status == "ok", report["message"]
    assert report["time"] <= run["params"].timeout
    # every sample point of every collision cylinder: at most 5 mm inside the ice
    assert run["end"].min() > -PENETRATION_MAX, run["end"].min()
    # and the springs did their job: the robot moved out to the wall (the
    # sample points are nearer the ice on average than on the helix) and
    # touches it (a point within 1 cm, twice the ice's voxel-level roughness bound)
    assert run["end"].mean() < run["start"].mean()
    assert run["end"].min() < 0.01
    # gravity is back on afterwards
    assert np.linalg.norm(run["sim"].world.getGravity()) > 9.0


def test_a_placement_that_cannot_settle_reports_the_timeout():
    run = _placed("tube", timeout=0.05)  # 50 ms: the robot is still moving toward the wall
    report = run["report"]
    assert not report["converged"] and report["timed_out"] and run["placed"].status == "placement_failed"
    assert "did not converge within the 0.05 s timeout" in report["message"] == run["placed"].message
    assert np.linalg.norm(run["sim"].world.getGravity()) > 9.0  # restored on timeout too
