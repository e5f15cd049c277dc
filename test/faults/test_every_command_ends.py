"""Every command ends as ``run`` does on SIGINT and SIGTERM, and never hangs deaf to them (issue 45,
class 6): a status and a message, the exit code 128 + N, nothing half-written left behind. (calibrate
simulate naming its partial CSV: test_signals.py.)"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml
from faults_cli import SignalWhen, cli, spawn

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="POSIX signals")


def sweep_spec(tmp_path: Path, samples: int = 2) -> Path:
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump({"base": {"robot": {"name": "eels_1_0_front_only", "n_modules": 2},
                                             "duration": 0.02, "log": {"mcap": False, "plot": False},
                                             "contact": {"model": "screw"}},
                                    "samples": samples, "seed": 1,
                                    "dispersions": {"contact.mu": {"uniform": [0.1, 0.2]}},
                                    "metrics": ["real_time_factor"]}))
    return spec


def test_a_sweep_to_an_unreachable_cluster_neither_hangs_nor_ignores_sigterm(tmp_path):
    # 192.0.2.1 is TEST-NET-1 (RFC 5737): routed nowhere, a connection to it gets no answer
    proc = spawn("sweep", sweep_spec(tmp_path), "--out", tmp_path / "s", "--address", "192.0.2.1:6379")
    try:
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)  # Ray's own wait for a head is minutes
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode in (2, 143), err
    assert "Traceback" not in err and ("192.0.2.1:6379" in err or "SIGTERM" in err), err
    if (tmp_path / "s" / "sweep.json").exists():  # stopped while Ray started: it says so
        state = json.loads((tmp_path / "s" / "sweep.json").read_text())
        assert state["status"] == "interrupted" and state["message"], state


def test_a_signal_while_a_sweep_writes_its_results_is_said_in_sweep_json(tmp_path, monkeypatch):
    import os

    from eels_gz.sweep import report

    real = report.write_results

    def write_results(*args, **kwargs):  # the last sample is done: the campaign writes its table and plots
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.1)
        return real(*args, **kwargs)

    monkeypatch.setattr(report, "write_results", write_results)
    out = tmp_path / "s"
    res = cli("sweep", sweep_spec(tmp_path), "--out", out, "--workers", "1")
    state = json.loads((out / "sweep.json").read_text())
    assert state["status"] == "interrupted" and "SIGTERM" in (state.get("message") or ""), state
    assert state["samples_done"] == 2 and res.exit_code == 143, res.output
    assert "Traceback" not in res.output


def test_sweep_json_says_what_a_killed_campaign_left(tmp_path, monkeypatch):
    """While it runs (and so after a SIGKILL), sweep.json is 'running' with a message and its process."""
    from eels_gz.sweep import execute

    seen = {}
    real = execute.SweepFolder.write_state

    def write_state(self, state):
        seen.setdefault("first", json.loads(json.dumps(state, default=str)))
        return real(self, state)

    monkeypatch.setattr(execute.SweepFolder, "write_state", write_state)
    res = cli("sweep", sweep_spec(tmp_path, 1), "--out", tmp_path / "s", "--workers", "1")
    assert res.exit_code == 0, res.output
    first = seen["first"]
    assert first["status"] == "running" and "killed" in first["message"] and first["process"]["pid"], first


@pytest.fixture()
def big_dem(tmp_path) -> Path:
    """A DEM that takes `world dem` a few seconds: time for a signal while its terrain is written."""
    x = np.linspace(0, 40 * np.pi, 1500)
    heights = np.sin(x)[:, None] * np.cos(x)[None, :] * 3.0
    path = tmp_path / "big.npy"
    np.save(path, heights)
    return path


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_world_dem_stopped_by_a_signal_leaves_nothing_and_says_so(tmp_path, big_dem, signum):
    out = tmp_path / "w"

    def writing() -> bool:
        return any((out / "models").glob(".*.partial*")) if (out / "models").is_dir() else False

    with SignalWhen(writing, signum, delay=0.0, timeout=300) as sig:
        res = cli("world", "dem", big_dem, "--spacing", "0.5", "0.5", "--out", out)
    if not sig.sent:
        pytest.skip("world dem finished before its staging folder was seen")
    assert res.exit_code == 128 + signum, res.output
    assert signal.Signals(signum).name in res.output and "no terrain was written" in res.output, res.output
    left = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*"))
    assert left == ["big.npy"], left  # no hidden .partial, no model, no world, no empty folder
