"""A run's trajectory plot drawn by the helper interpreter (eels_gz.plot_helper): the same PNG, byte
for byte, as eels_gz.plots.trajectory draws in the process; a file error reaches the run as the same
OSError; a lost helper leaves the figure to the run's process; an `eels-gz run` with its helper
never imports matplotlib itself (its import runs beside the run's start, bench/startup.py), and
without it draws the same plot itself; the default uses a helper only when a core is idle.
Each check runs in a fresh interpreter: this one may have imported matplotlib already."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from eels_gz import plot_helper, plots

ROOT = Path(__file__).resolve().parents[2]
T = np.linspace(0.0, 1.0, 51)
XYZ = np.c_[0.02 * T, 0.01 * T**2, 0.09 + 0.001 * np.sin(6 * T)]
YAW = 0.3 * T
TITLE = "eels_1_0_front_only on ice_plane"


def fresh(code: str, cwd: Path, **env: str) -> dict:
    """Run ``code`` in a fresh interpreter on this tree; the JSON it prints last."""
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=cwd, capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "HOME": str(Path.home()), **env},
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


HELPER_CHECKS = f"""
    import errno, json, sys
    import numpy as np
    from eels_gz import plot_helper
    t = np.linspace(0.0, 1.0, 51); xyz = np.c_[0.02 * t, 0.01 * t**2, 0.09 + 0.001 * np.sin(6 * t)]
    args = (t, xyz, 0.3 * t, {TITLE!r})
    plot_helper.start()
    out = {{"helper": plot_helper._ours() is not None}}
    import os
    os.mkdir("later"); os.chdir("later")  # a relative path is this process's, whatever the helper's folder
    plot_helper.trajectory("helper.png", *args)
    os.chdir("..")
    out["mpl_after_draw"] = "matplotlib" in sys.modules
    try:
        plot_helper.trajectory("no/such/folder/x.png", *args)
    except OSError as exc:
        out["error"] = [type(exc).__name__, exc.errno, exc.filename]
    import pickle
    real = pickle.load
    def interrupted(stream):  # Ctrl-C while the run waits for the figure
        pickle.load = real
        raise KeyboardInterrupt
    pickle.load = interrupted
    try:
        plot_helper.trajectory("interrupted.png", *args)
    except KeyboardInterrupt:
        out["closed_when_interrupted"] = plot_helper._ours() is None and plot_helper._helper.proc.poll() is not None
    plot_helper._helper.proc.kill(); plot_helper._helper.proc.wait()
    plot_helper.trajectory("fallback.png", *args)
    out["mpl_after_fallback"] = "matplotlib" in sys.modules
    print(json.dumps(out))
"""


def test_the_helper_draws_the_same_png_reports_file_errors_and_falls_back(tmp_path):
    got = fresh(HELPER_CHECKS, tmp_path)
    assert got["helper"] and not got["mpl_after_draw"]  # drawn by the helper: no matplotlib here
    plots.trajectory(tmp_path / "here.png", T, XYZ, YAW, TITLE)
    here = (tmp_path / "here.png").read_bytes()
    assert (tmp_path / "later" / "helper.png").read_bytes() == here
    try:
        plots.trajectory(tmp_path / "no/such/folder/x.png", T, XYZ, YAW, TITLE)
    except OSError as exc:
        expected = [type(exc).__name__, exc.errno, "no/such/folder/x.png"]
    assert got["error"] == expected
    # interrupted while waiting for its reply: the helper is ended, never asked again (its late reply
    # would be taken for the next figure's)
    assert got["closed_when_interrupted"]
    # the helper gone: drawn in the run's process, the same figure
    assert got["mpl_after_fallback"] and (tmp_path / "fallback.png").read_bytes() == here


CLI_RUN = """
    import json, sys
    from eels_gz.cli import main
    main(["run", "--robot", "eels_1_0_front_only", "--n-modules", "2", "--duration", "0.05",
          "--out", "run"], standalone_mode=False)
    print(json.dumps({"mpl": "matplotlib" in sys.modules}))
"""


@pytest.mark.parametrize("mode", ["on", "off"])
def test_a_cli_run_plots_in_its_helper_or_by_itself_as_told(tmp_path, mode):
    """EELS_GZ_PLOT_HELPER=on: the run never imports matplotlib; off: it draws the plot itself (as on
    a machine with no idle core, the default's choice there). The same summary and plot either way."""
    got = fresh(CLI_RUN, tmp_path, EELS_GZ_PLOT_HELPER=mode)
    assert got["mpl"] == (mode == "off")
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["status"] == "ok" and Path(summary["files"]["plot"]).name == "trajectory.png"
    assert (tmp_path / "run" / "trajectory.png").stat().st_size > 10_000


@pytest.mark.parametrize(("load", "cores", "wanted"), [(0.2, 2, True), (1.0, 2, True), (1.3, 2, False),
                                                       (0.0, 1, False), (2.9, 4, True), (3.1, 4, False)])
def test_auto_uses_a_helper_only_with_a_core_idle(monkeypatch, load, cores, wanted):
    monkeypatch.delenv("EELS_GZ_PLOT_HELPER", raising=False)
    monkeypatch.setattr(plot_helper.os, "getloadavg", lambda: (load, load, load))
    monkeypatch.setattr(plot_helper.os, "cpu_count", lambda: cores)
    assert plot_helper.wanted() is wanted
