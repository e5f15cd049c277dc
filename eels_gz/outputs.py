"""Where runs write: output folders and files that never mix two runs and never
fail half-way for a reason that could have been seen before the work began.

A **run folder** (``eels-gz run --out DIR``, ``compare``, each sample of a campaign; a campaign's
own folder, ``eels-gz sweep`` and ``rover campaign``, is written in place so that ``--resume`` can
finish it: :class:`eels_gz.sweep.execute.SweepFolder`):

- is refused when it already holds a run (a ``summary.json``, ``compare.json``
  or ``campaign.json``, or the marker file ``.eels-gz``, at its top: a folder
  of runs is not a run), unless ``overwrite``; a non-empty folder that holds no
  run is always refused, and so is, even with ``overwrite``, a run folder that
  holds anything the command did not write itself (:func:`foreign_entries`:
  the files a run wrote are listed in its marker) or the output of another
  command, so ``--overwrite`` never removes files a run did not write;
- is locked while the run lasts: ``.DIR.lock`` beside it holds an exclusive
  ``flock`` (the kernel releases it when the process ends, even by SIGKILL),
  so a second run into the same folder fails at once, naming the first;
- is written as ``DIR.partial`` beside it and renamed to ``DIR`` when the run
  ends, whatever its status (finished, diverged, interrupted); with
  ``overwrite`` the old run is moved aside at that moment (``.DIR.old-PID``
  beside it) and removed once the new one is in place. A run killed without
  warning (SIGKILL, power loss) leaves ``DIR.partial``: its ``summary.json``
  says ``incomplete`` and its ``log.mcap`` is readable up to its last complete
  chunk (``eels-gz recover``). The next run into ``DIR`` refuses to start
  until it is moved away, or discards it with ``--overwrite``;
- is checked before any model is built: a path under a file, a folder without
  write permission, a read-only file system or a full disk is an
  :class:`~eels_gz.errors.OutputError` naming the path and the reason.

An **output file** (``rover drive``'s JSON, ``calibrate simulate``'s CSV,
``--save-config``, ``--plot``, ``view --out``, ``recover -o``) is checked the same way before the
work and written to a temporary sibling that is renamed into place, so a reader never sees half a
file. An existing one is refused unless ``overwrite``, and even then replaced only if it is
recognisably a file of that kind eels-gz wrote (:mod:`eels_gz.own_files`); the later files a
command adds to an output folder (``view``'s ``replay.html``) count as the folder's own on the
same terms.

Nothing here removes a path it did not create: a lock file, an old output moved aside or a
temporary file takes a name nobody holds, or the command stops and names what is in the way.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import shlex
import shutil
import socket
import sys
import time
from pathlib import Path

from eels_gz.errors import OutputError
from eels_gz.process_start import process_info

MARKER = ".eels-gz"  # written into every run folder: what wrote it, and when
RESULT_FILES = ("summary.json", "compare.json", "campaign.json")  # a folder with one of these holds a run
PARTIAL_SUFFIX = ".partial"
PROBE_BYTES = 64 * 1024  # written and removed before any model is built
SUMMARY_RESERVE = 64 * 1024  # bytes kept for a run's summary, so that a full disk cannot cost it

_REASONS = {
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EROFS: "read-only file system",
    errno.ENOSPC: "no space left on device",
    errno.EDQUOT: "disk quota exceeded",
    errno.ENOTDIR: "a part of the path is a file, not a folder",
    errno.EISDIR: "it is a folder",
    errno.ENAMETOOLONG: "the name is too long",
}


def reason(exc: OSError) -> str:
    """A short, human reason for an OSError (errno name kept for the rare ones)."""
    return _REASONS.get(exc.errno, exc.strerror or type(exc).__name__)


def command_line() -> str:
    return " ".join(shlex.quote(a) for a in [Path(sys.argv[0]).name, *sys.argv[1:]])


def _fail(what: str, path: Path, exc: OSError) -> OutputError:
    return OutputError(f"cannot {what} '{path}': {reason(exc)}")


def make_dir(path: str | Path, what: str = "create the output folder") -> Path:
    """``mkdir -p`` with an OutputError naming the path and reason (a part of it is a file, no permission...)."""
    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise OutputError(f"cannot {what} '{path}': '{_first_file(path)}' is a file, not a folder") from None
    except OSError as exc:
        if exc.errno == errno.ENOTDIR:
            raise OutputError(f"cannot {what} '{path}': '{_first_file(path)}' is a file, not a folder") from None
        raise _fail(what, path, exc) from None
    return path


def _first_file(path: Path) -> Path:
    for parent in [*reversed(path.parents), path]:
        if parent.exists() and not parent.is_dir():
            return parent
    return path


def probe(folder: Path, size: int = PROBE_BYTES) -> None:
    """Write ``size`` bytes into ``folder`` (to the disk) and remove them; OutputError if that fails."""
    path = folder / f".probe-{os.getpid()}"
    try:
        # O_EXCL: a file of that name is not ours to fill or to remove
        with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644), "wb") as f:
            f.write(b"\0" * size)
            f.flush()
            os.fsync(f.fileno())
    except FileExistsError:
        return  # a file of ours from another run, or someone else's: left alone (a rare name)
    except OSError as exc:
        _unlink_quietly(path)
        raise _fail("write in", folder, exc) from None
    _unlink_quietly(path)


def _unlink_quietly(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass


def check_writable_dir(path: str | Path) -> Path:
    """Create ``path`` if needed and check that files can be written in it (see :func:`probe`)."""
    path = make_dir(path)
    probe(path)
    return path


def begin_result(path: Path, kind: str = "run") -> None:
    """Write the placeholder of a result file (``summary.json``...) at the start of a run, with
    SUMMARY_RESERVE bytes allocated so that the final summary fits even on a disk the run filled.
    Until the run replaces it, it says ``incomplete``: a run killed without warning leaves it so."""
    text = json.dumps({
        "status": "incomplete",
        "message": f"the {kind} has not finished: it is still running, or it was killed (SIGKILL, power loss) "
                   "before it could write its summary; log.mcap is readable up to its last complete chunk "
                   "(eels-gz recover, docs/running.md)",
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "command": command_line(),
        "process": process_info(),  # which process to look for (or at) while it says so
    }, indent=2)
    # padded with spaces (JSON allows trailing white space) to reserve the blocks
    data = text.encode().ljust(SUMMARY_RESERVE - 1) + b"\n"
    try:
        with open(path, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    except OSError as exc:
        raise _fail("write", path, exc) from None


def write_result(path: Path, text: str) -> None:
    """Write a result file in place (into the blocks :func:`begin_result` reserved, if it did) and sync it."""
    data = text.encode()
    mode = "r+b" if path.exists() else "wb"
    with open(path, mode) as f:
        f.write(data)
        f.truncate(len(data))
        f.flush()
        os.fsync(f.fileno())


def _holder(lock: Path) -> str:
    try:
        info = json.loads(lock.read_text() or "{}")
    except (OSError, ValueError):
        info = {}
    if not info:
        return "another run"
    return (f"the run of pid {info.get('pid')} on {info.get('host')}, started {info.get('started')} "
            f"({info.get('command')})")


def _lock_file_is_ours(path: Path) -> bool:
    """Whether ``path`` is absent, or a lock file of ours: a regular file, empty (just created by
    another run) or holding the JSON :class:`Lock` writes."""
    try:
        if path.is_symlink():
            return False
        if not path.exists():
            return True
        if not path.is_file():
            return False
        with open(path, "rb") as f:
            text = f.read(4096)
    except OSError:
        return True  # unreadable: the open below says why
    if not text.strip():
        return True
    try:
        info = json.loads(text)
    except ValueError:
        return False
    return isinstance(info, dict) and "pid" in info


class Lock:
    """An exclusive, non-blocking ``flock`` on ``path`` (created), holding who took it."""

    def __init__(self, path: Path, what: str):
        self.path, self.what, self.fd = path, what, None

    def acquire(self) -> "Lock":
        if not _lock_file_is_ours(self.path):
            raise OutputError(f"'{self.path}' (where {self.what} gets its lock) is not a lock eels-gz wrote; "
                              "eels-gz never replaces it: move it away, or choose another output")
        for _ in range(5):
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as exc:
                raise OutputError(f"cannot write in '{self.path.parent}' (where {self.what} gets its lock "
                                  f"and temporary copy): {reason(exc)}") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise OutputError(f"{self.what} is in use by {_holder(self.path)}; wait for it to end "
                                  "or choose another output") from None
            try:  # the holder before us may have removed the file between our open and our lock
                same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        else:
            raise OutputError(f"cannot lock {self.what} ('{self.path}' keeps changing)")
        self.fd = fd
        info = json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                           "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "command": command_line()})
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, info.encode(), 0)
        except OSError as exc:
            self.release()
            raise _fail("write the lock", self.path, exc) from None
        return self

    def release(self) -> None:
        if self.fd is None:
            return
        try:
            self.path.unlink()
        except OSError:
            pass
        os.close(self.fd)
        self.fd = None


def _read_only_fs(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def holds_run(folder: Path) -> bool:
    """Whether ``folder`` holds an eels-gz run: its marker or a result file at its top. A folder that
    holds runs in subfolders (``R/a/summary.json``) is not one: ``--overwrite`` must never take it."""
    return (folder / MARKER).exists() or any((folder / f).is_file() for f in RESULT_FILES)


# What each kind of output folder writes at its top, for a folder whose marker lists no files (a campaign,
# written in place; a run folder written before the marker listed them). A run folder's marker lists
# every file the run wrote (RunFolder.commit), and those are its own files.
OWN_ENTRIES = {
    "run": ("summary.json", "log.mcap", "trajectory.png", "scenario.yaml", "contact.yaml", "soil.yaml",
            "metrics.json", "robot.urdf", "placement.json"),
    "compare": ("compare.json", "compare.png", "stock", "screw", "rft", "soil"),
    "sweep": ("sweep.json", ".sweep.json.tmp", "spec.yaml", "results.parquet", "results.csv", "summary.md", "plots",
              "samples", "node_server.log"),
    "rover campaign": ("sweep.json", ".sweep.json.tmp", "spec.yaml", "results.parquet", "results.csv", "summary.md",
                       "plots", "samples", "runs", "campaign.json", "campaign.md", "node_server.log"),
}
# eels-gz export (eels_gz/run/export.py), besides its <robot>.urdf
OWN_ENTRIES["export"] = ("world.sdf", "placement.json", "export.json", "scenario.yaml", "contact.yaml", "soil.yaml")
OWN_ENTRIES["sweep sample"] = (*OWN_ENTRIES["run"], "row.json")


def read_marker(folder: Path) -> dict:
    """The marker of an output folder ({} when it has none or it cannot be read)."""
    try:
        info = json.loads((folder / MARKER).read_text())
    except (OSError, ValueError):
        return {}
    return info if isinstance(info, dict) else {}


def kind_of(folder: Path) -> str | None:
    """What wrote output folder ``folder`` ("run", "compare", "sweep"...), or None if it holds no run."""
    what = read_marker(folder).get("what")
    if isinstance(what, str):
        return what
    for name, kind in (("summary.json", "run"), ("compare.json", "compare"), ("campaign.json", "rover campaign")):
        if (folder / name).is_file():
            return kind
    return None


def foreign_entries(folder: Path) -> list[str]:
    """The files and folders in output folder ``folder`` that the command which wrote it did not write
    (e.g. notes a user added, or runs in subfolders), as paths relative to it, folders ending in '/'."""
    listed = read_marker(folder).get("files")
    if isinstance(listed, list):
        own = {str(f) for f in listed} | {MARKER}
        found: list[str] = []
        for path in sorted(folder.rglob("*")):  # a folder comes before what it holds
            rel = path.relative_to(folder).as_posix()
            if any(rel.startswith(f) for f in found if f.endswith("/")):
                continue  # inside a folder already named
            if path.is_dir() and not path.is_symlink():
                if not any(f.startswith(rel + "/") for f in own):
                    found.append(rel + "/")
            elif rel not in own and not _later_own_file(path):
                found.append(rel)
        return found
    kind = kind_of(folder) or "run"
    names = {MARKER, *OWN_ENTRIES.get(kind, ())}
    if kind in ("run", "sweep sample"):  # and what its summary lists
        try:
            summary = json.loads((folder / "summary.json").read_text())
            names |= {Path(str(p)).name for p in (summary.get("files") or {}).values()}
        except (OSError, ValueError, AttributeError):
            pass
    return sorted(p.name + ("/" if p.is_dir() else "") for p in folder.iterdir()
                  if p.name not in names and not _later_own_file(p))


def _later_own_file(path: Path) -> bool:
    """Whether ``path`` is a file a later command added to an output folder (``view``'s replay.html,
    ``recover``'s log.recovered.mcap) and recognisably wrote: the folder's own, as its first files are."""
    from eels_gz.own_files import LATER_FILES, is_ours

    kind = LATER_FILES.get(path.name)
    return kind is not None and is_ours(path, kind)


def check_replaceable(folder: Path, what: str) -> None:
    """OutputError unless ``--overwrite`` may replace output folder ``folder`` with the output of a ``what``:
    it holds a ``what``'s output and nothing else (module docstring)."""
    kind = kind_of(folder)
    same = {kind, what} <= {"run", "sweep sample"} or kind == what
    if not same:
        raise OutputError(f"output folder '{folder}' holds the output of {_a(kind or 'another command')}, not of "
                          f"{_a(what)}; --overwrite replaces only {_a(what)}'s own output: choose another --out")
    extra = foreign_entries(folder)
    if extra:
        shown = ", ".join(extra[:8]) + (f" and {len(extra) - 8} more" if len(extra) > 8 else "")
        raise OutputError(f"output folder '{folder}' holds files that the {kind} there did not write ({shown}); "
                          f"--overwrite replaces only {_a(what)}'s own files and would remove them: move them away, "
                          "or choose another --out")


def _a(what: str) -> str:
    return ("an " if what[:1] in "aeiou" else "a ") + what


def aside(target: Path) -> Path:
    """Move output folder ``target`` out of the way (``.NAME.old-PID`` beside it) and return where it went;
    the caller removes it once the new output is in place."""
    old = target.with_name(f".{target.name}.old-{os.getpid()}")
    n = 0
    while old.exists() or old.is_symlink():  # never ours to remove: take another name
        n += 1
        old = target.with_name(f".{target.name}.old-{os.getpid()}-{n}")
    try:
        os.rename(target, old)
    except OSError as exc:
        raise _fail("move aside the old output", target, exc) from None
    return old


def list_files(folder: Path) -> list[str]:
    """Every file under ``folder`` (relative paths; the marker's own list, see :func:`foreign_entries`)."""
    return sorted(p.relative_to(folder).as_posix() + ("/" if p.is_dir() and not p.is_symlink() else "")
                  for p in folder.rglob("*") if p.name != MARKER)


def check_not_a_link_or_file(target: Path) -> None:
    """OutputError naming what output folder ``target`` is when it is a symbolic link (an output folder
    is renamed into place: a link would be replaced, never written through) or a file."""
    if target.is_symlink():
        try:
            to = os.readlink(target)
        except OSError:
            to = "?"
        raise OutputError(f"output folder '{target}' is a symbolic link (to '{to}'); eels-gz writes an output "
                          "folder of its own and never replaces a link: give the folder it points to, or another "
                          "--out")
    if target.exists() and not target.is_dir():
        raise OutputError(f"output folder '{target}' is a file, not a folder")


def _started(folder: Path) -> bool:
    return any(True for name in RESULT_FILES for _ in folder.rglob(name))


def check_folder_name(target: str | Path, example: str) -> Path:
    """``target`` as a Path, or OutputError if it names no folder of its own ('', '.', '/', '..'): an
    output folder is written beside itself (DIR.partial, .DIR.lock) and renamed into place."""
    if str(target) == "":
        raise OutputError(f"--out is empty; it must name a folder (e.g. {example})")
    target = Path(target)
    if not target.name or target.name in (".", ".."):
        raise OutputError(f"--out '{target}' must name a folder of its own, not the current, a parent or the "
                          f"root folder (e.g. {example})")
    return target


def lock_output_folder(target: Path, example: str) -> Lock:
    """The lock of output folder ``target`` (``--out``), taken beside it in its parent folder (created if
    need be); ``example`` names a valid --out in the error for a path that names no folder of its own."""
    target = check_folder_name(target, example)
    parent = make_dir(target.absolute().parent, f"create the folder that holds output folder '{target}',")
    return Lock(parent / f".{target.name}.lock", f"output folder '{target}'").acquire()


class RunFolder:
    """The output folder of one run (module docstring). Use as a context manager; write into
    :attr:`path` (the temporary ``DIR.partial``); :attr:`target` is where it will be.

    On exit the folder is renamed into place if the run began (a result file exists, see
    :func:`begin_result`), else (bad input found while building) it is discarded and ``DIR`` is
    left as it was.
    """

    def __init__(self, target: str | Path, *, overwrite: bool = False, what: str = "run"):
        self.target = check_folder_name(target, "results/run")
        self.overwrite = overwrite
        self.what = what
        self.lock: Lock | None = None
        self.replace = False
        self.committed = False
        self.path = self.target.with_name(self.target.name + PARTIAL_SUFFIX)

    def __enter__(self) -> "RunFolder":
        target = self.target
        self.lock = lock_output_folder(target, "results/run")
        try:
            self._check_target()
            self._prepare_staging()
        except BaseException:
            self.lock.release()
            raise
        return self

    def _check_target(self) -> None:
        target = self.target
        check_not_a_link_or_file(target)
        if not target.exists():
            return
        if not os.access(target, os.W_OK | os.X_OK):
            raise OutputError(f"output folder '{target}' is not writable: "
                              f"{'read-only file system' if _read_only_fs(target) else 'permission denied'}")
        if not any(target.iterdir()):
            return
        if not holds_run(target):
            raise OutputError(f"output folder '{target}' is not empty and holds no eels-gz run; "
                              "choose a new or empty folder (--overwrite only replaces a run's folder)")
        if not self.overwrite:
            raise OutputError(f"output folder '{target}' already holds a run; pass --overwrite to replace it, "
                              "or choose another --out")
        check_replaceable(target, self.what)
        self.replace = True

    def _prepare_staging(self) -> None:
        staging = self.path
        if staging.exists():
            if not self.overwrite:
                raise OutputError(
                    f"'{staging}' holds the files of a run into '{self.target}' that was killed before it "
                    "finished (its summary.json says incomplete; its log.mcap is readable up to its last complete "
                    "chunk, see `eels-gz recover`); move it away, or pass --overwrite to discard it")
            if staging.is_symlink() or not staging.is_dir() or kind_of(staging) is None:
                raise OutputError(f"'{staging}' is in the way of the run into '{self.target}' and holds no "
                                  "eels-gz run; --overwrite discards only a killed run's folder: move it away")
            check_replaceable(staging, self.what)
            shutil.rmtree(staging)
        make_dir(staging)
        try:
            (staging / MARKER).write_text(json.dumps({"what": self.what, "command": command_line(),
                                                      "started": time.strftime("%Y-%m-%dT%H:%M:%S%z")}))
        except OSError as exc:
            shutil.rmtree(staging, ignore_errors=True)
            raise _fail("write in", staging, exc) from None
        try:
            probe(staging)
        except OutputError:
            shutil.rmtree(staging, ignore_errors=True)
            raise

    def inside(self, path: str | Path) -> Path:
        """``path`` moved into the staging folder if it lies in the target (e.g. ``--save-config DIR/x.yaml``)."""
        path = Path(path)
        try:
            rel = path.absolute().relative_to(self.target.absolute())
        except ValueError:
            return path
        return self.path / rel

    def commit(self) -> None:
        """Rename the staging folder into place (replacing the old run with ``overwrite``)."""
        if self.committed:
            return
        target, trash = self.target, None
        self._list_files()
        if target.exists():
            if self.replace:
                trash = aside(target)
            else:
                target.rmdir()  # empty (checked on entry)
        os.rename(self.path, target)
        self.committed = True
        if trash is not None:
            shutil.rmtree(trash, ignore_errors=True)

    def _list_files(self) -> None:
        """Record in the marker every file this run wrote: its own files, the only ones a later
        ``--overwrite`` may remove (:func:`foreign_entries`)."""
        info = read_marker(self.path)
        info["files"] = list_files(self.path)
        try:
            (self.path / MARKER).write_text(json.dumps(info))
        except OSError:
            pass  # a full disk: the folder is kept as it is, and a later --overwrite falls back on OWN_ENTRIES

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            if self.path.exists():
                if _started(self.path):
                    self.commit()
                else:
                    shutil.rmtree(self.path, ignore_errors=True)
        finally:
            if self.lock is not None:
                self.lock.release()


def check_replaceable_file(path: Path, what: str, overwrite: bool, own: str | None,
                           flag: str = "--overwrite") -> None:
    """OutputError unless single-file output ``path`` may be written: it does not exist, or
    ``overwrite`` is given and it is a file of kind ``own`` that eels-gz wrote (:mod:`eels_gz.own_files`)."""
    from eels_gz.own_files import describe, is_ours

    if path.is_symlink():
        raise OutputError(f"{what} '{path}' is a symbolic link; eels-gz never replaces one: choose another path")
    if path.is_dir():
        raise OutputError(f"{what} '{path}' is a folder, not a file")
    if not path.exists():
        return
    ours = own is not None and is_ours(path, own)
    if not overwrite:
        hint = f"pass {flag} to replace it" if ours else "choose another path or move it away"
        raise OutputError(f"{what} '{path}' already exists; {hint}")
    if not ours:
        kind = describe(own) if own is not None else "a file this command wrote"
        raise OutputError(f"{what} '{path}' already exists and is not {kind}; {flag} replaces only such a file, "
                          "never one of yours: choose another path or move it away")


def _new_temporary(path: Path) -> Path:
    """A new, empty file beside ``path`` to write into (created here, so that it is ours to remove)."""
    for n in range(100):
        tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}" + (f"-{n}" if n else ""))
        try:
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
        except FileExistsError:
            continue
        except OSError as exc:
            raise _fail("write", path, exc) from None
        return tmp
    raise OutputError(f"cannot create a temporary file beside '{path}': too many left there")


class OutputFile:
    """One output file (module docstring): checked before the work, written through a temporary
    sibling renamed into place. An existing file is refused unless ``overwrite``, and even then
    it is replaced only if it is recognisably one of ``own``'s kind that eels-gz wrote
    (:mod:`eels_gz.own_files`): never a user's file, a folder or a symbolic link. ``lock`` makes a
    second writer of the same file fail at once. ``flag`` names the option that allows replacing."""

    def __init__(self, path: str | Path, *, overwrite: bool = False, lock: bool = False,
                 what: str = "output file", own: str | None = None, flag: str = "--overwrite"):
        self.path = Path(path)
        self.overwrite = overwrite
        self.what = what
        self.own = own
        self.flag = flag
        self.lock = lock
        self._lock: Lock | None = None
        self.tmp = self.path.with_name(f".{self.path.name}.tmp-{os.getpid()}")

    def __enter__(self) -> "OutputFile":
        path = self.path
        if not path.name:
            raise OutputError(f"{self.what} '{path}' must name a file")
        make_dir(path.absolute().parent, f"create the folder for {self.what} '{path}',")
        if self.lock:
            self._lock = Lock(path.with_name(f".{path.name}.lock"), f"{self.what} '{path}'").acquire()
        try:
            check_replaceable_file(path, self.what, self.overwrite, self.own, self.flag)
            self.tmp = _new_temporary(path)
            try:
                with open(self.tmp, "wb") as f:
                    f.write(b"\0" * PROBE_BYTES)
                    f.flush()
                    os.fsync(f.fileno())
                    f.truncate(0)
            except OSError as exc:
                self._discard()
                raise _fail("write", path, exc) from None
        except BaseException:
            if self._lock is not None:
                self._lock.release()
            raise
        return self

    def write_bytes(self, data: bytes) -> Path:
        try:
            with open(self.tmp, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
        except OSError as exc:
            raise _fail("write", self.path, exc) from None
        return self.commit()

    def write_text(self, text: str) -> Path:
        return self.write_bytes(text.encode())

    def commit(self) -> Path:
        """Move what was written to :attr:`tmp` into place."""
        try:
            os.replace(self.tmp, self.path)
        except OSError as exc:
            raise _fail("write", self.path, exc) from None
        return self.path

    def _discard(self) -> None:
        try:
            self.tmp.unlink()
        except OSError:
            pass

    def __exit__(self, exc_type, exc, tb) -> None:
        self._discard()
        if self._lock is not None:
            self._lock.release()
