"""Compile the numba kernels of the default runs once and cache them (``python -m eels_gz.warm``).

``make venv`` runs this after the install, so that a user's first run loads
its kernels from the cache in milliseconds instead of compiling them inside
its timed loop (a few seconds; the run's summary.json says what it compiled,
``numba``). Each case is a run of a tenth of a second (long enough for every
default sensor to fire once) in a temporary folder: stock and screw contact on
the ice plane, the screw contact on a heightfield (the DEM world), and the
screws in granular ground (rft) on the soil bin.
Each run also records which kernels runs of its kind call (the user cache's
``kernels/``, :class:`eels_gz.run.numba_compile.KernelManifest`), so that a
user's first run of these kinds loads only those before its loop, and caches
the robots' xacro output (``xacro/``, :mod:`eels_gz.description.xacro_cache`).
Prints what was compiled.
"""

from __future__ import annotations

import logging
import sys
import tempfile
import time
from pathlib import Path

CASES = (
    {"robot": {"name": "eels_1_0_front_only"}, "world": "ice_plane", "contact": {"model": "stock"}},
    {"robot": {"name": "eels_1_0_alternating"}, "world": "ice_plane", "contact": {"model": "screw"},
     "scenario": {"name": "screw_spin"}},
    {"robot": {"name": "eels_1_0_front_only"}, "world": "mars_dem", "contact": {"model": "screw"}},
    {"robot": {"name": "eels_1_0_alternating"}, "world": "soil_bin", "contact": {"model": "rft"},
     "scenario": {"name": "screw_spin"}},
)
DURATION = 0.1  # s simulated: the lidar (10 Hz) fires once


def warm() -> dict:
    """Run the cases; returns {"compiled": [kernel names], "compile_time": s, "wall_time": s}."""
    from eels_gz import config
    from eels_gz.run.runner import run

    package_log = logging.getLogger("eels_gz")
    level = package_log.level
    package_log.setLevel(logging.ERROR)  # the runs' own "numba compiled" warnings: expected here
    compiled, seconds, t0 = [], 0.0, time.perf_counter()
    try:
        with tempfile.TemporaryDirectory(prefix="eels_gz_warm_") as tmp:
            for k, case in enumerate(CASES):
                cfg = config.resolve(overrides={**case, "duration": DURATION, "log": {"plot": False}})
                summary = run(cfg, Path(tmp) / str(k))
                compiled += summary["numba"]["compiled"]
                seconds += summary["numba"]["compile_time"]
    finally:
        package_log.setLevel(level)  # a caller's logging as it was (tests run this in their process)
    return {"compiled": compiled, "compile_time": seconds, "wall_time": time.perf_counter() - t0}


def main() -> int:
    result = warm()
    print(f"eels_gz: {len(result['compiled'])} numba kernel(s) compiled and cached in {result['compile_time']:.1f} s "
          f"({result['wall_time']:.1f} s in all); later runs load them from the cache")
    return 0


if __name__ == "__main__":
    sys.exit(main())
