"""What numba compiled during a run, and when.

The package's kernels are compiled once, on their first call after an
install, and cached next to their modules (``cache=True``); later processes
load them from the cache in milliseconds. numba fires a ``numba:compile``
event only for a real compilation (a cache miss), so listening to it tells a
run what it paid for, and whether any of it fell inside the timed loop
(where it would lower the real-time factor). ``make demo`` runs the kernels
of the default runs once, so a user's first run finds them cached.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from numba.core import event


@dataclass
class Compiled:
    """One top-level compilation: the kernel, when it started (``time.perf_counter``) and how long it took."""

    name: str
    start: float
    seconds: float


@dataclass
class CompileWatch(event.Listener):
    """Listens to ``numba:compile`` while installed (a context manager); nested compilations (a kernel's
    callees) count in their caller's time."""

    compiled: list[Compiled] = field(default_factory=list)
    _open: list[tuple[str, float]] = field(default_factory=list)

    def on_start(self, ev) -> None:
        dispatcher = ev.data.get("dispatcher") if isinstance(ev.data, dict) else None
        name = getattr(getattr(dispatcher, "py_func", None), "__qualname__", None) or str(dispatcher)
        self._open.append((name, time.perf_counter()))

    def on_end(self, ev) -> None:
        if not self._open:
            return
        name, start = self._open.pop()
        if not self._open:
            self.compiled.append(Compiled(name, start, time.perf_counter() - start))

    def __enter__(self) -> CompileWatch:
        event.register("numba:compile", self)
        return self

    def __exit__(self, *exc) -> None:
        event.unregister("numba:compile", self)

    def seconds(self, since: float | None = None) -> float:
        """Compile time in all, or of the compilations that started at or after ``since``."""
        return sum(c.seconds for c in self.compiled if since is None or c.start >= since)

    def report(self, loop_start: float | None) -> dict:
        """summary.json's ``numba``: the compile time, the part inside the timed loop and the kernels."""
        return {"compile_time": self.seconds(),
                "compile_time_in_run": self.seconds(loop_start) if loop_start is not None else 0.0,
                "compiled": [c.name for c in self.compiled]}


_index: dict = {}  # dispatcher -> its cache index's keys for this machine, read once per process


def kernel_name(dispatcher) -> str:
    """``module:qualname`` of a numba dispatcher's Python function."""
    func = getattr(dispatcher, "py_func", None)
    return f"{getattr(func, '__module__', '?')}:{getattr(func, '__qualname__', '?')}"


def signature_text(signature) -> str:
    """One compilation's argument types as text, e.g. ``array(float64, 1d, C), float64``: the same for
    a dispatcher's ``overloads`` key and its cache index's entry."""
    return ", ".join(str(t) for t in signature)


def _dispatchers(prefix: str) -> list:
    from numba.core.dispatcher import Dispatcher

    found = []
    for name, module in list(sys.modules.items()):
        if module is None or not (name == prefix or name.startswith(prefix + ".")):
            continue
        found += [obj for obj in list(vars(module).values()) if isinstance(obj, Dispatcher)]
    return found


def compiled_signatures(prefix: str = "eels_gz") -> dict[str, set[str]]:
    """The compilations this process has of the imported ``prefix`` modules' kernels, by
    :func:`kernel_name`: {kernel: its signatures (:func:`signature_text`)}, kernels with one only."""
    out: dict[str, set[str]] = {}
    for obj in _dispatchers(prefix):
        if obj.overloads:
            out.setdefault(kernel_name(obj), set()).update(signature_text(sig) for sig in list(obj.overloads))
    return out


def _cached_keys(obj) -> list:
    """The entries of ``obj``'s cache index that match its present bytecode and this machine (read once)."""
    from numba.core import caching

    if obj not in _index:
        keys: list = []
        cache = getattr(obj, "_cache", None)
        if isinstance(cache, caching.FunctionCache):  # else cache=False
            try:
                codegen = obj.targetctx.codegen()
                keys = [key for key in cache._cache_file._load_index() if cache._index_key(key[0], codegen) == key]
            except (AttributeError, TypeError, IndexError):  # a numba whose cache index reads otherwise
                keys = []
        _index[obj] = keys
    return _index[obj]


def load_cached_kernels(prefix: str = "eels_gz",
                        only: Collection[str] | Mapping[str, Collection[str]] | None = None) -> tuple[int, float]:
    """Load now the cached compilations of the numba kernels of the imported ``prefix`` modules:
    every one, or those of the kernels named in ``only`` (:func:`kernel_name`), or, when ``only``
    maps names to signatures (:func:`signature_text`), those compilations alone.

    numba loads a kernel's cached machine code on the kernel's first call
    with a new signature, 5 to 15 ms each. The runner calls this before its
    timed loop, so that this one-time cost is paid in the setup, as the
    imports and the model's build are, and the real-time factor measures the
    steady stepping alone; ``only`` (a :class:`KernelManifest`'s record)
    keeps it to what the run calls. Only entries of the cache index that
    match the kernel's present bytecode and this machine are loaded, so
    nothing is compiled here; a dispatcher's index is read once per process.
    Returns (compilations loaded, seconds).

    This reads numba's cache index through its private API (numba is pinned,
    pyproject.toml); should that change, nothing is loaded here and the
    kernels load on their first call as before.
    """
    t0, count = time.perf_counter(), 0
    for obj in _dispatchers(prefix):
        name = kernel_name(obj)
        if only is not None and name not in only:
            continue
        wanted = only.get(name) if isinstance(only, Mapping) else None
        for key in _cached_keys(obj):
            sig = tuple(key[0])
            if sig in obj.overloads or (wanted is not None and signature_text(sig) not in wanted):
                continue
            obj.compile(sig)
            count += 1
    return count, time.perf_counter() - t0


class KernelManifest:
    """The compilations that runs of one kind called, so that a run loads those before its loop and
    not every cached compilation of the modules it imported (a screw run on ice imports 34 kernels
    with about 75 cached compilations, and calls 15).

    Runs are of one kind when they have the same ``kind`` (the runner's: the robot, the world, the
    systems loaded, the sensors', the log's and the ROS interface's settings; neither the command
    that started the run nor what else its process has imported counts) and run the same numba.
    The record is a file of the user cache (:mod:`eels_gz.usercache`, ``kernels/``): for each
    kernel, the signatures (:func:`signature_text`) that earlier runs of that kind compiled or
    loaded while they ran (``before`` holds what the process had when the run began: a warm
    process's earlier runs are not this one's), a union (a compilation one run calls and another
    does not stays). A run of a kind not seen before loads none ahead (its
    kernels load on their first calls, in its loop, and are recorded); with the cache off, every
    cached kernel loads ahead. The record only saves time: a compilation it misses loads on its
    first call, one it names that the run does not call costs a few milliseconds.
    """

    FORMAT = 2

    def __init__(self, prefix: str = "eels_gz", kind: object = None,
                 before: Mapping[str, Collection[str]] | None = None):
        import hashlib
        import json

        import numba

        from eels_gz.usercache import cache_dir

        self.prefix = prefix
        self.before = {name: set(sigs) for name, sigs in (before or {}).items()}
        key = hashlib.sha256(json.dumps([self.FORMAT, numba.__version__, prefix, kind], sort_keys=True,
                                        default=str).encode()).hexdigest()
        folder = cache_dir()
        self.path = folder / "kernels" / f"{key}.json" if folder is not None else None
        self.names: dict[str, set[str]] | None = None  # None: load every kernel (no cache)
        if self.path is not None:
            self.names = {}
            try:
                data = json.loads(self.path.read_text())
                self.names = {str(name): {str(s) for s in sigs} for name, sigs in data["kernels"].items()}
            except (OSError, ValueError, AttributeError, TypeError, KeyError):
                self.names = {}

    def load(self) -> tuple[int, float]:
        """:func:`load_cached_kernels` of the recorded compilations (all without a cache)."""
        return load_cached_kernels(self.prefix, self.names)

    def record(self) -> None:
        """Add the compilations the run compiled or loaded (those it found in the process excepted) to it."""
        import json

        from eels_gz.usercache import write_atomic

        if self.path is None:
            return
        known = self.names or {}
        new = {name: sigs - self.before.get(name, set()) - known.get(name, set())
               for name, sigs in compiled_signatures(self.prefix).items()}
        new = {name: sigs for name, sigs in new.items() if sigs}
        if not new:
            return
        merged = {name: set(sigs) for name, sigs in known.items()}
        for name, sigs in new.items():
            merged.setdefault(name, set()).update(sigs)
        self.names = merged
        write_atomic(self.path, json.dumps({"kernels": {n: sorted(s) for n, s in sorted(merged.items())}}, indent=1))
