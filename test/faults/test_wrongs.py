"""The trial's smaller wrongs (issue 31): a DEM written then refused, recover of a file that is not
an MCAP or onto a full disk, --json silent on failure statuses, an interrupted compare's schema,
and view of a run killed before it finished."""

from __future__ import annotations

import json
import os
import shutil
import signal

import numpy as np
import pytest
from faults_cli import SMALL, SignalWhen, cli, started, summary
from test_filesystem import namespaces_work, shell

from eels_gz.cli.compare import MODELS


def test_world_dem_refuses_the_dem_run_would_refuse(tmp_path):
    heights = np.zeros((16, 16))
    heights[3, 3], heights[8, 8] = 1e9, -1e9  # nodata written as +-1e9 m
    np.save(tmp_path / "huge.npy", heights)
    res = cli("world", "dem", tmp_path / "huge.npy", "--spacing", "1", "1", "--out", tmp_path / "w")
    assert res.exit_code == 2, res.output
    assert "huge.npy: 2 post(s) stand more than 1000 m from every neighbour" in res.output \
        and "untagged nodata value" in res.output
    assert "Traceback" not in res.output
    assert not any((tmp_path / "w").rglob("*.*"))  # no model, no world: nothing `run` would refuse later


def test_recover_refuses_a_file_that_is_not_an_mcap(tmp_path):
    bogus = tmp_path / "log.mcap"
    bogus.write_text("these are my notes, not a log\n")
    res = cli("recover", bogus)
    assert res.exit_code == 2, res.output
    assert f"'{bogus}' is not an MCAP log" in res.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["log.mcap"]  # no empty .recovered.mcap


def test_recover_on_a_full_disk_says_it_cannot_write(tmp_path):
    if not namespaces_work():
        pytest.skip("unshare -rm (user and mount namespaces) is not available here")
    run = tmp_path / "run"
    assert cli("run", *SMALL, "--duration", "2", "--out", run).exit_code == 0
    log = run / "log.mcap"
    assert log.stat().st_size > 400_000  # more than the disk below holds, past the 64 KiB checked first
    disk = tmp_path / "disk"
    disk.mkdir()
    script = (f"mount -t tmpfs -o size=256k tmpfs {disk} || exit 9; "
              f'$EELS_GZ recover {log} -o {disk}/recovered.mcap; echo "rc=$?"; ls -A {disk}')
    res = shell(script, namespace=True)
    if "rc=" not in res.stdout:
        pytest.skip(f"cannot mount a tmpfs in a user namespace here: {res.stderr.strip()[-200:]}")
    assert res.stdout.split() == ["rc=2"], res.stdout + res.stderr  # and nothing left on the disk
    assert f"cannot write the recovered log '{disk}/recovered.mcap': no space left on device" in res.stderr
    assert "cannot read" not in res.stderr and "Traceback" not in res.stderr


@pytest.mark.parametrize("args, status", [
    (["--dt", "0.4", "--duration", "1"], "fell_through_terrain"),
    (["--duration", "0.2", "--set", "physics.max_velocity=1e-9"], "diverged"),
])
def test_json_is_printed_for_every_status(tmp_path, args, status):
    out = tmp_path / "r"
    res = cli("run", *SMALL, *args, "--out", out, "--json")
    assert res.exit_code == 3, res.output
    printed = json.loads(res.stdout)
    assert printed["status"] == status and printed == summary(out)


def test_json_is_not_an_old_runs_summary_when_the_input_is_bad(tmp_path):
    out = tmp_path / "r"
    assert cli("run", *SMALL, "--duration", "0.02", "--out", out).exit_code == 0
    res = cli("run", *SMALL, "--duration", "0.02", "--world", "nowhere.sdf", "--out", out, "--overwrite", "--json")
    assert res.exit_code == 2 and res.stdout == ""


def test_an_interrupted_compare_keeps_its_schema(tmp_path):
    out = tmp_path / "cmp"
    with SignalWhen(started(out), signal.SIGTERM, delay=0.5) as sig:
        res = cli("compare", *SMALL, "--duration", "30", "--out", out, "--json")
    assert sig.sent and res.exit_code == 143, res.output
    result = json.loads((out / "compare.json").read_text())
    assert json.loads(res.stdout) == result  # --json prints it whatever the status
    assert {"robot", "world", "scenario", "status", "duration", "dt", "tail_link", "models", "difference",
            "files"} <= set(result)
    assert result["status"] == "interrupted" and set(result["models"]) == set(MODELS)
    stock, screw = result["models"]["stock"], result["models"]["screw"]
    run = summary(out / "stock")
    assert stock["status"] == "interrupted" and stock["sim_time"] == run["sim_time"] > 0
    assert stock["final_pose"]["x"] == pytest.approx(run["final_base_pose"]["position"][0], abs=1e-9)
    assert stock["samples"] > 0 and stock["path_length"] >= 0
    assert screw["status"] == "not_run" and screw["final_pose"] is None
    assert result["duration"] == 30.0 and result["difference"] is None
    assert result["files"]["stock_run"] == str(out / "stock") and "screw_run" not in result["files"]


def test_view_of_a_run_killed_before_it_finished_points_to_recover(tmp_path):
    run = tmp_path / "run"
    assert cli("run", *SMALL, "--duration", "2", "--out", run).exit_code == 0
    partial = tmp_path / "run.partial"  # what SIGKILL leaves (test_signals.py makes one for real)
    shutil.copytree(run, partial)
    log = partial / "log.mcap"
    with open(log, "r+b") as f:  # cut in the middle of the chunks: no summary section, a torn last chunk
        f.truncate(os.path.getsize(log) // 2)
    res = cli("view", partial)
    assert res.exit_code == 2, res.output
    assert f"`eels-gz recover {log}` writes that part to {partial / 'log.recovered.mcap'}" in res.output
    assert "DIR.partial" in res.output and "Traceback" not in res.output
    assert cli("recover", log).exit_code == 0
    res = cli("view", partial)
    assert res.exit_code == 0 and (partial / "replay.html").is_file(), res.output
