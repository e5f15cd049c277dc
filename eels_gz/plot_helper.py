"""A run's trajectory plot drawn by a helper interpreter that imported matplotlib while the run started.

matplotlib's import is a short run's largest single cost after numba's (0.3-0.4 s of a 1 s run's
command, bench/startup.py). :func:`start`, called as soon as a run is known to plot, starts
``python -c "...serve()"``: a second interpreter that imports matplotlib on the machine's other core
while this one imports numba, builds the model and steps. After the last step the run hands it the
recorded trajectory (:func:`trajectory`) and waits for the figure before it writes summary.json, so
the figure is the same (:func:`eels_gz.plots.trajectory`, the same matplotlib), it is drawn inside
the run's ``finish_wall_time``, and its failure is reported as when drawn here (an ``OSError`` with
its errno, message and file name; any other error as :class:`PlotFailed`).

The helper serves every run of its process, in turn, and exits when its pipe closes: at this
process's exit at the latest (an ``atexit`` hook closes it and waits), or at once if this process
dies. Nothing outlives the run's process. The figure is drawn here instead when matplotlib is
imported here already (a sweep's warm worker, a scenario's own plots, a caller of
:mod:`eels_gz.plots`), when the machine has no idle core (:func:`wanted`; ``EELS_GZ_PLOT_HELPER=on``
or ``off`` decides instead), when the helper cannot be started, or when it died.
"""

from __future__ import annotations

import atexit
import logging
import os
import pickle
import subprocess
import sys
from pathlib import Path

log = logging.getLogger(__name__)

EXIT_WAIT_S = 5.0  # s the exit hook waits for the helper to end once its pipe is closed


class PlotFailed(RuntimeError):
    """The helper could not draw the figure for a reason other than a file error (its message)."""


class _Helper:
    """The helper process of this process (``owner``: the pid that started it; a forked child draws
    for itself, never through its parent's pipes)."""

    def __init__(self) -> None:
        root = str(Path(__file__).resolve().parents[1])  # the eels_gz this process runs, not another install
        code = (f"import sys; r = {root!r}\nif r not in sys.path: sys.path.insert(0, r)\n"
                "from eels_gz.plot_helper import serve; serve()")
        self.owner = os.getpid()
        self.proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     close_fds=True)

    def draw(self, args: tuple) -> tuple:
        """Send one figure's arguments; the helper's reply (raises OSError/EOFError if it is gone)."""
        pickle.dump(args, self.proc.stdin, protocol=pickle.HIGHEST_PROTOCOL)
        self.proc.stdin.flush()
        return pickle.load(self.proc.stdout)

    def close(self, kill: bool = False) -> None:
        """Close the pipes (the helper exits) and wait for it, or ``kill`` it first; only by the
        process that started it."""
        if os.getpid() != self.owner:
            return
        if kill:
            self.proc.kill()
        try:
            self.proc.stdin.close()
            self.proc.wait(EXIT_WAIT_S)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()


_helper: _Helper | None = None


def _ours() -> _Helper | None:
    """This process's helper while it runs, else None."""
    if _helper is None or _helper.owner != os.getpid() or _helper.proc.poll() is not None:
        return None
    return _helper


def start() -> None:
    """Start this process's helper unless it runs, matplotlib is imported here already (drawing here
    then costs no import), or no interpreter can be started (then the figure is drawn here)."""
    global _helper
    if _ours() is not None or "matplotlib" in sys.modules or not sys.executable:
        return
    try:
        _helper = _Helper()
    except OSError as exc:
        log.debug("plot helper not started (%s): the figure is drawn in the run's process", exc)
        return
    atexit.register(_helper.close)


def wanted() -> bool:
    """Whether runs here use a helper: ``EELS_GZ_PLOT_HELPER`` ``on`` or ``off``, else (``auto``) when
    a core looks free (the load average of the last minute at most the cores less one). On a busy
    machine the helper's own start (an interpreter and numpy, ~0.2 s of CPU) would only compete with
    the run, so the figure is drawn in the run's process."""
    mode = os.environ.get("EELS_GZ_PLOT_HELPER", "auto").strip().lower()
    if mode in ("on", "off"):
        return mode == "on"
    cores = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except (OSError, AttributeError):  # no load average on this system (Windows has no getloadavg)
        return False
    return cores >= 2 and load <= cores - 1


def start_for(cfg: dict) -> None:
    """:func:`start` when the resolved run configuration ``cfg`` plots its trajectory and no scenario
    (a scenario's own figures are drawn in the run's process, so matplotlib is imported there anyway),
    and :func:`wanted`."""
    if cfg["log"]["plot"] and not cfg["scenario"]["name"] and wanted():
        start()


def trajectory(path: str | Path, *args) -> None:
    """:func:`eels_gz.plots.trajectory` (same arguments), drawn by the helper when it runs."""
    helper = _ours()
    if helper is not None:
        where = os.path.abspath(path)  # the helper's working folder is this process's when it started
        try:
            reply = helper.draw((where, *args))
        except (OSError, EOFError, pickle.UnpicklingError) as exc:  # the helper died: draw here
            log.warning("plot helper lost (%s): drawing the figure in the run's process", exc)
            helper.close(kill=True)
        except BaseException:  # interrupted while waiting: its reply would be read by the next figure
            helper.close(kill=True)
            raise
        else:
            if reply[0] == "oserror":
                if len(reply) == 4 and reply[3] == where:  # named as the caller named it
                    reply = (*reply[:3], str(path))
                raise OSError(*reply[1:])
            if reply[0] == "error":
                raise PlotFailed(reply[1])
            return
    from eels_gz import plots

    plots.trajectory(path, *args)


def serve() -> None:
    """The helper's side: import matplotlib, then draw each figure asked on stdin until it closes;
    one reply per figure on the original stdout (stdout itself goes to stderr, so that no stray
    print can break the replies)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the run, which closes the pipe
    requests = os.fdopen(0, "rb")
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    from eels_gz import plots
    from matplotlib.backends import backend_agg  # noqa: F401  (trajectory's canvas and figure: imported now,
    from matplotlib import figure  # noqa: F401   while the run is still starting)

    while True:
        try:
            args = pickle.load(requests)
        except EOFError:
            break
        try:
            plots.trajectory(*args)
            reply: tuple = ("ok",)
        except OSError as exc:
            reply = (("oserror", exc.errno, exc.strerror, exc.filename) if exc.errno is not None
                     else ("oserror", str(exc)))
        except Exception as exc:  # noqa: BLE001 - reported to the run, which raises it
            reply = ("error", f"{type(exc).__name__}: {exc}")
        pickle.dump(reply, replies)
        replies.flush()
    os._exit(0)  # nothing left to do: no interpreter teardown for the run's exit to wait on
