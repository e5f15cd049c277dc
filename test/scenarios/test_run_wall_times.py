"""A run's wall time in three parts (summary.json): ``setup_wall_time`` (run() called -> first step),
``wall_time`` (the loop) and ``finish_wall_time`` (last step -> summary, plots included), which add
up to no more than the run's whole; and the kernels a run loads before its loop: those runs of its
kind called (eels_gz.run.numba_compile.KernelManifest). No timing is asserted beyond what a known
added delay must show (speed is measured in bench/startup.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from eels_gz import config
from eels_gz.run import numba_compile, runner

CFG = {"robot": {"name": "eels_1_0_front_only", "n_modules": 2}, "duration": 0.05}


def test_the_three_parts_add_up_to_the_run_and_each_holds_its_own_work(tmp_path, monkeypatch):
    """The setup holds everything from run()'s call to the model built, the finish the trajectory
    plot, and together with the loop they are no longer than the run (timestamps taken around
    them here; nothing is assumed about how long any of it takes)."""
    import eels_gz.plots

    prepare, plot, spans = runner.prepare, eels_gz.plots.trajectory, {}

    def timed_prepare(*a, **kw):
        out = prepare(*a, **kw)
        spans["prepared"] = time.perf_counter()
        return out

    def timed_plot(*a, **kw):
        t = time.perf_counter()
        plot(*a, **kw)
        spans["plot"] = time.perf_counter() - t

    monkeypatch.setattr(runner, "prepare", timed_prepare)
    monkeypatch.setattr(eels_gz.plots, "trajectory", timed_plot)
    t0 = time.perf_counter()
    summary = runner.run(config.resolve(overrides=CFG), tmp_path)
    whole = time.perf_counter() - t0
    setup, loop, finish = summary["setup_wall_time"], summary["wall_time"], summary["finish_wall_time"]
    assert setup >= spans["prepared"] - t0  # the model's build is in the setup
    assert finish >= spans["plot"] > 0  # the plot is in the finish
    assert 0 < loop and setup + loop + finish <= whole  # the parts do not overlap
    assert json.loads((tmp_path / "summary.json").read_text())["finish_wall_time"] == finish
    assert (tmp_path / "trajectory.png").is_file()


FRESH_RUN = """
import sys
from eels_gz import config
from eels_gz.run import runner
runner.run(config.resolve(overrides={cfg!r}), sys.argv[1])
"""


def test_a_run_loads_before_its_loop_only_the_kernels_runs_of_its_kind_called(tmp_path, monkeypatch):
    monkeypatch.setenv("EELS_GZ_CACHE_DIR", str(tmp_path / "cache"))
    cfg = {**CFG, "log": {"plot": False}}
    # the first run of its kind, in a fresh process (this one has run kernels before: those are not its record)
    subprocess.run([sys.executable, "-c", FRESH_RUN.format(cfg=cfg), str(tmp_path / "first")], check=True,
                   cwd=tmp_path, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    (record,) = (tmp_path / "cache" / "kernels").iterdir()
    called = {name: set(sigs) for name, sigs in json.loads(record.read_text())["kernels"].items()}
    assert "eels_gz.dart.step_kernels:base_odometry" in called  # the recorder's kernel, called every sample
    every = {numba_compile.kernel_name(d) for d in numba_compile._dispatchers("eels_gz")}
    assert set(called) < every  # not every kernel of the imported modules
    assert all(len(sigs) == 1 for sigs in called.values())  # one compilation each, not every cached one
    loads = []
    load = numba_compile.load_cached_kernels
    monkeypatch.setattr(runner, "load_cached_kernels", lambda **kw: (loads.append(kw["only"]), load(**kw))[1])
    runner.run(config.resolve(overrides=cfg), tmp_path / "second")
    assert loads == [called]
    runner.run(config.resolve(overrides={**cfg, "sensors": {"enabled": False}}), tmp_path / "other")
    assert loads[1] == {}  # another kind (no sensors): its own record, none yet
    monkeypatch.setenv("EELS_GZ_CACHE_DIR", "off")
    runner.run(config.resolve(overrides=cfg), tmp_path / "third")
    assert loads[2] is None  # no cache: every kernel, as before
