"""Campaign throughput on Ray (eels-gz sweep) against the same runs one after the other in one process.

One campaign of ``--samples`` runs of equal cost (EELS 1.0 front-only spinning its screws under screw
contact for ``--duration`` s on ice_plane, a grid over contact.mu; log, plot and sensors at their
defaults, as a user's campaign runs), measured in one process, interleaved over ``--rounds`` rounds so
that the machine's load hits every mode alike:

- ``direct``: the same runs one after the other in this process (eels_gz.run.runner.run, imports
  and numba kernels already loaded): the cost of the runs themselves (the serial throughput);
- ``two_at_once``: the same runs two at a time, each in a child forked from this process (no Ray, no
  warm-up): the machine's own throughput for two such processes side by side, the ceiling of
  ``workers_2`` (``two_at_once_over_serial``; ``workers_2_over_two_at_once`` is the share of it the
  sweep reaches);
- ``workers_1`` and ``workers_2``: ``run_sweep`` with 1 and 2 workers, every sample in its own
  process forked from the node's warm process, which warms while Ray starts
  (eels_gz.sweep.node_server); on a local Ray it starts and stops, or on a running cluster
  (``--address``, e.g. ``auto`` after ``ray start --head --num-cpus 2``). The wall time from the
  first dispatch to the last row in (``runs_per_min``: any wait for the node's warm process
  included), and the whole command with Ray's start and stop and the results written
  (``runs_per_min_with_ray_start``);
- ``workers_2_self_warm``: as ``workers_2`` without the node's warm process: each worker warms
  itself on its first sample and forks its samples (eels_gz.sweep.forked), as campaigns ran before
  it (``node_server_gain``: ``workers_2`` over this, both counted either way).

Reported: runs per minute of each mode (median over rounds), each Ray mode's throughput over the
serial one (targets: 1 worker 0.75, 2 workers 1.5 on this 2-core machine), and the per-sample
overhead the sweep itself reports (sweep.json's ``overhead``: in the worker, and in all). The load
average before and after each round says how busy the machine was. Writes JSON (``--out``) and
prints it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from eels_gz import config
from eels_gz.sweep import parse_spec, run_sweep
from eels_gz.sweep.spec import check_spec

BASE = {"robot": "eels_1_0_front_only", "world": "ice_plane", "scenario": "screw_spin", "contact": {"model": "screw"}}
TARGETS = {"workers_1": 0.75, "workers_2": 1.5}  # throughput over the serial one (issue 36)


def spec(samples: int, duration: float):
    mus = [round(0.10 + 0.10 * i / max(1, samples - 1), 6) for i in range(samples)]
    s = parse_spec({"base": {**BASE, "duration": duration}, "dispersions": {"contact.mu": {"grid": mus}},
                    "metrics": ["real_time_factor"]}, "bench_sweep")
    check_spec(s)
    return s


def direct(s, work: Path) -> dict:
    """The campaign's runs one after the other in this process."""
    from eels_gz.run.runner import run

    walls = []
    t0 = time.perf_counter()
    for sample in s.expand():
        cfg = config.resolve(overrides=BASE | {"duration": s.base["duration"]},
                             sets=[f"contact.mu={sample.inputs['contact.mu']}"])
        t = time.perf_counter()
        run(cfg, work / f"direct_{sample.name}")
        walls.append(time.perf_counter() - t)
    wall = time.perf_counter() - t0
    return {"wall_s": wall, "per_run_s": wall / len(walls), "runs_per_min": 60.0 * len(walls) / wall}


def two_at_once(s, work: Path) -> dict:
    """The same runs, two at a time, each in a child forked from this (warm) process: no Ray, no
    warm-up; what this machine gives two processes running these runs side by side (the ceiling of
    ``workers_2``: two cores share their caches and memory, and a virtual machine's cores their host)."""
    from eels_gz.run.runner import run

    todo = list(s.expand())
    running: set[int] = set()
    t0 = time.perf_counter()
    while todo or running:
        while todo and len(running) < 2:
            sample = todo.pop(0)
            cfg = config.resolve(overrides=BASE | {"duration": s.base["duration"]},
                                 sets=[f"contact.mu={sample.inputs['contact.mu']}"])
            pid = os.fork()
            if pid == 0:
                code = 1
                try:
                    run(cfg, work / f"pair_{sample.name}")
                    code = 0
                finally:
                    os._exit(code)
            running.add(pid)
        pid, status = os.wait()
        running.discard(pid)
        if status != 0:
            raise SystemExit(f"a run forked two at a time failed ({status})")
    wall = time.perf_counter() - t0
    n = len(s.expand())
    return {"wall_s": wall, "runs_per_min": 60.0 * n / wall}


def on_ray(s, work: Path, workers: int, tag: str, address: str | None, node_server: bool = True) -> dict:
    """The campaign by run_sweep with ``workers`` workers, on a local Ray it starts and stops, or on
    the cluster at ``address``; with or without the node's warm process."""
    t = time.perf_counter()
    state = run_sweep(s, work / tag, workers=workers, address=address, node_server=node_server)
    total = time.perf_counter() - t
    ray_info = state["ray"]
    wall = ray_info["dispatch_s"]  # from the first sample dispatched to the last row in
    n = state["samples_done"]
    return {"wall_s": wall, "runs_per_min": 60.0 * n / wall, "ray_init_s": ray_info.get("start_s"),
            "total_s": total, "runs_per_min_with_ray_start": 60.0 * n / total, "statuses": state["statuses"],
            "overhead": state.get("overhead"), "address": ray_info.get("address")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--samples", type=int, default=8, help="runs per campaign")
    ap.add_argument("--duration", type=float, default=2.0, help="simulated seconds per run")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--address", help="a running Ray cluster (e.g. auto) instead of a local Ray per campaign")
    ap.add_argument("--out", help="write the JSON here")
    args = ap.parse_args()
    s = spec(args.samples, args.duration)
    result = {"machine": {"cpus": os.cpu_count(), "load_avg_at_start": os.getloadavg()},
              "campaign": {"samples": args.samples, "duration_s": args.duration, "robot": BASE["robot"],
                           "scenario": BASE["scenario"], "contact": "screw", "log_and_sensors": "defaults"},
              "ray": args.address or "local",
              "rounds": []}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        direct(spec(1, 0.01), work / "warmup")  # imports and numba kernels, once
        for k in range(args.rounds):
            r = {"direct": direct(s, work / f"d{k}"),
                 "two_at_once": two_at_once(s, work / f"p{k}"),
                 "workers_1": on_ray(s, work, 1, f"w1_{k}", args.address),
                 "workers_2": on_ray(s, work, 2, f"w2_{k}", args.address),
                 "workers_2_self_warm": on_ray(s, work, 2, f"w2s_{k}", args.address, node_server=False),
                 "load_avg": os.getloadavg()}
            result["rounds"].append(r)
            print(json.dumps(r, default=float), flush=True)
    med = {m: statistics.median(r[m]["runs_per_min"] for r in result["rounds"])
           for m in ("direct", "two_at_once", "workers_1", "workers_2", "workers_2_self_warm")}
    ratio = {m: statistics.median(r[m]["runs_per_min"] / r["direct"]["runs_per_min"] for r in result["rounds"])
             for m in TARGETS}
    result["summary"] = {
        "runs_per_min": med,
        "over_serial": ratio,
        "over_serial_per_round": {m: [r[m]["runs_per_min"] / r["direct"]["runs_per_min"] for r in result["rounds"]]
                                  for m in TARGETS},
        "over_serial_with_ray_start": {m: statistics.median(r[m]["runs_per_min_with_ray_start"]
                                                            / r["direct"]["runs_per_min"] for r in result["rounds"])
                                       for m in (*TARGETS, "workers_2_self_warm")},
        "targets_over_serial": TARGETS,
        "met": {m: ratio[m] >= TARGETS[m] for m in TARGETS},
        "speedup_2_over_1": med["workers_2"] / med["workers_1"],
        # the machine's own: two forked processes side by side, no Ray, no warm-up (two_at_once)
        "two_at_once_over_serial": statistics.median(r["two_at_once"]["runs_per_min"] / r["direct"]["runs_per_min"]
                                                     for r in result["rounds"]),
        "two_at_once_over_serial_per_round": [r["two_at_once"]["runs_per_min"] / r["direct"]["runs_per_min"]
                                              for r in result["rounds"]],
        "workers_2_over_two_at_once": statistics.median(r["workers_2"]["runs_per_min"]
                                                        / r["two_at_once"]["runs_per_min"] for r in result["rounds"]),
        "workers_2_self_warm_over_serial": statistics.median(r["workers_2_self_warm"]["runs_per_min"]
                                                             / r["direct"]["runs_per_min"] for r in result["rounds"]),
        "node_server_gain": statistics.median(r["workers_2"]["runs_per_min"] / r["workers_2_self_warm"]["runs_per_min"]
                                              for r in result["rounds"]),
        "node_server_gain_with_ray_start": statistics.median(
            r["workers_2"]["runs_per_min_with_ray_start"] / r["workers_2_self_warm"]["runs_per_min_with_ray_start"]
            for r in result["rounds"]),
        "direct_run_s": statistics.median(r["direct"]["per_run_s"] for r in result["rounds"]),
        "overhead_per_sample_s": {m: statistics.median((r[m]["overhead"] or {}).get("per_sample_s") or 0.0
                                                       for r in result["rounds"]) for m in TARGETS},
        "overhead_in_worker_s": {m: statistics.median((r[m]["overhead"] or {}).get("in_worker_s") or 0.0
                                                      for r in result["rounds"]) for m in TARGETS},
        "ray_init_s": statistics.median(r[m]["ray_init_s"] or 0.0 for r in result["rounds"] for m in TARGETS),
    }
    result["machine"]["load_avg_at_end"] = os.getloadavg()
    text = json.dumps(result, indent=2, default=float)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
