"""Campaigns on a local Ray with 2 workers (one Ray session for the module: its start costs seconds):
a small sweep whose diverging samples are recorded and do not stop the others, its results table in
both formats and its plots; determinism (the same spec and seed give the same table); --resume runs
only the samples not done; a tiny version of a shipped spec; rover drives as samples; SIGINT
interrupts a campaign, which --resume finishes.

Runs: EELS 1.0 front-only cut to two modules, 0.03 s simulated; each sample is a fresh process."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import threading
import time

import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from eels_gz.cli import main
from eels_gz.errors import OutputError, RunInterrupted
from eels_gz.paths import asset
from eels_gz.sweep import load_spec, parse_spec, run_sweep
from eels_gz.sweep.spec import check_spec

ray = pytest.importorskip("ray")

BASE = {"robot": {"name": "eels_1_0_front_only", "n_modules": 2}, "scenario": "screw_spin", "duration": 0.03,
        "contact": {"model": "screw"}, "log": {"mcap": False, "plot": False}}
DIVERGES = 1e-3  # physics.max_velocity (rad/s, m/s): the screws' first steps pass it


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, object_store_memory=128 * 2**20,
             logging_level="warning")
    yield
    ray.shutdown()


def small(**parts):
    data = {"base": BASE, "samples": 2, "seed": 11,
            "dispersions": {"contact.mu": {"uniform": [0.1, 0.2]},
                            "physics.max_velocity": {"grid": [200.0, DIVERGES]}},
            "metrics": ["final_base_pose.position", "steps", "advance_m"], **parts}
    spec = parse_spec(data, "small.yaml")
    check_spec(spec)
    return spec


def node_server_alive(pid: int) -> bool:
    from eels_gz.server.common import alive

    return alive(pid)


def rows(folder):
    return pq.read_table(folder / "results.parquet").to_pylist()


def deterministic(table):
    return [{k: v for k, v in r.items() if k != "wall_time"} for r in table]


@pytest.fixture(scope="module")
def first(tmp_path_factory):
    out = tmp_path_factory.mktemp("sweep") / "first"
    seen = []
    state = run_sweep(small(), out, workers=2, progress=lambda done, total, statuses: seen.append((done, total)))
    return out, state, seen


def test_a_small_sweep_records_every_sample_and_isolates_the_failures(first):
    out, state, seen = first
    table = rows(out)
    assert [r["sample"] for r in table] == [0, 1, 2, 3] and state["status"] == "ok"
    assert seen[-1] == (4, 4)
    for r in table:
        assert r["seed"] > 0 and 0.1 <= r["contact.mu"] <= 0.2
        summary = json.loads((out / r["run"] / "summary.json").read_text())
        # the drawn value is the one the sample's run used, and its seed the sensors'
        assert summary["settings"]["resolved"]["contact_params"]["mu"] == r["contact.mu"]
        assert summary["settings"]["config"]["sensors"]["seed"] == r["seed"]
        if r["physics.max_velocity"] == DIVERGES:
            assert r["status"] == "diverged" and "velocity" in r["message"]
        else:  # the diverging samples did not stop these
            assert r["status"] == "ok" and r["message"] is None and r["steps"] == 30
            assert r["advance_m"] is not None  # from metrics.json
            assert abs(r["final_base_pose.position.2"]) < 0.5
    assert state["statuses"] == {"ok": 2, "diverged": 2}
    # every sample's process was forked from the node's warm process, not from a worker that warmed itself
    node = state["overhead"]["node_server"]
    assert node["samples"] == 4 and state["overhead"]["warm_up_s"] == [] and node["warm_up_s"] > 0
    assert {json.loads((out / r["run"] / "summary.json").read_text())["process"]["parent"] for r in table} == {
        node["pid"]}
    assert not node_server_alive(node["pid"])  # it ended with the campaign
    log = (out / "node_server.log").read_text().splitlines()  # and said so in the campaign's folder
    assert log[0].startswith(f"== node server started by pid {os.getpid()}") and log[-1] == \
        "== node server ended (exit code 0)"
    csv = pacsv.read_csv(out / "results.csv").to_pylist()
    assert [c for c in csv[0]] == [c for c in table[0]]
    assert [r["status"] for r in csv] == [r["status"] for r in table]
    assert [r["contact.mu"] for r in csv] == pytest.approx([r["contact.mu"] for r in table], rel=1e-12)
    plots = {p.name for p in (out / "plots").glob("*.png")}
    assert {"failure_rate.png", "hist_final_base_pose.position.0.png",
            "scatter_final_base_pose.position.0__contact.mu.png",
            "scatter_advance_m__physics.max_velocity.png"} <= plots
    md = (out / "summary.md").read_text()
    assert "| ok | 2 | 50.0 % |" in md and "| diverged | 2 | 50.0 % |" in md and "**diverged**" in md
    assert "4 of the samples were forked from this node's warm process" in md
    assert json.loads((out / "sweep.json").read_text())["status"] == "ok"


def test_the_same_spec_and_seed_give_the_same_table(first, tmp_path):
    out, _, _ = first
    run_sweep(small(), tmp_path / "again", workers=2)
    assert deterministic(rows(tmp_path / "again")) == deterministic(rows(out))


def test_resume_runs_only_the_samples_not_done(first, tmp_path):
    import shutil

    out = tmp_path / "resumed"
    shutil.copytree(first[0], out)
    shutil.rmtree(out / "samples" / "00001")  # never ran
    row = json.loads((out / "samples" / "00002" / "row.json").read_text())
    (out / "samples" / "00002" / "row.json").write_text(json.dumps({**row, "status": "interrupted"}))
    kept = {n: (out / "samples" / n / "row.json").stat().st_mtime_ns for n in ("00000", "00003")}
    with pytest.raises(OutputError, match="already holds a sweep .* pass --resume to finish it"):
        run_sweep(small(), out, workers=2)
    with pytest.raises(OutputError, match="--resume: .* holds a sweep of another spec"):
        run_sweep(small(seed=12), out, workers=2, resume=True)
    state = run_sweep(small(), out, workers=2, resume=True)
    assert state["resumed"] == 2 and state["samples_done"] == 4
    assert {n: (out / "samples" / n / "row.json").stat().st_mtime_ns for n in kept} == kept
    assert deterministic(rows(out)) == deterministic(rows(first[0]))


def test_a_tiny_version_of_a_shipped_spec_runs(tmp_path):
    spec = load_spec(asset("config", "sweeps", "screw_contact.yaml"))
    spec = dataclasses.replace(spec, samples=2, base={**spec.base, "robot": {"name": "eels_1_0_alternating",
                                                                             "n_modules": 1},
                                                      "duration": 0.05, "log": {"mcap": False, "plot": False}})
    check_spec(spec)
    state = run_sweep(spec, tmp_path / "screw_contact", workers=2)
    table = rows(tmp_path / "screw_contact")
    assert state["statuses"] == {"ok": 2}
    assert all(r["advance_speed_m_s"] is not None and 0.1 <= r["contact.mu"] <= 0.2 for r in table)


def test_rover_drives_as_samples(tmp_path):
    spec = parse_spec({"command": "rover drive", "base": {"path": "straight", "scale": 0.03},
                       "dispersions": {"speed": {"grid": [1.2, 2.4]}},
                       "metrics": ["end_error_relative", "distance", "slip.median"]}, "drives.yaml")
    check_spec(spec)
    run_sweep(spec, tmp_path / "drives", workers=2)
    table = rows(tmp_path / "drives")
    for r in table:
        record = json.loads((tmp_path / "drives" / r["run"] / f"archimede_straight_{r['speed']:g}_ice_plane.json")
                            .read_text())
        assert r["status"] == "ok" and r["distance"] == record["distance"]
        assert r["end_error_relative"] == record["end_error_relative"]


def test_the_cli_runs_a_sweep_and_refuses_a_bad_spec(tmp_path):
    path = tmp_path / "spec.yaml"
    path.write_text(json.dumps({**small().raw, "samples": 1}))
    res = CliRunner().invoke(main, ["sweep", str(path), "--out", str(tmp_path / "cli"), "--workers", "2"])
    assert res.exit_code == 0, res.output
    assert "2 of 2 samples" in res.output and "ok 1, diverged 1" in res.output
    assert "sweep: 100 % (2/2), 1 not ok (diverged 1)" in res.output  # the progress line (not a terminal)
    path.write_text(json.dumps({**small().raw, "dispersions": {"contact.mu": {"grid": []}}}))
    res = CliRunner().invoke(main, ["sweep", str(path), "--out", str(tmp_path / "bad")])
    assert res.exit_code == 2 and "dispersions.contact.mu: empty grid" in res.output
    assert not (tmp_path / "bad").exists()


def test_sigint_interrupts_a_campaign_and_resume_finishes_it(tmp_path):
    """A signal cancels the samples not started and interrupts the running ones (their runs end with
    status interrupted); the results are written for the samples done; --resume runs the rest."""
    # runs of 40 s simulated (about 2.5 s of wall time each on a quiet machine, the 2-module robot running at
    # some 17x real time), so that the signal, sent 0.3 s after a run began, finds them running
    spec = small(base={**BASE, "duration": 40.0}, dispersions={"contact.mu": {"grid": [0.1, 0.12, 0.14, 0.16]}},
                 metrics=["steps"])
    out = tmp_path / "stopped"

    def send_when_running():
        end = time.monotonic() + 120
        while time.monotonic() < end:
            if any(out.glob("samples/*.partial/summary.json")):
                time.sleep(0.3)
                os.kill(os.getpid(), signal.SIGINT)
                return
            time.sleep(0.05)

    watcher = threading.Thread(target=send_when_running, daemon=True)
    watcher.start()
    with pytest.raises(RunInterrupted) as err:
        run_sweep(spec, out, workers=2)
    watcher.join()
    assert err.value.exit_code == 130 and "--resume finishes it" in str(err.value)
    state = json.loads((out / "sweep.json").read_text())
    assert state["status"] == "interrupted" and state["samples_done"] < 4
    done = rows(out)
    stopped = [r for r in done if r["status"] == "interrupted"]
    # a sample that ended before the signal reached it is done; none ran on after it
    assert stopped and all(r["status"] in ("interrupted", "ok") for r in done), [r["status"] for r in done]
    for r in stopped:  # the interrupted runs wrote their summary, as eels-gz run does on a signal
        assert json.loads((out / r["run"] / "summary.json").read_text())["status"] == "interrupted"
        assert 0 < r["steps"] < 40000
    state = run_sweep(spec, out, workers=2, resume=True)
    assert state["status"] == "ok" and state["statuses"] == {"ok": 4} and state["resumed"] == len(done) - len(stopped)
    assert [r["steps"] for r in rows(out)] == [40000] * 4
