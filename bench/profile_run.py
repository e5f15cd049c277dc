"""Profile one `eels-gz run` as a user runs it (sensors and log at their defaults) and print where the
time goes: the top functions by own time, and the run's step cost against DART's own step.

    python bench/profile_run.py                      # the screw-contact run of issue 19
    python bench/profile_run.py --contact stock --robot eels_1_0_front_only --scenario hold
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import tempfile
from pathlib import Path

from eels_gz import config
from eels_gz.run.runner import run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--robot", default="eels_1_0_alternating")
    ap.add_argument("--world", default="ice_plane")
    ap.add_argument("--contact", default="screw")
    ap.add_argument("--scenario", default="screw_spin")
    ap.add_argument("--duration", type=float, default=3.0)
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--no-profile", action="store_true", help="only time the run")
    a = ap.parse_args()
    cfg = config.resolve(overrides={"robot": {"name": a.robot}, "world": a.world, "contact": {"model": a.contact},
                                    "scenario": {"name": a.scenario}, "duration": a.duration,
                                    "log": {"plot": False}})
    with tempfile.TemporaryDirectory() as tmp:
        prof = None if a.no_profile else cProfile.Profile()
        if prof:
            prof.enable()
        summary = run(cfg, Path(tmp) / "run")
        if prof:
            prof.disable()
    print(json.dumps({k: summary[k] for k in ("status", "sim_time", "wall_time", "real_time_factor",
                                              "physics_wall_time", "step_cost_ratio")}, indent=2))
    if prof:
        pstats.Stats(prof).sort_stats("tottime").print_stats(a.top)


if __name__ == "__main__":
    main()
