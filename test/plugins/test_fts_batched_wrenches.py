"""A force-torque sensor reads the same wrench whether the screw contact's link wrenches reach DART
batched (as generalized forces, eels_gz.gzapi.gzsim.add_link_world_wrenches) or one link at a time
(``Link.add_world_wrench``: DART's own external forces, the path Gazebo runs). DART's transmitted body
force includes its external forces but not generalized forces, so the batched path's wrenches below
the sensor's joint are taken out of it (eels_gz.dart.skeleton_state.BatchedWrenches); before that,
EELS 1.5's three sensors read up to 480 N off on the ice.

Tolerance: both paths give the same motion to round-off (test_per_entity_path) and the same wrenches;
the readings then differ only by floating-point order, ~1e-12 of the 30 N they carry: 1e-6 N leaves
room for the motion's round-off over 300 steps and is far below any missed wrench (newtons)."""

from __future__ import annotations

import numpy as np
import pytest

from eels_gz import config
from eels_gz.dart.sensors import ForceTorque, HostSensors
from eels_gz.run.resolve import resolve_run
from eels_gz.run.runner import prepare

TOL = 1e-6  # N and N m (module docstring)


def readings(batch: bool, frame: str | None = None) -> np.ndarray:
    cfg = config.resolve(overrides={"robot": {"name": "eels_1_5"}, "world": "ice_plane", "contact": {"model": "screw"},
                                    "scenario": {"name": "screw_spin"}, "sim": {"batch_api": batch}})
    sim = prepare(resolve_run(cfg)).sim
    sensors = HostSensors(sim, noise=False)
    fts = [s for s in sensors.sensors if isinstance(s, ForceTorque)]
    assert len(fts) == 3
    if frame is not None:
        for s in fts:
            s.frame = frame
    out = []
    for k in range(300):
        sim.step()
        if k % 25 == 24:
            out.append(np.concatenate([s.values() for s in fts]))
    sim.close()
    return np.array(out)


@pytest.mark.parametrize("frame", [None, "parent"])
def test_batched_and_per_link_wrenches_give_the_same_readings(frame):
    batched, per_link = readings(True, frame), readings(False, frame)
    assert np.abs(per_link).max() > 5.0  # the sensors carry load: the comparison means something
    np.testing.assert_allclose(batched, per_link, rtol=0, atol=TOL)
