"""Real-time factor of EELS 1.0 resting on ice_plane, and the host's overhead.

Three loops on the same robot and ground, measured in one run, interleaved
over several rounds (the median of each is reported, so machine noise hits
all three alike):

- ``bare``: a plain dartpy loop (``world.step()``) on the skeleton the host
  builds, with no plugins and no host code;
- ``host``: the embedded host's step (gz-sim system contract, state cache,
  divergence check) with no plugins;
- ``host_joint_control``: the host with the joint-control plugin holding all
  30 joints (36 DOF with the floating base) — the RTF target.

Writes JSON (``--out``) and prints it.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from pathlib import Path

from eels_gz import registry
from eels_gz.description.xacro_loader import load_description
from eels_gz.dart.simulation import RobotSpec, Simulation

ROBOT = "eels_1_0_front_only"
WORLD = "ice_plane"


def make(gazebo: bool, detector: str | None, dt: float) -> Simulation:
    entry = registry.robot(ROBOT)
    args = dict(entry.xacro_args, gazebo="true" if gazebo else "false")
    return Simulation(registry.world_path(WORLD), RobotSpec(ROBOT, load_description(entry.path, args)),
                      dt=dt, collision_detector=detector)


def emit(result: dict, out: str | Path | None) -> None:
    """The benchmarks' output: JSON to ``out`` when given, else to stdout."""
    text = json.dumps(result, indent=2)
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(text)
    else:
        print(text)


def time_loop(step, n: int) -> float:
    t0 = time.perf_counter()
    for _ in range(n):
        step()
    return (time.perf_counter() - t0) / n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=2000, help="steps per round and loop")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=500, help="steps before timing (robot settles)")
    ap.add_argument("--dt", type=float, default=0.001)
    ap.add_argument("--collision-detector", default=None, help="default: the world's (ode)")
    ap.add_argument("--out", type=Path, default=Path("results/bench_rtf.json"))
    a = ap.parse_args()

    bare = make(False, a.collision_detector, a.dt)
    host = make(False, a.collision_detector, a.dt)
    ctrl = make(True, a.collision_detector, a.dt)
    loops = {"bare": bare.world.step, "host": host.step, "host_joint_control": ctrl.step}
    for step in loops.values():
        for _ in range(a.warmup):
            step()
    samples: dict[str, list[float]] = {k: [] for k in loops}
    for _ in range(a.rounds):
        for name, step in loops.items():
            samples[name].append(time_loop(step, a.steps))
    per_step = {k: statistics.median(v) for k, v in samples.items()}
    result = {
        "robot": ROBOT,
        "world": WORLD,
        "dofs": ctrl.robot_skeleton.getNumDofs(),
        "controlled_joints": len(ctrl.systems[0].system.joints),
        "dt": a.dt,
        "collision_detector": ctrl.detector_name,
        "steps_per_round": a.steps,
        "rounds": a.rounds,
        "step_us": {k: v * 1e6 for k, v in per_step.items()},
        "real_time_factor": {k: a.dt / v for k, v in per_step.items()},
        "host_overhead_ratio": per_step["host"] / per_step["bare"] - 1.0,
        "joint_control_overhead_ratio": per_step["host_joint_control"] / per_step["bare"] - 1.0,
        "targets": {"real_time_factor_joint_control_min": 5.0, "host_overhead_ratio_max": 0.25},
        "machine": {"python": platform.python_version(), "processor": platform.processor() or platform.machine()},
    }
    result["meets"] = {
        "real_time_factor_joint_control": result["real_time_factor"]["host_joint_control"] >= 5.0,
        "host_overhead_ratio": result["host_overhead_ratio"] <= 0.25,
    }
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
