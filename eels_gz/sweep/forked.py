"""A sample in its own process, forked from a warm worker.

The campaign's node server (:mod:`eels_gz.sweep.node_server`) is warmed by :func:`warm` and forks
the samples of its node; a Ray worker that finds none warms itself the same way, once, and forks
its samples itself (:func:`run_forked`). Warming a process:

- it imports what a run imports (numpy, numba, dartpy, the host, the sensors, the log's message
  types, the plot's matplotlib Agg canvas);
- it runs the campaign's base configuration for a tenth of a second into a temporary folder, so
  that what a run does once per process (the numba kernels it calls loaded, its first log
  message, sensor reading and plot) is done in the parent: without it, a forked run took 0.3 s
  longer than the same run in a process that had run one before. The warm-up run is the same in
  every worker (the base, not a sample's draws, and the default seed), so every sample starts
  from the same state wherever it runs. Without one (a rover drive's campaign), every cached
  kernel of the package is loaded instead;
- it freezes all of it for the collector.

Each sample then runs in a child forked from it (:func:`run_forked`): its own process, so a
sample that crashes, leaks or diverges cannot touch the next, which starts again from the same
warm parent; but one that starts in milliseconds instead of a fresh interpreter's second.

The child runs :func:`eels_gz.sweep.execute.run_job` (which writes the sample's row.json) and
leaves with ``os._exit``: nothing of the parent's (Ray's connections, its exit handlers) runs
twice. It dies with its parent (``PR_SET_PDEATHSIG``), so a worker killed by Ray (a cancelled
sample past its grace) leaves no orphan. A SIGINT the parent receives while it waits (Ray's
cancel of a running task calls SIGINT's handler in the task's thread) is passed on to the
child, whose run ends ``interrupted`` as ``eels-gz run`` does on a signal (Ray's workers block
SIGINT; the child unblocks it). A child that dies without its row is recorded ``crashed``.

Linux only (fork, prctl); elsewhere a sample runs in the worker itself (:func:`fork_supported`).
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import logging
import os
import select
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from eels_gz.process_start import set_start

log = logging.getLogger(__name__)

POLL_S = 0.02  # s at most between checks of the child: Ray's cancel reaches the parent between them
PR_SET_PDEATHSIG = 1
# what a run may import beyond eels_gz.run.runner, imported once by the warm parent
RUN_MODULES = ("eels_gz.run.runner", "eels_gz.dart.sensors", "eels_gz.dart.scene_log", "eels_gz.gzapi.topics",
               "eels_gz.snake.tethers", "eels_gz.contact.screw_wrenches", "eels_gz.contact.point_terms",
               "eels_gz.contact.screw_points", "eels_gz.contact.stick", "eels_gz.contact.params",
               "eels_gz.contact.stability", "eels_gz.control.pid", "eels_gz.control.joint_targets",
               "eels_gz.sensors.imu", "eels_gz.sensors.lidar", "eels_gz.snake.chain_kinematics",
               "eels_gz.terrain.world_terrain", "eels_gz.scenarios",
               "eels_gz.sweep.commands", "eels_gz.plots", "eels_gz.outputs")

WARM_RUN_S = 0.1  # s simulated by the warm-up run: the lidar (10 Hz) fires once, the log and plot are written
_warm: dict | None = None


def fork_supported() -> bool:
    return hasattr(os, "fork") and sys.platform.startswith("linux")


def _warm_run(job) -> bool:
    """The campaign's base configuration (``job.items[:job.n_base]``) run for WARM_RUN_S in this
    process, into a temporary folder; False when it could not run (it is only a warm-up)."""
    import tempfile

    from eels_gz.sweep.commands import command

    if job.command != "run":
        return False
    items = list(job.items[:job.n_base]) + [("duration", WARM_RUN_S, "the warm worker's warm-up run")]
    cwd = os.getcwd()
    try:
        with tempfile.TemporaryDirectory(prefix="eels_gz_warm_") as tmp:
            if os.path.isdir(job.cwd):
                os.chdir(job.cwd)  # relative paths of the spec, as a sample reads them
            cmd = command(job.command)
            cmd.run(cmd.settings(items), Path(tmp) / "run")
        return True
    except Exception as exc:  # noqa: BLE001 - a sample reports its own errors; this only warms
        log.debug("warm worker: the warm-up run failed: %s", exc)
        return False
    finally:
        os.chdir(cwd)


def warm(job=None, warm_up: Callable[[], bool] | None = None) -> dict:
    """Warm this process once (module docstring), with a warm-up run of ``job``'s campaign base when
    given, else ``warm_up()`` when given (True when it ran: the run server's run of the default
    configuration, :mod:`eels_gz.server`); returns {"seconds": s, "kernels": n, "run": whether the
    warm-up run ran} of that once."""
    global _warm
    if _warm is not None:
        return _warm
    import importlib

    t0 = time.perf_counter()
    for name in RUN_MODULES:
        try:
            importlib.import_module(name)
        except ImportError as exc:  # an optional part (e.g. a missing extra): its runs import it themselves
            log.debug("warm worker: %s not imported: %s", name, exc)
    from matplotlib.backends import backend_agg  # noqa: F401  (the trajectory plot's)
    from matplotlib import figure  # noqa: F401

    from eels_gz.run.numba_compile import load_cached_kernels
    from eels_gz.ros.messages import typestore

    typestore()
    ran = _warm_run(job) if job is not None else (warm_up() if warm_up is not None else False)
    # the warm-up run loaded the kernels the base calls (a sample of another kind loads its own before
    # its loop, eels_gz.run.numba_compile.KernelManifest); without it, every cached kernel
    kernels = 0 if ran else load_cached_kernels()[0]
    gc.collect()
    gc.freeze()  # the warm state stays shared with the children (the collector does not touch its pages)
    _warm = {"seconds": time.perf_counter() - t0, "kernels": kernels, "run": ran}
    return _warm


def die_with_parent(signum: int = signal.SIGKILL) -> None:
    """This process gets ``signum`` when the thread that forked it ends (Linux ``PR_SET_PDEATHSIG``)."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0)


def status_text(status: int) -> str:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            return f"killed by {signal.Signals(sig).name}"
        except ValueError:
            return f"killed by signal {sig}"
    return f"exit code {os.WEXITSTATUS(status)}"


def _pidfd(pid: int) -> int | None:
    """A descriptor that becomes readable when process ``pid`` ends (Linux 5.3), or None."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def run_forked(job, run_job, read_row, crashed) -> tuple[dict, float]:
    """Run ``run_job(job)`` in a child forked from this (warm) process; returns its row (read back
    with ``read_row(folder)``, or ``crashed(job, text)`` when the child died without one) and the
    seconds from the fork to the child's end."""
    warm()
    folder = Path(job.folder)
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:  # the child: run the sample, then leave at once
        code = 1
        try:
            die_with_parent()
            set_start("forked", parent=os.getppid())
            signal.pthread_sigmask(signal.SIG_SETMASK, [])  # a Ray worker blocks SIGINT; the child's run takes it
            signal.signal(signal.SIGINT, signal.default_int_handler)  # the run installs its own handlers
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            run_job(job)
            code = 0
        except BaseException:  # noqa: BLE001 - run_job records its own failures; this is a crash
            with contextlib.suppress(BaseException):
                log.exception("sample %s: its process failed outside its run", job.index)
        finally:
            with contextlib.suppress(BaseException):
                sys.stdout.flush()
                sys.stderr.flush()
            os._exit(code)
    def forward(signum, frame) -> None:  # Ray's cancel of this task (SIGINT's handler): the run stops as on a signal
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGINT)

    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, forward) if main else None
    status = None
    ended = _pidfd(pid)  # readable when the child ends: no sleep past its end (a poll lost 10 ms a sample)
    try:
        while status is None:
            try:
                done, st = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:  # reaped elsewhere: nothing left to say how it ended
                done, st = pid, 1 << 8
            if done:
                status = st
            elif ended is not None:
                select.select([ended], [], [], POLL_S)
            else:
                time.sleep(POLL_S)
    finally:
        if main:
            signal.signal(signal.SIGINT, previous)
        if ended is not None:
            os.close(ended)
    seconds = time.perf_counter() - t0
    row = read_row(folder) if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 else None
    if row is None or row.get("sample") != job.index:
        row = crashed(job, status_text(status))
    return row, seconds
