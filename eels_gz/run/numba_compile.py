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
from collections.abc import Collection
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


_loaded: set = set()  # dispatchers whose cached compilations this process has loaded


def kernel_name(dispatcher) -> str:
    """``module:qualname`` of a numba dispatcher's Python function."""
    func = getattr(dispatcher, "py_func", None)
    return f"{getattr(func, '__module__', '?')}:{getattr(func, '__qualname__', '?')}"


def _dispatchers(prefix: str) -> list:
    from numba.core.dispatcher import Dispatcher

    found = []
    for name, module in list(sys.modules.items()):
        if module is None or not (name == prefix or name.startswith(prefix + ".")):
            continue
        found += [obj for obj in list(vars(module).values()) if isinstance(obj, Dispatcher)]
    return found


def load_cached_kernels(prefix: str = "eels_gz", only: Collection[str] | None = None) -> tuple[int, float]:
    """Load now the cached compilations of the numba kernels of the imported ``prefix`` modules
    (of those named in ``only``, :func:`kernel_name`, when given).

    numba loads a kernel's cached machine code on the kernel's first call,
    a few milliseconds each (about 75 ms for the screw run's 18 kernels).
    The runner calls this before its timed loop, so that this one-time cost
    is paid in the setup, as the imports and the model's build are, and the
    real-time factor measures the steady stepping alone; ``only`` (a
    :class:`KernelManifest`'s names) keeps it to the kernels the run calls.
    Only entries of the cache index that match the kernel's present bytecode
    and this machine are loaded, so nothing is compiled here; a dispatcher is
    visited once per process. Returns (compilations loaded, seconds).

    This reads numba's cache index through its private API (numba is pinned,
    pyproject.toml); should that change, nothing is loaded here and the
    kernels load on their first call as before.
    """
    from numba.core import caching

    t0, count = time.perf_counter(), 0
    for obj in _dispatchers(prefix):
        if obj in _loaded or (only is not None and kernel_name(obj) not in only):
            continue
        _loaded.add(obj)
        cache = getattr(obj, "_cache", None)
        if not isinstance(cache, caching.FunctionCache):
            continue  # cache=False
        try:
            codegen = obj.targetctx.codegen()
            keys = [key for key in cache._cache_file._load_index() if cache._index_key(key[0], codegen) == key]
        except (AttributeError, TypeError, IndexError):  # a numba whose cache index reads otherwise
            continue
        for key in keys:
            if tuple(key[0]) not in obj.overloads:
                obj.compile(key[0])
                count += 1
    return count, time.perf_counter() - t0


class KernelManifest:
    """The kernels that runs of one kind called, so that a run loads those before its loop and not
    every cached kernel of the modules it imported (a screw run imports 34, calls about 20).

    Runs are of one kind when they imported the same ``prefix`` modules with kernels by the time
    their loop begins (its systems, sensors and log decide that; the command that started the run
    does not), with the same numba. The record is a file
    of the user cache (:mod:`eels_gz.usercache`, ``kernels/``): the kernels that had a compilation
    at the end of earlier runs of that kind, a union (a kernel one run calls and another does not
    stays). A run of a kind not seen before loads none ahead (its kernels load on their first
    calls, in its loop, and are recorded); with the cache off, every cached kernel loads ahead.
    The record only saves time: a kernel it misses loads on its first call, one it names that the
    run does not call costs a few milliseconds.
    """

    FORMAT = 1

    def __init__(self, prefix: str = "eels_gz"):
        import hashlib
        import json

        import numba

        from eels_gz.usercache import cache_dir

        self.prefix = prefix
        modules = sorted({d.py_func.__module__ for d in _dispatchers(prefix)})  # the modules with kernels
        key = hashlib.sha256(json.dumps([self.FORMAT, numba.__version__, modules]).encode()).hexdigest()
        folder = cache_dir()
        self.path = folder / "kernels" / f"{key}.json" if folder is not None else None
        self.names: set[str] | None = None  # None: load every kernel (no cache)
        if self.path is not None:
            try:
                data = json.loads(self.path.read_text())
                self.names = set(data["kernels"]) if isinstance(data.get("kernels"), list) else set()
            except (OSError, ValueError, AttributeError, TypeError):
                self.names = set()

    def load(self) -> tuple[int, float]:
        """:func:`load_cached_kernels` of the recorded kernels (all without a cache)."""
        return load_cached_kernels(self.prefix, self.names)

    def record(self) -> None:
        """Add the kernels that have a compilation now (called, or loaded from the record) to it."""
        import json

        from eels_gz.usercache import write_atomic

        if self.path is None:
            return
        called = {kernel_name(d) for d in _dispatchers(self.prefix) if d.overloads}
        if called <= (self.names or set()):
            return
        self.names = (self.names or set()) | called
        write_atomic(self.path, json.dumps({"kernels": sorted(self.names)}, indent=1))
