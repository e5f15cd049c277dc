"""Progress lines for the long terrain steps (logged at INFO; ``eels-gz world`` shows them).

``with steps.step("normals"):`` logs ``source: [3/7] normals ...`` on entry and
``source: [3/7] normals done in 4.2 s`` on exit; inside a step,
``steps.fraction(done, total)`` logs ``... 40 %`` at most every ``EVERY``
seconds, so a long loop says how far it is.
"""

from __future__ import annotations

import logging
import time
from contextlib import contextmanager

log = logging.getLogger("eels_gz.terrain")

EVERY = 5.0  # s between fraction lines of one step


class Steps:
    """Numbered progress lines for ``total`` steps of one job on ``source``."""

    def __init__(self, source: str, total: int):
        self.source, self.total, self.k = source, total, 0
        self._name, self._last = "", 0.0
        self.seconds: dict[str, float] = {}

    @contextmanager
    def step(self, name: str):
        self.k += 1
        self._name, t0 = name, time.perf_counter()
        self._last = t0
        log.info("%s: [%d/%d] %s ...", self.source, self.k, self.total, name)
        yield self
        dt = time.perf_counter() - t0
        self.seconds[name] = round(dt, 3)
        log.info("%s: [%d/%d] %s done in %.1f s", self.source, self.k, self.total, name, dt)

    def fraction(self, done: int, total: int) -> None:
        now = time.perf_counter()
        if now - self._last >= EVERY and total:
            self._last = now
            log.info("%s: [%d/%d] %s %3.0f %%", self.source, self.k, self.total, self._name, 100.0 * done / total)
