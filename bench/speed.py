"""The speed targets of a user's run, measured in one run of this script.

Each case is an ``eels-gz run`` as a user runs it (sensors and log at their
defaults, no plot), through :func:`eels_gz.run.runner.run`; the cases are
interleaved over ``--rounds`` so that machine noise hits them alike, and the
median of each figure is reported.

- ``screw``: EELS 1.0 alternating spinning its screws on ``ice_plane`` under
  the screw contact (``--scenario screw_spin``): real-time factor (8 on the bench machine),
  the run's step cost over DART's own step inside it (``step_cost_ratio``, a
  guard against regressions: no more than 2.4, today's 2.2-2.4; the former
  target 1.3 is retired, issue 36: the plugins' gz-sim API calls are the
  contract that lets them run in Gazebo. DART steps the same skeleton with the
  same, here no, contacts; the real-time factor 8 was met on the bench
  machine, and an absolute factor belongs to its machine: the ratio is what
  carries over),
  the lidar's share of the run (target 10 %) and numba's compile time inside
  the timed loop (target 0).
- ``stock``: EELS 1.0 front-only resting on ``ice_plane`` under stock
  contact: the host's overhead over DART's step (target 25 %), joint control,
  sensors and log included; and, for reference, a plain dartpy loop
  (``world.step()``) on the skeleton the host builds, same detector and
  solver, no plugins.
- ``solvers``: the same resting robot and ``surface_traverse`` (EELS 1.0
  front-only under its scenario's contact, stock) under gz-physics' two DART
  LCP solvers (``dantzig``, ``pgs``): DART's step, the real-time factor and
  how far the two runs end apart.

Writes JSON (``--out``) and prints it.
"""

from __future__ import annotations

import argparse
import math
import platform
import statistics
import tempfile
import time
from pathlib import Path

from rtf import emit, time_loop

from eels_gz import config, registry
from eels_gz.description.xacro_loader import load_description
from eels_gz.run.runner import run
from eels_gz.dart.simulation import RobotSpec, Simulation

TARGETS = {"screw_real_time_factor_min": 8.0, "screw_step_cost_ratio_max": 2.4, "lidar_share_max": 0.10,
           "compile_time_in_run_max": 0.0, "stock_host_overhead_max": 0.25}
SCREW = {"robot": {"name": "eels_1_0_alternating"}, "world": "ice_plane", "contact": {"model": "screw"},
         "scenario": {"name": "screw_spin"}}
RESTING = {"robot": {"name": "eels_1_0_front_only"}, "world": "ice_plane", "contact": {"model": "stock"}}
TRAVERSE = {"scenario": {"name": "surface_traverse"}}


def run_case(overrides: dict, duration: float, tmp: Path, name: str) -> dict:
    cfg = config.resolve(overrides={**overrides, "duration": duration, "log": {"plot": False}})
    s = run(cfg, tmp / name)
    steps = round((s["sim_time"] - s["setup_sim_time"]) / s["settings"]["resolved"]["dt"])
    lidar = sum(v["seconds"] for v in s.get("sensor_wall_time", {}).values() if v["type"] == "gpu_lidar")
    return {"status": s["status"], "real_time_factor": s["real_time_factor"], "step_cost_ratio": s["step_cost_ratio"],
            "step_us": 1e6 * s["wall_time"] / steps, "dart_step_us": 1e6 * s["physics_wall_time"] / steps,
            "lidar_share": lidar / s["wall_time"], "compile_time_in_run": s["numba"]["compile_time_in_run"],
            "position": s["final_base_pose"]["position"], "rpy": s["final_base_pose"]["rpy"]}


def bare_dart_step(duration: float) -> float:
    """Seconds per step of ``world.step()`` on the resting robot's skeleton as the host builds it, no plugins."""
    entry = registry.robot(RESTING["robot"]["name"])
    sim = Simulation(registry.world_path(RESTING["world"]),
                     RobotSpec(entry.name, load_description(entry.path, dict(entry.xacro_args, gazebo="false"))))
    for _ in range(500):  # settle onto the ice, as the host's runs have
        sim.world.step()
    return time_loop(sim.world.step, int(duration / sim.dt))


def median(rows: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in rows)


def apart(a: dict, b: dict) -> dict:
    """How far two runs end apart: base position (m) and roll, pitch, yaw (rad, wrapped)."""
    d = [x - y for x, y in zip(a["position"], b["position"])]
    ang = [abs(math.remainder(x - y, 2 * math.pi)) for x, y in zip(a["rpy"], b["rpy"])]
    return {"position_m": math.sqrt(sum(v * v for v in d)), "rpy_rad": ang}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=float, default=10.0, help="simulated seconds of each timed run")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args()
    cases = {"screw": SCREW, "stock": RESTING}
    for solver in ("dantzig", "pgs"):
        cases[f"resting_{solver}"] = {**RESTING, "physics": {"solver": solver}}
        cases[f"surface_traverse_{solver}"] = {**TRAVERSE, "physics": {"solver": solver}}
    rows: dict[str, list[dict]] = {k: [] for k in cases}
    bare: list[float] = []
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        run_case(SCREW, 0.1, Path(tmp), "warm")  # loads the cached kernels (or compiles them) before timing
        for r in range(a.rounds):
            for name, overrides in cases.items():
                rows[name].append(run_case(overrides, a.duration, Path(tmp), f"{name}_{r}"))
            bare.append(bare_dart_step(a.duration))
    screw, stock = rows["screw"], rows["stock"]
    result = {
        "duration_s": a.duration, "rounds": a.rounds,
        "screw": {"real_time_factor": median(screw, "real_time_factor"),
                  "step_cost_ratio": median(screw, "step_cost_ratio"), "step_us": median(screw, "step_us"),
                  "dart_step_us": median(screw, "dart_step_us"), "lidar_share": median(screw, "lidar_share"),
                  "compile_time_in_run": max(r["compile_time_in_run"] for r in screw)},
        "stock": {"real_time_factor": median(stock, "real_time_factor"), "step_us": median(stock, "step_us"),
                  "dart_step_us": median(stock, "dart_step_us"),
                  "host_overhead": median(stock, "step_cost_ratio") - 1.0,
                  "bare_loop_step_us": 1e6 * statistics.median(bare),
                  "host_over_bare_loop": median(stock, "step_us") / (1e6 * statistics.median(bare)) - 1.0},
        "solvers": {},
        "targets": TARGETS,
        "machine": {"python": platform.python_version(), "processor": platform.processor() or platform.machine()},
        "wall_s": time.perf_counter() - t0,
    }
    for case in ("resting", "surface_traverse"):
        d, p = rows[f"{case}_dantzig"], rows[f"{case}_pgs"]
        result["solvers"][case] = {
            solver: {"real_time_factor": median(r, "real_time_factor"), "dart_step_us": median(r, "dart_step_us"),
                     "status": r[0]["status"]} for solver, r in (("dantzig", d), ("pgs", p))}
        result["solvers"][case]["end_apart"] = apart(d[0], p[0])
    sc, st = result["screw"], result["stock"]
    result["meets"] = {"screw_real_time_factor": sc["real_time_factor"] >= TARGETS["screw_real_time_factor_min"],
                       "screw_step_cost_ratio": sc["step_cost_ratio"] <= TARGETS["screw_step_cost_ratio_max"],
                       "lidar_share": sc["lidar_share"] <= TARGETS["lidar_share_max"],
                       "compile_time_in_run": sc["compile_time_in_run"] <= TARGETS["compile_time_in_run_max"],
                       "stock_host_overhead": st["host_overhead"] <= TARGETS["stock_host_overhead_max"]}
    emit(result, a.out)


if __name__ == "__main__":
    main()
