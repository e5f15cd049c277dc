"""Each scenario of the real-Gazebo tier (test/gazebo/cases.yaml) at length in gz-sim and in the embedded
host, side by side in one run: the real-time factor of each (gz-sim with ``<real_time_factor>0``, its
server's start excluded: the world's own stopwatch; the host's timed loop, its setup excluded), what
gz-sim's Python systems cost per step (plugins_py/timed_system.py through ``export --time-systems``),
and how far the two runs' metrics and trajectories are apart (eels_gz.gazebo.agree).

Each case runs for ``--duration`` simulated seconds (default: the scenario's own, at most
``--max-duration``), sensors and log as ``eels-gz run`` has them. Needs a gz-sim 8
(eels_gz.gazebo.install). Writes JSON (``--out``) and prints a table. Target: every EELS scenario at
1x real time or more in gz-sim on the 2-core development machine.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

from rtf import emit

from eels_gz.gazebo.agree import agreement
from eels_gz.gazebo.cases import Case, load_cases
from eels_gz.gazebo.install import find_gz_sim, looked_for
from eels_gz.gazebo.run import run_in_gazebo
from eels_gz.run.runner import run

ROOT = Path(__file__).resolve().parents[1]


def own_duration(case: Case) -> float:
    from eels_gz import registry
    from eels_gz.yamlio import load

    return float((load(registry.scenario_path(case.scenario)) or {}).get("duration") or 10.0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", help="case names (scenario-contact; default: every case)")
    ap.add_argument("--duration", type=float, help="simulated s of each scenario's run (default: its own)")
    ap.add_argument("--max-duration", type=float, default=20.0, help="at most this many simulated s a case")
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "bench_gazebo.json")
    a = ap.parse_args()
    gz = find_gz_sim()
    if gz is None:
        sys.exit(f"bench/gazebo.py: no gz-sim: {looked_for()}")
    cases = [c for c in load_cases(ROOT / "test" / "gazebo" / "cases.yaml") if not a.only or c.name in a.only]
    rows = {}
    with tempfile.TemporaryDirectory(prefix="eels_gz_bench_gz_") as tmp:
        for case in cases:
            duration = float(round(min(a.duration or own_duration(case), a.max_duration)))
            case = Case(case.scenario, case.contact, duration, case.sets)
            folder = Path(tmp) / case.name
            t0 = time.perf_counter()
            host = run(case.config("embedded"), folder / "host")
            host_total = time.perf_counter() - t0
            t0 = time.perf_counter()
            gzs = run_in_gazebo(case.config("gazebo"), folder / "gz", time_systems=True)
            gz_total = time.perf_counter() - t0
            diff = agreement(folder / "host", folder / "gz")
            numbers = [d for d in diff.get("metrics", {}).values() if isinstance(d, float)]
            cost = gzs.get("python_systems", {})
            rows[case.name] = {
                "duration_s": duration,
                "status": {"host": host["status"], "gazebo": gzs["status"]},
                "real_time_factor": {"host": host["real_time_factor"], "gazebo": gzs["real_time_factor"]},
                "gazebo_over_host_speed": (gzs["real_time_factor"] / host["real_time_factor"]
                                           if host["real_time_factor"] and gzs["real_time_factor"] else None),
                "command_wall_s": {"host": host_total, "gazebo": gz_total},
                "python_systems_per_step_s": cost.get("per_step_s"),
                "python_systems_share": (cost["seconds"] / gzs["wall_time"]
                                         if cost.get("seconds") and gzs["wall_time"] else None),
                "python_systems": {k: {"per_step_s": (v["pre_update_s"] + v["update_s"] + v["post_update_s"])
                                       / max(1, v["steps"])} for k, v in cost.get("systems", {}).items()},
                "agreement": {"trajectory": diff["trajectory"], "largest_metric_difference":
                              max(numbers, default=0.0)},
            }
            r = rows[case.name]
            print(f"{case.name:24s} {duration:5.0f} s  RTF gz {r['real_time_factor']['gazebo'] or 0:6.2f}  "
                  f"host {r['real_time_factor']['host'] or 0:6.2f}  python/step "
                  f"{1e3 * (r['python_systems_per_step_s'] or 0):6.3f} ms", file=sys.stderr, flush=True)
    emit({"machine": {"platform": platform.platform(), "processor": platform.processor(), "cpus": os.cpu_count(),
                      "python": platform.python_version(), "load": os.getloadavg()},
          "gz_sim": {"version": gz.version, "found": gz.where}, "cases": rows}, a.out)


if __name__ == "__main__":
    main()
