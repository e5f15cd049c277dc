"""The compile watch: a run states what numba compiled and whether it fell inside the timed loop."""

from __future__ import annotations

import time

import numba
import numpy as np

from eels_gz.host.numba_compile import Compiled, CompileWatch


def test_a_compilation_is_seen_once_with_its_callees_in_its_time():
    @numba.njit  # no cache: compiled in this process, whatever ran before
    def inner(x):
        return x * 2.0

    @numba.njit
    def outer(x):
        return inner(x) + 1.0

    before = time.perf_counter()
    with CompileWatch() as watch:
        assert outer(np.float64(1.5)) == 4.0
        outer(np.float64(2.5))  # the same signature: nothing compiled
    outer(np.int64(1))  # after the watch: not seen
    assert [c.name for c in watch.compiled] == [outer.py_func.__qualname__]
    assert watch.compiled[0].start >= before and watch.compiled[0].seconds > 0
    assert watch.seconds() == watch.compiled[0].seconds


def test_report_splits_the_setup_from_the_timed_run():
    watch = CompileWatch(compiled=[Compiled("a", 10.0, 2.0), Compiled("b", 20.0, 0.5)])
    assert watch.report(15.0) == {"compile_time": 2.5, "compile_time_in_run": 0.5, "compiled": ["a", "b"]}
    assert watch.report(None)["compile_time_in_run"] == 0.0
    assert CompileWatch().report(1.0) == {"compile_time": 0.0, "compile_time_in_run": 0.0, "compiled": []}
