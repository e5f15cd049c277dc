"""``eels-gz run``'s side: hand the command to a running, matching server, or say why not.

:func:`hand_over` returns None (the caller runs the command cold, in its own process) when the
server is off (``EELS_GZ_SERVER=off``, ``run --no-server``, not Linux), when none listens on the
socket, or when the server's fingerprint differs from this process's (it then logs one line saying
why: a user who edited a plugin never runs old code). Otherwise it sends the command line, the
working folder, the environment, the umask and its stdin, stdout and stderr, forwards SIGINT,
SIGTERM and SIGHUP to the run's process while it waits, stops it with itself on Ctrl-Z (SIGTSTP) and
continues it when continued itself, and returns the run's exit code.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import sys

from eels_gz.server.common import (ServerError, connect, fingerprint, private_folder, receive, send, socket_path,
                                   supported, switched_off, wait_gone)

log = logging.getLogger(__name__)

FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
ORPHAN_WAIT_S = 60.0  # s the client waits for the run's process to end once its server is gone
EXIT_SERVER_LOST = 1


def _stdio() -> list[int]:
    """Descriptors 0, 1 and 2, with /dev/null for any that is closed."""
    fds = []
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
            fds.append(fd)
        except OSError:
            fds.append(os.open(os.devnull, os.O_RDWR))
    return fds


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def hand_over(argv: list[str], prog: str) -> int | None:
    """Run ``prog argv[1:]`` (``argv``: sys.argv) through the server; its exit code, or None to run cold."""
    if not supported() or switched_off():
        return None
    try:
        path = socket_path()
        private_folder(path, create=False)
        sock = connect(path, timeout=10.0)
    except (ServerError, OSError) as exc:
        log.warning("the run server cannot be used (%s): running in this process", exc)
        return None
    if sock is None:
        return None
    with sock:
        fds = _stdio()
        try:
            send(sock, {"op": "run", "argv": list(argv), "prog": prog, "cwd": os.getcwd(), "env": dict(os.environ),
                        "umask": _umask(), "fingerprint": fingerprint()}, fds)
            reply, _ = receive(sock)
        except (TimeoutError, ConnectionError, OSError) as exc:
            log.warning("the run server at %s did not answer (%s): running in this process", path, exc)
            return None
        finally:
            for given, fd in zip((0, 1, 2), fds):
                if fd != given:
                    os.close(fd)
        if reply is None or "stale" in reply:
            why = reply["stale"] if reply else "it closed the connection"
            log.warning("the run server at %s is out of date (%s): running in this process; restart it with "
                        "eels-gz serve --stop, then eels-gz serve --detach", path, why)
            return None
        return _wait(sock, int(reply["started"]))


def _wait(sock: socket.socket, pid: int) -> int:
    """Forward signals to the run's process ``pid`` until the server reports how it ended."""
    sock.settimeout(None)

    def forward(signum, frame) -> None:
        with contextlib.suppress(OSError):
            send(sock, {"signal": signum})

    def suspend(signum, frame) -> None:  # Ctrl-Z: the run's process stops with this one and goes on with it
        with contextlib.suppress(OSError):
            send(sock, {"signal": signal.SIGSTOP})  # SIGSTOP: the run's process is in no terminal's job control
        os.kill(os.getpid(), signal.SIGSTOP)  # stopped here until `fg` or `bg` continues this process
        with contextlib.suppress(OSError):
            send(sock, {"signal": signal.SIGCONT})

    previous = {s: signal.signal(s, forward) for s in FORWARDED}
    previous[signal.SIGTSTP] = signal.signal(signal.SIGTSTP, suspend)
    try:
        try:
            reply, _ = receive(sock)
        except (ConnectionError, OSError):
            reply = None
        if reply is not None and "exit" in reply:
            if reply["how"].startswith("killed"):
                print(f"eels-gz: error: the run's process (pid {pid}) was {reply['how']}", file=sys.stderr)
            return int(reply["exit"])
        # the server is gone: its child got SIGTERM (PR_SET_PDEATHSIG) and writes its summary; wait for it
        ended = wait_gone(pid, ORPHAN_WAIT_S)
        state = "has ended" if ended else f"had not ended after {ORPHAN_WAIT_S:.0f} s"
        print(f"eels-gz: error: the run server stopped during the run; the run's process (pid {pid}) {state}. "
              "If the run had begun, its folder's summary.json says how far it got (status 'interrupted'); "
              "run the command again", file=sys.stderr)
        return EXIT_SERVER_LOST
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
