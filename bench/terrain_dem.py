"""Full-resolution DEM benchmark (issue 22): a 4097 x 4097 DEM at 1 m posts (a 4 km site) to a world at
the defaults, and a rover resting on it.

The raster samples the analytic terrain of test/worlds/dem_truth.py (kilometre relief and metre-scale
undulations; bilinear sampling error under 2.8 mm at 1 m posts). ``eels-gz world dem`` runs in a child
process: wall time and the child's peak resident memory (``os.wait4``), the model folder's size, the
heightfield's shape (the full raster is kept) and the engine region. Then Archimede is placed (ROAMS
placement on the heightfield) at 20 random spots in the engine region and let rest for 0.3 s in the
host; each wheel's gap to the *true* surface is reported.

Targets (shared 2-core machine): world in <= 60 s and <= 4 GiB; the rover within 1 cm of the true surface
at the 20 spots. Writes JSON to ``--out`` if given, and prints it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "test" / "worlds"))
sys.path.insert(0, str(HERE))

from dem_truth import raster, rest_on_dem  # noqa: E402
from terrain_scans import finish, folder_mb, run  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--posts", type=int, default=4097)
    ap.add_argument("--spacing", type=float, default=1.0)
    ap.add_argument("--spots", type=int, default=20)
    ap.add_argument("--robot", default="archimede")
    ap.add_argument("--out")
    args = ap.parse_args()
    result = {"machine": {"cpus": os.cpu_count(), "load_avg_at_start": os.getloadavg()}, "posts": args.posts,
              "spacing_m": args.spacing}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        t0 = time.perf_counter()
        np.save(work / "site.npy", raster(args.posts, args.spacing))
        result["raster_seconds"] = round(time.perf_counter() - t0, 1)
        res = run([sys.executable, "-m", "eels_gz.cli", "world", "dem", str(work / "site.npy"), "--spacing",
                   str(args.spacing), str(args.spacing), "--reference", "0", "0", "0", "--out", str(work / "out")])
        result["world"] = res
        model = work / "out" / "models" / "site"
        if res["returncode"] == 0:
            result["model_mb"] = folder_mb(model)
            result["terrain"] = json.loads((model / "terrain.json").read_text())["parameters"]
            os.environ["GZ_SIM_RESOURCE_PATH"] = str(work / "out" / "models")
            p = result["terrain"]
            lo = np.array(p["engine_origin_xy"]) + 5.0
            hi = lo + (np.array(p["engine_shape"][::-1]) - 1) * np.array(p["engine_spacing_xy"]) - 10.0
            spots = np.random.default_rng(0).uniform(lo, hi, (args.spots, 2))
            t0 = time.perf_counter()
            gaps, kin = rest_on_dem(work / "out" / "worlds" / "site.sdf", args.robot, spots)
            result["rest"] = {"seconds": round(time.perf_counter() - t0, 1), "robot": args.robot,
                              "spots": spots.round(3).tolist(), "wheels": kin.names,
                              "gap_to_true_surface_m": gaps.round(5).tolist(),
                              "max_abs_gap_m": float(np.abs(gaps).max())}
    finish(result, args.out)


if __name__ == "__main__":
    main()
