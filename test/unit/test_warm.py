"""python -m eels_gz.warm (run by make venv): the default runs' kernels compiled and cached on disk, so that
a new process's run loads them and compiles nothing, and each case's kind recorded in full, so that a new
process's run of that kind loads every kernel it calls before its loop."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from eels_gz import warm


def test_after_warming_a_new_process_compiles_nothing(tmp_path: Path):
    env = {**os.environ, "EELS_GZ_CACHE_DIR": str(tmp_path / "cache")}  # the kernel records start empty
    proc = subprocess.run([sys.executable, "-m", "eels_gz.warm"], capture_output=True, text=True, timeout=600,
                          env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "numba kernel(s) compiled and cached" in proc.stdout
    assert len(list((tmp_path / "cache" / "kernels").iterdir())) == len(warm.CASES)  # a record per kind
    out = tmp_path / "run"
    case = warm.CASES[1]  # the second case: in one process it would have found the first one's kernels loaded
    proc = subprocess.run([sys.executable, "-m", "eels_gz.cli", "run", "--robot", case["robot"]["name"],
                           "--world", case["world"], "--contact", case["contact"]["model"],
                           "--scenario", case["scenario"]["name"], "--duration", "0.2",
                           "--no-server", "--out", str(out)], capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    numba = json.loads((out / "summary.json").read_text())["numba"]
    assert numba["compiled"] == [] and numba["compile_time"] == 0, numba
    assert numba["cache_loaded"] > 0 and numba["cache_loaded_in_run"] == 0, numba
