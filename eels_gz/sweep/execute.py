"""A campaign on Ray: every sample in its own worker process and its own run folder.

Locally (the default) :func:`ray_session` starts Ray with ``workers`` CPUs on this machine; with
``address`` (``--address``, or ``RAY_ADDRESS``) it joins a running cluster (``ray start --head`` on
one node, ``ray start --address HEAD:6379`` on the others). A Ray session already open in the
calling process is used as it is (the tests start one per module).

Each sample is one Ray task, run in its own process forked from a warm one: the campaign's node
server, started before Ray and warmed while it starts (:mod:`eels_gz.sweep.node_server`), or on
a node without one the worker itself, warmed on its first sample (:mod:`eels_gz.sweep.forked`).
The warm process has imported the package and loaded the kernels once, and each sample's process
starts from that state, so no state of one run reaches the next;
``max_retries=0``: a sample that kills its process is recorded ``crashed``, not rerun behind your
back. The task runs the sample's command into ``DIR/samples/NNNNN`` and writes ``row.json`` there:
its index, seed, drawn inputs, status, message and metrics. A diverged or failed sample is such a
row; the campaign goes on. sweep.json's ``overhead`` (and summary.md) says what a sample cost
beyond its run.

The output folder is written in place, so that ``--resume`` can finish it: ``sweep.json`` (the
checked spec, its fingerprint and the campaign's status), ``spec.yaml`` (as given), ``samples/``,
then the results (:mod:`eels_gz.sweep.results`). ``--resume`` keeps every sample whose ``row.json``
matches the spec (same seed and inputs) and whose status is final, and runs the others (never run,
``interrupted``, ``crashed``, ``output_error``, or killed without a row). SIGINT or SIGTERM cancels
the samples not started and interrupts the running ones (each ends as ``eels-gz run`` does on a
signal, with status ``interrupted``); the results are written for the samples done and
RunInterrupted is raised.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import signal
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from eels_gz.errors import ConfigError, EelsError, OutputError, RunInterrupted
from eels_gz.process_start import process_info
from eels_gz.sweep.commands import command, read_json
from eels_gz.sweep.spec import Sample, SweepSpec, flatten

log = logging.getLogger(__name__)

SAMPLES_DIR = "samples"
ROW_FILE = "row.json"
SWEEP_FILE = "sweep.json"
SPEC_FILE = "spec.yaml"
NODE_SERVER_LOG = "node_server.log"  # what the node server and its samples' runs write to stderr (warnings)
RERUN = ("interrupted", "incomplete", "crashed", "output_error")  # statuses --resume runs again
OBJECT_STORE_BYTES = 128 * 2**20  # a local Ray's shared-memory store: the rows are small
CANCEL_GRACE = 60.0  # s a running sample gets to stop after SIGINT before it is killed


@dataclass(frozen=True)
class Job:
    """What a worker needs to run one sample (sent to it by Ray)."""

    command: str
    items: list  # (dotted key, value, source) in order: base, then the drawn inputs
    folder: str
    cwd: str
    index: int
    seed: int
    case: int
    inputs: dict
    metrics: tuple
    n_base: int = 0  # items[:n_base] are the campaign's base (the warm worker's warm-up run, forked.py)
    labels: dict = field(default_factory=dict)  # the case's constant columns, not settings
    node_server: dict | None = None  # where the node's warm process listens (eels_gz.sweep.node_server)


def jobs(spec: SweepSpec, samples: list[Sample], out: Path, node_server: dict | None = None) -> list[Job]:
    """The jobs of ``samples``: base, the sample's inputs, and its seed as the command's seed key
    (``sensors.seed`` for a run) unless the spec sets that key itself; ``node_server``: where their
    node's warm process listens, if any."""
    cmd = command(spec.command, spec.source)
    base = flatten(spec.base, "base", spec.source)
    given = {k for k, _, _ in base} | set(spec.keys)
    out = out.absolute()
    made = []
    for s in samples:
        items = list(base) + [(k, v, f"{spec.source}: sample {s.index}: dispersions.{k} = {v!r}")
                              for k, v in s.inputs.items()]
        if cmd.seed_key and cmd.seed_key not in given:
            items.append((cmd.seed_key, s.seed, f"sample {s.index}: seed"))
        made.append(Job(spec.command, items, str(out / SAMPLES_DIR / s.name), os.getcwd(), s.index, s.seed, s.case,
                        dict(s.inputs), tuple(spec.metrics), len(base), dict(s.labels), node_server))
    return made


def run_job(job: Job) -> dict:
    """Run one sample (in its worker process) and return its row; the row is also written to the
    sample's folder as row.json."""
    if os.path.isdir(job.cwd):
        os.chdir(job.cwd)  # relative paths in the spec mean what they mean where the campaign started
    cmd = command(job.command)
    folder = Path(job.folder)
    shutil.rmtree(folder, ignore_errors=True)  # what an unfinished attempt left
    shutil.rmtree(folder.with_name(folder.name + ".partial"), ignore_errors=True)
    t0 = time.perf_counter()
    try:
        settings = cmd.settings(job.items)
        status, message = cmd.run(settings, folder)
    except RunInterrupted as exc:
        status, message = "interrupted", str(exc)
    except EelsError as exc:
        status, message = "input_error", str(exc)
    except Exception as exc:  # a bug: recorded, and the campaign goes on
        status, message = "error", f"{type(exc).__name__}: {exc}"
    row = make_row(job, status, message, time.perf_counter() - t0, cmd.documents(folder))
    write_row(folder, row)
    return row


def make_row(job: Job, status: str, message: str | None, wall: float | None, documents: list[dict]) -> dict:
    row: dict[str, Any] = {"sample": job.index, "case": job.case, "seed": job.seed, **job.inputs, **job.labels,
                           "status": status, "message": message}
    for metric in job.metrics:
        row.update(metric_columns(metric, documents))
    row["run"] = f"{SAMPLES_DIR}/{Path(job.folder).name}"
    row["wall_time"] = wall
    return row


def write_row(folder: Path, row: dict) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".{ROW_FILE}.tmp"
    tmp.write_text(json.dumps(row, indent=2, default=str))
    os.replace(tmp, folder / ROW_FILE)


def lookup(document: Any, parts: list[str]) -> tuple[bool, Any]:
    """The value at dotted ``parts`` in a JSON document (list items by index), and whether it is there."""
    node = document
    for part in parts:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return False, None
    return True, node


def metric_columns(metric: str, documents: list[dict]) -> dict:
    """``{column: value}`` of one metric: its value from the first document that has it (summary.json,
    then metrics.json); a list or mapping gives one column per item (``key.0``, ``key.x``); None
    where no document has it."""
    for doc in documents:
        found, value = lookup(doc, metric.split("."))
        if found:
            return _expand(metric, value)
    return {metric: None}


def _expand(key: str, value: Any) -> dict:
    if isinstance(value, list):
        out: dict = {}
        for i, v in enumerate(value):
            out.update(_expand(f"{key}.{i}", v))
        return out
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            out.update(_expand(f"{key}.{k}", v))
        return out
    return {key: value}


def crashed_row(job: Job, exc: BaseException) -> dict:
    text = str(exc).strip().splitlines()
    return make_row(job, "crashed", f"the sample's worker process died: {text[-1] if text else type(exc).__name__}",
                    None, [])


def _child_died(job: Job, how: str) -> dict:
    row = make_row(job, "crashed", f"the sample's process died without its row ({how})", None, [])
    with contextlib.suppress(OSError):
        write_row(Path(job.folder), row)
    return row


def _read_row(folder: Path) -> dict | None:
    return read_json(folder / ROW_FILE)


def _row_written_since(job: Job, since: float) -> dict | None:
    """The row a sample's run wrote after ``since`` (time.time()), if any."""
    path = Path(job.folder) / ROW_FILE
    try:
        if path.stat().st_mtime < since:
            return None
    except OSError:
        return None
    row = read_json(path)
    return row if row is not None and row.get("sample") == job.index else None


def sample_task(job: Job) -> dict:
    """What a Ray worker runs for one sample: the sample in a process forked by its node's warm
    process (eels_gz.sweep.node_server) when there is one, else forked from this worker, warmed once
    (eels_gz.sweep.forked; in this process where fork is not available). Returns {"row": its row,
    "sample_s": seconds from the fork to the sample's process's end, "warm_s": this worker's warm-up
    when this sample paid it, else 0, "node_server": whether the node's server forked it, "worker":
    this worker's pid, "began"/"ended": the task's start and end (time.time(), s)}."""
    from eels_gz.sweep import forked, node_server

    began = time.time()
    if not forked.fork_supported():
        t = time.perf_counter()
        row = run_job(job)
        return {"row": row, "sample_s": time.perf_counter() - t, "warm_s": 0.0, "node_server": False,
                "worker": os.getpid(), "began": began, "ended": time.time()}
    served = node_server.run_on_node_server(job, _read_row, _child_died)
    if served is not None:
        row, seconds = served
        warm_s = 0.0
    else:
        warm_s = forked.warm(job)["seconds"] if forked._warm is None else 0.0
        row, seconds = forked.run_forked(job, run_job, _read_row, _child_died)
    return {"row": row, "sample_s": seconds, "warm_s": warm_s, "node_server": served is not None,
            "worker": os.getpid(), "began": began, "ended": time.time()}


def _idle_between(results: list[dict]) -> float | None:
    """The mean seconds a worker waited between the end of one of its samples and the start of its
    next (Ray's round trip: the row back to this process, the next sample to the worker), or None
    when no worker ran two."""
    gaps = []
    by_worker: dict = {}
    for r in results:
        if r.get("worker") is not None and r.get("began") is not None:
            by_worker.setdefault(r["worker"], []).append((r["began"], r["ended"]))
    for spans in by_worker.values():
        spans.sort()
        gaps += [max(0.0, b[0] - a[1]) for a, b in zip(spans, spans[1:])]
    return sum(gaps) / len(gaps) if gaps else None


def overhead(results: list[dict], dispatch_s: float | None, at_once: int, server: dict | None = None,
             dispatched: float | None = None) -> dict | None:
    """sweep.json's ``overhead`` of the samples run now (module docstring): per sample, the seconds
    in its worker beyond its run (the fork, the process's end, the row: ``in_worker_s``), the
    seconds its worker waited for it after the worker's previous sample (``between_s``: Ray's round
    trip), and the campaign's wall time from the first dispatch to the last row times the samples
    run at once, per sample, less the runs' own (``per_sample_s``: Ray's scheduling and the
    workers' warm-up too). ``warm_up_s``: the warm-up of each worker that warmed itself;
    ``node_server``: the node's warm process (``server``: its status, eels_gz.sweep.node_server),
    how long it took to warm, when it was ready after the first dispatch (``dispatched``,
    time.time(); negative: before) and how many samples it forked."""
    timed = [r for r in results if r["row"].get("wall_time") is not None]
    if not timed:
        return None
    run_s = sum(r["row"]["wall_time"] for r in timed) / len(timed)
    out = {"samples": len(timed), "run_s": run_s,
           "in_worker_s": sum(r["sample_s"] - r["row"]["wall_time"] for r in timed) / len(timed),
           "between_s": _idle_between(results),
           "warm_up_s": [r["warm_s"] for r in results if r["warm_s"] > 0], "at_once": at_once,
           "node_server": None}
    if server is not None:
        out["node_server"] = {"pid": server.get("pid"), "warm_up_s": server.get("warm_s"),
                              "ready_after_dispatch_s": (server["ready"] - dispatched
                                                         if dispatched is not None and "ready" in server else None),
                              "samples": sum(1 for r in results if r.get("node_server"))}
    if dispatch_s is not None and len(timed) == len(results):
        out["per_sample_s"] = dispatch_s * at_once / len(results) - run_s
    return out


class SweepFolder:
    """The campaign's output folder (module docstring), locked while the campaign runs."""

    def __init__(self, target: str | Path, spec: SweepSpec, *, resume: bool = False, overwrite: bool = False,
                 what: str = "sweep"):
        self.target = Path(target)
        self.spec = spec
        self.resume, self.overwrite, self.what = resume, overwrite, what
        self.lock = None
        self.old: Path | None = None  # the campaign --overwrite replaces, moved aside

    def __enter__(self) -> SweepFolder:
        from eels_gz import outputs
        from eels_gz.outputs import MARKER, command_line, holds_run, lock_output_folder, make_dir, probe

        target = self.target
        self.lock = lock_output_folder(target, "results/sweep")
        try:
            outputs.check_not_a_link_or_file(target)
            if target.exists() and any(target.iterdir()):
                self._existing(holds_run(target))
            make_dir(target)
            probe(target)
            (target / MARKER).write_text(json.dumps({"what": self.what, "command": command_line(),
                                                     "started": time.strftime("%Y-%m-%dT%H:%M:%S%z")}))
            raw = self.spec.raw or self.spec.to_dict()
            (target / SPEC_FILE).write_text(f"# the spec of this campaign, as given ({self.spec.source})\n"
                                            + yaml.safe_dump(raw, sort_keys=False))
        except BaseException:
            if self.old is not None:  # the campaign it was to replace goes back
                shutil.rmtree(target, ignore_errors=True)
                os.rename(self.old, target)
                self.old = None
            self.lock.release()
            raise
        return self

    def _existing(self, holds: bool) -> None:
        target = self.target
        info = read_json(target / SWEEP_FILE)
        if info is None or info.get("what", self.what) != self.what:
            if not holds:
                raise OutputError(f"output folder '{target}' is not empty and holds no eels-gz run; choose a new "
                                  "or empty folder (--overwrite only replaces a run's folder)")
            if not self.overwrite:
                raise OutputError(f"output folder '{target}' already holds a run that is not a {self.what}; pass "
                                  "--overwrite to replace it, or choose another --out")
        elif self.resume:
            if info.get("fingerprint") != self.spec.fingerprint():
                raise OutputError(f"--resume: '{target}' holds a {self.what} of another spec (its spec.yaml); "
                                  "resume it with that spec, or pass --overwrite to start this one there")
            return
        elif not self.overwrite:
            raise OutputError(f"output folder '{target}' already holds a {self.what} (status {info.get('status')}, "
                              f"{info.get('samples_done')} of {info.get('samples_planned')} samples done); pass "
                              "--resume to finish it, --overwrite to replace it, or choose another --out")
        from eels_gz.outputs import aside, check_replaceable

        check_replaceable(target, self.what)  # nothing but a campaign's own files: --overwrite removes no other
        self.old = aside(target)  # removed once this campaign has ended (__exit__)

    def finished(self, samples: list[Sample]) -> dict[int, dict]:
        """The rows of the samples already done (``--resume``; module docstring)."""
        rows = {}
        for s in samples:
            row = read_json(self.target / SAMPLES_DIR / s.name / ROW_FILE)
            if row is None or row.get("status") in RERUN or row.get("seed") != s.seed:
                continue
            if any(row.get(k) != v for k, v in s.inputs.items()):
                continue
            rows[s.index] = row
        return rows

    def write_state(self, state: dict) -> None:
        tmp = self.target / f".{SWEEP_FILE}.tmp"
        tmp.write_text(json.dumps({"what": self.what, **state}, indent=2, default=str))
        os.replace(tmp, self.target / SWEEP_FILE)

    def __exit__(self, *exc) -> None:
        if self.old is not None:
            shutil.rmtree(self.old, ignore_errors=True)
        if self.lock is not None:
            self.lock.release()


# Ray (2.5x) turns token authentication on for a local cluster that ray.init starts when RAY_AUTH_MODE
# is unset, and says so in a warning on every campaign. The cluster eels-gz starts is its own, for
# one campaign; token authentication is the safe setting for it, so it is kept and the notice is
# silenced (docs/sweeps.md). A RAY_AUTH_MODE the user sets is Ray's to act on, with its own messages.
RAY_TOKEN_LOGGER = "ray._private.authentication.authentication_token_setup"


@contextlib.contextmanager
def _quiet_token_notice() -> Iterator[None]:
    logger = logging.getLogger(RAY_TOKEN_LOGGER)
    if os.environ.get("RAY_AUTH_MODE") is not None:
        yield
        return
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


@contextlib.contextmanager
def ray_session(workers: int | None = None, address: str | None = None, stop=None) -> Iterator[dict]:
    """Ray for a campaign: the session already open in this process, a cluster at ``address`` (or
    RAY_ADDRESS), or a local one with ``workers`` CPUs (default: every core). Yields what it joined.
    ``stop`` (an eels_gz.interrupt.Interrupt): a signal while Ray starts stops the campaign at once."""
    import ray

    if ray.is_initialized():
        yield {"address": "the running Ray session", "cpus": ray.cluster_resources().get("CPU", 1)}
        return
    address = address or os.environ.get("RAY_ADDRESS") or None
    options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "logging_level": logging.WARNING}
    main = threading.current_thread() is threading.main_thread()
    sigterm = signal.getsignal(signal.SIGTERM) if main else None
    t0 = time.perf_counter()
    sigint = signal.getsignal(signal.SIGINT) if main else None
    at_once = stop.immediately() if stop is not None else contextlib.nullcontext()
    try:
        with at_once:  # Ray's start waits in Python: a signal there raises RunInterrupted at once
            if address:
                ray.init(address=address, **options)
            else:
                with _quiet_token_notice():
                    ray.init(num_cpus=workers or os.cpu_count() or 1, object_store_memory=OBJECT_STORE_BYTES,
                             **options)
    finally:
        if main:  # ray.init makes SIGTERM exit the driver at once; the campaign stops cleanly instead
            signal.signal(signal.SIGTERM, sigterm)
    try:
        yield {"address": address or "local", "cpus": ray.cluster_resources().get("CPU", 1),
               "start_s": time.perf_counter() - t0}
    finally:
        ray.shutdown()
        if main:  # and its shutdown must not leave a signal that kills the campaign before it says how it ended
            signal.signal(signal.SIGTERM, sigterm)
            signal.signal(signal.SIGINT, sigint)


Progress = Callable[[int, int, Counter], None]  # (samples done, samples planned, statuses so far)


def run_sweep(spec: SweepSpec, out: str | Path, *, workers: int | None = None, address: str | None = None,
              resume: bool = False, overwrite: bool = False, progress: Progress | None = None,
              what: str = "sweep", node_server: bool = True) -> dict:
    """Run a checked spec into ``out`` on Ray (module docstring); returns sweep.json's content after
    writing the results. Raises RunInterrupted (after writing them) on SIGINT or SIGTERM. With
    ``node_server`` (where fork is available) the samples on this node are forked from one warm
    process started before Ray (eels_gz.sweep.node_server); without, every worker warms itself."""
    from eels_gz.interrupt import interrupts
    from eels_gz.sweep import node_server as node
    from eels_gz.sweep.report import write_results

    if workers is not None and workers < 1:
        raise OutputError(f"--workers must be 1 or more, got {workers}")
    out = Path(out)
    samples = spec.expand()
    check_ray_address(address or os.environ.get("RAY_ADDRESS") or None)  # before the folder: a cluster not there
    _say_estimate(spec, samples, workers)
    t0 = time.perf_counter()
    with interrupts() as stop, SweepFolder(out, spec, resume=resume, overwrite=overwrite, what=what) as folder:
        rows = folder.finished(samples) if resume else {}
        # until it ends, sweep.json says what a campaign killed without warning left, and which process ran it
        state = {"status": "running", "message": RUNNING_MESSAGE.format(what=what), "process": process_info(),
                 "fingerprint": spec.fingerprint(), "spec": spec.to_dict(),
                 "samples_planned": len(samples), "samples_done": len(rows), "resumed": len(rows),
                 "started": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        folder.write_state(state)
        todo = [s for s in samples if s.index not in rows]
        statuses = Counter(r["status"] for r in rows.values())
        ray_info: dict = {}
        results: list[dict] = []
        try:
            if progress is not None:
                progress(len(rows), len(samples), statuses)
            if todo and not stop.requested:
                # the node's warm process starts first: it warms while Ray starts
                first = jobs(spec, todo[:1], out)[0] if node_server else None
                with node.node_server(first, run_job, out / NODE_SERVER_LOG) as server, \
                        ray_session(workers, address, stop) as ray_info:
                    where = server.where(node.this_node()) if server is not None else None
                    t, dispatched = time.perf_counter(), time.time()
                    at_once = _dispatch(jobs(spec, todo, out, where), workers, rows, statuses, stop, progress,
                                        len(samples), local=ray_info["address"] == "local", results=results)
                    ray_info["dispatch_s"] = time.perf_counter() - t
                    state["overhead"] = overhead(results, ray_info["dispatch_s"], min(at_once, len(todo)),
                                                 server.status() if server is not None else None, dispatched)
            ordered = [rows[s.index] for s in samples if s.index in rows]
            state.update(samples_done=len(ordered), statuses=dict(Counter(r["status"] for r in ordered)),
                         wall_time=time.perf_counter() - t0, ray={"workers": workers, **ray_info})
            state["files"] = write_results(out, spec, ordered, state)
        except BaseException as exc:  # whatever stopped it (a signal while Ray started, an error): sweep.json says so
            _ended_early(folder, state, exc, stop, spec, samples, rows, out, t0, what)
            raise
        # a sample interrupted on its own (its node stopped) is a row; --resume reruns it. A signal that came
        # while the results were written (every sample done) still ends the command as an interruption.
        interrupted = stop.requested
        state.update(status="interrupted" if interrupted else "ok",
                     message=_interrupted_message(stop, what, len(ordered), len(samples)) if interrupted else None)
        state.pop("process", None)
        folder.write_state(state)
    if interrupted:
        exc = RunInterrupted(stop.signum or 2, state["message"])
        exc.result = {"what": what, **state}  # what --json prints (sweep.json)
        raise exc
    return {"what": what, **state}


RUNNING_MESSAGE = ("the {what} has not finished: it is still running, or it was killed (SIGKILL, power loss) before "
                   "it could say how it ended; the samples done are in samples/, and --resume finishes it")
RAY_CONNECT_S = 10.0  # s to reach a cluster's head (a TCP connection) before Ray is asked to join it


def check_ray_address(address: str | None) -> None:
    """ConfigError unless the Ray head at ``address`` (HOST:PORT or ray://HOST:PORT; ``auto`` and None are
    Ray's own to find) accepts a connection within RAY_CONNECT_S: ray.init would wait minutes for an
    unreachable one, deaf to SIGTERM."""
    import socket

    if not address or address in ("auto", "local"):
        return
    where = address.split("://", 1)[-1]
    host, sep, port = where.rpartition(":")
    if not sep or not port.isdigit():
        raise ConfigError(f"--address '{address}': expected HOST:PORT of a Ray head (e.g. 10.0.0.5:6379), "
                          "ray://HOST:PORT, or auto")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=RAY_CONNECT_S).close()
    except OSError as exc:
        why = "no answer" if isinstance(exc, TimeoutError) else (exc.strerror or type(exc).__name__)
        raise ConfigError(f"--address '{address}': cannot reach a Ray head there ({why} within "
                          f"{RAY_CONNECT_S:g} s); is the cluster up (`ray status` on it)?") from None


def _interrupted_message(stop, what: str, done: int, planned: int) -> str:
    name = signal.Signals(stop.signum or signal.SIGINT).name
    rest = "--resume finishes it" if done < planned else "every sample had run and the results are written"
    return f"the {what} was interrupted by {name} after {done} of {planned} samples; {rest}"


def _ended_early(folder, state: dict, exc: BaseException, stop, spec: SweepSpec, samples: list, rows: dict,
                 out: Path, t0: float, what: str) -> None:
    """sweep.json when a campaign ends on an exception: ``interrupted`` (a signal) or ``error``, with a
    message, what was done, and the results of the samples done (exc.result for --json)."""
    from eels_gz.sweep.report import write_results

    ordered = [rows[s.index] for s in samples if s.index in rows]
    signalled = isinstance(exc, (RunInterrupted, KeyboardInterrupt)) or stop.requested
    if signalled and stop.signum is None:
        stop.signum = getattr(exc, "signum", signal.SIGINT)
    state.update(status="interrupted" if signalled else "error",
                 message=(_interrupted_message(stop, what, len(ordered), len(samples)) if signalled else
                          f"the {what} stopped after {len(ordered)} of {len(samples)} samples: "
                          f"{type(exc).__name__}: {exc}; --resume finishes it"),
                 samples_done=len(ordered), statuses=dict(Counter(r["status"] for r in ordered)),
                 wall_time=time.perf_counter() - t0)
    state.pop("process", None)
    with contextlib.suppress(Exception):
        state["files"] = write_results(out, spec, ordered, state)
    with contextlib.suppress(OSError):
        folder.write_state(state)
    if isinstance(exc, RunInterrupted):
        exc.args = (state["message"],)
        exc.started = True  # sweep.json says how it ended: not "nothing was written"
        exc.result = {"what": what, **state}


def _say_estimate(spec: SweepSpec, samples: list, workers: int | None) -> None:
    """Say, before the campaign starts, how long it may take when that is over a minute
    (eels_gz.ranges.say_estimate): its samples' steps, the first sample's standing for each."""
    from eels_gz.ranges import say_estimate

    cmd = command(spec.command, spec.source)
    if not samples or not hasattr(cmd, "steps"):
        return
    try:
        steps = cmd.steps(cmd.settings(jobs(spec, samples[:1], Path("."))[0].items))
    except EelsError:
        return  # check_spec has said what is wrong with the settings
    if steps:
        say_estimate(f"the {len(samples)} samples of {spec.source}", steps * len(samples),
                     workers or os.cpu_count() or 1)


def _dispatch(todo: list[Job], workers: int | None, rows: dict, statuses: Counter, stop, progress, total: int,
              local: bool = False, results: list | None = None) -> int:
    """Submit the jobs to Ray, at most as many at once as there are CPUs (or ``workers``), and collect
    their rows (and the tasks' whole results into ``results``); on a signal cancel the queued ones and
    interrupt the running ones. Returns how many samples could run at once."""
    import ray
    from ray.exceptions import RayError, TaskCancelledError

    # In flight: twice the samples that may run at once, so that Ray has the next one queued (and starts
    # its worker process) the moment one ends; a local Ray of `workers` CPUs runs no more than that. On a
    # session or cluster not started here, `workers` itself caps the samples in flight.
    cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
    capacity = 2 * cpus if local or workers is None else workers
    from eels_gz.sweep.forked import fork_supported

    # a worker runs sample after sample, each in its own forked process (max_calls=0: no limit); where
    # fork is not available, a fresh worker process per sample (max_calls=1)
    task = ray.remote(max_calls=0 if fork_supported() else 1, max_retries=0, num_cpus=1)(sample_task)
    queue, pending = deque(todo), {}
    started = time.time()
    cancelled_at = last_cancel = None
    while queue or pending:
        while queue and len(pending) < capacity and cancelled_at is None:
            job = queue.popleft()
            pending[task.remote(job)] = job
        ready, _ = ray.wait(list(pending), num_returns=1, timeout=0.25)
        for ref in ready:
            job = pending.pop(ref)
            try:
                result = ray.get(ref)
                row = result["row"]
                if results is not None:
                    results.append(result)
            except TaskCancelledError:
                # cancelled before it started: not run; or while it ran, to its end (its row written now)
                row = _row_written_since(job, started)
                if row is None:
                    continue
            except RayError as exc:
                row = crashed_row(job, exc)
                with contextlib.suppress(OSError):
                    write_row(Path(job.folder), row)
            rows[job.index] = row
            statuses[row["status"]] += 1
            if progress is not None:
                progress(len(rows), total, statuses)
        now = time.monotonic()
        if stop.requested and cancelled_at is None:
            queue.clear()
            cancelled_at = now
        if cancelled_at is not None and pending and now - (last_cancel or 0.0) >= 1.0:
            # queued: dropped; running: SIGINT, the run ends 'interrupted'. Again every second: a task
            # handed to a worker that had not begun it may miss the first cancel
            force = now - cancelled_at > CANCEL_GRACE
            for ref in pending:
                ray.cancel(ref, force=force)
            last_cancel = now
    return cpus if local or workers is None else min(workers, cpus)
