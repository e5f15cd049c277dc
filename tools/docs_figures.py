"""Regenerate the figures that docs/ quotes from a command's output (``make docs-figures``).

Each figure runs the command the docs show, as a user would (``eels-gz ...``, or ``python bench/X.py``
for a timing, in a subprocess, into ``results/docs_figures/<figure>``), reads what it wrote, and
records the numbers in one committed file, ``docs/figures.json``, with the command, its wall time,
the machine, the load and the date. The docs' quoted text is then rewritten from that file: a block
between ``<!-- docs-figures: NAME -->`` and ``<!-- /docs-figures -->`` markers, the figure's own
pattern in a sentence, or numbers quoted one by one (:class:`Quote`: a pattern matching exactly one
place of its page, the number in its group ``n``). ``test/faults/test_docs_figures.py`` checks that
the docs quote exactly what docs/figures.json holds, and that a hand edit of any quoted number is
caught, so a figure cannot drift from its command without a failing test; rerun this script after a
change that moves a figure. Physics figures come from the runs; timings from the bench/ script's
JSON (kept whole in docs/figures.json), with the load average of the machine it ran on.

Covered (the list: ``--list``; the definitions: tools/docs_figures_list.py): the rover campaign table,
wall time and load, and the multibody optimizer's bodies and step ratio (docs/robots.md); sidewind on
ice and mars_dem, tube_dangle, wall_climb (default ice, down-climb, stock), moulin_descent (slot and
helix), leader_follower (default ice, ice_grip, regulated) in docs/scenarios.md and the scenario's
own description; screw_spin on EELS 1.0 alternating (screw and stock), the "At rest" table
(bench/screw_rest.py) and the demo's compare table (docs/contact.md); the scan and DEM scale figures
(docs/worlds.md, bench/terrain_scans.py and bench/terrain_dem.py); the rows of docs/benchmarks.md of
bench/terrain_fields.py, bench/terrain_scans.py, bench/terrain_dem.py, bench/optimizer.py and
bench/mcap_writer.py; the soil system's cost (docs/soil.md, bench/soil.py); the Archimede slope
campaign's table, bounds, wall time and load (docs/soil.md, bench/archimede_slopes.py running
config/sweeps/archimede_slopes.yaml: 500 runs, 11 min on 2 workers under a load of 6).

Not yet regenerated (quoted from runs by hand): screw_spin front-only and the stock roll bound (a run's
maxima that metrics.json does not hold), leader_follower at |e_v| 30 and 100 and at 0.1 and 0.2 m/s,
wall_climb's right-handed and regulated runs, calibrate's figures (checked by tests, not quoted from a
run), the other rows and sections of docs/benchmarks.md (bench/speed.py, startup.py, snake_scenarios.py,
sweep.py, camera.py, contact_kernel.py, screw_contact_step.py: issue 36's, 35's and 32's work, being
re-measured by it), docs/sweeps.md's, docs/ros.md's, docs/viewer.md's and the README's
timings.

    python tools/docs_figures.py                    # run every figure, rewrite docs/figures.json and the docs
    python tools/docs_figures.py --only sidewind_ice
    python tools/docs_figures.py --page docs/contact.md   # the figures one page quotes
    python tools/docs_figures.py --only wall_climb --reread  # from its last output folder, no run
    python tools/docs_figures.py --docs-only        # rewrite the docs from docs/figures.json (no runs)
    python tools/docs_figures.py --list

Run time on this 2-core machine, shared (load average 1.7-3.6 from other jobs; each figure's own in
docs/figures.json): the rover campaign (54 drives, 915 s simulated, on 2 Ray workers) 2.5 min on a
quiet machine (14.6 min under a load of 7-9), bench/terrain_scans.py 110 s, the demo's compare (2 x 45 s
simulated) 1.5 min, leader_follower (200 s simulated) 71 s and its two variants about as long,
wall_climb and moulin_descent about a minute each, bench/terrain_fields.py 40-47 s,
bench/screw_rest.py (10 runs of 10 s) 46 s, the helix 35 s, the down-climb 30 s, the sidewind,
tube_dangle and screw_spin runs under a minute together, bench/terrain_dem.py 17 s, bench/optimizer.py
9 s, the stock wall_climb 8 s, bench/soil.py 7-9 s, bench/mcap_writer.py 2-5 s: about 17 minutes in
all when the machine is quiet, and the slope campaign's 11 more; ``--page`` or ``--only`` runs a part.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIGURES_FILE = REPO / "docs" / "figures.json"
OUT = Path("results") / "docs_figures"
BLOCK = re.compile(r"(<!-- docs-figures: (?P<name>[a-z0-9_]+) -->\n)(?P<body>.*?)(<!-- /docs-figures -->)", re.S)


sys.path.insert(0, str(Path(__file__).resolve().parent))
from docs_figures_list import FIGURES, SIDEWIND_PATTERN, Figure, _render_sidewind_pair  # noqa: E402


def machine() -> dict:
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    return {"platform": platform.platform(), "python": platform.python_version(), "cpus": os.cpu_count(),
            "cpu": platform.processor() or platform.machine(), "load_average": load,
            "date": time.strftime("%Y-%m-%dT%H:%M:%S%z")}


def run_figure(fig: Figure, root: Path) -> dict:
    """Run the figure's command into ``root/<name>`` (replacing an earlier one) and read its numbers."""
    import shutil

    out = root / fig.name
    shutil.rmtree(out, ignore_errors=True)
    argv = [a.replace("{out}", str(out)) for a in fig.command]
    t0 = time.perf_counter()
    program = [sys.executable, "-m", "eels_gz.cli"] if fig.program == "eels-gz" else [sys.executable]
    done = subprocess.run([*program, *argv], cwd=REPO, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"docs figure '{fig.name}': {fig.program} {' '.join(argv)} exited {done.returncode}:\n"
                         f"{done.stderr[-3000:]}")
    values = fig.read(REPO / out, done.stdout)
    command = fig.program + " " + " ".join(argv)
    return {"command": command, "wall_time_s": round(wall, 1), "machine": machine(), "values": values}


def rendered(page: str, figures: dict) -> dict[str, str]:
    """What each marker block and pattern of ``page`` must hold: {block name or pattern: text}."""
    out = {}
    for name, fig in FIGURES.items():
        if fig.page != page or name not in figures or fig.render is None:
            continue
        if fig.pattern is None:
            out[name] = fig.render(figures[name]["values"])
        elif fig.pattern != SIDEWIND_PATTERN:  # the sidewind pair is one sentence (below)
            out[fig.pattern] = fig.render(figures[name]["values"])
    if page == "docs/scenarios.md" and {"sidewind_ice", "sidewind_mars_dem"} <= set(figures):
        out[SIDEWIND_PATTERN] = _render_sidewind_pair(figures["sidewind_ice"]["values"],
                                                      figures["sidewind_mars_dem"]["values"])
    return out


def apply_quotes(text: str, page: str, figures: dict) -> str:
    """``text`` with the number of every :class:`Quote` of ``page``'s figures rewritten from ``figures``."""
    for name, fig in FIGURES.items():
        if name not in figures:
            continue
        for q in fig.quotes:
            if (q.page or fig.page) != page:
                continue
            found = list(re.finditer(q.pattern, text))
            if len(found) != 1:
                raise SystemExit(f"{page}: figure {name}: {len(found)} places match {q.pattern!r} (want one)")
            m = found[0]
            entry = figures[name]
            run = {"machine": entry["machine"], "wall_time_s": entry["wall_time_s"]}
            value = q.text({**entry["values"], "_run": run})
            text = text[:m.start("n")] + value + text[m.end("n"):]
    return text


def apply(text: str, page: str, figures: dict) -> str:
    """``text`` of ``page`` with every figure's quote rewritten from ``figures``."""
    text = apply_quotes(text, page, figures)
    for key, value in rendered(page, figures).items():
        if key in FIGURES:
            text, n = BLOCK.subn(lambda m: m.group(1) + value + m.group(4) if m.group("name") == key else m.group(0),
                                 text)
            if f"<!-- docs-figures: {key} -->" not in text:
                raise SystemExit(f"{page}: no '<!-- docs-figures: {key} -->' block")
        else:
            text, n = re.subn(key, value, text)
            if n == 0:
                raise SystemExit(f"{page}: no sentence matches the figure pattern {key!r}")
    return text


def pages(figures: dict) -> set[str]:
    """Every page (or file) quoting one of ``figures``."""
    return {p for n in figures if n in FIGURES for p in (FIGURES[n].page, *(q.page for q in FIGURES[n].quotes)) if p}


def reread_figure(fig: Figure, root: Path) -> dict:
    """Read the figure's numbers from what its command wrote last into ``root/<name>`` (no run): for a
    renderer or a quote changed without a physics change. The wall time is the run's own
    (summary.json: setup, loop and finish), or None; the machine and load are the reread's, so a
    figure that quotes the load of its run must be run, not reread."""
    out = root / fig.name
    argv = [a.replace("{out}", str(out)) for a in fig.command]
    summary = out / "summary.json"
    wall = None
    if summary.exists():
        s = json.loads(summary.read_text())
        parts = [s.get(k) for k in ("setup_wall_time", "wall_time", "finish_wall_time")]
        wall = round(sum(parts), 1) if all(isinstance(p, (int, float)) for p in parts) else None
    return {"command": fig.program + " " + " ".join(argv), "wall_time_s": wall, "reread": True,
            "machine": machine(), "values": fig.read(REPO / out, "")}  # the machine now, not at the run


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", action="append", choices=sorted(FIGURES), help="run only this figure (repeatable)")
    parser.add_argument("--page", action="append", choices=sorted(pages(FIGURES)),
                        help="run only the figures this page quotes (repeatable)")
    parser.add_argument("--docs-only", action="store_true", help="rewrite the docs from docs/figures.json, run nothing")
    parser.add_argument("--reread", action="store_true",
                        help="read the chosen figures from their last output folders instead of running them")
    parser.add_argument("--list", action="store_true", help="list the figures, their pages and commands, and exit")
    parser.add_argument("--out", type=Path, default=OUT, help="where the commands write (default: %(default)s)")
    args = parser.parse_args(argv)
    if args.list:
        for name, fig in FIGURES.items():
            print(f"{name:28s} {fig.page:20s} {fig.program} {' '.join(fig.command)}")
        return
    figures = json.loads(FIGURES_FILE.read_text())["figures"] if FIGURES_FILE.exists() else {}
    chosen = [*(args.only or []), *(n for n in FIGURES if pages({n: None}) & set(args.page or []))]
    if not args.docs_only:
        for name in dict.fromkeys(chosen or FIGURES):
            fig = FIGURES[name]
            print(f"docs figure {name}: {fig.program} {' '.join(fig.command)}", flush=True)
            figures[name] = reread_figure(fig, args.out) if args.reread else run_figure(fig, args.out)
            print(f"  {figures[name]['wall_time_s']} s, load {figures[name]['machine']['load_average']}", flush=True)
        FIGURES_FILE.write_text(json.dumps({"about": "written by tools/docs_figures.py (make docs-figures); "
                                                     "test/faults/test_docs_figures.py checks docs/ against it",
                                            "figures": figures}, indent=2) + "\n")
    for page in sorted(pages(figures)):
        path = REPO / page
        path.write_text(apply(path.read_text(), page, figures))
        print(f"rewrote the figures of {page}")

if __name__ == "__main__":
    main()
