"""Cost of the rover models and of a driven rover in the embedded host.

Writes JSON (``--out FILE``; default: print): microseconds per
IcrSteering.command (a fresh command each call, so the ICR is projected
every time) and per WheelOdometry.update, for Archimede's wheels from its
URDF, and the real-time factor of Archimede driving straight on ice_plane
with icr_steering and wheel_odometry in the loop.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from rtf import emit

from eels_gz import registry
from eels_gz.description.xacro_loader import load_description
from eels_gz.run.drive_runs import path_segments, run_drive
from eels_gz.rover import IcrSteering, WheelOdometry
from eels_gz.rover.from_urdf import wheels_from_urdf


def per_call(fn, n: int) -> float:
    t0 = time.perf_counter()
    for k in range(n):
        fn(k)
    return (time.perf_counter() - t0) / n * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", help="JSON file to write (default: print)")
    parser.add_argument("--n", type=int, default=2000, help="calls per model timing")
    args = parser.parse_args()
    wheels = wheels_from_urdf(load_description(registry.robot("archimede").path).urdf)
    rng = np.random.default_rng(0)
    cmds = rng.uniform(-1, 1, size=(args.n, 3))
    result = {}
    for mode in ("general_ackermann", "symmetric_ackermann", "parallel"):
        s = IcrSteering(wheels, mode)
        result[f"command_us_{mode}"] = per_call(lambda k: s.command(*cmds[k]), args.n)
    odo = WheelOdometry(wheels)
    angles, rates = rng.uniform(-0.5, 0.5, (args.n, 4)), rng.uniform(-2, 2, (args.n, 4))
    result["odometry_update_us"] = per_call(lambda k: odo.update(angles[k], rates[k], 0.001), args.n)
    t0 = time.perf_counter()
    rec = run_drive("archimede", "straight", 2.4, "ice_plane", None, scale=0.25)
    wall = time.perf_counter() - t0
    result["drive"] = {"path": "straight x0.25 at 2.4 rad/s", "sim_time_s": rec["sim_time"], "wall_s": wall,
                       "real_time_factor": rec["sim_time"] / wall, "segments": len(path_segments("straight"))}
    emit(result, args.out)


if __name__ == "__main__":
    main()
