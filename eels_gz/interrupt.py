"""SIGINT and SIGTERM stop a run cleanly instead of killing it.

Inside :func:`interrupts` the two signals only set :attr:`Interrupt.signum`:
a stepping loop checks it after each step, so the step in progress finishes,
the log is closed with its summary section and the run writes its summary
with status ``interrupted`` before it raises
:class:`~eels_gz.errors.RunInterrupted` (exit 130 or 143). While
:attr:`Interrupt.immediate` is set (building the model, a scenario's setup),
the handler raises RunInterrupted at once: there is no step to finish there
(and an error a library makes of it is turned back into RunInterrupted).
Nested uses share the outer handler; outside the main thread (where Python
delivers no signals) nothing is installed.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

from eels_gz.errors import RunInterrupted

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupt:
    """The signal received (None until one arrives) and the mode of the handler."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self.immediate = False

    @property
    def requested(self) -> bool:
        return self.signum is not None

    def check(self, message: str = "") -> None:
        """Raise RunInterrupted if a signal has arrived."""
        if self.signum is not None:
            raise RunInterrupted(self.signum, message)

    @contextlib.contextmanager
    def immediately(self) -> Iterator["Interrupt"]:
        """Within this block a signal (or one already received) raises RunInterrupted at once."""
        before = self.immediate
        self.immediate = True
        try:
            if self.signum is not None:
                raise self._early()
            try:
                yield self
            except RunInterrupted:
                raise
            except Exception as exc:
                # a library that wraps every exception (xacro, mesh loaders) turned the interruption
                # into an error of its own: it is the interruption still
                if self.signum is None:
                    raise
                raise self._early() from exc
            if self.signum is not None:
                # the handler's exception was swallowed: raised inside a __del__ or a weakref callback
                # the garbage collector ran, Python reports it as unraisable and goes on; the block ends
                # as an interruption all the same
                raise self._early()
        finally:
            self.immediate = before

    def _handle(self, signum, frame) -> None:
        if self.signum is None:
            self.signum = signum
        if self.immediate:
            self.immediate = False  # raise once; cleanup code after it is not interrupted again
            raise self._early()

    def _early(self) -> RunInterrupted:
        """Raised while a model is built or a scenario set up; whoever has begun writing says so."""
        name = signal.Signals(self.signum).name
        return RunInterrupted(self.signum, f"interrupted by {name} before the run began", started=False)


_active: Interrupt | None = None


@contextlib.contextmanager
def interrupts() -> Iterator[Interrupt]:
    """Install the SIGINT/SIGTERM handlers for the block (or join the enclosing block's)."""
    global _active
    if _active is not None:
        yield _active
        return
    stop = Interrupt()
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return
    previous = {s: signal.signal(s, stop._handle) for s in SIGNALS}
    _active = stop
    try:
        yield stop
    finally:
        _active = None
        for s, handler in previous.items():
            signal.signal(s, handler)
