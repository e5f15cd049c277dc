"""python -m eels_gz.warm (run by make venv): the default runs' kernels compiled and cached on disk, so that
a new process's run loads them and compiles nothing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from eels_gz import warm


def test_after_warming_a_new_process_compiles_nothing(tmp_path: Path):
    result = warm.warm()
    assert result["wall_time"] > 0 and result["compile_time"] >= 0
    out = tmp_path / "run"
    proc = subprocess.run([sys.executable, "-m", "eels_gz.cli", "run", "--robot", "eels_1_0_alternating",
                           "--world", "ice_plane", "--contact", "screw", "--scenario", "screw_spin",
                           "--duration", "0.2", "--out", str(out)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    numba = json.loads((out / "summary.json").read_text())["numba"]
    assert numba["compiled"] == [] and numba["compile_time"] == 0, numba
