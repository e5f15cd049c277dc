"""Helpers of the faults tier: drive the CLI as a user would, in this process
(click's runner) or as a separate process, with tiny runs of a small robot."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from click.testing import CliRunner

from eels_gz.cli import main

# EELS 1.0 front-only cut to two modules: 8 DOF, quick to build and to step
SMALL = ("--robot", "eels_1_0_front_only", "--n-modules", "2")
EELS_GZ = (sys.executable, "-m", "eels_gz.cli")


def cli(*args: str):
    """``eels-gz ARGS`` in this process; the result has exit_code, output (stdout + stderr) and stderr."""
    return CliRunner().invoke(main, [str(a) for a in args])


def summary(folder: Path) -> dict:
    return json.loads((Path(folder) / "summary.json").read_text())


def wait_for(predicate, timeout: float = 60.0, what: str = "the condition") -> None:
    end = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > end:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.02)


def started(folder: Path):
    """True once a run into ``folder`` has begun stepping: its placeholder summary is in DIR.partial."""
    partial = Path(str(folder) + ".partial")
    return lambda: any(partial.rglob("summary.json")) or (partial / "campaign.json").exists()


STEPPED_LOG_BYTES = 256 * 1024  # log.mcap past its 36-byte header by chunks of step messages: the loop has stepped


def stepping(folder: Path):
    """True once a run into ``folder`` is stepping: its log in DIR.partial has grown past what the
    run writes before its loop (the placeholder summary comes before the loop's start)."""
    log = Path(str(folder) + ".partial") / "log.mcap"

    def grown() -> bool:
        try:
            return log.stat().st_size > STEPPED_LOG_BYTES
        except OSError:
            return False

    return grown


class SignalWhen:
    """Send ``signum`` to this process once ``predicate()`` holds (from a watcher thread), so that a
    command run by click's runner in the main thread is interrupted mid-run."""

    def __init__(self, predicate, signum: int = signal.SIGINT, delay: float = 0.2, timeout: float = 120.0):
        self.sent = False
        self.done = threading.Event()

        def watch() -> None:
            end = time.monotonic() + timeout
            while not self.done.is_set() and time.monotonic() < end:
                if predicate():
                    time.sleep(delay)
                    if not self.done.is_set():
                        self.sent = True
                        os.kill(os.getpid(), signum)
                    return
                time.sleep(0.02)

        self.thread = threading.Thread(target=watch, daemon=True)

    def __enter__(self) -> "SignalWhen":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.done.set()
        self.thread.join()


def spawn(*args: str, cwd: Path | None = None, **kw) -> subprocess.Popen:
    """``eels-gz ARGS`` as a separate process (stdout and stderr piped)."""
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    return subprocess.Popen([*EELS_GZ, *map(str, args)], cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kw)


