"""Files outside a command's own output are never lost (issue 45, class 1).

One rule for every command that writes: it writes a new path, or replaces only what it wrote
itself, and never deletes a path it did not create. A single-file output (``run --save-config``,
``view --out``, ``view --screenshot``, ``recover -o``, ``calibrate simulate --out``, ``calibrate
friction --plot``) refuses an existing file unless ``--overwrite``, and even then replaces only a
file it recognises as its own by content; a folder output counts our own later files (a
``replay.html`` that ``view`` wrote) as its own; ``serve`` removes nothing at its socket's path
but a socket."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from faults_cli import SMALL, cli

SHORT = ("--duration", "0.02")
USERS = "# my settings, with comments I want to keep\nduration: 0.02\n"


def tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def a_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("kept") / "run"
    res = cli("run", *SMALL, *SHORT, "--out", out)
    assert res.exit_code == 0, res.output
    return out


def test_save_config_never_replaces_a_users_file(tmp_path):
    mine = tmp_path / "mine.yaml"
    mine.write_text(USERS)
    for extra in ((), ("--overwrite",)):  # the trial's case: --save-config is the --config given
        res = cli("run", *SMALL, "--config", mine, "--save-config", mine, "--out", tmp_path / "r", *extra)
        assert res.exit_code == 2, res.output
        assert f"'{mine}'" in res.output and "Traceback" not in res.output
        assert mine.read_text() == USERS
    assert not (tmp_path / "r").exists()
    # a file --save-config wrote is refused without --overwrite and replaced with it
    saved = tmp_path / "saved.yaml"
    assert cli("run", *SMALL, *SHORT, "--save-config", saved, "--out", tmp_path / "a").exit_code == 0
    first = saved.read_text()
    res = cli("run", *SMALL, *SHORT, "--save-config", saved, "--out", tmp_path / "b")
    assert res.exit_code == 2 and "--overwrite" in res.output, res.output
    res = cli("run", *SMALL, "--duration", "0.03", "--save-config", saved, "--out", tmp_path / "b", "--overwrite")
    assert res.exit_code == 0, res.output
    assert saved.read_text() != first and "duration: 0.03" in saved.read_text()
    # ... unless a user edited it since: then it is theirs
    saved.write_text(saved.read_text() + "# a note of mine\n")
    edited = saved.read_text()
    res = cli("run", *SMALL, *SHORT, "--save-config", saved, "--out", tmp_path / "c", "--overwrite")
    assert res.exit_code == 2 and saved.read_text() == edited, res.output


def test_view_out_never_replaces_a_users_file(a_run, tmp_path):
    mine = tmp_path / "page.html"
    mine.write_text("<html>my page</html>")
    for extra in ((), ("--overwrite",)):
        res = cli("view", a_run, "--out", mine, *extra)
        assert res.exit_code == 2 and f"'{mine}'" in res.output, res.output
        assert mine.read_text() == "<html>my page</html>"
    ours = tmp_path / "replay.html"
    assert cli("view", a_run, "--out", ours).exit_code == 0
    res = cli("view", a_run, "--out", ours)
    assert res.exit_code == 2 and "--overwrite" in res.output, res.output
    assert cli("view", a_run, "--out", ours, "--overwrite").exit_code == 0


def test_recover_never_replaces_a_file_it_did_not_write(a_run, tmp_path):
    mine = tmp_path / "notes.mcap"
    mine.write_bytes(b"my own notes, not a log")
    res = cli("recover", a_run / "log.mcap", "-o", mine, "--overwrite")
    assert res.exit_code == 2 and f"'{mine}'" in res.output, res.output
    assert mine.read_bytes() == b"my own notes, not a log"
    # a run's own log is an MCAP of eels-gz, but not one recover wrote: refused too
    other = tmp_path / "other.mcap"
    other.write_bytes((a_run / "log.mcap").read_bytes())
    res = cli("recover", a_run / "log.mcap", "-o", other, "--overwrite")
    assert res.exit_code == 2 and other.read_bytes() == (a_run / "log.mcap").read_bytes(), res.output
    ours = tmp_path / "recovered.mcap"
    assert cli("recover", a_run / "log.mcap", "-o", ours).exit_code == 0
    assert cli("recover", a_run / "log.mcap", "-o", ours).exit_code == 2
    assert cli("recover", a_run / "log.mcap", "-o", ours, "--overwrite").exit_code == 0


def test_calibrate_simulate_never_replaces_a_users_csv(tmp_path):
    mine = tmp_path / "drags.csv"
    mine.write_text("direction,normal_force_N,drag_force_N\nparallel,1.0,0.1\n")  # a user's measurements
    res = cli("calibrate", "simulate", "--out", mine, "--overwrite", "--loads", "2,5")
    assert res.exit_code == 2 and f"'{mine}'" in res.output, res.output
    assert mine.read_text() == "direction,normal_force_N,drag_force_N\nparallel,1.0,0.1\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["drags.csv"]


def test_calibrate_friction_plot_never_replaces_a_users_file(tmp_path):
    mine = tmp_path / "figure.png"
    mine.write_bytes(b"my figure")
    csv = tmp_path / "drags.csv"
    rows = [f"parallel,{n},{0.1 * n}" for n in (10, 20, 30)]
    rows += [f"perpendicular,{n},{0.1 * n * (5 + 0.1 * n):.6f}" for n in (10, 20, 30)]
    csv.write_text("direction,normal_force_N,drag_force_N\n" + "\n".join(rows) + "\n")
    res = cli("calibrate", "friction", csv, "--plot", mine)
    assert res.exit_code == 2 and f"'{mine}'" in res.output, res.output
    assert mine.read_bytes() == b"my figure"
    ours = tmp_path / "fit.png"
    assert cli("calibrate", "friction", csv, "--plot", ours).exit_code == 0
    assert cli("calibrate", "friction", csv, "--plot", ours, "--overwrite").exit_code == 0


def test_overwrite_takes_a_run_folder_after_view_wrote_its_replay(tmp_path):
    out = tmp_path / "run"
    assert cli("run", *SMALL, *SHORT, "--out", out).exit_code == 0
    res = cli("view", out)  # the documented replay, written into the run's folder
    assert res.exit_code == 0 and (out / "replay.html").is_file(), res.output
    assert cli("view", out).exit_code == 0  # its own replay, written again
    res = cli("run", *SMALL, *SHORT, "--out", out, "--overwrite")
    assert res.exit_code == 0, res.output
    assert cli("recover", out / "log.mcap").exit_code == 0  # recover's log.recovered.mcap beside it: ours too
    res = cli("run", *SMALL, *SHORT, "--out", out, "--overwrite")
    assert res.exit_code == 0, res.output
    # a replay.html that is not ours is still a user's file
    (out / "replay.html").write_text("<html>mine</html>")
    res = cli("run", *SMALL, *SHORT, "--out", out, "--overwrite")
    assert res.exit_code == 2 and "replay.html" in res.output, res.output
    res = cli("view", out)
    assert res.exit_code == 2 and (out / "replay.html").read_text() == "<html>mine</html>", res.output


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the run server is Linux only")
def test_serve_never_removes_a_file_at_its_socket_path(tmp_path):
    folder = tmp_path / "srv"
    folder.mkdir(mode=0o700)
    mine = folder / "notes.txt"
    mine.write_text("my notes")
    env = dict(os.environ, EELS_GZ_SERVER_SOCKET=str(mine), PYTHONUNBUFFERED="1")
    env.pop("EELS_GZ_SERVER", None)
    try:
        done = subprocess.run([sys.executable, "-m", "eels_gz.cli", "serve", "--detach"], env=env, check=False,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode != 0, done.stdout + done.stderr
        assert "not a socket" in done.stderr and "Traceback" not in done.stderr, done.stderr
    finally:
        subprocess.run([sys.executable, "-m", "eels_gz.cli", "serve", "--stop"], env=env, capture_output=True,
                       check=False, timeout=120)
    assert mine.read_text() == "my notes"


def test_a_file_named_like_a_lock_or_a_partial_run_is_never_taken(tmp_path):
    out = tmp_path / "run"
    lock = tmp_path / ".run.lock"
    lock.write_text("my file, named as a lock would be")
    res = cli("run", *SMALL, *SHORT, "--out", out)
    assert res.exit_code == 2 and f"'{lock}'" in res.output, res.output
    assert lock.read_text() == "my file, named as a lock would be" and not out.exists()
    lock.unlink()
    partial = tmp_path / "run.partial"
    partial.mkdir()
    (partial / "data.csv").write_text("1,2\n")
    res = cli("run", *SMALL, *SHORT, "--out", out, "--overwrite")
    assert res.exit_code == 2 and f"'{partial}'" in res.output, res.output
    assert tree(partial) == {"data.csv": b"1,2\n"} and not out.exists()
