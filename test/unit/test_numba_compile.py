"""The compile watch: a run states what numba compiled and whether it fell inside the timed loop."""

from __future__ import annotations

import time

import numba
import numpy as np

from eels_gz.run.numba_compile import Compiled, CompileWatch, load_cached_kernels


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


KERNEL_SOURCE = '''
import numba


@numba.njit(cache=True)
def twice(x):
    return {body}
'''


def _kernel_module(tmp_path, monkeypatch, name: str, body: str, mtime_ns: int | None = None):
    """A module ``name`` with a cached kernel ``twice``, imported afresh from tmp_path (its file's
    modification time set to ``mtime_ns`` first, if given)."""
    import importlib
    import os
    import sys

    path = tmp_path / f"{name}.py"
    path.write_text(KERNEL_SOURCE.format(body=body))
    if mtime_ns is not None:
        os.utime(path, ns=(mtime_ns, mtime_ns))
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop(name, None)
    importlib.invalidate_caches()
    module = importlib.import_module(name)
    monkeypatch.setitem(sys.modules, name, module)
    return module


def test_cached_kernels_load_before_their_first_call_and_nothing_compiles(tmp_path, monkeypatch):
    """The runner loads the cached kernels before its timed loop: a fresh dispatcher of a cached kernel
    gets its compilation from the cache, none compiled, and a second call visits nothing."""
    first = _kernel_module(tmp_path, monkeypatch, "eels_gz_cache_probe", "2.0 * x")
    assert first.twice(np.float64(1.5)) == 3.0  # compiled and cached
    assert first.twice(np.int64(2)) == 4  # a second signature in the cache index
    fresh = _kernel_module(tmp_path, monkeypatch, "eels_gz_cache_probe", "2.0 * x")  # a new process would see this
    assert fresh.twice is not first.twice and not fresh.twice.overloads
    with CompileWatch() as watch:
        loaded, seconds = load_cached_kernels(prefix="eels_gz_cache_probe")
    assert loaded == 2 and seconds > 0 and watch.compiled == []
    assert len(fresh.twice.overloads) == 2
    assert load_cached_kernels(prefix="eels_gz_cache_probe")[0] == 0  # visited once per process


def test_a_stale_cache_is_not_loaded_and_nothing_compiles(tmp_path, monkeypatch):
    """A kernel edited since it was cached, its file keeping its size and time (numba's own staleness
    stamp then passes): its bytecode no longer matches the index, so nothing loads and nothing is
    compiled ahead (it compiles on its first call, as numba does)."""
    first = _kernel_module(tmp_path, monkeypatch, "eels_gz_stale_probe", "x * 2.0", mtime_ns=10**18)
    first.twice(np.float64(1.5))
    edited = _kernel_module(tmp_path, monkeypatch, "eels_gz_stale_probe", "x + 2.0", mtime_ns=10**18)
    with CompileWatch() as watch:
        assert load_cached_kernels(prefix="eels_gz_stale_probe")[0] == 0
    assert watch.compiled == [] and not edited.twice.overloads
    assert edited.twice(np.float64(1.5)) == 3.5  # the edited kernel, compiled on its first call


def test_only_the_named_signatures_load_when_a_record_names_them(tmp_path, monkeypatch):
    """A KernelManifest's record names compilations: of a kernel with two cached signatures, the one
    named loads and the other stays in the cache (it would load on a call with those types)."""
    from eels_gz.run.numba_compile import kernel_name, signature_text

    first = _kernel_module(tmp_path, monkeypatch, "eels_gz_cache_probe_sig", "2.0 * x")
    first.twice(np.float64(1.5))
    first.twice(np.int64(2))
    fresh = _kernel_module(tmp_path, monkeypatch, "eels_gz_cache_probe_sig", "2.0 * x")
    (float_sig,) = [sig for sig in first.twice.overloads if "float" in signature_text(sig)]
    only = {kernel_name(fresh.twice): {signature_text(float_sig)}}
    assert load_cached_kernels(prefix="eels_gz_cache_probe_sig", only=only)[0] == 1
    assert [signature_text(sig) for sig in fresh.twice.overloads] == [signature_text(float_sig)]
    assert load_cached_kernels(prefix="eels_gz_cache_probe_sig", only={"other:kernel": set()})[0] == 0
    assert load_cached_kernels(prefix="eels_gz_cache_probe_sig")[0] == 1  # the rest, when asked for all


def test_a_record_holds_what_the_run_loaded_not_what_its_process_had(tmp_path, monkeypatch):
    """In a warm process (a sweep's worker, the run server, this suite), the compilations it had when
    the run began are not the run's: the record adds only those loaded or compiled since."""
    from eels_gz.run.numba_compile import KernelManifest, compiled_signatures, kernel_name

    monkeypatch.setenv("EELS_GZ_CACHE_DIR", str(tmp_path / "cache"))
    probe = _kernel_module(tmp_path, monkeypatch, "eels_gz_cache_probe_rec", "2.0 * x")
    probe.twice(np.float64(1.5))  # an earlier run's
    manifest = KernelManifest(prefix="eels_gz_cache_probe_rec", kind=["a"],
                              before=compiled_signatures("eels_gz_cache_probe_rec"))
    assert manifest.names == {}
    manifest.record()
    assert not manifest.path.exists()  # nothing new: nothing written
    probe.twice(np.int64(2))  # this run's
    manifest.record()
    again = KernelManifest(prefix="eels_gz_cache_probe_rec", kind=["a"])
    assert again.names == {kernel_name(probe.twice): {"int64"}}
    assert KernelManifest(prefix="eels_gz_cache_probe_rec", kind=["b"]).names == {}  # another kind
