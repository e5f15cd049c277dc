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
Writes JSON (``--out``) and prints it; the load average is recorded with every round.
"""

from __future__ import annotations

import argparse
import json
import os
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


def one(tree: Path, out: Path, args: list[str], extra_env: dict[str, str] | None = None) -> dict:
    """One `eels-gz run` with ``tree`` first on PYTHONPATH (and ``extra_env``); its wall times (s)."""
    env = dict(os.environ, PYTHONPATH=str(tree), **(extra_env or {}))
    # as a user's install: the trees' modules compiled to bytecode once (by the warm-up run), not at every run
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    cmd = [sys.executable, "-c", "import sys; from eels_gz.cli import main; sys.argv[0] = 'eels-gz'; main()",
           "run", "--out", str(out), *args]
    t = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=tree)
    total = time.perf_counter() - t
    if done.returncode != 0:
        raise SystemExit(f"{tree}: exit {done.returncode}: {done.stderr[-2000:]}")
    summary = json.loads((out / "summary.json").read_text())
    return {"total_s": total, "loop_s": summary["wall_time"], "outside_loop_s": total - summary["wall_time"],
            "setup_wall_time": summary.get("setup_wall_time"), "finish_wall_time": summary.get("finish_wall_time"),
            "load_avg": os.getloadavg()[0]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tree", action="append",
                    help="source tree(s) to compare, PATH[,NAME=VALUE...] with environment variables for its runs "
                         "(default: this one)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--duration", type=float, default=1.0)
    ap.add_argument("--out", help="write the JSON here")
    a = ap.parse_args()
    specs = a.tree or [str(HERE)]
    parsed = {spec: parse_tree(spec) for spec in specs}
    trees = specs  # each result is keyed by its --tree text
    args = ["--duration", str(a.duration)]
    result: dict = {"machine": {"cpus": os.cpu_count(), "load_avg_at_start": os.getloadavg()},
                    "command": "eels-gz run " + " ".join(args), "trees": [str(t) for t in trees], "rounds": []}
    with tempfile.TemporaryDirectory() as tmp:
        for k, tree in enumerate(trees):
            one(parsed[tree][0], Path(tmp) / f"warm_{k}", args, parsed[tree][1])
        for r in range(a.rounds):
            row = {str(t): one(parsed[t][0], Path(tmp) / f"r{r}_{k}", args, parsed[t][1]) for k, t in enumerate(trees)}
            result["rounds"].append(row)
            print(json.dumps(row), flush=True)
    med = {}
    for t in trees:
        runs = [r[str(t)] for r in result["rounds"]]
        med[str(t)] = {key: statistics.median(x[key] for x in runs) for key in ("total_s", "loop_s", "outside_loop_s")}
    result["median"] = med
    if len(trees) > 1:
        first = str(trees[0])
        result["outside_loop_ratio_to_first"] = {str(t): statistics.median(
            r[str(t)]["outside_loop_s"] / r[first]["outside_loop_s"] for r in result["rounds"]) for t in trees[1:]}
    result["machine"]["load_avg_at_end"] = os.getloadavg()
    text = json.dumps(result, indent=2)
    if a.out:
        Path(a.out).parent.mkdir(parents=True, exist_ok=True)
        Path(a.out).write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
