"""What the run server and its clients share: where the socket is, the fingerprint of the code a
process would run, and the messages between them.

The socket is ``$EELS_GZ_SERVER_SOCKET`` if set, else ``server.sock`` in ``$XDG_RUNTIME_DIR/eels_gz/``,
else in the user cache's ``server/`` (:func:`eels_gz.usercache.cache_dir`). Its folder must be the
user's own and closed to others (created with mode 0700); the server also checks each client's
user id (``SO_PEERCRED``). Messages are JSON objects, one per ``SOCK_SEQPACKET`` packet; the run
request carries the client's stdin, stdout and stderr (``SCM_RIGHTS``).
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from pathlib import Path

from eels_gz.errors import EelsError

ENV_SOCKET = "EELS_GZ_SERVER_SOCKET"
ENV_SWITCH = "EELS_GZ_SERVER"  # "off" (or 0, no, false): every run starts cold
MAX_MESSAGE = 1 << 20  # bytes: a request (environment + fingerprint) is some 30 kB
MAX_UNIX_PATH = 107  # bytes of sun_path on Linux, less its final NUL
# environment variables read when a module is imported (numba's, the BLAS threads', matplotlib's
# backend) or that choose which files a run loads: a server warmed under others runs other code
ENV_PREFIXES = ("NUMBA_", "OMP_", "OPENBLAS_", "MKL_", "NUMEXPR_")
ENV_NAMES = ("PYTHONHASHSEED", "PYTHONWARNINGS", "MPLBACKEND", "EELS_GZ_SHARE", "GZ_SIM_SYSTEM_PLUGIN_PATH")
FLAGS = ("optimize", "dev_mode", "utf8_mode", "isolated", "ignore_environment", "no_site", "no_user_site")


class ServerError(EelsError):
    """The run server cannot be started, reached or trusted (a socket folder open to others...)."""


def supported() -> bool:
    """The server runs on Linux only (fork, SCM_RIGHTS, SO_PEERCRED, PR_SET_PDEATHSIG)."""
    return sys.platform.startswith("linux") and hasattr(socket, "send_fds") and hasattr(os, "fork")


def switched_off() -> bool:
    return os.environ.get(ENV_SWITCH, "").strip().lower() in ("off", "0", "no", "false")


def socket_path() -> Path:
    """The server's socket (module docstring); ServerError when the path is too long for a Unix socket."""
    given = os.environ.get(ENV_SOCKET)
    if given:
        path = Path(given).absolute()
    else:
        runtime = os.environ.get("XDG_RUNTIME_DIR")
        if runtime and os.path.isdir(runtime):
            folder = Path(runtime) / "eels_gz"
        else:
            from eels_gz.usercache import cache_dir

            cache = cache_dir()
            folder = (cache if cache is not None else Path(os.path.expanduser("~"), ".cache", "eels_gz")) / "server"
        path = folder / "server.sock"
    if len(os.fsencode(path)) > MAX_UNIX_PATH:
        raise ServerError(f"the run server's socket path '{path}' is longer than a Unix socket's {MAX_UNIX_PATH} "
                          f"bytes; set {ENV_SOCKET} to a shorter one")
    return path


def check_socket_path(path: Path) -> None:
    """ServerError unless the server may bind ``path``: nothing is there, or a socket a killed server
    left (no one listens on it). A file, a folder or a link there is never removed; nor are the
    lock beside it (``SOCKET.lock``) unless it is one a server wrote (its pid), or a log
    (``SOCKET.log``, appended to) that is not a regular file."""
    import stat

    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    if st is not None:
        if not stat.S_ISSOCK(st.st_mode):
            raise ServerError(f"'{path}' (the run server's socket, ${ENV_SOCKET} or the default) is not a socket: "
                              f"eels-gz serve never removes it; set {ENV_SOCKET} to a new path")
        sock = connect(path, timeout=1.0)
        if sock is not None:
            sock.close()
            raise ServerError(f"something is listening on '{path}' already; eels-gz serve --status says if it is "
                              f"a run server, else set {ENV_SOCKET} to a new path")
    check_server_files(path)


def check_server_files(path: Path) -> None:
    """ServerError unless the lock and log beside socket ``path`` are a server's (check_socket_path)."""
    lock = path.with_name(path.name + ".lock")
    if lock.is_symlink() or (lock.exists() and not (lock.is_file() and _pid_file(lock))):
        raise ServerError(f"'{lock}' (the run server's lock beside its socket) is not one a server wrote: eels-gz "
                          f"serve never replaces it; move it away or set {ENV_SOCKET} to a new path")
    log = path.with_name(path.name + ".log")
    if log.is_symlink() or (log.exists() and not log.is_file()):
        raise ServerError(f"'{log}' (the detached run server's log) is not a regular file; move it away or set "
                          f"{ENV_SOCKET} to a new path")


def _pid_file(path: Path) -> bool:
    try:
        text = path.read_bytes()[:64].decode().strip()
    except (OSError, UnicodeDecodeError):
        return False
    return text == "" or text.isdigit()


def private_folder(path: Path, create: bool) -> None:
    """Check (and with ``create``, make with mode 0700) the socket's folder: it must be this user's
    and writable by no one else, or another user could put a server of theirs there."""
    folder = path.parent
    if create:
        try:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:
            raise ServerError(f"cannot create the run server's folder '{folder}': {exc.strerror}") from None
    try:
        st = folder.stat()
    except FileNotFoundError:
        return
    if st.st_uid != os.getuid() or st.st_mode & 0o022:
        raise ServerError(f"the run server's folder '{folder}' must belong to you and be writable by no one else "
                          f"(owner uid {st.st_uid}, mode {st.st_mode & 0o777:o}; expected uid {os.getuid()}, "
                          "mode 700)")


def fingerprint() -> dict:
    """What decides the code a run of this process would run: the package's version, the paths,
    modification times and sizes of the files of ``eels_gz/``, ``plugins_py/``, ``config/`` and the
    folders on ``GZ_SIM_SYSTEM_PLUGIN_PATH``, the interpreter, its flags and search path, and the
    environment read at import time (ENV_PREFIXES, ENV_NAMES). A stat of some 250 files: milliseconds."""
    import eels_gz
    from eels_gz.paths import share_dir

    package = Path(eels_gz.__file__).resolve().parent
    roots = [package]
    try:
        share = share_dir()
        roots += [share / "plugins_py", share / "config"]
    except FileNotFoundError:  # the run says so itself
        pass
    roots += [Path(p) for p in os.environ.get("GZ_SIM_SYSTEM_PLUGIN_PATH", "").split(os.pathsep) if p]
    files: dict[str, list[int]] = {}
    for root in dict.fromkeys(roots):
        for folder, subfolders, names in os.walk(root):
            subfolders[:] = sorted(d for d in subfolders if d != "__pycache__")
            for name in names:
                if name.endswith((".pyc", ".pyo")):
                    continue
                full = os.path.join(folder, name)
                try:
                    st = os.stat(full)
                except OSError:
                    continue
                files[full] = [st.st_mtime_ns, st.st_size]
    env = {k: v for k, v in os.environ.items() if k.startswith(ENV_PREFIXES) or k in ENV_NAMES}
    return {"version": eels_gz.__version__, "executable": sys.executable,
            "flags": {name: getattr(sys.flags, name, None) for name in FLAGS},
            "path": [_path_entry(p) for p in sys.path], "env": env, "files": files}


def _path_entry(entry: str) -> str:
    """A sys.path entry as the folder it means here: "" and relative folders resolved against the
    working folder; other entries (a path hook's marker, e.g. an editable install's) as they are."""
    if not entry:
        return os.getcwd()
    return os.path.abspath(entry) if not os.path.isabs(entry) and os.path.isdir(entry) else entry


def difference(server: dict, client: dict) -> str | None:
    """Why a client's fingerprint differs from the server's (the first reason found), or None."""
    for key, what in (("version", "the package's version"), ("executable", "the Python interpreter"),
                      ("flags", "the interpreter's flags")):
        if server.get(key) != client.get(key):
            return f"{what} differs ({server.get(key)} in the server, {client.get(key)} here)"
    theirs, ours = server.get("path", []), client.get("path", [])
    if theirs != ours:
        k = next((k for k, (a, b) in enumerate(zip(theirs, ours)) if a != b), min(len(theirs), len(ours)))
        return (f"the Python search path differs at sys.path[{k}] ({theirs[k] if k < len(theirs) else 'nothing'} "
                f"in the server, {ours[k] if k < len(ours) else 'nothing'} here)")
    if server.get("env") != client.get("env"):
        names = sorted(k for k in set(server["env"]) | set(client["env"])
                       if server["env"].get(k) != client["env"].get(k))
        return f"the environment differs in {', '.join(names)}"
    theirs, ours = server.get("files", {}), client.get("files", {})
    for path in sorted(set(theirs) | set(ours)):
        if path not in theirs:
            return f"{path} is new since the server started"
        if path not in ours:
            return f"{path} is gone since the server started"
        if theirs[path] != ours[path]:
            return f"{path} changed since the server started"
    return None


def send(sock: socket.socket, message: dict, fds: list[int] | None = None) -> None:
    data = json.dumps(message).encode()
    if fds:
        socket.send_fds(sock, [data], fds)
    else:
        sock.send(data)


def receive(sock: socket.socket, max_fds: int = 0) -> tuple[dict | None, list[int]]:
    """One message (None at the end of the connection) and the descriptors that came with it."""
    if max_fds:
        data, fds, _flags, _addr = socket.recv_fds(sock, MAX_MESSAGE, max_fds)
    else:
        data, fds = sock.recv(MAX_MESSAGE), []
    if not data:
        return None, fds
    return json.loads(data), fds


def connect(path: Path, timeout: float | None = 5.0) -> socket.socket | None:
    """A connection to the server at ``path``, or None when none listens there."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    sock.settimeout(timeout)
    try:
        sock.connect(os.fspath(path))
    except (FileNotFoundError, ConnectionRefusedError, NotADirectoryError, PermissionError):
        sock.close()
        return None
    except OSError:
        sock.close()
        raise
    return sock


def ask(path: Path, message: dict, timeout: float = 5.0) -> dict | None:
    """Send ``message`` and return the server's answer, or None when no server answers there."""
    sock = connect(path, timeout)
    if sock is None:
        return None
    with sock:
        try:
            send(sock, message)
            answer, _ = receive(sock)
        except (TimeoutError, ConnectionError):
            return None
    return answer


def alive(pid: int) -> bool:
    """Whether process ``pid`` (not necessarily a child of this one) still runs: not ended, not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return False  # the pid is someone else's now: ours ended
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"  # ended, not yet reaped
    except (OSError, IndexError):
        return True


def wait_gone(pid: int, timeout: float) -> bool:
    """Wait until process ``pid`` (not a child of this one) has ended; False on timeout."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if not alive(pid):
            return True
        time.sleep(0.02)
    return False
