"""Every EELS variant at rest under screw contact: docs/contact.md's "At rest" table.

The ``hold`` scenario (every shape joint held straight, every screw held at zero speed) for 10 s on
``ice_plane``, sensors off, for each variant and each contact parameter set named (default: the
default ``ice`` and ``ice_regulated``), measured as ``test/scenarios/test_screw_rest_roll.py``
measures it: the base's (tail's) largest horizontal distance from where it started (m), its largest
roll about its own x axis (rad), and the largest share of steps on which one joint's velocity
changed sign (step-rate chatter), with that joint's name. Writes JSON (``--out``) and prints it.
"""

from __future__ import annotations

import argparse
import math
import os
from pathlib import Path

import numpy as np
from rtf import emit

from eels_gz import config, registry
from eels_gz.run.runner import prepare


def _roll(R0: np.ndarray, R: np.ndarray) -> float:
    """Rotation of R relative to R0 about R0's x axis (rad)."""
    rel = R0.T @ R
    return math.atan2(rel[2, 1], rel[2, 2])


def rest(robot: str, params: str) -> dict:
    """One hold run of ``robot`` under contact parameter set ``params``; its figures."""
    cfg = config.resolve(overrides={"robot": {"name": robot}, "scenario": "hold", "sensors": {"enabled": False},
                                    "contact": {"model": "screw", "params": params}})
    prepared = prepare(cfg)
    sim = prepared.sim
    skel = sim.robot_skeleton
    base = skel.getBodyNode(0)
    dofs = [j.getIndexInSkeleton(0) for j in (skel.getJoint(i) for i in range(skel.getNumJoints()))
            if j.getType() != "FreeJoint" and j.getNumDofs() == 1]
    T0 = base.getWorldTransform().matrix().copy()
    steps = int(round(prepared.duration / sim.dt))
    drift = roll = 0.0
    flips, prev = np.zeros(len(dofs)), None
    for _ in range(steps):
        sim.step()
        dq = skel.getVelocities()[dofs]
        if prev is not None:
            flips += np.sign(dq) * np.sign(prev) < 0
        prev = dq
        T = base.getWorldTransform().matrix()
        drift = max(drift, float(np.linalg.norm(T[:2, 3] - T0[:2, 3])))
        roll = max(roll, abs(_roll(T0[:3, :3], T[:3, :3])))
    share = flips / steps
    worst = int(np.argmax(share)) if len(share) else None
    return {"duration_s": sim.time, "screw_contact": any(s.module == "screw_contact" for s in sim.systems),
            "drift_m": drift, "roll_rad": roll, "worst_flip_share": float(share[worst]) if worst is not None else 0.0,
            "worst_flip_joint": skel.getDof(dofs[worst]).getName() if worst is not None else None}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--robot", action="append", help="EELS variant (repeatable; default: every one)")
    ap.add_argument("--params", action="append", help="contact parameter set (repeatable; default: ice, ice_regulated)")
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args()
    robots = a.robot or sorted(registry.eels_variants())
    sets = a.params or ["ice", "ice_regulated"]
    result = {"machine": {"cpus": os.cpu_count(), "load_avg_at_start": os.getloadavg()}, "status": "ok",
              "rest": {r: {p: rest(r, p) for p in sets} for r in robots}}
    emit(result, a.out)


if __name__ == "__main__":
    main()
