"""`eels-gz run --host gazebo` writes the run folder `run` writes, whatever ends the run: summary.json
(status and exit code by run's rules), metrics.json, log.mcap read from gz-transport, trajectory.png,
and gz-sim's own server.log; a system gz-sim disabled is plugin_error (exit 3); SIGTERM ends the server
and leaves a readable folder (exit 143)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mcap.reader import make_reader

from eels_gz import config
from eels_gz.errors import GazeboRunFailed
from eels_gz.run.hosts import run

EELS_GZ = (sys.executable, "-m", "eels_gz.cli")


def topics(mcap: Path) -> dict[str, int]:
    with open(mcap, "rb") as f:
        summary = make_reader(f).get_summary()
    return {c.topic: summary.statistics.channel_message_counts.get(c.id, 0) for c in summary.channels.values()}


def test_a_run_in_gz_sim_writes_a_whole_run_folder(tmp_path):
    out = tmp_path / "hold"
    res = subprocess.run([*EELS_GZ, "run", "--host", "gazebo", "--scenario", "hold", "--duration", "2", "--out",
                          str(out), "--no-server"], capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    assert "host: gz-sim 8." in res.stdout
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "ok" and summary["host"]["name"] == "gazebo"
    assert summary["sim_time"] == pytest.approx(2.0, abs=0.01)
    for name in ("metrics.json", "log.mcap", "trajectory.png", "server.log", "export/world.sdf"):
        assert (out / name).is_file(), name
    assert json.loads((out / "metrics.json").read_text())["scenario"] == "hold"
    counts = topics(out / "log.mcap")
    # 100 Hz (ros.state_rate) for 2 s, and the world's statistics
    assert counts["/joint_states"] >= 190 and counts["/ground_truth/odom"] >= 190 and counts["/clock"] >= 5
    # the export it ran names the folder where it now is, not its staging folder
    assert ".partial" not in (out / "export" / "world.sdf").read_text()


BROKEN = '''
class Broken:
    def configure(self, entity, sdf, ecm, event_mgr):
        pass

    def pre_update(self, info, ecm):
        if info.sim_time.total_seconds() > 0.5:
            raise RuntimeError("the hold system failed on purpose")


def get_system():
    return Broken()
'''


def test_a_system_gz_sim_disabled_is_a_plugin_error(tmp_path, monkeypatch):
    """gz-sim logs a Python system's exception and stops calling it: the run says plugin_error."""
    import eels_gz.gazebo.run as gazebo_run

    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "hold.py").write_text(BROKEN)  # found before plugins_py/hold.py
    original = gazebo_run.python_path
    monkeypatch.setattr(gazebo_run, "python_path", lambda: [str(shadow), *original()])
    cfg = config.resolve(None, {"scenario": "hold", "duration": 1.0, "sim": {"host": "gazebo"}}, [])
    with pytest.raises(GazeboRunFailed) as err:
        run(cfg, tmp_path / "run")
    assert err.value.status == "plugin_error" and "failed on purpose" in str(err.value)
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["status"] == "plugin_error" and "failed on purpose" in summary["plugin_errors"][0]
    assert "failed on purpose" in summary["message"]


def test_sigterm_ends_the_server_and_leaves_a_readable_folder(tmp_path):
    out = tmp_path / "long"
    proc = subprocess.Popen([*EELS_GZ, "run", "--host", "gazebo", "--scenario", "hold", "--duration", "60",
                             "--out", str(out), "--no-server"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    stats = Path(str(out) + ".partial") / "topics.jsonl"
    end = time.monotonic() + 300
    while not (stats.exists() and '"started"' in stats.read_text()):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < end, "the world never started"
        time.sleep(0.1)
    time.sleep(1.0)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "interrupted" and "SIGTERM" in summary["message"]
    assert 0 < summary["sim_time"] < 60
    assert topics(out / "log.mcap")["/ground_truth/odom"] > 0
    world = str(out / "export" / "world.sdf")
    left = subprocess.run(["pgrep", "-f", "world.sdf"], capture_output=True, text=True).stdout.split()
    assert not [p for p in left if world in Path(f"/proc/{p}/cmdline").read_text(errors="replace").replace("\0", " ")
                or ".partial/export/world.sdf" in Path(f"/proc/{p}/cmdline").read_text(errors="replace")]
    assert os.path.isdir(out) and not Path(str(out) + ".partial").exists()


def test_timed_systems_report_what_the_python_systems_cost(tmp_path):
    """plugins_py/timed_system.py wraps every Python system of the export and adds up its callbacks."""
    from eels_gz.gazebo.run import run_in_gazebo

    cfg = config.resolve(None, {"scenario": "hold", "duration": 2.0, "sim": {"host": "gazebo"}}, [])
    summary = run_in_gazebo(cfg, tmp_path / "timed", time_systems=True)
    cost = summary["python_systems"]
    modules = {key.split()[0] for key in cost["systems"]}
    assert {"hold", "joint_control"} <= modules  # on the flat ice no joint is bent: no initial_joints
    assert cost["steps"] == pytest.approx(2000, abs=2) and 0 < cost["per_step_s"] < 0.1
    for totals in cost["systems"].values():
        assert totals["configure_s"] > 0
    # the timed run is the same run: its metrics are the untimed one's
    plain = run(config.resolve(None, {"scenario": "hold", "duration": 2.0, "sim": {"host": "gazebo"}}, []),
                tmp_path / "plain")
    assert plain["status"] == summary["status"] == "ok"
    timed_metrics = json.loads((tmp_path / "timed" / "metrics.json").read_text())
    plain_metrics = json.loads((tmp_path / "plain" / "metrics.json").read_text())
    assert timed_metrics == plain_metrics
