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

import time
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
