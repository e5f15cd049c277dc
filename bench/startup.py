"""A short run's start-up and wrap-up: `eels-gz run --duration 1` as a user types it, timed from
outside (the command's whole wall time) and from inside (summary.json's ``wall_time``: the loop).

The time outside the loop (the command to the first step, and the last step to the exit) is the
whole less the loop: what a user waits for that is not simulating. summary.json's
``setup_wall_time`` and ``finish_wall_time`` split it (from run()'s call, so without the
interpreter's and the CLI's own start). ``--tree`` compares source trees side by side (e.g. this
one and an export of another commit: ``git archive main | tar -x -C /tmp/main_tree``), interleaved
over ``--rounds`` so that the machine's load hits them alike; each runs with its tree first on
PYTHONPATH, and a tree may carry environment variables for its runs (``--tree .,EELS_GZ_PLOT_HELPER=on``
and ``--tree .,EELS_GZ_PLOT_HELPER=off``: one tree with and without the plot helper). A first run of
each tree, not counted, fills its caches (numba's, the xacro cache, Python's bytecode: the runs ignore
PYTHONDONTWRITEBYTECODE, as a user's install has its .pyc files).
``--server TREE`` also times the tree's runs handed to a warm run server (``eels-gz serve``, started for
the tree on a socket of its own before the rounds, stopped after them), in the same rounds, keyed
``TREE+server``; every other run is cold (``EELS_GZ_SERVER=off``), and each run's summary must say how
its process started (``process.start``: ``server`` or ``fresh``), or the bench stops.
Writes JSON (``--out``) and prints it; the load average is recorded with every round.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]


def parse_tree(text: str) -> tuple[Path, dict[str, str]]:
    """``PATH[,NAME=VALUE...]``: a source tree and environment variables for its runs (e.g.
    ``.,EELS_GZ_PLOT_HELPER=on``: the same tree with and without the plot helper side by side)."""
    path, *pairs = text.split(",")
    env = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise SystemExit(f"--tree {text}: expected PATH[,NAME=VALUE...], got '{pair}'")
        env[name] = value
    return Path(path).resolve(), env


CLI = "import sys; from eels_gz.cli import main; sys.argv[0] = 'eels-gz'; main()"
READY_S = 300.0  # s a server has to warm up


def tree_env(tree: Path, extra_env: dict[str, str] | None = None, socket: Path | None = None) -> dict:
    """The environment of a command of ``tree``: the tree first on PYTHONPATH, ``extra_env``, and the
    run server's socket (``socket``), or none (``EELS_GZ_SERVER=off``: cold)."""
    env = dict(os.environ, PYTHONPATH=str(tree), **(extra_env or {}))
    # as a user's install: the trees' modules compiled to bytecode once (by the warm-up run), not at every run
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if socket is None:
        env["EELS_GZ_SERVER"] = "off"
    else:
        env.pop("EELS_GZ_SERVER", None)
        env["EELS_GZ_SERVER_SOCKET"] = str(socket)
    return env


def one(tree: Path, out: Path, args: list[str], extra_env: dict[str, str] | None = None,
        socket: Path | None = None) -> dict:
    """One `eels-gz run` with ``tree`` first on PYTHONPATH (and ``extra_env``), cold or through the
    server on ``socket``; its wall times (s)."""
    env = tree_env(tree, extra_env, socket)
    cmd = [sys.executable, "-c", CLI, "run", "--out", str(out), *args]
    t = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=tree)
    total = time.perf_counter() - t
    if done.returncode != 0:
        raise SystemExit(f"{tree}: exit {done.returncode}: {done.stderr[-2000:]}")
    summary = json.loads((out / "summary.json").read_text())
    start = summary.get("process", {}).get("start", "fresh")  # a tree before the server: always fresh
    if start != ("server" if socket is not None else "fresh"):
        raise SystemExit(f"{tree}: a run meant {'through the server' if socket else 'cold'} started '{start}': "
                         f"{done.stderr[-2000:]}")
    return {"total_s": total, "loop_s": summary["wall_time"], "outside_loop_s": total - summary["wall_time"],
            "setup_wall_time": summary.get("setup_wall_time"), "finish_wall_time": summary.get("finish_wall_time"),
            "start": start, "load_avg": os.getloadavg()[0]}


def start_server(tree: Path, socket: Path, extra_env: dict[str, str] | None = None) -> subprocess.Popen:
    """`eels-gz serve` of ``tree`` on ``socket`` (started as the runs are, so that its search path is
    theirs), returned once it is ready."""
    socket.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    proc = subprocess.Popen([sys.executable, "-c", CLI, "serve"], env=tree_env(tree, extra_env, socket), cwd=tree,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    end, said = time.monotonic() + READY_S, []
    while time.monotonic() < end:
        line = proc.stdout.readline()
        said.append(line)
        if "ready on" in line:
            return proc
        if not line:
            break
    proc.kill()
    raise SystemExit(f"{tree}: the run server did not start: {''.join(said)[-2000:]}")


def stop_server(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tree", action="append",
                    help="source tree(s) to compare, PATH[,NAME=VALUE...] with environment variables for its runs "
                         "(default: this one)")
    ap.add_argument("--server", action="append", default=[],
                    help="a --tree (its text) whose runs are also timed through a warm run server of its own")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--duration", type=float, default=1.0)
    ap.add_argument("--out", help="write the JSON here")
    a = ap.parse_args()
    specs = a.tree or [str(HERE)]
    parsed = {spec: parse_tree(spec) for spec in specs}
    unknown = [t for t in a.server if t not in parsed]
    if unknown:
        raise SystemExit(f"--server {unknown[0]}: not one of the --tree values ({', '.join(specs)})")
    # each result is keyed by its --tree text, and TREE+server for its runs through a server
    trees = specs + [t + "+server" for t in a.server]
    args = ["--duration", str(a.duration)]
    result: dict = {"machine": {"cpus": os.cpu_count(), "load_avg_at_start": os.getloadavg()},
                    "command": "eels-gz run " + " ".join(args), "trees": [str(t) for t in trees], "rounds": []}
    servers: dict[str, subprocess.Popen] = {}
    with tempfile.TemporaryDirectory() as tmp:
        sockets = {t: Path(tmp) / f"server_{k}" / "s.sock" for k, t in enumerate(a.server)}

        def timed(t: str, out: Path) -> dict:
            spec = t.removesuffix("+server")
            return one(parsed[spec][0], out, args, parsed[spec][1], sockets.get(spec) if spec != t else None)

        try:
            for k, tree in enumerate(specs):
                one(parsed[tree][0], Path(tmp) / f"warm_{k}", args, parsed[tree][1])  # fills the caches
            for t in a.server:
                servers[t] = start_server(parsed[t][0], sockets[t], parsed[t][1])
            for r in range(a.rounds):
                row = {str(t): timed(t, Path(tmp) / f"r{r}_{k}") for k, t in enumerate(trees)}
                result["rounds"].append(row)
                print(json.dumps(row), flush=True)
        finally:
            for proc in servers.values():
                stop_server(proc)
    med = {}
    for t in trees:
        runs = [r[str(t)] for r in result["rounds"]]
        med[str(t)] = {key: statistics.median(x[key] for x in runs) for key in ("total_s", "loop_s", "outside_loop_s")}
    result["median"] = med
    if len(trees) > 1:
        first = str(trees[0])
        result["outside_loop_ratio_to_first"] = {str(t): statistics.median(
            r[str(t)]["outside_loop_s"] / r[first]["outside_loop_s"] for r in result["rounds"]) for t in trees[1:]}
        result["outside_loop_ratio_range"] = {str(t): [f(r[str(t)]["outside_loop_s"] / r[first]["outside_loop_s"]
                                                         for r in result["rounds"]) for f in (min, max)]
                                              for t in trees[1:]}
    result["machine"]["load_avg_at_end"] = os.getloadavg()
    text = json.dumps(result, indent=2)
    if a.out:
        Path(a.out).parent.mkdir(parents=True, exist_ok=True)
        Path(a.out).write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
