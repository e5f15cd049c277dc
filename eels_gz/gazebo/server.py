"""Run a world in a gz-sim server: headless, on a private ``GZ_PARTITION``, over loopback only, with a
listener process recording its topics (:mod:`eels_gz.gazebo.listen`).

The server starts paused (``gz sim -s --iterations N``); the listener subscribes, waits for the
server's publishers and starts the world, so no message is lost to discovery. The run ends when the
server has taken its N iterations (and exits), when the world pauses after having run (a scenario's
``request_run_end``: the server is then stopped with SIGINT), on SIGINT or SIGTERM here (both
processes are stopped; :class:`GazeboRun` says ``interrupted``), or when the server or the listener
fails. The server's output goes to ``server.log``; a Python system gz-sim disabled is read from it
(:func:`plugin_errors`): gz-sim 8's Python system loader logs the exception and stops calling the
system (``PythonSystemLoader.cc``), which the run reports as ``plugin_error``, never as metrics of 0.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from eels_gz.gazebo.install import GzSim

SERVER_LOG = "server.log"
LISTENER_LOG = "listener.log"
TOPICS_FILE = "topics.jsonl"
STOP_GRACE_S = 10.0  # s for a server to end after SIGINT before it is killed
# gz-sim 8's Python system loader: "[Err] [PythonSystemLoader.cc:NNN] <the exception>"
_LOADER_ERROR = re.compile(r"\[Err\] \[PythonSystemLoader\.cc:\d+\]\s*(.*)")


@dataclass
class GazeboRun:
    """How a server's run went: ``status`` (``ok`` N iterations done, ``paused`` a scenario ended it,
    ``interrupted``, ``plugin_error``, ``server_failed``, ``listener_failed``), ``message``, the
    server's exit code, the wall time from the world's start, the listener's records and the
    disabled systems' errors read from the server's log."""

    status: str
    message: str
    returncode: int | None
    wall_time: float
    records: list[dict] = field(default_factory=list)
    plugin_errors: list[str] = field(default_factory=list)
    signum: int | None = None
    partition: str = ""


def plugin_errors(log_text: str) -> list[str]:
    """Each error gz-sim's Python system loader logged, with the traceback lines that follow it
    (pybind11's ``At:`` lines) until the next log line."""
    errors, current = [], None
    for line in log_text.splitlines():
        m = _LOADER_ERROR.search(line)
        if m:
            current = [m.group(1).strip()]
            errors.append(current)
        elif current is not None and line.strip() and not line.startswith("["):
            current.append(line.strip())
        elif current is not None and line.startswith("["):
            current = None
    return ["\n".join(e).strip() for e in errors]


def run_environment(gz: GzSim, partition: str, python_path: list[str], plugin_path: str, resource_path: str) -> dict:
    """The server's and the listener's environment: gz's own, a private partition, loopback only, our
    Python systems and models on gz-sim's search paths, ``python_path`` before the rest."""
    env = dict(gz.env)
    env.update(GZ_PARTITION=partition, GZ_IP="127.0.0.1", PYTHONUNBUFFERED="1")
    env.pop("GZ_RELAY", None)  # no unicast peers elsewhere
    for var, value in (("GZ_SIM_SYSTEM_PLUGIN_PATH", plugin_path), ("GZ_SIM_RESOURCE_PATH", resource_path),
                       ("PYTHONPATH", os.pathsep.join(python_path))):
        rest = env.get(var, "")
        env[var] = value + (os.pathsep + rest if rest else "")
    return env


def new_partition() -> str:
    return f"eels_gz_{os.getpid()}_{secrets.token_hex(4)}"


def _stop(proc: subprocess.Popen | None, grace: float = STOP_GRACE_S) -> int | None:
    """SIGINT, then SIGKILL after ``grace`` s; the exit code."""
    if proc is None:
        return None
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGINT)
        except ProcessLookupError:
            pass
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return proc.returncode


def read_records(path: Path) -> list[dict]:
    """The listener's JSON lines (a line cut short by a kill is left out)."""
    out = []
    if not path.exists():
        return out
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


class _Tail:
    """The JSON lines appended to a file since the last call (a line not yet complete waits)."""

    def __init__(self, path: Path):
        self.path, self.f, self.rest = path, None, ""

    def new(self) -> list[dict]:
        if self.f is None:
            if not self.path.exists():
                return []
            self.f = open(self.path)
        text = self.rest + self.f.read()
        lines = text.split("\n")
        self.rest = lines.pop()
        out = []
        for line in lines:
            try:
                out.append(json.loads(line))
            except ValueError:
                continue
        return out

    def close(self) -> None:
        if self.f is not None:
            self.f.close()


def run_world(gz: GzSim, world_file: Path, world_name: str, iterations: int, out_dir: Path, env: dict,
              topics: list[tuple[str, str]], stop=None, listener_python: str | None = None,
              progress=None, timeout: float | None = None, also: list[tuple[str, str]] = ()) -> GazeboRun:
    """Run ``world_file`` for ``iterations`` steps in the gz-sim server (module docstring), writing
    server.log, listener.log and topics.jsonl into ``out_dir``. ``stop``: an
    :class:`eels_gz.interrupt.Interrupt` whose signal ends the run; ``progress(sim_time)`` is called
    with the world's time as its statistics arrive; ``timeout``: wall seconds before the run is
    ended as ``server_failed``; ``also``: topics recorded if published, not waited for."""
    out_dir = Path(out_dir)
    topics_file, server_log = out_dir / TOPICS_FILE, out_dir / SERVER_LOG
    python = listener_python or sys.executable
    listener_cmd = [python, "-m", "eels_gz.gazebo.listen", "--world", world_name, "--out", str(topics_file),
                    "--start", *(f"--topic={t}={k}" for t, k in topics), *(f"--also={t}={k}" for t, k in also)]
    server_cmd = [gz.gz, "sim", "-s", "-v", "3", "--iterations", str(int(iterations)), str(world_file)]
    listener = server = None
    t0 = time.monotonic()
    started_at = None
    status, message, signum = "ok", "", None
    with open(out_dir / LISTENER_LOG, "w") as llog, open(server_log, "w") as slog:
        try:
            server = subprocess.Popen(server_cmd, stdout=slog, stderr=subprocess.STDOUT, env=env,
                                      start_new_session=True, cwd=out_dir)
            listener = subprocess.Popen(listener_cmd, stdout=llog, stderr=subprocess.STDOUT, env=env,
                                        start_new_session=True, cwd=out_dir)
            tail = _Tail(topics_file)
            while True:
                if stop is not None and stop.requested:
                    status, signum = "interrupted", stop.signum
                    break
                if server.poll() is not None:
                    break
                for record in tail.new():
                    if record.get("event") == "started" and started_at is None:
                        started_at = time.monotonic()
                    elif progress is not None and record.get("type") == "gz.msgs.WorldStatistics":
                        t = record["msg"].get("sim_time", {})
                        progress(int(t.get("sec", 0)) + 1e-9 * int(t.get("nsec", 0)))
                if listener.poll() is not None:
                    records = read_records(topics_file)
                    if any(r.get("event") == "paused" for r in records):
                        status = "paused"
                    else:
                        errors = [r["message"] for r in records if r.get("event") == "error"]
                        status = "listener_failed"
                        message = errors[-1] if errors else (
                            f"the listener ended with exit code {listener.returncode} (see {LISTENER_LOG})")
                    break
                if timeout is not None and time.monotonic() - t0 > timeout:
                    status, message = "server_failed", f"the server did not finish in {timeout:g} s"
                    break
                time.sleep(0.05)
        finally:
            returncode = _stop(server)
            _stop(listener)
            if "tail" in locals():
                tail.close()
    wall = time.monotonic() - (started_at if started_at is not None else t0)
    records = read_records(topics_file)
    errors = plugin_errors(server_log.read_text(errors="replace"))
    if status == "ok" and returncode not in (0, None):
        status, message = "server_failed", f"gz sim ended with exit code {returncode} (see {SERVER_LOG})"
    if errors and status in ("ok", "paused"):
        status, message = "plugin_error", f"gz-sim disabled a Python system: {errors[0].splitlines()[0]}"
    return GazeboRun(status, message, returncode, wall, records, errors, signum)
