"""Output folders (issue 17 §2): a folder holding a run is refused unless --overwrite, which
leaves nothing of the old run; an interrupted rerun leaves only its own files; a folder holding
something else is never touched; bad input found while building leaves the old run as it was.
(A second run into a folder in use fails at once: test_signals.py, while a run is going.)"""

from __future__ import annotations

import signal
from pathlib import Path

from faults_cli import SMALL, SignalWhen, cli, started, summary

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
