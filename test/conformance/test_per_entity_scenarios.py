"""Every shipped scenario runs the per-entity gz API path that Gazebo runs (gz_compat's ``*_each``
fallbacks, ``--set sim.batch_api=false``: one ``Link``/``Joint`` call per entity) to the same end as
the batched path (issue 32 Deliver 4): the final base pose of a shortened run agrees within
``TOL``.

Tolerance, as in test_per_entity_path.py: both paths compute the same wrenches, joint forces and
readings with different floating-point operation orders (~1e-16 relative per step), which stay far
below a micrometre over the few hundred steps of a shortened run; a scenario system or plugin whose
per-entity path did anything else (a skipped joint, a state read one step late, a missing wrench)
moves the robot by millimetres in that time. Each run is checked to have taken its path (the batch
caches built in one, untouched in the other) and to have moved the robot by far more than ``TOL``."""

from __future__ import annotations

import numpy as np
import pytest

from eels_gz import config, registry
from eels_gz.run import runner

TOL = 1e-6  # m, and for the unit quaternion's components (module docstring)
DURATION = 0.2  # s of the timed run (placements and settling before it run in full)


def run(name: str, batch: bool, out) -> tuple[dict, object, np.ndarray]:
    cfg = config.resolve(overrides={"scenario": {"name": name}, "duration": DURATION, "sim": {"batch_api": batch},
                                    "sensors": {"enabled": False}, "log": {"mcap": False, "plot": False}})
    seen = {}
    original = runner.prepare

    def spy(*a, **k):  # keep the simulation, and the robot's state before the scenario's setup
        seen["prep"] = prep = original(*a, **k)
        seen["q0"] = prep.sim.robot_skeleton.getPositions().copy()
        return prep

    runner.prepare = spy
    try:
        summary = runner.run(cfg, out)
    finally:
        runner.prepare = original
    return summary, seen["prep"].sim, seen["q0"]


@pytest.mark.parametrize("name", sorted(registry.scenarios()))
def test_per_entity_path_ends_where_the_batched_path_does(name, tmp_path):
    ends = {}
    for batch in (True, False):
        summary, sim, q0 = run(name, batch, tmp_path / f"batch_{batch}")
        batches = sim.ecm.batches
        assert bool(batches) is batch, f"batch_api={batch}: the batch caches say the other path ran"
        moved = np.abs(sim.robot_skeleton.getPositions() - q0).max()
        assert moved > 100 * TOL, f"batch_api={batch}: the robot barely moved ({moved:.2e}): the test proves nothing"
        ends[batch] = summary
    a, b = (ends[k]["final_base_pose"] for k in (True, False))
    assert ends[False]["status"] == ends[True]["status"] and ends[False]["steps"] == ends[True]["steps"]
    np.testing.assert_allclose(b["position"], a["position"], rtol=0, atol=TOL)
    np.testing.assert_allclose(b["orientation_wxyz"], a["orientation_wxyz"], rtol=0, atol=TOL)
