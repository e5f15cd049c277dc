"""``eels-gz serve``: a warm run server that ``eels-gz run`` hands its commands to (:mod:`eels_gz.server`)."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import sys
import time
from pathlib import Path

import click

from eels_gz.cli.common import fail

STOP_WAIT_S = 60.0  # s `--stop` waits for the server to end (its runs get SIGTERM and write their summaries)
EXIT_NOT_RUNNING = 1  # --status / --stop: no server on the socket; a second server refused


@click.command()
@click.option("--detach", is_flag=True, help="Run in the background; return once the server is warm and listening.")
@click.option("--status", is_flag=True, help="Say whether a server is running, and what it serves (exit 1 if none).")
@click.option("--stop", is_flag=True, help="Stop the running server (runs in progress end 'interrupted').")
@click.option("--json", "as_json", is_flag=True, help="With --status: print it as JSON.")
def serve(detach, status, stop, as_json):
    """Keep a warm process that `eels-gz run` hands its commands to (Linux), so that a run starts in a
    moment: imports, kernels and a first run done once. Foreground until Ctrl-C unless --detach.
    The socket: $EELS_GZ_SERVER_SOCKET, else $XDG_RUNTIME_DIR/eels_gz/server.sock, else the user
    cache's server/. A run whose code differs from the server's (an edited file) runs cold and says
    why; EELS_GZ_SERVER=off or `run --no-server` always runs cold."""
    from eels_gz.server.common import ServerError, check_socket_path, private_folder, socket_path, supported

    chosen = [name for name, on in (("--detach", detach), ("--status", status), ("--stop", stop)) if on]
    if len(chosen) > 1:
        raise click.UsageError(f"{' and '.join(chosen)} cannot be given together")
    if as_json and not status:
        raise click.UsageError("--json applies to --status only")
    if not supported():
        fail("eels-gz serve needs Linux (fork, Unix sockets that pass descriptors); runs start cold here")
    try:
        path = socket_path()
        private_folder(path, create=not (status or stop))
        if not (status or stop) and not _answers(path):  # before the warm-up: a file there is never removed
            check_socket_path(path)
    except ServerError as exc:
        fail(exc)
    if status:
        _status(path, as_json)
    elif stop:
        _stop(path)
    elif detach:
        _detach(path)
    else:
        _foreground(path)


def _answers(path: Path) -> bool:
    """Whether a run server answers on ``path`` (then the start says so, as before)."""
    from eels_gz.server.common import ask

    return ask(path, {"op": "status"}, timeout=2.0) is not None


def _status(path: Path, as_json: bool) -> None:
    from eels_gz.server.common import ask

    info = ask(path, {"op": "status"})
    if info is None:
        if as_json:
            click.echo(json.dumps({"running": False, "socket": str(path)}))
        else:
            click.echo(f"no run server on {path}")
        raise SystemExit(EXIT_NOT_RUNNING)
    if as_json:
        click.echo(json.dumps({"running": True, **info}, indent=2))
        return
    click.echo(f"run server on {path}: pid {info['pid']}, up {info['up_s']:.0f} s, eels_gz {info['version']} "
               f"({info['executable']}), warmed in {info['warm_s']:.1f} s; {info['served']} run(s) served, "
               f"{info['runs_in_progress']} running")


def _stop(path: Path) -> None:
    from eels_gz.server.common import ask, wait_gone

    answer = ask(path, {"op": "stop"})
    if answer is None:
        click.echo(f"no run server on {path}")
        raise SystemExit(EXIT_NOT_RUNNING)
    pid = int(answer["stopping"])
    if wait_gone(pid, STOP_WAIT_S):
        click.echo(f"run server (pid {pid}) stopped")
        return
    fail(f"the run server (pid {pid}) has not stopped after {STOP_WAIT_S:.0f} s (runs still ending?); "
         f"kill {pid} ends it", 1)


def _ready_line(info: dict) -> str:
    return (f"run server ready on {info['socket']} (pid {info['pid']}, warmed in {info['warm_s']:.1f} s): "
            "eels-gz run hands its commands to it")


def _serve(path: Path, ready) -> None:
    from eels_gz.server.daemon import Server

    main = click.get_current_context().find_root().command  # the eels-gz group: a child runs its command line

    def command(args: list[str], prog: str) -> None:
        main.main(args=args, prog_name=prog, standalone_mode=True)

    logging.getLogger("eels_gz.server").setLevel(logging.INFO)
    Server(path, command).serve(ready)


def _foreground(path: Path) -> None:
    from eels_gz.server.common import ServerError

    click.echo("run server: warming up (the run's imports, a 0.1 s run of the default configuration)...")
    try:
        _serve(path, lambda info: click.echo(_ready_line(info) + "; Ctrl-C stops it"))
    except ServerError as exc:
        fail(exc, EXIT_NOT_RUNNING)
    click.echo("run server stopped")


def _detach(path: Path) -> None:
    """Fork the server into its own session, its output to SOCKET.log; return when it is ready."""
    log_path = path.with_name(path.name + ".log")
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the server
        os.close(read_end)
        code = 0
        try:
            os.setsid()
            out = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            os.dup2(out, 1)
            os.dup2(out, 2)
            os.close(out)
            os.close(null)
            signal.signal(signal.SIGINT, signal.SIG_DFL)

            def ready(info: dict) -> None:
                click.echo(time.strftime("%Y-%m-%dT%H:%M:%S ") + _ready_line(info))
                os.write(write_end, b"ready")
                os.close(write_end)

            _serve(path, ready)
        except BaseException as exc:  # noqa: BLE001 - said to the waiting parent and in the log
            code = 1
            with contextlib.suppress(BaseException):
                os.write(write_end, f"{exc}".encode() or type(exc).__name__.encode())
            logging.getLogger(__name__).exception("run server failed")
        finally:
            with contextlib.suppress(BaseException):
                sys.stdout.flush()
                sys.stderr.flush()
            os._exit(code)
    os.close(write_end)
    chunks = []
    while True:
        data = os.read(read_end, 4096)
        if not data:
            break
        chunks.append(data)
    os.close(read_end)
    said = b"".join(chunks).decode(errors="replace")
    if said == "ready":
        click.echo(f"run server ready on {path} (pid {pid}, log {log_path}); eels-gz serve --stop stops it")
        return
    os.waitpid(pid, 0)
    fail(f"the run server did not start: {said or 'it ended without a word'} (log: {log_path})", EXIT_NOT_RUNNING)
