"""Identify the default ice's across-thread line from the hardware behaviours the papers report (issue 33).

The papers publish no friction numbers, but they report what EELS did on ice, and the simulation
can run the same behaviours. ``eels-gz sweep`` runs them over a grid of the across-thread line
``|e_v| = ev_a + ev_b F_n`` (config/sweeps/ice_identify_leader_follower.yaml and
ice_identify_wall_climb.yaml); this module reads the two campaigns' tables and scores each
(ev_a, ev_b) against the targets:

- **Path following** (NEO Table II, tests 1-9 on synthetic ice): mean path-tracking error at most
  ``LF_MEAN_MAX`` = 6.7 cm and max at most ``LF_MAX_MAX`` = 30 cm, at each speed of the campaign
  (the paper gives none for Table II; its field speeds are 1-7.6 cm/s). Residuals: the excess over
  each bound, relative to it (0 inside).
- **Wall hold, climb and down-climb** (EELS-DARTS §4.3: held its weight; down-climbed more than
  1.5 m): the hold drifts at most ``HOLD_DRIFT_MAX`` = 1 cm (the scenario's bound), and the climb and
  down-climb reach ``CLIMB_RATIO_MIN`` = 0.8 of the commanded motion. Residuals: the shortfall of the
  ratio below 1 (the hardware's down-climb is given as done, not as a ratio: full speed is the
  target, 0.8 the bound), and the drift's excess over its bound, relative.
- **Mobility failure above 60 deg** (EELS-DARTS §4.3.1): the simulation's own flag. A run that
  ends in ``mobility_failure`` (or any status but ``ok``) scores a residual of 1.
- **|e_v| rising with load** (EELS-DARTS Fig. 6): a constraint, not a residual: the grid has
  ``ev_b > 0`` only.

The fit is the grid point of least sum of squared residuals (ties: the smaller ev_a, then ev_b).
With a few points per target it is a selection on a grid, not a regression: the residuals of every
point are reported so that a reader sees how flat or sharp the choice is.

    eels-gz calibrate identify results/ice_lf results/ice_wc            # the report
    eels-gz calibrate identify results/ice_lf results/ice_wc --json     # (or python -m eels_gz.contact.identify)

No engine import: it reads the campaigns' ``results.csv``.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path

from eels_gz.errors import ConfigError

LF_MEAN_MAX = 0.067  # m, NEO Table II tests 1-9: the largest mean error
LF_MAX_MAX = 0.30  # m, the largest max error
HOLD_DRIFT_MAX = 0.01  # m, the wall_climb scenario's hold bound
CLIMB_RATIO_MIN = 0.8  # of the commanded climb and down-climb (issue 33)


@dataclass
class Candidate:
    """One (ev_a, ev_b) of the grid, its measured figures and residuals."""

    ev_a: float
    ev_b: float
    figures: dict = field(default_factory=dict)
    residuals: dict = field(default_factory=dict)

    @property
    def cost(self) -> float:
        return float(sum(r * r for r in self.residuals.values()))

    def meets(self) -> bool:
        """Every bound met (residuals of the hinge targets 0, ratios at least CLIMB_RATIO_MIN)."""
        return all(v <= 1.0 - CLIMB_RATIO_MIN + 1e-12 if k.endswith("_ratio") else v == 0.0
                   for k, v in self.residuals.items())


def _rows(folder: Path) -> list[dict]:
    path = Path(folder) / "results.csv"
    if not path.is_file():
        raise ConfigError(f"{path}: no campaign table (run the identification sweep into {folder} first)")
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        raise ConfigError(f"{path}: the campaign table is empty")
    for key in ("contact.ev_a", "contact.ev_b", "status"):
        if key not in rows[0]:
            raise ConfigError(f"{path}: no column '{key}'; expected the table of an ice_identify_* campaign")
    return rows


def _num(row: dict, key: str, path: Path) -> float:
    text = row.get(key, "")
    try:
        return float(text)
    except ValueError:
        return math.nan


def score(leader_follower: Path, wall_climb: Path) -> list[Candidate]:
    """Every grid point of the two campaigns with its figures and residuals (module docstring)."""
    candidates: dict[tuple[float, float], Candidate] = {}

    def get(row: dict, path: Path) -> Candidate:
        key = (_num(row, "contact.ev_a", path), _num(row, "contact.ev_b", path))
        return candidates.setdefault(key, Candidate(*key))

    lf_path = Path(leader_follower) / "results.csv"
    for row in _rows(leader_follower):
        c = get(row, lf_path)
        speed = _num(row, "scenario.speed", lf_path)
        tag = f"lf_{speed:g}"
        mean, worst = _num(row, "tracking_error.mean_m", lf_path), _num(row, "tracking_error.max_m", lf_path)
        c.figures[tag] = {"status": row["status"], "mean_m": mean, "max_m": worst,
                          "speed_m_s": _num(row, "average_speed_m_s", lf_path)}
        if row["status"] != "ok" or not (math.isfinite(mean) and math.isfinite(worst)):
            c.residuals[f"{tag}_mean"] = c.residuals[f"{tag}_max"] = 1.0
        else:
            c.residuals[f"{tag}_mean"] = max(0.0, mean - LF_MEAN_MAX) / LF_MEAN_MAX
            c.residuals[f"{tag}_max"] = max(0.0, worst - LF_MAX_MAX) / LF_MAX_MAX
    wc_path = Path(wall_climb) / "results.csv"
    for row in _rows(wall_climb):
        c = get(row, wc_path)
        speed = _num(row, "scenario.climb_speed", wc_path)
        tag = "climb" if speed > 0 else "down_climb"
        ratio, drift = _num(row, "climb_ratio", wc_path), _num(row, "hold_drift_m", wc_path)
        c.figures[tag] = {"status": row["status"], "climb_ratio": ratio, "hold_drift_m": drift,
                          "max_axis_gravity_angle_deg": _num(row, "max_axis_gravity_angle_deg", wc_path)}
        ok = row["status"] == "ok" and math.isfinite(ratio)
        c.residuals[f"{tag}_ratio"] = min(1.0, abs(1.0 - ratio)) if ok else 1.0
        c.residuals[f"{tag}_hold"] = (max(0.0, drift - HOLD_DRIFT_MAX) / HOLD_DRIFT_MAX
                                      if ok and math.isfinite(drift) else 1.0)
    expected = set().union(*(c.residuals for c in candidates.values()))
    for c in candidates.values():
        missing = sorted(expected - set(c.residuals))
        if missing:
            raise ConfigError(f"ev_a = {c.ev_a:g}, ev_b = {c.ev_b:g} is not in both campaigns (or not at every "
                              f"speed): no {', '.join(missing)}")
    return sorted(candidates.values(), key=lambda c: (c.cost, c.ev_a, c.ev_b))


def report(candidates: list[Candidate]) -> str:
    """The fit as Markdown: the chosen point, then every point's residuals."""
    best = candidates[0]
    keys = sorted(best.residuals)
    lines = [f"fit: ev_a = {best.ev_a:g}, ev_b = {best.ev_b:g} 1/N (cost {best.cost:.4g}; every bound met: "
             f"{'yes' if best.meets() else 'NO'})", "",
             "| ev_a | ev_b | cost | " + " | ".join(keys) + " |", "|---" * (3 + len(keys)) + "|"]
    for c in candidates:
        lines.append(f"| {c.ev_a:g} | {c.ev_b:g} | {c.cost:.4g} | "
                     + " | ".join(f"{c.residuals[k]:.3g}" for k in keys) + " |")
    return "\n".join(lines)


def candidates_json(candidates: list[Candidate]) -> list[dict]:
    """Every candidate as a JSON-ready dictionary, the fit first."""
    return [{"ev_a": c.ev_a, "ev_b": c.ev_b, "cost": c.cost, "meets": c.meets(), "residuals": c.residuals,
             "figures": c.figures} for c in candidates]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eels_gz.contact.identify", description=__doc__.splitlines()[0])
    ap.add_argument("leader_follower", type=Path,
                    help="output folder of config/sweeps/ice_identify_leader_follower.yaml")
    ap.add_argument("wall_climb", type=Path, help="output folder of config/sweeps/ice_identify_wall_climb.yaml")
    ap.add_argument("--json", action="store_true", help="print every candidate as JSON")
    a = ap.parse_args(argv)
    try:
        candidates = score(a.leader_follower, a.wall_climb)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if a.json:
        print(json.dumps(candidates_json(candidates), indent=2))
    else:
        print(report(candidates))
    return 0


if __name__ == "__main__":
    sys.exit(main())
