"""The cost of the RFT contact system (plugins_py/rft_contact.py, issue 34 item 9) in an EELS run's step.

EELS 1.0 with counter-rotating pairs (10 modules, 20 screws, no head) spins its screws at 3 rad/s (the
screw_spin scenario) on the soil bin with the RFT contact on every screw (mars_simulant_mms); the system's
``pre_update`` (gz API reads, the surface elements placed, the terrain queried, the model and its
implicit step, 20 world wrenches) is timed inside the host's step loop. Side by side, in interleaved rounds,
the same robot on ice_plane under the screw-ice contact gives the step of the package's other screw model.
Medians over the rounds, with the load average (the machine is shared).

Writes JSON (``--out FILE``; default: print).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

from rtf import emit
from soil import Timed

from eels_gz import registry
from eels_gz.dart.simulation import RobotSpec, Simulation
from eels_gz.description.assemble import robot_description

ROBOT, MEDIUM, RFT_WORLD, ICE_WORLD = "eels_1_0_alternating", "mars_simulant_mms", "soil_bin", "ice_plane"


def eels(world_name: str, contact: str) -> Simulation:
    world = registry.world_path(world_name)
    args = {"contact": contact, "world_file": str(world.resolve()), "head": "false"}
    if contact == "rft":
        args["granular_params"] = MEDIUM
    desc = robot_description(registry.robot(ROBOT), gazebo=True, xacro_args=args,
                             scenario=str(registry.scenario_path("screw_spin")))
    return Simulation(world, RobotSpec("eels", desc, [0.0, 0.0, 0.1, 0.0, 0.0, 0.0]))


def time_system(sim: Simulation, module: str) -> Timed:
    loaded = next(s for s in sim.systems if s.module == module)
    phase = sim._phases["pre_update"]
    k = phase.index(loaded.pre_update)
    phase[k] = Timed(loaded.pre_update)
    sim._owner[id(phase[k])] = loaded
    return phase[k]


def parts_us(system, repeats: int) -> dict:
    """The model's parts, timed alone on the system's last state (us per call): placing the elements, the
    terrain query at them, the stresses."""
    from eels_gz.granular.rft import body_elements_world, rft_element_forces

    c, p = system.contact, system.params
    import numpy as np

    states = [np.ascontiguousarray(a) for a in system.states]
    depth = np.ascontiguousarray(-c.terrain.query(c._p)[0])

    def timed(f) -> float:
        t0 = time.perf_counter()
        for _ in range(repeats):
            f()
        return (time.perf_counter() - t0) / repeats * 1e6

    return {
        "place": timed(lambda: body_elements_world(*states, c.link_of, c.p_link, c.n_link, c._p, c._n, c._v, c._r)),
        "terrain_query": timed(lambda: c.terrain.query(c._p)),
        "stresses": timed(lambda: rft_element_forces(c._n, c.areas, c._v, depth, p.zeta, p.velocity_reg,
                                                     p.leading_band, c.coefficients, c._f)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", help="JSON file to write (default: print)")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds")
    parser.add_argument("--steps", type=int, default=1000, help="steps per round and run")
    parser.add_argument("--settle", type=int, default=1000, help="untimed steps first (kernels compiled, robot down)")
    args = parser.parse_args()
    rft, ice = eels(RFT_WORLD, "rft"), eels(ICE_WORLD, "screw")
    for _ in range(args.settle):
        rft.step()
        ice.step()
    t_rft, t_ice = time_system(rft, "rft_contact"), time_system(ice, "screw_contact")
    elements = next(s for s in rft.systems if s.module == "rft_contact").system.contact.areas.size
    step_rft, step_ice, sys_rft, sys_ice, share = [], [], [], [], []
    for _ in range(args.rounds):
        for sim, timer, steps, systems in ((rft, t_rft, step_rft, sys_rft), (ice, t_ice, step_ice, sys_ice)):
            timer.seconds = 0.0
            t0 = time.perf_counter()
            for _ in range(args.steps):
                sim.step()
            wall = time.perf_counter() - t0
            steps.append(wall / args.steps * 1e6)
            systems.append(timer.seconds / args.steps * 1e6)
            if sim is rft:
                share.append(timer.seconds / wall)
    parts = parts_us(next(s for s in rft.systems if s.module == "rft_contact").system, args.steps)
    result = {
        "what": f"{ROBOT} (no head) spinning its 20 screws at 3 rad/s: rft_contact ({MEDIUM}, {elements} surface "
                f"elements) on {RFT_WORLD} vs screw_contact (ice) on {ICE_WORLD}, {args.rounds} interleaved "
                f"rounds of {args.steps} steps (dt {rft.dt:g} s), medians",
        "rft_system_us_per_step": statistics.median(sys_rft),
        "screw_system_us_per_step": statistics.median(sys_ice),
        "step_us_with_rft": statistics.median(step_rft),
        "step_us_with_screw_contact": statistics.median(step_ice),
        "rft_share_of_step": statistics.median(share),
        "rft_share_of_step_rounds": share,
        "surface_elements": int(elements),
        "parts_us": parts,
        "load_average_1_5_15": list(os.getloadavg()),
        "cpus": os.cpu_count(),
        "machine": platform.platform(),
    }
    emit(result, args.out)


if __name__ == "__main__":
    main()
