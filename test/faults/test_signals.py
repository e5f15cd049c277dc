"""Interruption (issue 17 §1): SIGINT and SIGTERM finish the step, close log.mcap with the
summary section the standard reader uses, write summary.json with status ``interrupted`` and
the time reached, and exit 130 or 143; SIGKILL leaves DIR.partial whose log recovers up to its
last complete chunk. The same for compare, rover drive, rover campaign and calibrate simulate."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest
from faults_cli import SMALL, SignalWhen, cli, spawn, started, stepping, summary, wait_for
from mcap.reader import make_reader

LOG_RATE = 100.0  # Hz, config/run_defaults.yaml log.rate


def read_log(path: Path) -> tuple[int, dict[str, list[int]]]:
    """(message count of the log's summary section, log times by topic) with the standard reader."""
    with open(path, "rb") as f:
        reader = make_reader(f)
        stats = reader.get_summary().statistics
        times: dict[str, list[int]] = {}
        for _, channel, message in reader.iter_messages():
            times.setdefault(channel.topic, []).append(message.log_time)
    return stats.message_count, times


def no_leftovers(out: Path) -> None:
    assert not Path(str(out) + ".partial").exists()
    assert not (out.parent / f".{out.name}.lock").exists()


@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signal_mid_run_finishes_the_step_and_says_interrupted(tmp_path, signum, code):
    out = tmp_path / "run"
    proc = spawn("run", *SMALL, "--duration", "60", "--out", out)
    try:
        wait_for(started(out), 90, "the run to start")
        # while it runs, a second run into the same folder fails at once and names the first
        t0 = time.monotonic()
        second = cli("run", *SMALL, "--duration", "0.01", "--out", out)
        assert second.exit_code == 2 and f"in use by the run of pid {proc.pid}" in second.output
        assert time.monotonic() - t0 < 5.0  # refused before any model is built
        wait_for(stepping(out), 90, "the run to step")  # mid-run: sim_time > 0 below
        proc.send_signal(signum)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == code, stderr
    assert "Traceback" not in stderr and f"interrupted by {signal.Signals(signum).name}" in stderr
    s = summary(out)
    assert s["status"] == "interrupted" and 0.0 < s["sim_time"] < 60.0
    assert s["message"].startswith(f"interrupted by {signal.Signals(signum).name} at t = ")
    count, times = read_log(out / "log.mcap")  # the summary section is there: the standard reader reads it
    assert count == sum(len(v) for v in times.values())
    # the last sample is the state reached when the step finished
    assert times["/clock"][-1] == pytest.approx(s["sim_time"] * 1e9, abs=1e9 / LOG_RATE)
    no_leftovers(out)


def test_sigkill_leaves_a_partial_folder_whose_log_recovers(tmp_path):
    out = tmp_path / "run"
    partial = Path(str(out) + ".partial")
    proc = spawn("run", *SMALL, "--duration", "60", "--out", out)
    try:
        # a chunk is closed every 1 s of simulated time: wait for a few
        wait_for(lambda: (partial / "log.mcap").exists() and (partial / "log.mcap").stat().st_size > 60_000,
                 90, "the log's first chunks")
        proc.kill()
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert not out.exists()
    placeholder = json.loads((partial / "summary.json").read_text())
    assert placeholder["status"] == "incomplete" and "--duration 60" in placeholder["command"]
    res = cli("recover", partial / "log.mcap")
    assert res.exit_code == 0, res.output
    assert "last complete chunk" in res.output
    count, times = read_log(partial / "log.recovered.mcap")
    assert count > 100 and count == sum(len(v) for v in times.values())
    clock = times["/clock"]
    assert clock == sorted(clock) and clock[0] == 0 and clock[-1] >= 1e9  # complete chunks: >= 1 s simulated
    # the next run refuses to start while the killed run's files are there, then discards them on request
    res = cli("run", *SMALL, "--duration", "0.01", "--out", out)
    assert res.exit_code == 2 and "killed before it finished" in res.output and str(partial) in res.output
    res = cli("run", *SMALL, "--duration", "0.01", "--out", out, "--overwrite")
    assert res.exit_code == 0, res.output
    assert summary(out)["status"] == "ok"
    no_leftovers(out)


def test_compare_interrupted_writes_its_status(tmp_path):
    out = tmp_path / "cmp"
    with SignalWhen(started(out), signal.SIGTERM) as sig:
        res = cli("compare", *SMALL, "--duration", "30", "--out", out)
    assert sig.sent and res.exit_code == 143, res.output
    result = json.loads((out / "compare.json").read_text())
    assert result["status"] == "interrupted" and "stock contact run" in result["message"]
    assert summary(out / "stock")["status"] == "interrupted"
    assert not (out / "screw").exists()  # the second model's run never started
    read_log(out / "stock" / "log.mcap")
    no_leftovers(out)


def test_rover_drive_interrupted_writes_its_record(tmp_path, monkeypatch):
    from eels_gz.run import runner

    driving = []
    original = runner._RunLoop.run

    def drive(self, *a, **k):  # the drive's run (scenario rover_drive), its model built
        driving.append(True)
        return original(self, *a, **k)

    monkeypatch.setattr(runner._RunLoop, "run", drive)
    with SignalWhen(lambda: bool(driving), signal.SIGINT, delay=0.5) as sig:
        res = cli("rover", "drive", "--path", "straight", "--speed", "1.2", "--out", tmp_path)
    assert sig.sent and res.exit_code == 130, res.output
    record = json.loads((tmp_path / "archimede_straight_1.2_ice_plane.json").read_text())
    assert record["status"] == "interrupted" and record["signal"] == signal.SIGINT
    assert 0 < record["sim_time"] < 20.0 and record["t"][-1] == record["sim_time"]


def test_rover_campaign_interrupted_keeps_the_runs_done(tmp_path):
    """The campaign is a sweep on Ray (eels_gz/sweep/rover_campaign.py): a signal cancels the drives not
    started and interrupts the running ones; campaign.json and campaign.md say so with the drives done,
    and the folder (written in place, so that --resume can finish it) is unlocked."""
    out = tmp_path / "campaign"
    with SignalWhen(lambda: any(out.glob("samples/*/row.json")), signal.SIGTERM, delay=0.5) as sig:
        res = cli("rover", "campaign", "--scale", "0.05", "--workers", "2", "--out", out)
    assert sig.sent and res.exit_code == 143, res.output
    result = json.loads((out / "campaign.json").read_text())
    assert result["status"] == "interrupted" and result["runs_planned"] == 54
    done = result["flat"] + result["slope_runs"]
    assert 1 <= result["runs_done"] == len(done) < 54
    assert all(r["status"] in ("ok", "interrupted") for r in done)
    assert all(Path(r["file"]).is_file() and Path(r["file"]).parent == out / "runs" for r in done)
    assert "**interrupted**" in (out / "campaign.md").read_text()
    assert json.loads((out / "sweep.json").read_text())["status"] == "interrupted"
    no_leftovers(out)


def test_calibrate_simulate_interrupted_writes_the_drags_done_apart(tmp_path, monkeypatch):
    from eels_gz.cli import calibrate_sim

    calls = []
    original = calibrate_sim._drag_once

    def drag_once(*a, **k):
        calls.append(a)
        return original(*a, **k)

    monkeypatch.setattr(calibrate_sim, "_drag_once", drag_once)
    out = tmp_path / "drags.csv"
    with SignalWhen(lambda: len(calls) >= 3, signal.SIGINT, delay=0.0) as sig:
        res = cli("calibrate", "simulate", "--loads", "2,5,10", "--out", out)
    assert sig.sent and res.exit_code == 130, res.output
    assert not out.exists()  # the CSV asked for is never a partial one
    rows = (tmp_path / "drags.partial.csv").read_text().splitlines()
    done = len(calls) - 1  # every drag started but the one interrupted
    assert rows[0].startswith("direction") and len(rows) - 1 == done >= 2
    assert f"{done} of 6 drags done" in res.output
    # issue 45: it said "nothing was written" (and "before the run began") with the partial CSV there
    assert "nothing was written" not in res.output and "before the run began" not in res.output
    assert str(tmp_path / "drags.partial.csv") in res.output


def test_a_signal_a_library_wraps_is_still_an_interruption():
    """xacro (like the mesh loaders) turns any exception raised while it runs into its own error; a
    signal that arrives while a model is built must still end the command as an interruption."""
    import os
    import threading

    from eels_gz import registry
    from eels_gz.description.assemble import robot_description
    from eels_gz.errors import RunInterrupted
    from eels_gz.interrupt import interrupts

    with interrupts() as stop, pytest.raises(RunInterrupted) as caught:
        timer = threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGTERM))
        timer.start()
        with stop.immediately():
            end = time.monotonic() + 2.0
            while time.monotonic() < end:  # ~0.1 s a model: the signal lands inside xacro (or, swallowed
                robot_description(registry.robot("archimede"), gazebo=True)  # by the GC, ends the block)
    timer.join()
    assert caught.value.exit_code == 143 and not caught.value.started
    assert "before the run began" in str(caught.value)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_an_interruption_python_swallows_still_ends_the_block():
    """A signal handled while the garbage collector runs a weakref callback (or a __del__) raises there,
    and Python reports that exception as unraisable and goes on; the block still ends interrupted."""
    import weakref

    from eels_gz.errors import RunInterrupted
    from eels_gz.interrupt import interrupts

    class Thing:
        pass

    with interrupts() as stop, pytest.raises(RunInterrupted) as caught:
        with stop.immediately():
            thing = Thing()
            ref = weakref.ref(thing, lambda _: stop._handle(signal.SIGTERM, None))  # the handler, as the GC runs
            del thing  # the callback's RunInterrupted is swallowed here
            assert ref() is None and stop.signum == signal.SIGTERM
    assert caught.value.exit_code == 143 and not caught.value.started
