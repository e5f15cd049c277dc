"""Output folders (issue 17 §2): a folder holding a run is refused unless --overwrite, which
leaves nothing of the old run; an interrupted rerun leaves only its own files; a folder holding
something else is never touched; bad input found while building leaves the old run as it was.
(A second run into a folder in use fails at once: test_signals.py, while a run is going.)"""

from __future__ import annotations

import json
import shutil
import signal
from pathlib import Path

import pytest
import yaml
from faults_cli import SMALL, SignalWhen, cli, spawn, started, summary, wait_for

SHORT = ("--duration", "0.02")


def files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def test_rerun_is_refused_and_overwrite_leaves_nothing_of_the_old_run(tmp_path):
    out = tmp_path / "run"
    # the first run's scenario parameters give it a scenario.yaml the second run does not write
    res = cli("run", *SMALL, *SHORT, "--scenario", "screw_spin", "--set", "scenario.screw_rate=1.0", "--out", out)
    assert res.exit_code == 0, res.output
    before = files(out)
    assert "scenario.yaml" in before
    res = cli("run", *SMALL, *SHORT, "--out", out)
    assert res.exit_code == 2 and "already holds a run; pass --overwrite" in res.output
    assert files(out) == before  # untouched
    res = cli("run", *SMALL, *SHORT, "--out", out, "--overwrite")
    assert res.exit_code == 0, res.output
    after = files(out)
    assert "scenario.yaml" not in after and after["summary.json"] != before["summary.json"]
    assert summary(out)["settings"]["config"]["scenario"] == {"name": None}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]  # no DIR.partial, lock or old copy left


def test_interrupted_rerun_leaves_only_its_own_files(tmp_path):
    out = tmp_path / "run"
    res = cli("run", *SMALL, *SHORT, "--scenario", "screw_spin", "--set", "scenario.screw_rate=1.0", "--out", out)
    assert res.exit_code == 0, res.output
    with SignalWhen(started(out), signal.SIGINT, delay=0.3) as sig:
        res = cli("run", *SMALL, "--duration", "30", "--out", out, "--overwrite")
    assert sig.sent and res.exit_code == 130, res.output
    s = summary(out)
    assert s["status"] == "interrupted" and s["settings"]["config"]["duration"] == 30.0
    assert "scenario.yaml" not in files(out)  # nothing of the finished run beside the new log


def test_a_folder_that_holds_no_run_is_never_touched(tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("my notes")
    for extra in ((), ("--overwrite",)):
        res = cli("run", *SMALL, *SHORT, "--out", out, *extra)
        assert res.exit_code == 2 and "holds no eels-gz run" in res.output
    assert files(out) == {"notes.txt": b"my notes"}


def test_bad_input_found_while_building_keeps_the_old_run(tmp_path):
    out = tmp_path / "run"
    assert cli("run", *SMALL, *SHORT, "--out", out).exit_code == 0
    before = files(out)
    res = cli("run", *SMALL, *SHORT, "--world", "nowhere.sdf", "--out", out, "--overwrite")
    assert res.exit_code == 2 and "world file 'nowhere.sdf' does not exist" in res.output
    assert files(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


# --- issue 31: --overwrite replaces a command's own output and nothing else -----------------------------------


def tree(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (relative path -> bytes)."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def folder_of_runs_and_notes(tmp_path: Path) -> Path:
    """The trial's repro: R holds a run in R/a, the user's notes and a folder of their own."""
    root = tmp_path / "R"
    assert cli("run", *SMALL, *SHORT, "--out", root / "a").exit_code == 0
    (root / "notes.txt").write_text("x\n")
    (root / "thesis").mkdir()
    (root / "thesis" / "data.csv").write_text("d\n")
    return root


def test_overwrite_never_takes_a_folder_of_runs(tmp_path):
    root = folder_of_runs_and_notes(tmp_path)
    before = tree(root)
    res = cli("run", *SMALL, *SHORT, "--out", root, "--overwrite")
    assert res.exit_code == 2 and "holds no eels-gz run" in res.output, res.output
    assert tree(root) == before


def test_overwrite_refuses_a_run_folder_holding_files_the_run_did_not_write(tmp_path):
    out = tmp_path / "run"
    assert cli("run", *SMALL, *SHORT, "--out", out).exit_code == 0
    (out / "notes.txt").write_text("mine")
    (out / "extra").mkdir()
    (out / "extra" / "data.csv").write_text("1,2\n")
    before = tree(out)
    res = cli("run", *SMALL, *SHORT, "--out", out, "--overwrite")
    assert res.exit_code == 2 and "did not write (extra/, notes.txt)" in res.output, res.output
    assert tree(out) == before
    (out / "notes.txt").unlink()
    shutil.rmtree(out / "extra")
    assert cli("run", *SMALL, *SHORT, "--out", out, "--overwrite").exit_code == 0  # its own files only: replaced
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


def test_overwrite_refuses_the_output_of_another_command(tmp_path):
    out = tmp_path / "run"
    assert cli("run", *SMALL, *SHORT, "--out", out).exit_code == 0
    before = tree(out)
    res = cli("compare", *SMALL, *SHORT, "--out", out, "--overwrite")
    assert res.exit_code == 2 and "holds the output of a run, not of a compare" in res.output, res.output
    assert tree(out) == before


def sweep_spec(tmp_path: Path) -> Path:
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump({"base": {"robot": {"name": "eels_1_0_front_only", "n_modules": 2},
                                             "duration": 0.02, "log": {"mcap": False}, "contact": {"model": "screw"}},
                                    "samples": 1, "seed": 1, "dispersions": {"contact.mu": {"uniform": [0.1, 0.2]}},
                                    "metrics": ["real_time_factor"]}))
    return spec


@pytest.mark.parametrize("command", ["sweep", "rover campaign"])
def test_campaigns_never_take_a_folder_of_runs(tmp_path, command):
    root = folder_of_runs_and_notes(tmp_path)
    before = tree(root)
    args = ["sweep", sweep_spec(tmp_path)] if command == "sweep" else ["rover", "campaign", "--scale", "0.01"]
    res = cli(*args, "--out", root, "--overwrite")
    assert res.exit_code == 2 and "holds no eels-gz run" in res.output, res.output
    assert tree(root) == before


def test_a_sweep_folder_with_a_users_file_is_not_overwritten(tmp_path):
    out = tmp_path / "sweep"
    out.mkdir()  # what a sweep leaves, plus the user's notes
    (out / ".eels-gz").write_text(json.dumps({"what": "sweep"}))
    (out / "sweep.json").write_text(json.dumps({"what": "sweep", "status": "ok"}))
    (out / "results.csv").write_text("sample\n0\n")
    (out / "notes.txt").write_text("mine")
    before = tree(out)
    res = cli("sweep", sweep_spec(tmp_path), "--out", out, "--overwrite")
    assert res.exit_code == 2 and "did not write (notes.txt)" in res.output, res.output
    assert tree(out) == before


def test_world_refuses_an_existing_name_and_overwrite_replaces_only_a_model(tmp_path):
    args = ("world", "primitive", "slope", "--angle", "5", "--length", "4", "--name", "site", "--out", tmp_path)
    assert cli(*args).exit_code == 0
    model = tmp_path / "models" / "site"
    before = tree(model)
    res = cli(*args[:4], "10", *args[5:])
    assert res.exit_code == 2 and "a terrain named 'site' is already there" in res.output, res.output
    assert tree(model) == before
    res = cli(*args[:4], "10", *args[5:], "--overwrite")
    assert res.exit_code == 0, res.output
    assert tree(model)["terrain.json"] != before["terrain.json"]
    assert sorted(p.name for p in (tmp_path / "models").iterdir()) == ["site"]
    assert sorted(p.name for p in (tmp_path / "worlds").iterdir()) == ["site.sdf"]
    (model / "notes.txt").write_text("mine")
    after = tree(model)
    res = cli(*args, "--overwrite")
    assert res.exit_code == 2 and "holds files that eels-gz world did not write (notes.txt)" in res.output
    assert tree(model) == after


def test_sweep_overwrite_replaces_its_own_campaign_and_leaves_nothing_aside(tmp_path):
    out = tmp_path / "sweep"
    spec = sweep_spec(tmp_path)
    res = cli("sweep", spec, "--out", out, "--workers", "1")
    assert res.exit_code == 0, res.output
    first = json.loads((out / "sweep.json").read_text())["started"]
    res = cli("sweep", spec, "--out", out, "--workers", "1")
    assert res.exit_code == 2 and "--overwrite to replace it" in res.output
    res = cli("sweep", spec, "--out", out, "--workers", "1", "--overwrite")
    assert res.exit_code == 0, res.output
    assert json.loads((out / "sweep.json").read_text())["status"] == "ok"
    assert (out / "samples" / "00000" / "summary.json").is_file()
    assert json.loads((out / "sweep.json").read_text())["started"] >= first
    assert sorted(p.name for p in tmp_path.iterdir()) == ["spec.yaml", "sweep"]  # the old one gone, no lock


def test_the_old_run_stays_whole_until_the_new_one_is_in_place(tmp_path):
    out = tmp_path / "run"
    assert cli("run", *SMALL, *SHORT, "--out", out).exit_code == 0
    before = tree(out)
    proc = spawn("run", *SMALL, "--duration", "30", "--out", out, "--overwrite")
    try:
        wait_for(started(out), 90, "the new run to begin")
        assert tree(out) == before  # while the new run goes, the old one is untouched where it was
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 143
    finally:
        if proc.poll() is None:
            proc.kill()
    assert summary(out)["status"] == "interrupted"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]  # the old run, moved aside, is gone
