"""``eels-gz rover campaign``: the Archimede test campaign (§3.1) as a sweep.

The plan is the spec config/sweeps/rover_campaign.yaml (``command: rover drive``; a case of flat
runs: every test path at every rate, and a case of slopes: straight, lateral and parallel drives at
two rates on generated slopes), run by :func:`eels_gz.sweep.run_sweep` on Ray with every drive in
its own process. Besides the sweep's own outputs (results table, summary.md, plots, samples/) the
campaign's folder keeps the outputs it always had: ``runs/<robot>_<path>_<rate>_<world>.json``
(each drive's record), ``campaign.json`` and ``campaign.md`` (flat runs: end-point odometry error;
slopes: wheel slip, Fig. 12/13 layout).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np

from eels_gz.errors import RunInterrupted
from eels_gz.paths import asset
from eels_gz.sweep.commands import read_json
from eels_gz.sweep.execute import ROW_FILE, SAMPLES_DIR, run_sweep
from eels_gz.sweep.spec import SweepSpec, check_spec, load_spec, parse_spec

SPEC = ("config", "sweeps", "rover_campaign.yaml")
WHAT = "rover campaign"


def campaign_spec(robot: str = "archimede", scale: float = 1.0) -> tuple[SweepSpec, dict[str, str]]:
    """The shipped campaign spec with the robot and path scale given, its paths and wheel rates only
    those the robot can drive (its steering joints' and drive motors' limits); and what was left out
    (``"path lateral"``, ``"rate 2.4"``), each with the reason: Rocky 7's two steered wheels cannot
    crab, and its motors stop at 1.5 rad/s."""
    from eels_gz.errors import ConfigError
    from eels_gz.run.drive_runs import path_refusal, rate_refusal

    spec = load_spec(asset(*SPEC))
    raw = copy.deepcopy(spec.raw)
    raw["base"] = {**raw.get("base", {}), "robot": robot, "scale": scale}
    refused: dict[str, str] = {}
    checks = {"path": lambda p: path_refusal(robot, p, scale=scale), "speed": lambda r: rate_refusal(robot, float(r))}

    def named(key: str, value) -> str:
        return f"rate {float(value):g}" if key == "speed" else f"path {value}"

    for i, case in enumerate(raw.get("cases", [])):
        for key, why_not in checks.items():
            grid = case[key].get("grid") if isinstance(case.get(key), dict) else None
            if not grid:
                continue
            for value in grid:
                if named(key, value) not in refused and (why := why_not(value)) is not None:
                    refused[named(key, value)] = why
            kept = [v for v in grid if named(key, v) not in refused]
            if not kept:
                raise ConfigError(f"{spec.source}: cases[{i}]: robot '{robot}' can drive none of the {key} values "
                                  f"{', '.join(map(str, grid))}: {refused[named(key, grid[0])]}")
            case[key]["grid"] = kept
    spec = parse_spec(raw, spec.source)
    check_spec(spec)
    return spec, refused


def plan(spec: SweepSpec) -> dict:
    """The table's layout from the spec's grids: case 0 flat (path x speed), case 1 slopes
    (world slope:DEG x path x speed)."""
    from eels_gz.run.drive_runs import slope_angle

    flat, slopes = ({d.key: list(d.values) for d in case} for case in spec.case_dispersions())
    return {"flat_paths": flat["path"], "flat_rates": [float(r) for r in flat["speed"]],
            "slopes": [slope_angle(w) for w in slopes["world"]], "slope_paths": slopes["path"],
            "slope_rates": [float(r) for r in slopes["speed"]]}


def campaign(out: Path, robot: str = "archimede", scale: float = 1.0, *, workers: int | None = None,
             address: str | None = None, resume: bool = False, overwrite: bool = False, progress=None) -> dict:
    """Run the campaign into ``out`` (module docstring); returns campaign.json's content. On SIGINT or
    SIGTERM the drives done so far are in campaign.json (status ``interrupted``), and RunInterrupted
    is raised; ``resume`` finishes such a campaign."""
    from eels_gz.run.drive_runs import campaign_config

    out = Path(out)
    spec, refused = campaign_spec(robot, scale)
    stopped = None
    try:
        run_sweep(spec, out, workers=workers, address=address, resume=resume, overwrite=overwrite,
                  progress=progress, what=WHAT)
    except RunInterrupted as exc:
        stopped = exc
    layout = plan(spec)
    flat_rows, slope_rows = [], []
    for s in spec.expand():
        row = read_json(out / SAMPLES_DIR / s.name / ROW_FILE)
        brief = read_json(out / SAMPLES_DIR / s.name / "summary.json")
        if row is None or brief is None or row["status"] in ("crashed", "input_error"):
            continue
        # a drive stopped before its rover was built has a summary but no drive record
        record = read_json(Path(brief["file"])) if "file" in brief else None
        if record is None:
            continue
        runs = out / "runs"
        runs.mkdir(exist_ok=True)
        target = runs / Path(brief["file"]).name
        record["file"] = str(target)
        target.write_text(json.dumps(record))  # the campaign's run files, as a drive writes them
        r = {"path": record["path"], "rate": record["rate"], "slope_deg": record["slope_deg"],
             "status": record["status"], "distance": record["distance"],
             "end_error_relative": record["end_error_relative"], "slip": record["slip"], "file": str(target),
             "slip_samples": record["slip_samples"]}
        (flat_rows if s.case == 0 else slope_rows).append(r)
    summary = {"status": "interrupted" if stopped else "ok", "robot": robot, "scale": scale,
               "flat_world": spec.base["world"], "slope_friction": campaign_config()["slope_friction"],
               "runs_done": len(flat_rows) + len(slope_rows), "runs_planned": len(spec.expand()),
               "not_driven": refused, "flat": flat_rows,
               "slopes": slope_table(slope_rows, layout),
               "slope_runs": [{k: v for k, v in r.items() if k != "slip_samples"} for r in slope_rows],
               "plan": layout, "sweep": {"results": str(out / "results.parquet"), "summary": str(out / "summary.md")}}
    for r in flat_rows:
        r.pop("slip_samples")
    (out / "campaign.md").write_text(campaign_markdown(summary))
    (out / "campaign.json").write_text(json.dumps(summary, indent=2))
    if stopped is not None:
        stopped.result = summary  # what --json prints (campaign.json)
        raise stopped
    return summary


def slope_table(rows: list[dict], layout: dict) -> list[dict]:
    """Fig. 12 (median slip per slope and rate) and Fig. 13 (spread per slope, all rates and paths
    pooled)."""
    from eels_gz.run.drive_runs import slip_stats

    table = []
    for a in layout["slopes"]:
        at = [r for r in rows if r["slope_deg"] == a]
        entry = {"slope_deg": a, "pooled": slip_stats(np.concatenate([r["slip_samples"] for r in at] or [[]]))}
        for rate in layout["slope_rates"]:
            pooled = [r["slip_samples"] for r in at if r["rate"] == rate]
            entry[f"rate_{rate:g}"] = slip_stats(np.concatenate(pooled or [[]]))
        table.append(entry)
    return table


def _pct(v) -> str:
    return "n/a" if v is None else f"{100 * v:.2f}"


def campaign_markdown(summary: dict) -> str:
    """The campaign table (flat: end-point odometry error; slopes: slip)."""
    layout = summary["plan"]
    rates, slope_rates = layout["flat_rates"], layout["slope_rates"]
    lines = [] if summary.get("status", "ok") == "ok" else [
        f"**{summary['status']}** after {summary['runs_done']} of {summary['runs_planned']} runs; n/a: not run.", ""]
    lines += [f"Flat runs on `{summary['flat_world']}` ({summary['robot']}, path scale {summary['scale']:g}): "
              "end-point odometry error, % of distance.", "",
              "| path | " + " | ".join(f"{r:g} rad/s" for r in rates) + " |",
              "|---|" + "---:|" * len(rates)]
    for p in layout["flat_paths"]:
        cells = []
        for r in rates:
            row = next((x for x in summary["flat"] if x["path"] == p and x["rate"] == r), None)
            cells.append("n/a" if row is None else _pct(row["end_error_relative"]))
        lines.append(f"| {p} | " + " | ".join(cells) + " |")
    for what, why in summary.get("not_driven", {}).items():
        lines += ["", f"Not driven, {what}: {why}"]
    paths = layout["slope_paths"]
    named = ", ".join(paths[:-1]) + " and " + paths[-1] if len(paths) > 1 else "".join(paths)
    lines += ["", f"Slopes (generated, friction {summary['slope_friction']:g}; {named} drives): "
              "wheel slip, %, median [quartiles].", "",
              "| slope | " + " | ".join(f"{r:g} rad/s" for r in slope_rates) + " | all |",
              "|---:|" + "---|" * (len(slope_rates) + 1)]
    for e in summary["slopes"]:
        cells = [e[f"rate_{r:g}"] for r in slope_rates] + [e["pooled"]]
        lines.append(f"| {e['slope_deg']:g} deg | " + " | ".join(
            f"{_pct(c['median'])} [{_pct(c['q1'])}, {_pct(c['q3'])}]" for c in cells) + " |")
    return "\n".join(lines) + "\n"
