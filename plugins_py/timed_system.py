"""gz-sim Python system: another Python system, timed (bench/gazebo.py's cost of the Python systems).

``eels-gz export --time-systems`` loads every Python system of the world through this one: its
``<plugin>`` element keeps the wrapped system's own parameters and gains ``<timed_module>`` (the
wrapped module) and ``<timing_file>``. It forwards ``configure`` and each callback the wrapped system
has (gz-sim's loader calls only those: it looks them up after ``configure``), and adds up the wall
time of each (``time.perf_counter``). Every simulated second, and when the world pauses, it writes
its totals into ``<timing_file>``: ``{"<module> <entity>": {"configure_s", "pre_update_s",
"update_s", "post_update_s", "steps"}}``, merged with the other timed systems' entries and replaced
whole. A failure to write is logged once and never disables the system.
"""

from __future__ import annotations

import importlib
import json
import logging
import os
import threading
import time

from gz_compat import param

PLUGIN = "timed_system"
CALLBACKS = ("pre_update", "update", "post_update")
# gz-sim 8 runs post_update of the systems in parallel threads: the timed systems merge into one file
_LOCK = threading.Lock()


class TimedSystem:
    def configure(self, entity, sdf, ecm, event_mgr):
        module = param(sdf, "get_string", "timed_module", PLUGIN)
        self.path = param(sdf, "get_string", "timing_file", PLUGIN)
        self.key = f"{module} {int(entity)}"
        self.inner = importlib.import_module(module).get_system()
        self.totals = {f"{name}_s": 0.0 for name in ("configure", *CALLBACKS)}
        self.totals["steps"] = 0
        self.next, self.paused_written, self.failed = 1.0, False, False
        t0 = time.perf_counter()
        configure = getattr(self.inner, "configure")  # the wrapped system's own, not a gz-sim call
        configure(entity, sdf, ecm, event_mgr)
        self.totals["configure_s"] += time.perf_counter() - t0
        for name in CALLBACKS:
            if hasattr(self.inner, name):
                setattr(self, name, self._timed(name, getattr(self.inner, name)))
        if not hasattr(self.inner, "post_update"):
            self.post_update = self._write_only
        if hasattr(self.inner, "reset"):
            self.reset = self.inner.reset

    def _timed(self, name: str, callback):
        key = f"{name}_s"

        def call(info, ecm):
            t0 = time.perf_counter()
            try:
                callback(info, ecm)
            finally:
                self.totals[key] += time.perf_counter() - t0
                if name == "post_update":
                    self._after(info)
        return call

    def _write_only(self, info, ecm):
        self._after(info)

    def _after(self, info) -> None:
        if info.paused:
            if not self.paused_written:
                self.paused_written = True
                self._write()
            return
        self.paused_written = False
        self.totals["steps"] += 1
        if info.sim_time.total_seconds() + 1e-12 >= self.next:
            self.next += 1.0
            self._write()

    def _write(self) -> None:
        try:
            with _LOCK:
                merged = {}
                if os.path.exists(self.path):
                    with open(self.path) as f:
                        merged = json.load(f)
                merged[self.key] = dict(self.totals)
                tmp = f"{self.path}.{os.getpid()}.{threading.get_ident()}.tmp"
                with open(tmp, "w") as f:
                    json.dump(merged, f, indent=1)
                os.replace(tmp, self.path)
        except Exception as exc:  # noqa: BLE001 - timing is a report: never disable the system for it
            if not self.failed:
                logging.getLogger(PLUGIN).warning("cannot write '%s': %s", self.path, exc)
            self.failed = True


def get_system():
    return TimedSystem()
