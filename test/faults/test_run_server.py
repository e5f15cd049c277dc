"""The warm run server (issue 36, deliverable 2; eels_gz/server/): `eels-gz run` hands its command
to a running `eels-gz serve` and gets the same run a fresh process makes; a server whose code is
not the client's is not used; signals, bad input, a lost server or a lost client end as a cold run
would, with the summary saying what happened and how the process started; --status and --stop.

Every server here listens on a socket of the test's own (EELS_GZ_SERVER_SOCKET) and is stopped at
the end; the last check is that no process started under that socket is left."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from faults_cli import started, stepping, summary, wait_for
from mcap.reader import make_reader

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the run server is Linux only")

SCREW = ("--scenario", "screw_spin", "--duration", "0.3")  # a screw-driven robot that moves, with metrics.json
ROUND_OFF = 1e-12  # relative: the same code on the same machine; only summation order could differ, and does not
READY_S = 180.0  # s for a server to warm up on a loaded 2-core machine (imports + a 0.1 s run)


def _env(sock: Path, **extra: str) -> dict:
    env = dict(os.environ, EELS_GZ_SERVER_SOCKET=str(sock), PYTHONUNBUFFERED="1", **extra)
    env.pop("EELS_GZ_SERVER", None)
    return env


def cli(sock: Path, cwd: Path, *args, env: dict | None = None, **kw) -> subprocess.Popen:
    """``eels-gz ARGS`` as a user types it (a fresh client process), pointed at the socket ``sock``."""
    return subprocess.Popen([sys.executable, "-m", "eels_gz.cli", *map(str, args)], cwd=cwd,
                            env=env or _env(sock), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def done(proc: subprocess.Popen, timeout: float = 180.0) -> tuple[int, str, str]:
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return proc.returncode, out, err


class Served:
    """A server in a subprocess (foreground ``eels-gz serve``) on a socket in ``folder``."""

    def __init__(self, folder: Path, cwd: Path, **env: str):
        folder.mkdir(mode=0o700, exist_ok=True)
        self.sock, self.cwd = folder / "s.sock", cwd
        self.env = _env(self.sock, **env)
        self.proc = cli(self.sock, cwd, "serve", env=self.env)
        lines = []
        end = time.monotonic() + READY_S
        while time.monotonic() < end:
            line = self.proc.stdout.readline()
            lines.append(line)
            if "ready on" in line or not line:
                break
        if "ready on" not in lines[-1]:
            self.proc.kill()
            _, err = self.proc.communicate()
            raise AssertionError(f"the server did not start: {''.join(lines)} {err}")

    def run(self, *args, env: dict | None = None) -> tuple[int, str, str]:
        return done(cli(self.sock, self.cwd, *args, env=env or self.env))

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)  # as Ctrl-C in its terminal
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc.stdout.close()
        self.proc.stderr.close()


def leftovers(sock: Path) -> list[int]:
    """Processes whose environment names ``sock`` (a server, its children, clients), other than this one."""
    marker = f"EELS_GZ_SERVER_SOCKET={sock}".encode()
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if marker in (entry / "environ").read_bytes().split(b"\0"):
                    state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
                    if state != "Z":
                        pids.append(int(entry.name))
            except OSError:
                continue
    return pids


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    base = tmp_path_factory.mktemp("served")
    plugins = base / "plugins"
    plugins.mkdir()
    (plugins / "user_plugin.py").write_text("VALUE = 1\n")  # a user's plugin folder (GZ_SIM_SYSTEM_PLUGIN_PATH)
    s = Served(base / "sock", base, GZ_SIM_SYSTEM_PLUGIN_PATH=str(plugins))
    s.plugins = plugins
    yield s
    s.stop()
    wait_for(lambda: not leftovers(s.sock), 30, "every process of the server's socket to end")
    assert not s.sock.exists()  # the server removed its socket


def messages(log: Path) -> list[tuple[str, int, bytes]]:
    with open(log, "rb") as f:
        return [(c.topic, m.log_time, m.data) for _, c, m in make_reader(f).iter_messages()]


def test_a_run_through_the_server_is_the_cold_run(server):
    code, out, err = server.run("run", *SCREW, "--out", "warm")
    assert code == 0, err
    code_cold, out_cold, err_cold = server.run("run", *SCREW, "--out", "cold", "--no-server")
    assert code_cold == 0, err_cold
    warm, cold = summary(server.cwd / "warm"), summary(server.cwd / "cold")
    assert warm["process"]["start"] == "server" and warm["process"]["server_pid"] == server.proc.pid
    assert warm["process"]["pid"] != server.proc.pid  # its own process, forked for it
    assert cold["process"]["start"] == "fresh"
    assert warm["status"] == cold["status"] == "ok" and warm["steps"] == cold["steps"]
    for key in ("position", "orientation_wxyz"):
        np.testing.assert_allclose(warm["final_base_pose"][key], cold["final_base_pose"][key], rtol=ROUND_OFF,
                                   atol=ROUND_OFF)
    # the robot moved (the comparison means something) and the scenario's metrics agree
    assert np.linalg.norm(cold["final_base_pose"]["position"][:2]) > 1e-4
    m_warm = json.loads((server.cwd / "warm" / "metrics.json").read_text())
    m_cold = json.loads((server.cwd / "cold" / "metrics.json").read_text())
    assert m_warm.keys() == m_cold.keys()
    for key, value in m_cold.items():
        if isinstance(value, float):
            assert m_warm[key] == pytest.approx(value, rel=ROUND_OFF, abs=ROUND_OFF), key
        else:
            assert m_warm[key] == value, key
    # every logged message (states, sensors with the default seed's noise) the same
    assert messages(server.cwd / "warm" / "log.mcap") == messages(server.cwd / "cold" / "log.mcap")
    # the client printed what a cold run prints (the paths of its files, its final position)
    assert [ln for ln in out.splitlines() if "real-time" not in ln] == \
        [ln.replace("cold/", "warm/") for ln in out_cold.splitlines() if "real-time" not in ln]
    for key in ("setup_wall_time", "finish_wall_time"):  # still measured from run()'s call, to the summary
        assert 0.0 < warm[key] < 60.0


def test_an_edited_plugin_runs_cold_and_says_why(server):
    plugin = server.plugins / "user_plugin.py"
    before = plugin.stat()
    plugin.write_text("VALUE = 2\n")  # the user edits a plugin after the server started
    try:
        code, _, err = server.run("run", "--duration", "0.05", "--out", "edited")
    finally:  # as it was (text, size and time): the server serves the next tests
        plugin.write_text("VALUE = 1\n")
        os.utime(plugin, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert code == 0, err
    assert summary(server.cwd / "edited")["process"]["start"] == "fresh"
    said = [ln for ln in err.splitlines() if "out of date" in ln]
    assert len(said) == 1 and f"{plugin} changed since the server started" in said[0], err
    code, _, err = server.run("run", "--duration", "0.05", "--out", "off", env=dict(server.env, EELS_GZ_SERVER="off"))
    assert code == 0 and summary(server.cwd / "off")["process"]["start"] == "fresh" and "out of date" not in err


def test_sigint_on_the_client_interrupts_the_run_and_the_server_serves_on(server):
    out = server.cwd / "interrupted"
    client = cli(server.sock, server.cwd, "run", "--duration", "60", "--out", out, env=server.env)
    try:
        wait_for(stepping(out), 120, "the run to step")  # mid-run: sim_time > 0 below
        client.send_signal(signal.SIGINT)  # Ctrl-C reaches the client only: it passes it on
        code, _, err = done(client, 60)
    finally:
        if client.poll() is None:
            client.kill()
    assert code == 130, err
    assert "interrupted by SIGINT" in err and "Traceback" not in err
    s = summary(out)
    assert s["status"] == "interrupted" and 0.0 < s["sim_time"] < 60.0 and s["process"]["start"] == "server"
    assert server.alive()
    code, _, err = server.run("run", "--duration", "0.05", "--out", "after")
    assert code == 0 and summary(server.cwd / "after")["process"]["start"] == "server", err


def _state(pid: int) -> str:
    """A process's state letter from /proc (T: stopped)."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def test_ctrl_z_on_the_client_stops_the_run_and_fg_goes_on_with_it(server):
    """Ctrl-Z (SIGTSTP) reaches the client only: its run's process, forked by the server, stops with it
    and goes on when the client is continued (fg); the run then ends as it would have."""
    out = server.cwd / "suspended"
    client = cli(server.sock, server.cwd, "run", "--duration", "2", "--out", out, env=server.env)
    try:
        wait_for(started(out), 120, "the run to start")
        (child,) = [int(e.name) for e in Path("/proc").iterdir() if e.name.isdigit() and _ppid(int(e.name)) ==
                    server.proc.pid]
        client.send_signal(signal.SIGTSTP)
        wait_for(lambda: _state(client.pid) == "T" and _state(child) == "T", 30, "the client and its run to stop")
        time.sleep(0.5)
        assert _state(child) == "T" and client.poll() is None  # still stopped, not ended
        client.send_signal(signal.SIGCONT)
        code, _, err = done(client, 120)
    finally:
        if client.poll() is None:
            client.kill()
    assert code == 0, err
    s = summary(out)
    assert s["status"] == "ok" and s["sim_time"] == pytest.approx(2.0) and s["process"]["pid"] == child


def _ppid(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def test_a_client_that_goes_away_gets_its_run_terminated(server):
    out = server.cwd / "orphaned"
    client = cli(server.sock, server.cwd, "run", "--duration", "60", "--out", out, env=server.env)
    try:
        wait_for(started(out), 120, "the run to start")
        client.kill()  # SIGKILL: the client cannot pass anything on; the server sees its connection end
        client.communicate()
        wait_for(lambda: (out / "summary.json").exists(), 60, "the run to end")
    finally:
        if client.poll() is None:
            client.kill()
    s = summary(out)
    assert s["status"] == "interrupted" and "SIGTERM" in s["message"] and s["process"]["start"] == "server"
    assert server.alive()


@pytest.mark.parametrize("args", [("--duration", "-1"), ("--robot", "no_such_robot", "--duration", "0.05")],
                         ids=["usage", "unknown_robot"])
def test_bad_input_through_the_server_is_bad_input_cold(server, args):
    served_before = _status(server)["served"]
    code, out, err = server.run("run", *args, "--out", "bad")
    code_cold, out_cold, err_cold = server.run("run", *args, "--out", "bad", "--no-server")
    assert code == code_cold == 2
    assert (out, err) == (out_cold, err_cold) and "Traceback" not in err
    # the unknown robot is found by the run's own code: in the server's child; a usage error by click, here
    assert _status(server)["served"] == served_before + (args[0] == "--robot")
    assert not (server.cwd / "bad").exists()


def _status(server: Served) -> dict:
    code, out, err = server.run("serve", "--status", "--json")
    assert code == 0, err
    return json.loads(out)


def test_a_server_killed_mid_run_ends_the_client_with_a_message(tmp_path):
    s = Served(tmp_path / "sock", tmp_path)
    out = tmp_path / "run"
    try:
        client = cli(s.sock, tmp_path, "run", "--duration", "60", "--out", out, env=s.env)
        wait_for(started(out), 120, "the run to start")
        s.proc.kill()  # SIGKILL: the server cannot clean up; its child gets SIGTERM (PR_SET_PDEATHSIG)
        code, _, err = done(client, 90)
    finally:
        s.stop()
    assert code == 1
    assert "the run server stopped during the run" in err and "has ended" in err, err
    summ = summary(out)  # the child wrote it: the run says it was interrupted, and where it ran
    assert summ["status"] == "interrupted" and summ["process"]["start"] == "server"
    wait_for(lambda: not leftovers(s.sock), 30, "every process of the server's socket to end")


def test_status_stop_and_one_server_per_socket(tmp_path):
    s = Served(tmp_path / "sock", tmp_path)
    try:
        info = _status(s)
        assert info["runs_in_progress"] == 0 and info["pid"] == s.proc.pid and info["socket"] == str(s.sock)
        code, out, err = s.run("serve", "--status")  # the words a person reads
        assert code == 0 and f"run server on {s.sock}: pid {s.proc.pid}" in out and "0 running" in out, err
        code, _, err = s.run("serve")  # a second server on the same socket is refused at once
        assert code == 1 and f"already running on {s.sock} (pid {s.proc.pid})" in err
        code, _, err = s.run("serve", "--status", "--stop")
        assert code == 2 and "--status and --stop cannot be given together" in err
        code, out, err = s.run("serve", "--stop")
        assert code == 0 and f"run server (pid {s.proc.pid}) stopped" in out, err
        assert s.proc.wait(timeout=10) == 0 and not s.sock.exists()
        code, out, _ = s.run("serve", "--status")
        assert code == 1 and f"no run server on {s.sock}" in out
        # no server: a run starts cold
        code, _, err = s.run("run", "--duration", "0.05", "--out", "cold")
        assert code == 0 and summary(tmp_path / "cold")["process"]["start"] == "fresh", err
    finally:
        s.stop()
    wait_for(lambda: not leftovers(s.sock), 30, "every process of the server's socket to end")


def test_a_folder_others_can_write_is_refused(tmp_path):
    folder = tmp_path / "open"
    folder.mkdir()
    folder.chmod(0o777)
    proc = cli(folder / "s.sock", tmp_path, "serve", "--status")
    code, _, err = done(proc)
    assert code == 2 and f"the run server's folder '{folder}' must belong to you and be writable by no one else" \
        in err and "Traceback" not in err


def test_detach_returns_once_the_server_is_ready(tmp_path):
    folder = tmp_path / "sock"
    folder.mkdir(mode=0o700)
    sock = folder / "s.sock"
    try:
        code, out, err = done(cli(sock, tmp_path, "serve", "--detach"), READY_S)
        assert code == 0 and f"run server ready on {sock}" in out, err
        code, out, err = done(cli(sock, tmp_path, "serve", "--status", "--json"))  # at once: no wait for it
        info = json.loads(out)
        assert code == 0 and info["running"] is True and info["warm_run"] is True
        assert "ready on" in (folder / "s.sock.log").read_text()  # its output goes to SOCKET.log
        code, out, err = done(cli(sock, tmp_path, "serve", "--stop"))
        assert code == 0 and f"run server (pid {info['pid']}) stopped" in out, err
    finally:
        for pid in leftovers(sock):
            os.kill(pid, signal.SIGKILL)
    assert not sock.exists() and not leftovers(sock)


def test_stopping_the_server_ends_its_runs_interrupted(tmp_path):
    s = Served(tmp_path / "sock", tmp_path)
    out = tmp_path / "run"
    try:
        client = cli(s.sock, tmp_path, "run", "--duration", "60", "--out", out, env=s.env)
        wait_for(started(out), 120, "the run to start")
        code, said, err = s.run("serve", "--stop")
        assert code == 0 and f"run server (pid {s.proc.pid}) stopped" in said, err
        code, _, err = done(client, 60)
    finally:
        s.stop()
    assert code == 143 and "interrupted by SIGTERM" in err, err  # as a cold run sent SIGTERM
    summ = summary(out)
    assert summ["status"] == "interrupted" and summ["process"]["start"] == "server"
    wait_for(lambda: not leftovers(s.sock), 30, "every process of the server's socket to end")
