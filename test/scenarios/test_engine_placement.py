"""Placement that needs the engine, before the run (issue 32 Deliver 2; eels_gz/run/placing.py and
:func:`eels_gz.dart.terrain_start.settle`):
``moulin_descent``'s settling is its ``place(ctx)`` calling ``ctx.settle``, which the runner wires to
the settling loop on the run's simulation.

- The settled placement is written to ``placement.json`` (pose, every joint, the settling's report),
  and the run starts from exactly that state (the settled state the engine holds: not put there
  again at rest).
- A settling that times out ends the run with ``placement_failed`` before its first step: no step is
  simulated after the setup, and placement.json says why.
- The scenario's systems are held out of the placement's steps (Simulation.systems_held): a system
  held sees no step, the robot's own systems and host callbacks do, and it runs again afterwards.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from eels_gz import config
from eels_gz.run.resolve import resolve_run
from eels_gz.run.runner import prepare, run

HELIX = {"name": "moulin_descent", "helix": 1.0, "z_start": -2.0, "mobility_threshold": 1.396}


def _run(tmp_path, duration: float, **scenario):
    cfg = config.resolve(overrides={"scenario": {**HELIX, **scenario}, "duration": duration,
                                    "sensors": {"enabled": False}, "log": {"mcap": True, "plot": False}})
    summary = run(cfg, tmp_path)
    return summary, json.loads((tmp_path / "placement.json").read_text())


def test_the_settled_placement_is_recorded_and_the_run_starts_from_it(tmp_path):
    from eels_gz.run.placing import place

    cfg = config.resolve(overrides={"scenario": HELIX, "duration": 0.01, "sensors": {"enabled": False}})
    prep = prepare(resolve_run(cfg, tmp_path))
    sim = prep.sim
    t0 = sim.time
    placed = place(sim, prep, tmp_path)
    record = json.loads((tmp_path / "placement.json").read_text())
    settle = record["report"]["settle"]
    assert placed.status == record["status"] == "ok" and settle["converged"], settle["message"]
    # the placement simulated the settling, to one step
    assert sim.time - t0 == pytest.approx(settle["time"], abs=1.5 * sim.dt)
    # every joint of the chain is recorded (bends, twists, screws) as the engine holds it, and the base
    names = record["joints"]
    assert sum(n.endswith("_bend") for n in names) == 8 and sum(n.endswith("_screw") for n in names) >= 8
    skel = sim.robot_skeleton
    for name, value in names.items():
        assert skel.getJoint(name).getPosition(0) == value
    np.testing.assert_array_equal(sim.frame_world_pose("base_link")[:3, 3], record["base_pose"]["position"])
    # it starts from the settled state at rest, as the exported Gazebo world does (a placement.json carries
    # no velocities; the settled speed was below the threshold anyway)
    assert np.abs(skel.getVelocities()).max() == 0.0
    # and with systems that keep nothing of the placement's steps, as the exported world's load fresh: the
    # joint loops' integrators empty and their held shape taken anew from the placed state
    control = next(s.system for s in sim.systems if s.module == "joint_control")
    assert not control.pid.integral.any() and control.q_hold is None


def test_a_timed_out_placement_ends_the_run_before_its_first_step(tmp_path):
    summary, placed = _run(tmp_path, 0.5, placement_timeout=0.05)
    assert summary["status"] == "placement_failed" and "timeout" in summary["message"]
    assert placed["status"] == "placement_failed" and placed["message"] == summary["message"]
    assert not placed["report"]["settle"]["converged"]
    assert summary["sim_time"] == summary["setup_sim_time"]  # not one step after the setup


def test_held_systems_see_no_step():
    cfg = config.resolve(overrides={"robot": {"name": "eels_1_5"}, "scenario": "hang",
                                    "sensors": {"enabled": False}})
    sim = prepare(resolve_run(cfg)).sim
    (held,) = [s for s in sim.systems if s.module == "tethers"]
    control = next(s.system for s in sim.systems if s.module == "joint_control")
    calls = []
    with sim.systems_held([held]):
        sim.add_pre_update(lambda info, ecm: calls.append(info.iterations))  # a host callback added meanwhile
        for _ in range(5):
            sim.step()
        assert held.system.auto.all()  # its anchors are taken on its first step: it has had none
        assert control.q_hold is not None  # the robot's own systems ran
    sim.step()
    assert not held.system.auto.any()  # it runs again
    assert calls == [1, 2, 3, 4, 5, 6]  # and the host callback stays
