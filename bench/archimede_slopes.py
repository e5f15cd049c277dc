"""The Archimede slope campaign in full (config/sweeps/archimede_slopes.yaml; issue 44): its run on this
machine, and the figures docs/soil.md quotes.

Runs ``eels-gz sweep`` on the spec (``--workers``, 2 by default) into ``--dir``, or re-reads a folder
that holds one (``--reread``), and writes JSON (``--out FILE``; default: print): the campaign's wall
time, the machine and its load average (it is shared), the sample statuses, and from the results rows
(:mod:`eels_gz.sweep.slopes`) every setup's median slip and quartiles at each slope (over the draws of
the unpublished values, the drive modes and both wheel rates), Fig. 12's medians per rate, the 2x2
cross, the grouser-off medians and issue 44's bounds, met or not. ``tools/soil_campaign_figure.py``
draws docs/soil.md's figures from that JSON.

    python bench/archimede_slopes.py --out results/bench/archimede_slopes.json [--dir DIR] [--reread]
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

from rtf import emit

from eels_gz.paths import asset
from eels_gz.sweep.slopes import checks, summarise

SPEC = asset("config", "sweeps", "archimede_slopes.yaml")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", help="JSON file (default: print)")
    parser.add_argument("--dir", default=None, help="the campaign's folder (default: beside --out, 'campaign')")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--reread", action="store_true", help="read the campaign already in --dir, run nothing")
    args = parser.parse_args()
    folder = Path(args.dir) if args.dir else (Path(args.out).parent / "campaign" if args.out else Path("campaign"))
    wall = None
    load_before = os.getloadavg()
    if not args.reread:
        t0 = time.perf_counter()
        cmd = [sys.executable, "-m", "eels_gz.cli", "sweep", str(SPEC), "--out", str(folder), "--workers",
               str(args.workers), "--overwrite"]
        subprocess.run(cmd, check=True)
        wall = time.perf_counter() - t0
    import pyarrow.parquet as pq

    rows = pq.read_table(folder / "results.parquet").to_pylist()
    summary = summarise(rows)
    emit({"spec": str(SPEC.relative_to(SPEC.parents[2])), "folder": str(folder), "samples": len(rows),
          "wall_time_s": wall, "workers": None if args.reread else args.workers,
          "load_average_1_5_15": {"before": list(load_before), "after": list(os.getloadavg())},
          "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "python": platform.python_version(),
                      "date": time.strftime("%Y-%m-%dT%H:%M:%S%z")},
          **summary, "checks": checks(summary)}, args.out)


if __name__ == "__main__":
    main()
