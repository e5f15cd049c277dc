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


def _run_case(k: int, folder: str) -> dict:
    """One case's run into ``folder``; returns its summary's ``numba``."""
    from eels_gz import config
    from eels_gz.run.runner import run

    package_log = logging.getLogger("eels_gz")
    level = package_log.level
    package_log.setLevel(logging.ERROR)  # the runs' own "numba compiled" warnings: expected here
    try:
        cfg = config.resolve(overrides={**CASES[k], "duration": DURATION, "log": {"plot": False}})
        return run(cfg, Path(folder))["numba"]
    finally:
        package_log.setLevel(level)  # a caller's logging as it was


def warm() -> dict:
    """Run the cases, each in a process of its own (forked where the platform can), so that each
    kind's kernel record holds every kernel its run loads, not only those an earlier case had not
    loaded in the same process (KernelManifest); returns {"compiled": [kernel names],
    "compile_time": s, "wall_time": s}."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else methods[0])
    if context.get_start_method() == "fork":
        import eels_gz.run.runner  # noqa: F401  (imported once, for every case's process: no kernel loads on import)
    compiled, seconds, t0 = [], 0.0, time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="eels_gz_warm_") as tmp:
        for k in range(len(CASES)):
            with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:  # one process per case
                numba = pool.submit(_run_case, k, str(Path(tmp) / str(k))).result()
            compiled += numba["compiled"]
            seconds += numba["compile_time"]
    return {"compiled": compiled, "compile_time": seconds, "wall_time": time.perf_counter() - t0}


def main() -> int:
    result = warm()
    print(f"eels_gz: {len(result['compiled'])} numba kernel(s) compiled and cached in {result['compile_time']:.1f} s "
          f"({result['wall_time']:.1f} s in all); later runs load them from the cache")
    return 0


if __name__ == "__main__":
    sys.exit(main())
