"""Unwritable outputs (issue 17 §2): a read-only folder, a path under a file, a full disk and an
unwritable --save-config are found before any model is built (exit 2 and a message, not a
traceback); a disk that fills up during the run ends it with status output_error (exit 4), the
summary still written and the log recoverable.

The tests run as root in CI, where mode 555 does not stop writes: the read-only folder is tried
as the unprivileged user ``nobody`` (setpriv) and as a read-only bind mount, and the full disk is
a small tmpfs, both in a user and mount namespace of their own (``unshare -rm``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from faults_cli import EELS_GZ, SMALL, cli

NOBODY = 65534


def shell(script: str, *, namespace: bool = False, timeout: float = 180.0):
    """Run ``script`` with sh, in a new user and mount namespace with ``namespace`` (unshare -rm);
    ``$EELS_GZ`` in it runs this checkout's CLI."""
    env = dict(os.environ, PYTHONUNBUFFERED="1", EELS_GZ=" ".join(EELS_GZ))
    cmd = ["sh", "-c", script]
    if namespace:
        cmd = ["unshare", "-rm", *cmd]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)


def as_nobody(*argv: str, timeout: float = 180.0):
    """Run ``argv`` as the unprivileged user nobody (setpriv), numba's cache in a folder it may write."""
    cache = Path("/tmp/eels_gz_numba_nobody")
    cache.mkdir(exist_ok=True)
    cache.chmod(0o777)
    env = dict(os.environ, PYTHONUNBUFFERED="1", NUMBA_CACHE_DIR=str(cache), HOME="/tmp")
    cmd = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *argv]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout, cwd="/tmp")


def _can(cmd: list[str]) -> bool:
    try:
        return subprocess.run(cmd, capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def nobody_can_run() -> str | None:
    """Why the package cannot run as nobody here, or None."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        return "needs root and setpriv to run as the unprivileged user nobody"
    probe = as_nobody(sys.executable, "-c", "import eels_gz.cli")
    if probe.returncode:
        return f"user nobody cannot import eels_gz from this checkout: {probe.stderr.strip()[-200:]}"
    return None


def namespaces_work() -> bool:
    return shutil.which("unshare") is not None and _can(["unshare", "-rm", "true"])


def test_read_only_folder_as_an_unprivileged_user(tmp_path):
    why = nobody_can_run()
    if why:
        pytest.skip(why)
    base = Path(tempfile.mkdtemp(prefix="eels_gz_ro_", dir="/tmp"))  # pytest's tmp_path is root's only
    base.chmod(0o777)
    ro, own = base / "ro", base / "own"  # a read-only parent, and a read-only folder in a writable one
    for folder in (ro, own):
        folder.mkdir()
        folder.chmod(0o555)
    try:
        results = [as_nobody(*EELS_GZ, "run", "--duration", "0.01", "--out", str(out)) for out in (ro / "run", own)]
    finally:
        entries = sorted(p.name for p in base.iterdir()) + sorted(p.name for p in ro.iterdir())
        shutil.rmtree(base)
    assert entries == ["own", "ro"]  # nothing written anywhere
    assert [r.returncode for r in results] == [2, 2], [r.stderr for r in results]
    assert f"cannot write in '{ro}'" in results[0].stderr and "permission denied" in results[0].stderr
    assert f"output folder '{own}' is not writable: permission denied" in results[1].stderr
    assert not any("Traceback" in r.stderr for r in results)


def test_read_only_mount(tmp_path):
    if not namespaces_work():
        pytest.skip("unshare -rm (user and mount namespaces) is not available here")
    ro = tmp_path / "ro"
    ro.mkdir()
    res = shell(f"mount --bind {ro} {ro} && mount -o remount,bind,ro {ro} || exit 9; "
                f'$EELS_GZ run --duration 0.01 --out {ro}/run; echo "rc=$?"; '
                f'$EELS_GZ run --duration 0.01 --out {tmp_path}/ok --save-config {ro}/resolved.yaml; echo "rc=$?"',
                namespace=True)
    if "rc=" not in res.stdout:
        pytest.skip(f"cannot remount read-only in a user namespace here: {res.stderr.strip()[-200:]}")
    assert res.stdout.split() == ["rc=2", "rc=2"], res.stderr
    assert "read-only file system" in res.stderr and "Traceback" not in res.stderr
    assert f"cannot write '{ro}/resolved.yaml': read-only file system" in res.stderr
    assert not (tmp_path / "ok").exists() and not (tmp_path / "ok.partial").exists()


def test_full_disk_before_and_during_the_run(tmp_path):
    if not namespaces_work():
        pytest.skip("unshare -rm (user and mount namespaces) is not available here")
    full, small = tmp_path / "full", tmp_path / "small"
    full.mkdir()
    small.mkdir()
    # full: 256 KiB with 224 KiB taken; small: room for a second or two of log, then the disk is full
    script = (f"mount -t tmpfs -o size=256k tmpfs {full} && mount -t tmpfs -o size=640k tmpfs {small} || exit 9; "
              f"head -c 229376 /dev/zero > {full}/filler; "
              f'$EELS_GZ run --duration 0.01 --out {full}/run; echo "rc=$?"; '
              f'$EELS_GZ run --duration 20 --out {small}/run; echo "rc=$?"; '
              f"cp {small}/run/summary.json {small}/run/log.mcap {tmp_path}/")  # the tmpfs goes with the namespace
    t0 = time.monotonic()
    res = shell(script, namespace=True)
    if "rc=" not in res.stdout:
        pytest.skip(f"cannot mount a tmpfs in a user namespace here: {res.stderr.strip()[-200:]}")
    codes = [line for line in res.stdout.splitlines() if line.startswith("rc=")]
    assert codes == ["rc=2", "rc=4"], res.stdout + res.stderr
    assert f"cannot write in '{full}/run.partial': no space left on device" in res.stderr
    s = json.loads((tmp_path / "summary.json").read_text())
    assert s["status"] == "output_error" and "no space left on device" in s["message"]
    assert 0 < s["sim_time"] < 20 and any("log.mcap" in u for u in s["unwritten"])
    assert "Traceback" not in res.stderr
    from mcap.reader import make_reader

    res = cli("recover", tmp_path / "log.mcap", "-o", tmp_path / "recovered.mcap")
    assert res.exit_code == 0 and "last complete chunk" in res.output, res.output
    with open(tmp_path / "recovered.mcap", "rb") as f:
        clock = [m.log_time for _, c, m in make_reader(f).iter_messages(topics=["/clock"])]
    assert clock and clock == sorted(clock)
    assert time.monotonic() - t0 < 120


@pytest.mark.parametrize("args, message", [
    (["run", *SMALL, "--out", "{file}/run"], "'{file}' is a file, not a folder"),
    (["run", *SMALL, "--out", "{tmp}/ok", "--save-config", "{file}/resolved.yaml"], "'{file}' is a file, not a folder"),
    (["compare", *SMALL, "--out", "{file}/cmp"], "'{file}' is a file, not a folder"),
    (["world", "primitive", "slope", "--out", "{file}/w"], "'{file}' is a file, not a folder"),
    (["rover", "drive", "--path", "straight", "--speed", "1.2", "--out", "{file}/r"],
     "'{file}' is a file, not a folder"),
    (["calibrate", "simulate", "--out", "{file}/drags.csv"], "'{file}' is a file, not a folder"),
    (["calibrate", "friction", "{csv}", "--plot", "{file}/fit.png"], "'{file}' is a file, not a folder"),
    (["run", *SMALL, "--out", "{file}"], "Directory '{file}' is a file"),
])
def test_a_path_under_a_file_is_refused_before_any_work(tmp_path, args, message):
    file = tmp_path / "a_file"
    file.write_text("not a folder")
    csv = tmp_path / "drags.csv"
    csv.write_text("direction,normal_force_N,drag_force_N\nparallel,10,1.5\nparallel,20,3\n"
                   "perpendicular,10,6\nperpendicular,20,14\n")
    fill = {"file": file, "tmp": tmp_path, "csv": csv}
    t0 = time.monotonic()
    res = cli(*[a.format(**fill) for a in args])
    assert res.exit_code == 2, res.output
    assert message.format(**fill) in res.output and "Traceback" not in res.output
    assert time.monotonic() - t0 < 3.0  # nothing was built or simulated
    assert file.read_text() == "not a folder"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_file", "drags.csv"]
