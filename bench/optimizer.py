"""Multibody optimizer (EELS-DARTS §2.1.4): body count and step cost of the embedded
host with and without it, for EELS 1.0 with its perception head.

The same robot rests on ``ice_plane`` twice, once as xacro gives it and once
optimized (fixed joints merged, massless frames pruned). The two hosts are
stepped interleaved over several rounds and the median per-step time of
each is reported, so machine noise hits both alike. No plugins run, so the
figure is the physics (and host bookkeeping) cost of the model itself.

It also reports the mass DART sees in each: DART's URDF loader gives a link
without ``<inertial>`` a phantom 1 kg body, so without the optimizer the
massless sensor frames of the head add mass that the URDF does not have.

Writes JSON (``--out FILE``), and prints it when no ``--out`` is given.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import platform
import statistics
from pathlib import Path

from eels_gz import registry
from eels_gz.description.optimizer import optimize_description
from eels_gz.description.xacro_loader import Description, load_description
from eels_gz.dart.simulation import RobotSpec, Simulation
from eels_gz.paths import asset
from rtf import time_loop  # bench/ is the script's directory, so its sibling imports

ROBOT = "eels_1_0_alternating"  # EELS 1.0 with the optional perception head
WORLD = "ice_plane"


def robot_description(name: str, head: str, n_modules: str | None) -> tuple[dict[str, str], Description]:
    """xacro -> Description for a registry robot (or an EELS variant the registry does not list yet)."""
    if name in registry.ROBOTS:
        entry = registry.ROBOTS[name]
        path, args = entry.path, dict(entry.xacro_args)
    else:
        path, args = asset("urdf", "eels.urdf.xacro"), {"variant": name}
    args["head"] = head
    if n_modules is not None:
        args["n_modules"] = n_modules
    return args, load_description(path, args)


def make(name: str, description: Description, optimized: bool, dt: float, detector: str | None) -> Simulation:
    """A host with the robot, optimized or not.

    With the host's own switch (``RobotSpec.optimize``) the bench uses it;
    otherwise it hands the host an already optimized Description.
    """
    if "optimize" in {f.name for f in dataclasses.fields(RobotSpec)}:
        spec = RobotSpec(name, description, optimize=optimized)
    else:
        if optimized:
            description, _ = optimize_description(description)
        spec = RobotSpec(name, description)
    return Simulation(registry.world_path(WORLD), spec, dt=dt, collision_detector=detector)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--robot", default=ROBOT, help="registry name or EELS variant")
    ap.add_argument("--head", default="true", choices=("true", "false"))
    ap.add_argument("--n-modules", default=None, help="default: the variant's")
    ap.add_argument("--steps", type=int, default=1000, help="steps per round and model")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=300, help="steps before timing (robot settles)")
    ap.add_argument("--dt", type=float, default=0.001)
    ap.add_argument("--collision-detector", default=None, help="default: the world's")
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args()

    args, description = robot_description(a.robot, a.head, a.n_modules)
    _, model = optimize_description(description)
    sims = {
        "unoptimized": make(a.robot, description, False, a.dt, a.collision_detector),
        "optimized": make(a.robot, description, True, a.dt, a.collision_detector),
    }
    for sim in sims.values():
        for _ in range(a.warmup):
            sim.step()
    samples: dict[str, list[float]] = {k: [] for k in sims}
    for _ in range(a.rounds):
        for name, sim in sims.items():
            samples[name].append(time_loop(sim.step, a.steps))
    step_s = {k: statistics.median(v) for k, v in samples.items()}
    skel = {k: s.robot_skeleton for k, s in sims.items()}
    result = {
        "robot": a.robot,
        "xacro_args": args,
        "world": WORLD,
        "dt": a.dt,
        "collision_detector": sims["optimized"].detector_name,
        "steps_per_round": a.steps,
        "rounds": a.rounds,
        "urdf": {
            "before": dataclasses.asdict(model.before),
            "after": dataclasses.asdict(model.after),
            "removed_fixed_joints": len(model.removed_joints),
            "kept_fixed_joints": list(model.kept_fixed_joints),
        },
        "dart_bodies": {k: s.getNumBodyNodes() for k, s in skel.items()},
        "dart_dofs": {k: s.getNumDofs() for k, s in skel.items()},
        "dart_mass_kg": {k: s.getMass() for k, s in skel.items()},
        "step_us": {k: v * 1e6 for k, v in step_s.items()},
        "real_time_factor": {k: a.dt / v for k, v in step_s.items()},
        "step_cost_ratio_optimized": step_s["optimized"] / step_s["unoptimized"],
        "machine": {"python": platform.python_version(), "processor": platform.processor() or platform.machine()},
    }
    text = json.dumps(result, indent=2)
    if a.out is not None:
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
