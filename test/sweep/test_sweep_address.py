"""``--address``: a campaign joins a Ray cluster started apart (``ray start --head``), runs its
samples there (each forked from a warm worker of that cluster) and leaves the cluster running; the
cluster is stopped here by its own ``ray start --block`` process, not by ``ray stop`` (which would
stop every Ray on the machine)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from eels_gz.sweep import parse_spec
from eels_gz.sweep.spec import check_spec

ray = pytest.importorskip("ray")

BASE = {"robot": {"name": "eels_1_0_front_only", "n_modules": 2}, "duration": 0.03,
        "log": {"mcap": False, "plot": False}}
START_TIMEOUT = 120.0  # s for `ray start` to bring its head node up (a loaded 2-core machine)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def cluster():
    """A head node of 2 CPUs on a free port, in its own temporary folder (short: Ray's socket paths
    must stay under the 107 bytes of a Unix socket's name); yields its address."""
    port = _free_port()
    folder = tempfile.mkdtemp(prefix="eels_ray_", dir="/tmp")
    ray_bin = Path(sys.executable).with_name("ray")
    env = dict(os.environ, RAY_AUTH_MODE="disabled", RAY_USAGE_STATS_ENABLED="0")
    proc = subprocess.Popen([str(ray_bin), "start", "--head", "--block", "--port", str(port), "--num-cpus", "2",
                             "--temp-dir", folder, "--include-dashboard", "false", "--disable-usage-stats"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        end = time.monotonic() + START_TIMEOUT
        while time.monotonic() < end:
            assert proc.poll() is None, "ray start --head exited"
            if list(Path(folder).glob("session_*/sockets/raylet")):
                break
            time.sleep(0.5)
        else:
            pytest.fail("the Ray head did not come up")
        time.sleep(2.0)  # the raylet registers with the GCS
        yield f"127.0.0.1:{port}"
    finally:
        proc.send_signal(signal.SIGTERM)  # `ray start --block` drains and stops what it started
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(folder, ignore_errors=True)


def _sweep_cli(spec_path: Path, out: Path, address: str) -> dict:
    """``eels-gz sweep SPEC --address ADDR`` as a user runs it, in its own process: Ray keeps process-wide
    state (its auth mode, its token) that a campaign run in the test process would leave behind for the
    next test's local cluster."""
    env = dict(os.environ, RAY_AUTH_MODE="disabled", RAY_USAGE_STATS_ENABLED="0")  # the cluster's mode
    done = subprocess.run([sys.executable, "-m", "eels_gz.cli", "sweep", str(spec_path), "--out", str(out),
                           "--address", address, "--json"], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads((out / "sweep.json").read_text())


def test_a_campaign_runs_on_a_running_cluster_and_leaves_it_running(cluster, tmp_path):
    spec = {"base": BASE, "dispersions": {"physics.max_velocity": {"grid": [100.0, 200.0]}}, "metrics": ["steps"]}
    check_spec(parse_spec(spec, "address.yaml"))
    spec_path = tmp_path / "address.yaml"
    spec_path.write_text(json.dumps(spec))  # JSON is YAML
    state = _sweep_cli(spec_path, tmp_path / "on_cluster", cluster)
    assert state["status"] == "ok" and state["statuses"] == {"ok": 2}
    assert state["ray"]["address"] == cluster and state["ray"]["cpus"] == 2
    rows = [json.loads((tmp_path / "on_cluster" / "samples" / f"0000{i}" / "row.json").read_text()) for i in (0, 1)]
    assert [r["steps"] for r in rows] == [30, 30]
    # the cluster's node is this campaign's: its samples were forked from the campaign's warm process
    assert state["overhead"]["node_server"]["samples"] == 2 and state["overhead"]["warm_up_s"] == []
    assert "Per-sample overhead" in (tmp_path / "on_cluster" / "summary.md").read_text()
    again = _sweep_cli(spec_path, tmp_path / "again", cluster)  # the cluster outlived the first campaign
    assert again["statuses"] == {"ok": 2}
