"""The node's warm process that a campaign's samples are forked from.

Every sample runs in its own process, forked from a warm one (:mod:`eels_gz.sweep.forked`): a
sample that crashes, leaks or diverges cannot reach the next, and none pays a fresh interpreter's
start. A Ray worker that has to warm itself first does so on its first sample: the imports, a
short run of the campaign's base and its kernels, 1.5–2 s per worker on the campaign's critical
path, after Ray has started the worker.

So before Ray starts, :func:`node_server` starts one warm process on the campaign's own node: a
:class:`eels_gz.server.daemon.Server` (the run server's loop, in a fresh interpreter started in
its own session) that warms itself with the campaign's base (:func:`eels_gz.sweep.forked.warm`)
while Ray starts, then listens on a Unix socket in a private temporary folder and forks a child
per sample request. Each sample is still one Ray task: a worker on the same node
(:func:`run_on_node_server`, called by :func:`eels_gz.sweep.execute.sample_task`) sends its job to
the server, forwards Ray's cancel (SIGINT) to the sample's process, and reads its row when it
ends; the server reports how the process ended. The worker never warms itself then.

The server is the campaign's, not Ray's: it ends with the campaign (``--address`` leaves the
cluster running, not the server), or with the process that started it (``PR_SET_PDEATHSIG``); its
samples end ``interrupted`` with their summaries when it does (SIGTERM), and a worker that
goes away (Ray killed it) takes its sample's process with it (the server terminates the child of a
closed connection). A worker on another node, one that finds no server (it failed to start, the
folder's path is too long for a socket, not Linux) or one whose server is gone before its sample
began warms itself and forks the sample as before; what the campaign used is in sweep.json's
``overhead.node_server``.
"""

from __future__ import annotations

import base64
import contextlib
import logging
import os
import pickle
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

log = logging.getLogger(__name__)

SOCKET_NAME = "samples.sock"
LOG_NAME = "server.log"
READY_WAIT_S = 300.0  # s a worker waits for the node's server to finish warming while its process lives
CONNECT_POLL_S = 0.02  # s between a worker's looks for the server's socket while it warms
STOP_WAIT_S = 10.0  # s the server has to end once told to stop, before SIGKILL
ORPHAN_WAIT_S = 60.0  # s a worker waits for its sample's process to end once the server is gone
ANSWER_WAIT_S = 60.0  # s a worker waits for the server to say it started the sample (it forks at once)


def supported() -> bool:
    from eels_gz.server.common import supported as server_supported

    return server_supported()


class NodeServer:
    """The driver's handle on the node's warm process (module docstring)."""

    def __init__(self, folder: Path, proc: subprocess.Popen, log_path: Path, log_from: int = 0):
        self.folder, self.proc, self.log_path, self.log_from = folder, proc, log_path, log_from
        self.path = folder / SOCKET_NAME

    @classmethod
    def start(cls, job, run_job: Callable | None = None, log_path: Path | None = None) -> NodeServer | None:
        """Start the server for a campaign whose jobs are like ``job`` (its base is the warm-up) and
        whose samples are run by ``run_job(job)`` in its children (a module-level function, sent by
        reference), its output (the warnings of its samples' runs) appended to ``log_path``
        (default: in its private folder); None (said in the log) when it cannot be."""
        from eels_gz.server.common import MAX_UNIX_PATH

        if not supported():
            return None
        folder = Path(tempfile.mkdtemp(prefix="eels_gz_node_"))  # mode 0700: the user's own
        if len(os.fsencode(folder / SOCKET_NAME)) > MAX_UNIX_PATH:
            log.info("no node server: the temporary folder's path '%s' is too long for a Unix socket", folder)
            shutil.rmtree(folder, ignore_errors=True)
            return None
        log_path = Path(log_path) if log_path is not None else folder / LOG_NAME
        try:
            with open(log_path, "ab") as err:
                err.write(f"== node server started by pid {os.getpid()}, {time.strftime('%Y-%m-%dT%H:%M:%S%z')}\n"
                          .encode())
                err.flush()
                log_from = err.tell()
                # a sample holds one CPU (its Ray task's num_cpus=1): one BLAS thread, as Ray gives its workers
                env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
                proc = subprocess.Popen([sys.executable, "-m", "eels_gz.sweep.node_server", str(folder / SOCKET_NAME),
                                         str(os.getpid())], stdin=subprocess.PIPE, stdout=err,
                                        stderr=err, start_new_session=True, close_fds=True, env=env)
            try:
                proc.stdin.write(pickle.dumps((run_job, job)))
                proc.stdin.close()
            except OSError:
                pass  # it ended at once: the workers find it gone and warm themselves; stop() says why
        except OSError as exc:
            log.warning("no node server for the campaign's samples (%s): each worker warms itself", exc)
            shutil.rmtree(folder, ignore_errors=True)
            return None
        return cls(folder, proc, log_path, log_from)

    def where(self, node: str | None) -> dict:
        """What a worker needs to find it (a Job's ``node_server``)."""
        return {"socket": str(self.path), "pid": self.proc.pid, "node": node}

    def status(self) -> dict | None:
        """The server's info (when it started, warmed, became ready, how many samples it served), or
        None when it does not answer."""
        from eels_gz.server.common import ask

        if self.proc.poll() is not None:
            return None
        with contextlib.suppress(OSError):
            return ask(self.path, {"op": "status"}, timeout=2.0)
        return None

    def stop(self) -> None:
        """Stop the server (its running samples end ``interrupted``) and remove its folder."""
        from eels_gz.server.common import ask

        if self.proc.poll() is None:
            with contextlib.suppress(OSError):
                ask(self.path, {"op": "stop"}, timeout=2.0)
            try:
                self.proc.wait(timeout=STOP_WAIT_S)
            except subprocess.TimeoutExpired:
                self.proc.terminate()
                try:
                    self.proc.wait(timeout=STOP_WAIT_S)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
        elif self.proc.returncode != 0:
            lines: list[str] = []
            with contextlib.suppress(OSError), open(self.log_path, "rb") as f:
                f.seek(self.log_from)
                lines = f.read().decode(errors="replace").strip().splitlines()
            tail = f": {lines[-1]}" if lines else ""
            log.warning("the campaign's node server ended early (exit %s)%s; its workers warmed themselves",
                        self.proc.returncode, tail)
        with contextlib.suppress(OSError), open(self.log_path, "ab") as f:
            f.write(f"== node server ended (exit code {self.proc.returncode})\n".encode())
        shutil.rmtree(self.folder, ignore_errors=True)


@contextlib.contextmanager
def node_server(job, run_job: Callable, log_path: Path | None = None) -> Iterator[NodeServer | None]:
    """The node server of a campaign whose jobs are like ``job`` for the time of the block (None
    when ``job`` is None or it cannot start); the rest as for :meth:`NodeServer.start`."""
    server = NodeServer.start(job, run_job, log_path) if job is not None else None
    try:
        yield server
    finally:
        if server is not None:
            server.stop()


# -- a worker's side ------------------------------------------------------------------------------------------
def this_node() -> str | None:
    """This process's Ray node (None outside Ray)."""
    try:
        import ray

        return ray.get_runtime_context().get_node_id() if ray.is_initialized() else None
    except Exception:  # noqa: BLE001 - outside a Ray worker there is no node to compare
        return None


def _connect(where: dict) -> socket.socket | None:
    """A connection to the node's server, waiting while it warms (its socket not there yet, its
    process alive); None when it is gone or did not come up in READY_WAIT_S."""
    from eels_gz.server.common import alive, connect

    end = time.monotonic() + READY_WAIT_S
    while time.monotonic() < end:
        sock = connect(Path(where["socket"]), timeout=10.0)
        if sock is not None:
            return sock
        if not alive(int(where["pid"])):
            return None
        time.sleep(CONNECT_POLL_S)
    log.warning("the node server (pid %s) did not come up in %.0f s: this worker warms itself", where["pid"],
                READY_WAIT_S)
    return None


def _wait(sock: socket.socket, poll_s: float) -> dict | None:
    """Forward Ray's cancel (SIGINT) to the sample's process until the server says how it ended;
    None when the server went away first."""
    from eels_gz.server.common import receive, send

    def forward(signum, frame) -> None:
        with contextlib.suppress(OSError):
            send(sock, {"signal": signal.SIGINT})

    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, forward) if main else None
    sock.settimeout(poll_s)  # between two waits Ray's cancel reaches this thread
    try:
        while True:
            try:
                reply, _ = receive(sock)
            except TimeoutError:
                continue
            except (ConnectionError, OSError, ValueError):
                return None
            if reply is None or "exit" in reply:
                return reply
    finally:
        if main:
            signal.signal(signal.SIGINT, previous)


def run_on_node_server(job, read_row: Callable, crashed: Callable, poll_s: float = 0.02) -> tuple[dict, float] | None:
    """Run ``job`` in a process forked by its node's server (``job.node_server``); its row (read
    back with ``read_row(folder)``, or ``crashed(job, how)`` when the process ended without one) and
    the seconds from the request to the process's end. None when no server on this node took it:
    the caller runs it in a process of its own (module docstring)."""
    where = getattr(job, "node_server", None)
    if not where or not supported() or where.get("node") != this_node():
        return None
    sock = _connect(where)
    if sock is None:
        return None
    from eels_gz.server.common import receive, send, wait_gone

    with sock:
        t0 = time.perf_counter()
        try:
            send(sock, {"op": "sample", "job": base64.b64encode(pickle.dumps(job)).decode()})
        except OSError:
            return None  # the request never reached it
        try:
            sock.settimeout(ANSWER_WAIT_S)
            reply, _ = receive(sock)
        except (OSError, ValueError) as exc:
            reply = {"lost": f"{type(exc).__name__}: {exc}"}
        if reply is not None and "stale" in reply:
            return None  # refused (it is stopping): nothing of the sample ran
        if reply is None or "started" not in reply:
            # it may have forked the sample before it failed: not run twice here; --resume reruns it
            return crashed(job, "the node server took the sample but did not say that it started it "
                                f"({(reply or {}).get('lost', 'it closed the connection')})"), \
                time.perf_counter() - t0
        pid = int(reply["started"])
        ended = _wait(sock, poll_s)
    if ended is None:  # the server is gone: its child got SIGTERM and writes its row as interrupted
        wait_gone(pid, ORPHAN_WAIT_S)
        how = "the node server ended during the sample"
    else:
        how = ended.get("how", "?")
    seconds = time.perf_counter() - t0
    row = read_row(Path(job.folder)) if ended is None or int(ended["exit"]) == 0 else None
    if row is None or row.get("sample") != job.index:
        row = crashed(job, how)
    return row, seconds


# -- the server's process ---------------------------------------------------------------------------------
class _Stopped(BaseException):  # not an Exception: the warm-up run, which catches those, must not take it
    """SIGTERM while the server warms (the campaign's process gone)."""


def _stop_while_warming(signum, frame) -> None:
    raise _Stopped


def main(argv: list[str] | None = None) -> int:
    """``python -m eels_gz.sweep.node_server SOCKET PARENT_PID`` with ``(run_job, job)`` pickled on stdin.
    Its folder goes when it stops (told by the campaign, or the campaign's process gone); after
    a failure it stays for the campaign to read the log and remove."""
    from eels_gz.server.daemon import Server
    from eels_gz.sweep.forked import _warm_run, die_with_parent

    path, parent = (argv if argv is not None else sys.argv[1:])[:2]
    signal.signal(signal.SIGTERM, _stop_while_warming)  # the server's loop takes SIGTERM over once it listens
    stopped = False
    try:
        die_with_parent(signal.SIGTERM)  # the campaign's process gone (even killed): this server stops
        if os.getppid() != int(parent):
            raise _Stopped
        run_job, job = pickle.load(sys.stdin.buffer)
        logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
        warm_up = (lambda: _warm_run(job)) if job is not None else (lambda: False)  # no job: every cached kernel
        Server(Path(path), command=None, warm_up=warm_up,
               sample=lambda request: run_job(pickle.loads(base64.b64decode(request["job"])))).serve()
        stopped = True
    except _Stopped:
        stopped = True
    finally:
        if stopped:
            # told to stop: more SIGTERMs may come (PR_SET_PDEATHSIG's signal can come more than once,
            # kernel/exit.c forget_original_parent), and one raised in the removal would leave the folder
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            shutil.rmtree(Path(path).parent, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
