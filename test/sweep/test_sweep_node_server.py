"""The node's warm process a campaign's samples are forked from (eels_gz.sweep.node_server),
without Ray: a sample's process is the server's child and its summary says so; how it ended
(killed, interrupted by the worker's SIGINT, its worker gone) reaches the row; a worker that finds
no server, or one on another node, runs the sample in a process of its own; a server that cannot
start leaves the workers to warm themselves, with a warning that names it; the server ends with
the process that started it and leaves no folder behind."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from eels_gz.server.common import alive, receive, send, wait_gone
from eels_gz.sweep import execute, node_server, parse_spec
from eels_gz.sweep.spec import check_spec

pytestmark = pytest.mark.skipif(not node_server.supported(), reason="fork, Unix sockets: Linux only")

BASE = {"robot": {"name": "eels_1_0_front_only", "n_modules": 2}, "duration": 0.02,
        "log": {"mcap": False, "plot": False}}
# a run long enough to be caught running: 40 s simulated of the 2-module robot, about 2.5 s of wall time
LONG = 40.0
END_WAIT_S = 60.0  # s for a process to end once told (a loaded 2-core machine)


def make_jobs(tmp_path, duration=BASE["duration"]):
    spec = parse_spec({"base": {**BASE, "duration": duration},
                       "dispersions": {"physics.max_velocity": {"grid": [100.0, 200.0]}}, "metrics": ["steps"]},
                      "node.yaml")
    check_spec(spec)
    return execute.jobs(spec, spec.expand(), tmp_path)


@pytest.fixture
def server(tmp_path):
    with node_server.node_server(make_jobs(tmp_path / "warm")[0], execute.run_job) as started:
        assert started is not None
        yield started


def with_server(job, server):
    import dataclasses

    return dataclasses.replace(job, node_server=server.where(None))  # no Ray here: no node to tell apart


def summary(job) -> dict:
    return json.loads((Path(job.folder) / "summary.json").read_text())


def running_pid(job) -> int:
    """The pid of the sample's run, once its folder's partial summary names it."""
    partial = Path(job.folder + ".partial") / "summary.json"
    end = time.monotonic() + END_WAIT_S
    while time.monotonic() < end:
        try:
            return int(json.loads(partial.read_text())["process"]["pid"])
        except (OSError, ValueError, KeyError):
            time.sleep(0.05)
    raise AssertionError(f"{partial} never named the run's process")


def test_a_sample_runs_in_a_child_of_the_node_server(server, tmp_path):
    jobs = [with_server(j, server) for j in make_jobs(tmp_path)]
    rows = [node_server.run_on_node_server(j, execute._read_row, execute._child_died) for j in jobs]
    assert [r[0]["status"] for r in rows] == ["ok", "ok"] and [r[0]["steps"] for r in rows] == [20, 20]
    started = [summary(j)["process"] for j in jobs]
    assert all(p["start"] == "forked" and p["parent"] == server.proc.pid and p["node_server"] for p in started)
    assert len({p["pid"] for p in started} | {server.proc.pid, os.getpid()}) == 4  # a process of its own each
    info = server.status()
    assert info["served"] == 2 and info["warm_run"] and info["ready"] >= info["started"]
    # a sample holds one CPU: one BLAS thread unless the user chose otherwise, as in a Ray worker
    environ = Path(f"/proc/{server.proc.pid}/environ").read_bytes().split(b"\0")
    assert f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', '1')}".encode() in environ


def test_a_sample_whose_process_is_killed_is_recorded_crashed(server, tmp_path):
    job = with_server(make_jobs(tmp_path, LONG)[0], server)
    killer = threading.Thread(target=lambda: os.kill(running_pid(job), signal.SIGKILL), daemon=True)
    killer.start()
    row, _ = node_server.run_on_node_server(job, execute._read_row, execute._child_died)
    killer.join()
    assert row["status"] == "crashed" and "SIGKILL" in row["message"] and row["sample"] == job.index
    assert json.loads((Path(job.folder) / "row.json").read_text()) == row  # --resume reruns it


def test_the_workers_sigint_interrupts_its_sample(server, tmp_path):
    """Ray cancels a running task with SIGINT in its worker: the worker passes it to the sample's
    process, whose run ends interrupted with its summary."""
    job = with_server(make_jobs(tmp_path, LONG)[1], server)

    def interrupt():
        running_pid(job)
        os.kill(os.getpid(), signal.SIGINT)  # this process is the worker here

    threading.Thread(target=interrupt, daemon=True).start()
    row, _ = node_server.run_on_node_server(job, execute._read_row, execute._child_died)
    assert row["status"] == "interrupted" and 0 < row["steps"] < LONG * 1000
    assert summary(job)["status"] == "interrupted"


def test_a_worker_gone_takes_its_samples_process_with_it(server, tmp_path):
    job = with_server(make_jobs(tmp_path, LONG)[0], server)
    sock = node_server._connect(server.where(None))  # once it has warmed and listens
    import base64
    import pickle

    send(sock, {"op": "sample", "job": base64.b64encode(pickle.dumps(job)).decode()})
    reply, _ = receive(sock)
    pid = int(reply["started"])
    assert running_pid(job) == pid
    sock.close()  # the worker killed by Ray
    assert wait_gone(pid, END_WAIT_S)
    assert summary(job)["status"] == "interrupted" and "SIGTERM" in summary(job)["message"]


def test_a_worker_without_a_server_on_its_node_forks_the_sample_itself(tmp_path):
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    job = make_jobs(tmp_path)[0]
    nowhere = {"socket": str(tmp_path / "none" / "samples.sock"), "pid": gone.pid, "node": None}
    other_node = {"socket": str(tmp_path / "none" / "samples.sock"), "pid": os.getpid(), "node": "another"}
    import dataclasses

    for where in (nowhere, other_node):
        assert node_server.run_on_node_server(dataclasses.replace(job, node_server=where), execute._read_row,
                                              execute._child_died) is None
    result = execute.sample_task(dataclasses.replace(job, node_server=nowhere))
    assert result["row"]["status"] == "ok" and not result["node_server"]
    assert summary(job)["process"]["parent"] == os.getpid()


def test_a_server_that_cannot_start_leaves_the_workers_to_warm_themselves(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(sys, "executable", "/bin/false")  # it exits at once
    job = make_jobs(tmp_path)[0]
    with caplog.at_level(logging.WARNING), node_server.node_server(job, execute.run_job) as broken:
        assert broken is not None and broken.proc.wait(timeout=END_WAIT_S) == 1
        import dataclasses

        assert node_server.run_on_node_server(dataclasses.replace(job, node_server=broken.where(None)),
                                              execute._read_row, execute._child_died) is None
        assert broken.status() is None
    assert "node server ended early (exit 1)" in caplog.text
    assert not broken.folder.exists()


def _listening_server():
    """A campaign's process (a driver that ends with ``os._exit`` when it reads a line) and its node server,
    once that listens: (driver, server pid, server folder)."""
    script = ("import sys, os\n"
              "from eels_gz.sweep import node_server\n"
              "s = node_server.NodeServer.start(None)\n"
              "print(s.proc.pid, s.folder, flush=True)\n"
              "sys.stdin.readline()\n"
              "os._exit(0)\n")
    driver = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    pid, folder = driver.stdout.readline().split()
    pid, folder = int(pid), Path(folder)
    end = time.monotonic() + END_WAIT_S
    while not (folder / node_server.SOCKET_NAME).exists():  # it warmed (no job: its kernels) and listens
        assert time.monotonic() < end and alive(pid), "the server never listened"
        time.sleep(0.05)
    return driver, pid, folder


def _end(driver) -> None:
    driver.stdin.write("\n")
    driver.stdin.flush()
    driver.wait(timeout=END_WAIT_S)


def test_the_server_ends_with_the_process_that_started_it(tmp_path):
    """The campaign's process killed outright: its server stops (PR_SET_PDEATHSIG) and removes its folder."""
    driver, pid, folder = _listening_server()
    _end(driver)
    assert wait_gone(pid, END_WAIT_S), "the server outlived the campaign's process"
    end = time.monotonic() + END_WAIT_S
    while folder.exists() and time.monotonic() < end:
        time.sleep(0.05)
    assert not folder.exists()


def test_more_stop_signals_do_not_interrupt_the_server_s_cleanup(tmp_path):
    """PR_SET_PDEATHSIG's signal can come more than once (kernel/exit.c, forget_original_parent, sends it for
    each thread of the orphan, at each reparenting): here a second SIGTERM reached a stopping server after its
    reparenting to PID 1, while it removed its folder, and left the folder behind (the test above failed 5 of
    60 times under load). Told to stop over and over while it removes a folder made slow to remove (20,000
    files), it still removes all of it."""
    driver, pid, folder = _listening_server()
    for k in range(20000):
        (folder / f"slow_{k}").touch()
    _end(driver)
    signals = 0
    end = time.monotonic() + END_WAIT_S
    while alive(pid) and time.monotonic() < end:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
            signals += 1
        time.sleep(0.002)
    assert wait_gone(pid, END_WAIT_S), "the server outlived the campaign's process"
    assert signals > 1, "the server was gone before a second signal: the folder was not slow enough to remove"
    assert not folder.exists(), f"{len(list(folder.iterdir()))} files left after {signals} SIGTERMs"
