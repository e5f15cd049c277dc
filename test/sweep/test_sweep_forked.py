"""A sample's own process, forked from the warm worker (eels_gz.sweep.forked), without Ray: a
sample whose process dies is recorded ``crashed`` with how it died; what a sample does to its
process's state does not reach the next; the warm-up happens once per worker."""

from __future__ import annotations

import json
import os
import signal

import pytest

from eels_gz.sweep import execute, forked, parse_spec
from eels_gz.sweep.spec import check_spec

pytestmark = pytest.mark.skipif(not forked.fork_supported(), reason="fork and prctl: Linux only")

BASE = {"robot": {"name": "eels_1_0_front_only", "n_modules": 2}, "duration": 0.02,
        "log": {"mcap": False, "plot": False}}
LEAK: list = []  # state a sample's run changes in its own process


def two_jobs(tmp_path):
    spec = parse_spec({"base": BASE, "dispersions": {"physics.max_velocity": {"grid": [100.0, 200.0]}},
                       "metrics": ["steps"]}, "forked.yaml")
    check_spec(spec)
    return execute.jobs(spec, spec.expand(), tmp_path)


def test_a_sample_whose_process_dies_is_recorded_crashed(tmp_path, monkeypatch):
    def dies(job):
        os.kill(os.getpid(), signal.SIGKILL)

    monkeypatch.setattr(execute, "run_job", dies)
    job = two_jobs(tmp_path)[0]
    result = execute.sample_task(job)
    row = result["row"]
    assert row["status"] == "crashed" and "SIGKILL" in row["message"] and row["sample"] == job.index
    assert json.loads((tmp_path / "samples" / "00000" / "row.json").read_text()) == row  # --resume reruns it
    assert result["sample_s"] > 0


def test_what_a_sample_does_to_its_process_does_not_reach_the_next(tmp_path, monkeypatch):
    def leaks(job):
        LEAK.append(job.index)
        row = execute.make_row(job, "ok", None, 0.0, [{"steps": len(LEAK)}])
        execute.write_row(execute.Path(job.folder), row)
        return row

    monkeypatch.setattr(execute, "run_job", leaks)
    rows = [execute.sample_task(job)["row"] for job in two_jobs(tmp_path)]
    assert [r["steps"] for r in rows] == [1, 1] and LEAK == []  # each started from the same parent


def test_a_real_run_forked_gives_the_row_of_the_same_run_in_this_process(tmp_path):
    job = two_jobs(tmp_path)[1]
    forked_row = execute.sample_task(job)["row"]
    started = lambda: json.loads((execute.Path(job.folder) / "summary.json").read_text())["process"]  # noqa: E731
    assert started()["start"] == "forked" and started()["parent"] == os.getpid()  # the summary says so
    assert forked.warm()["run"] and execute.sample_task(job)["warm_s"] == 0.0  # warmed once, with a warm-up run
    here = execute.run_job(job)
    assert started() == {"start": "fresh", "pid": os.getpid()}  # this process: not forked for the run
    strip = lambda r: {k: v for k, v in r.items() if k != "wall_time"}  # noqa: E731
    assert forked_row["status"] == "ok" and forked_row["steps"] == 20
    assert strip(forked_row) == strip(here)


def test_the_worker_sees_a_sample_end_when_it_ends_not_at_its_next_poll(tmp_path, monkeypatch):
    """A sample that ends at once is back in the worker well within one poll interval (the worker
    waits on the child's end, not in sleeps of POLL_S): the interval made 1 s here, so that a
    fork's own cost on a busy machine cannot decide; median over a few forks."""
    monkeypatch.setattr(forked, "warm", lambda *a, **k: {})
    monkeypatch.setattr(forked, "POLL_S", 1.0)
    job = two_jobs(tmp_path)[0]

    def quick(j):
        row = execute.make_row(j, "ok", None, 0.0, [{"steps": 1}])
        execute.write_row(execute.Path(j.folder), row)

    seconds = sorted(forked.run_forked(job, quick, execute._read_row, execute._child_died)[1] for _ in range(5))
    assert seconds[2] < 0.5 * forked.POLL_S, seconds
