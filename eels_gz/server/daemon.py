"""The run server (``eels-gz serve``): warm once, then fork a child per command.

:class:`Server` takes a lock beside its socket (one server per socket), records its fingerprint
(:func:`eels_gz.server.common.fingerprint`), warms itself (:func:`eels_gz.sweep.forked.warm` with a
run of the default configuration for WARM_RUN_S into a temporary folder) and only then listens: a
client that finds the socket finds a warm server.

One thread, one selector: the listening socket, the clients' connections, and a wake-up pipe for
SIGCHLD (a child ended), SIGINT, SIGTERM and SIGHUP (stop). A run request from a client whose
fingerprint matches is served by a child forked for it (:func:`_child`): its own session (the
terminal's Ctrl-C on a foreground server does not reach it), SIGTERM when the server dies
(``PR_SET_PDEATHSIG``: its run ends ``interrupted`` with its summary), the client's folder,
environment, umask and descriptors, and the CLI's own code path; it leaves with ``os._exit`` so
nothing of the server's runs twice. The server relays the signals the client forwards, sends
the child's exit code back, and terminates the child of a client that went away.

A campaign's node server (:mod:`eels_gz.sweep.node_server`) is the same loop with ``sample``
instead of ``command``: a sample request (``{"op": "sample", "job": ...}``, no descriptors) gets a
child of its own that runs the sample (:func:`_sample_child`), with the same session, signals and
end.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import logging
import os
import selectors
import signal
import socket
import struct
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path

from eels_gz.server import common
from eels_gz.server.common import ServerError, difference, fingerprint, private_folder, receive, send, supported

log = logging.getLogger(__name__)

WARM_RUN_S = 0.1  # s simulated by the warm-up run (as a sweep's worker: the lidar fires once, log and plot written)
KILL_AFTER_S = 30.0  # s a child has to end after SIGTERM (its client went away, the server stops) before SIGKILL
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def warm_up_run() -> bool:
    """The default configuration run for WARM_RUN_S into a temporary folder (module docstring); False
    when it could not run (it only warms: the kernels are then loaded instead, and each run says
    what is wrong with its own configuration)."""
    from eels_gz import config
    from eels_gz.run.runner import run

    try:
        with tempfile.TemporaryDirectory(prefix="eels_gz_serve_") as tmp:
            run(config.resolve(None, {"duration": WARM_RUN_S}), Path(tmp) / "run")
    except Exception as exc:  # noqa: BLE001 - a warm-up only
        log.warning("run server: the warm-up run failed (%s: %s); serving without it", type(exc).__name__, exc)
        return False
    return True


class _Client:
    """One connection: the child serving it (None before its run starts) and when to kill that child."""

    def __init__(self, sock: socket.socket):
        self.sock, self.pid, self.kill_at = sock, None, None


class Server:
    """A warm run server on ``path`` (module docstring). ``serve(ready)`` blocks until stopped;
    ``ready(info)`` is called once it listens. ``command(args, prog)`` runs a command line in a
    child as the command line interface runs it (``eels-gz``'s click group, standalone: it exits).
    With ``sample``, it also takes ``{"op": "sample", ...}`` requests: ``sample(request)`` runs one
    in a child of its own (a campaign's node server, :mod:`eels_gz.sweep.node_server`); a server
    without ``command`` refuses command lines."""

    def __init__(self, path: Path, command: Callable[[list[str], str], None] | None,
                 warm_up: Callable[[], bool] = warm_up_run, sample: Callable[[dict], None] | None = None):
        if not supported():
            raise ServerError("the run server needs Linux (fork, Unix sockets with descriptor passing); "
                              "runs start cold here")
        self.path, self.command, self.warm_up, self.sample = Path(path), command, warm_up, sample
        self.lock_path = self.path.with_name(self.path.name + ".lock")
        self.children: dict[int, _Client] = {}
        self.clients: dict[int, _Client] = {}  # by socket fd
        self.stopping = False
        self.served = 0
        self.info: dict = {}

    # -- start and stop ------------------------------------------------------------------------------------
    def _lock(self) -> int:
        private_folder(self.path, create=True)
        common.check_server_files(self.path)  # the lock and log beside the socket are a server's, never a user's
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise
            owner = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
            os.close(fd)
            raise ServerError(f"a run server is already running on {self.path} (pid {owner}); "
                              "eels-gz serve --status / --stop") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        return fd

    def serve(self, ready: Callable[[dict], None] | None = None) -> None:
        from eels_gz.sweep.forked import warm

        self.lock_fd = self._lock()
        try:
            t0 = time.time()
            self.fingerprint = fingerprint()  # before the warm-up: the code the server imported
            warmed = warm(warm_up=self.warm_up)
            common.check_socket_path(self.path)  # again, now that the lock is held: never a user's file
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()  # a socket a killed server left (the lock says none runs)
            self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            self.listener.bind(os.fspath(self.path))
            os.chmod(self.path, 0o600)
            self.bound = os.stat(self.path).st_ino  # the socket file removed at the end is this one
            self.listener.listen(16)
            self.info = {"pid": os.getpid(), "socket": str(self.path), "started": t0,
                         "warm_s": warmed["seconds"], "warm_run": warmed["run"],
                         "version": self.fingerprint["version"], "executable": sys.executable,
                         "ready": time.time()}
            self._loop(ready)
        finally:
            self._close()

    def _close(self) -> None:
        listener = getattr(self, "listener", None)
        if listener is not None:
            with contextlib.suppress(OSError):
                if os.stat(self.path).st_ino == getattr(self, "bound", None):
                    self.path.unlink()
            listener.close()
        with contextlib.suppress(OSError):
            os.close(self.lock_fd)

    # -- the loop ------------------------------------------------------------------------------------------
    def _loop(self, ready) -> None:
        self.wake_r, wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        previous_wake = signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
        handlers = {s: signal.signal(s, self._on_stop) for s in STOP_SIGNALS}
        handlers[signal.SIGCHLD] = signal.signal(signal.SIGCHLD, lambda s, f: None)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.listener, selectors.EVENT_READ, "accept")
        self.selector.register(self.wake_r, selectors.EVENT_READ, "wake")
        try:
            if ready is not None:
                ready(self.info)
            while not (self.stopping and not self.children):
                for key, _ in self.selector.select(self._timeout()):
                    if key.data == "accept":
                        self._accept()
                    elif key.data == "wake":
                        with contextlib.suppress(BlockingIOError):
                            os.read(self.wake_r, 512)
                    else:
                        self._message(key.data)
                self._reap()
                self._kill_overdue()
        finally:
            signal.set_wakeup_fd(previous_wake)
            for s, h in handlers.items():
                signal.signal(s, h)
            for client in list(self.clients.values()):
                self._drop(client)
            self.selector.close()
            os.close(self.wake_r)
            os.close(wake_w)

    def _on_stop(self, signum, frame) -> None:
        self.stop(f"{signal.Signals(signum).name}")

    def stop(self, why: str) -> None:
        """Stop listening; the running children get SIGTERM (their runs end ``interrupted``)."""
        if self.stopping:
            return
        self.stopping = True
        log.info("run server stopping (%s); %d run(s) in progress get SIGTERM", why, len(self.children))
        with contextlib.suppress(KeyError, ValueError):
            self.selector.unregister(self.listener)
        for client in self.children.values():
            self._terminate(client)

    def _timeout(self) -> float | None:
        deadlines = [c.kill_at for c in self.children.values() if c.kill_at is not None]
        return max(0.0, min(deadlines) - time.monotonic()) if deadlines else None

    def _accept(self) -> None:
        try:
            sock, _ = self.listener.accept()
        except (BlockingIOError, InterruptedError):
            return
        _pid, uid, _gid = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                                              struct.calcsize("3i")))
        if uid != os.getuid():  # the folder's mode keeps others out; this makes sure
            log.warning("run server: refused a connection from uid %d", uid)
            sock.close()
            return
        client = _Client(sock)
        self.clients[sock.fileno()] = client
        self.selector.register(sock, selectors.EVENT_READ, client)

    def _message(self, client: _Client) -> None:
        try:
            message, fds = receive(client.sock, max_fds=3)
        except (ConnectionError, OSError, ValueError):
            message, fds = None, []
        try:
            if message is None:  # the client went away: its child must not run on for no one
                if client.pid is not None:
                    self._terminate(client)
                self._drop(client)
            elif "signal" in message and client.pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(client.pid, int(message["signal"]))
            elif message.get("op") == "run" and client.pid is None and len(fds) == 3:
                self._start(client, message, fds)
            elif message.get("op") == "sample" and client.pid is None and self.sample is not None:
                self._start(client, message, fds)
            elif message.get("op") == "status":
                send(client.sock, {**self.info, "runs_in_progress": len(self.children), "served": self.served,
                                   "up_s": time.time() - self.info["started"]})
            elif message.get("op") == "stop":
                send(client.sock, {"stopping": os.getpid()})
                self.stop("eels-gz serve --stop")
        except (ConnectionError, OSError):
            self._drop(client)
        finally:
            for fd in fds:
                os.close(fd)

    def _start(self, client: _Client, request: dict, fds: list[int]) -> None:
        if self.stopping:
            send(client.sock, {"stale": "the server is stopping"})
            return
        if request["op"] == "run":
            why = ("this server runs a campaign's samples, not command lines" if self.command is None
                   else difference(self.fingerprint, request.get("fingerprint", {})))
            if why is not None:
                send(client.sock, {"stale": why})
                return
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()  # nothing of the server's buffered output is written again by the child
        pid = os.fork()
        if pid == 0:
            (_child if request["op"] == "run" else _sample_child)(self, request, fds)
        client.pid = pid
        self.children[pid] = client
        self.served += 1
        send(client.sock, {"started": pid})

    def _reap(self) -> None:
        from eels_gz.sweep.forked import status_text

        for pid in list(self.children):
            try:
                done, status = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done, status = pid, 1 << 8
            if not done:
                continue
            client = self.children.pop(pid)
            code = os.waitstatus_to_exitcode(status)
            how = status_text(status)
            if client.sock.fileno() >= 0:
                with contextlib.suppress(OSError):
                    send(client.sock, {"exit": code if code >= 0 else 128 - code, "how": how})
                self._drop(client)

    def _terminate(self, client: _Client) -> None:
        if client.pid is not None and client.kill_at is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(client.pid, signal.SIGTERM)
            client.kill_at = time.monotonic() + KILL_AFTER_S

    def _kill_overdue(self) -> None:
        now = time.monotonic()
        for pid, client in self.children.items():
            if client.kill_at is not None and now >= client.kill_at:
                log.warning("run server: the run of pid %d did not end %.0f s after SIGTERM: SIGKILL", pid,
                            KILL_AFTER_S)
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                client.kill_at = now + KILL_AFTER_S

    def _drop(self, client: _Client) -> None:
        if client.sock.fileno() < 0:
            return
        self.clients.pop(client.sock.fileno(), None)
        with contextlib.suppress(KeyError, ValueError):
            self.selector.unregister(client.sock)
        client.sock.close()


def _leave_server(server: Server) -> None:
    """In a forked child: out of the server's session, signals and descriptors (module docstring)."""
    from eels_gz.sweep.forked import die_with_parent

    os.setsid()  # out of the server's session: a Ctrl-C on a foreground server's terminal is not its
    die_with_parent(signal.SIGTERM)  # the server killed: the run ends interrupted and writes its summary
    if os.getppid() != server.info["pid"]:  # the server ended before the line above took effect
        os.kill(os.getpid(), signal.SIGTERM)
    signal.set_wakeup_fd(-1)
    signal.pthread_sigmask(signal.SIG_SETMASK, [])  # whatever the server's starter blocked, the run takes
    for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD):
        signal.signal(s, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    # nothing of the server's stays open here: a client must see the end of its connection when the server ends
    for client in server.clients.values():
        client.sock.close()
    server.listener.close()
    server.selector.close()
    os.close(server.wake_r)
    os.close(server.lock_fd)


def _flush_and_exit(code: int) -> None:
    with contextlib.suppress(BaseException):
        sys.stdout.flush()
        sys.stderr.flush()
        logging.shutdown()
    os._exit(code)


def _sample_child(server: Server, request: dict, fds: list[int]) -> None:
    """The forked child of a campaign's sample: ``server.sample(request)``. Never returns."""
    code = 1
    try:
        _leave_server(server)
        for fd in fds:
            os.close(fd)
        from eels_gz.process_start import set_start

        set_start("forked", parent=server.info["pid"], node_server=True)
        server.sample(request)
        code = 0
    except BaseException:  # noqa: BLE001 - the sample records its own failures; this is a crash
        with contextlib.suppress(BaseException):
            traceback.print_exc()
    finally:
        _flush_and_exit(code)


def _child(server: Server, request: dict, fds: list[int]) -> None:
    """The forked child: become the client's process and run its command (module docstring). Never returns."""
    code = 1
    try:
        from eels_gz.process_start import set_start

        _leave_server(server)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        fds.clear()
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        os.umask(int(request["umask"]))
        tempfile.tempdir = None  # read TMPDIR again
        sys.argv = list(request["argv"])
        unbuffered = bool(os.environ.get("PYTHONUNBUFFERED"))
        with contextlib.suppress(Exception):
            sys.stdout.reconfigure(line_buffering=os.isatty(1) or unbuffered, write_through=unbuffered)
        root = logging.getLogger()
        for handler in root.handlers[:]:  # the command configures logging as in a fresh process (-v)
            root.removeHandler(handler)
        root.setLevel(logging.WARNING)
        set_start("server", server_pid=server.info["pid"], server_started=server.info["started"])
        try:
            server.command(list(request["argv"][1:]), request["prog"])
            code = 0
        except SystemExit as exc:
            if exc.code is None:
                code = 0
            elif isinstance(exc.code, int):
                code = exc.code
            else:
                print(exc.code, file=sys.stderr)
                code = 1
    except BaseException:  # noqa: BLE001 - as an uncaught exception in a fresh process: its traceback, exit 1
        with contextlib.suppress(BaseException):
            traceback.print_exc()
        code = 1
    finally:
        _flush_and_exit(code)
