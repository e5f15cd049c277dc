"""The soil contact system's share of an Archimede run's step (issue 34: at most 20 %).

Archimede (high grousers) drives at 0.1 m/s, turning at 0.2 rad/s, on the
soil bin with the soil contact system (plugins_py/soil_contact.py, EAC-1A) on
its four wheels; the system's ``pre_update`` (gz API reads, the model, the
four world wrenches) is timed inside the host's step loop, so its share is
measured in the very steps it is part of. Side by side, in interleaved
rounds, the same rover on ice_plane with the engine's contact (stock) gives
the step a rover run costs without soil. Medians over the rounds are
reported, with the load average, since this machine is shared.

Writes JSON (``--out FILE``; default: print).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

from rtf import emit

from eels_gz import registry
from eels_gz.description.assemble import robot_description
from eels_gz.gzapi import msgs, transport
from eels_gz.dart.simulation import RobotSpec, Simulation

SOIL, WHEELS, SOIL_WORLD, STOCK_WORLD = "eac1a", "high_grousers", "soil_bin", "ice_plane"


def rover(world_name: str, soil: str | None) -> Simulation:
    """Archimede on ``world_name`` (with the soil contact on ``soil`` if given), commanded to drive."""
    world = registry.world_path(world_name)
    args = {"wheels": WHEELS}
    if soil:
        args.update(soil=soil, world_file=str(world.resolve()))
    sim = Simulation(world, RobotSpec("archimede", robot_description(registry.robot("archimede"), gazebo=True,
                                                                      xacro_args=args)))
    node = transport.node_on(sim.transport)
    cmd = msgs.Twist()
    cmd.linear.x, cmd.angular.z = 0.1, 0.2
    node.advertise("/cmd_vel", msgs.Twist).publish(cmd)
    sim.bench_node = node  # kept alive with the simulation
    return sim


class Timed:
    """A callback wrapped to add its wall time to ``seconds``."""

    def __init__(self, callback):
        self.callback, self.seconds = callback, 0.0

    def __call__(self, info, ecm):
        t0 = time.perf_counter()
        try:
            self.callback(info, ecm)
        finally:
            self.seconds += time.perf_counter() - t0


def time_soil_system(sim: Simulation) -> Timed:
    """Wrap the soil contact system's pre_update in the host's pre_update phase."""
    loaded = next(s for s in sim.systems if s.module == "soil_contact")
    phase = sim._phases["pre_update"]
    k = phase.index(loaded.pre_update)
    phase[k] = Timed(loaded.pre_update)
    sim._owner[id(phase[k])] = loaded
    return phase[k]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", help="JSON file to write (default: print)")
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds")
    parser.add_argument("--steps", type=int, default=1000, help="steps per round and run")
    parser.add_argument("--settle", type=int, default=1000, help="untimed steps first (kernels compiled, rover down)")
    args = parser.parse_args()
    soil, stock = rover(SOIL_WORLD, SOIL), rover(STOCK_WORLD, None)
    for _ in range(args.settle):
        soil.step()
        stock.step()
    timer = time_soil_system(soil)
    step_soil, step_stock, share, system = [], [], [], []
    for _ in range(args.rounds):
        timer.seconds = 0.0
        t0 = time.perf_counter()
        for _ in range(args.steps):
            soil.step()
        wall = time.perf_counter() - t0
        t0 = time.perf_counter()
        for _ in range(args.steps):
            stock.step()
        step_stock.append((time.perf_counter() - t0) / args.steps * 1e6)
        step_soil.append(wall / args.steps * 1e6)
        system.append(timer.seconds / args.steps * 1e6)
        share.append(timer.seconds / wall)
    result = {
        "what": f"archimede ({WHEELS}) driving at 0.1 m/s, 0.2 rad/s: soil_contact ({SOIL}) on {SOIL_WORLD} vs "
                f"stock contact on {STOCK_WORLD}, {args.rounds} interleaved rounds of {args.steps} steps "
                f"(dt {soil.dt:g} s), medians",
        "soil_system_us_per_step": statistics.median(system),
        "step_us_with_soil": statistics.median(step_soil),
        "step_us_stock": statistics.median(step_stock),
        "soil_share_of_step": statistics.median(share),
        "soil_share_of_step_rounds": share,
        "target_share": 0.20,
        "load_average_1_5_15": list(os.getloadavg()),
        "cpus": os.cpu_count(),
        "machine": platform.platform(),
    }
    emit(result, args.out)


if __name__ == "__main__":
    main()
