"""The figures docs/ quotes from a command's output, for tools/docs_figures.py (``make docs-figures``):
for each, the command, how its numbers are read from what the command wrote, and how the docs quote
them (a marker block, a sentence's pattern, or numbers one by one)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

@dataclass(frozen=True)
class Figure:
    """One figure: the command (argv after ``eels-gz``, ``{out}`` its output folder), how its numbers are
    read from the output folder (and the command's stdout), and where the docs quote them."""

    name: str
    command: tuple[str, ...]
    read: Callable[[Path, str], dict]
    page: str
    render: Callable[[dict], str] | None  # None: the figure is quoted only through ``quotes``
    pattern: str | None = None  # a regex of the quoted sentence; None: the page's marker block
    quotes: tuple["Quote", ...] = ()  # numbers quoted one by one in the page's prose (then pattern is unused)
    program: str = "eels-gz"  # or "python": a bench/ script run with this interpreter
    status: str = "ok"  # the status the docs describe (the helix falls: slip_failure)


@dataclass(frozen=True)
class Quote:
    """One number quoted in a sentence: ``pattern`` matches exactly one place of the page and holds
    one group ``(?P<n>...)``, the number, which ``text`` renders from the figure's values."""

    pattern: str
    text: Callable[[dict], str]
    page: str | None = None  # where it is quoted, if not on the figure's page




def _rover_campaign(out: Path, stdout: str) -> dict:
    summary = json.loads((out / "campaign.json").read_text())
    flat = [r["end_error_relative"] for r in summary["flat"] if r["end_error_relative"] is not None]
    slips = [c["median"] for e in summary["slopes"] for k, c in e.items()
             if k != "slope_deg" and c["median"] is not None]
    return {"campaign_md": (out / "campaign.md").read_text(), "status": summary["status"],
            "runs_done": summary["runs_done"], "runs_planned": summary["runs_planned"],
            "flat_error_percent": [100 * min(flat), 100 * max(flat)],
            "slope_slip_median_percent": [100 * min(slips), 100 * max(slips)]}


def _render_campaign(values: dict) -> str:
    return values["campaign_md"]


def _sidewind(out: Path, stdout: str) -> dict:
    m = json.loads((out / "metrics.json").read_text())
    return {"status": m["status"], "average_speed_cm_s": 100 * m["average_speed_m_s"],
            "direction_from_body_axis_deg": math.degrees(abs(m["direction_from_body_axis_rad"]))}


def _render_sidewind_pair(ice: dict, dem: dict) -> str:
    return (f"default ice: {ice['average_speed_cm_s']:.1f} cm/s, {ice['direction_from_body_axis_deg']:.0f} deg from "
            f"the body axis; mars_dem: {dem['average_speed_cm_s']:.1f} cm/s, "
            f"{dem['direction_from_body_axis_deg']:.0f} deg")


def _compare(out: Path, stdout: str) -> dict:
    c = json.loads((out / "compare.json").read_text())
    models = c["models"]
    return {"status": "ok" if all(m["status"] == "ok" for m in models.values()) else "not ok",
            "models": {k: {"final_pose": m["final_pose"], "path_length": m["path_length"],
                           "real_time_factor": m["real_time_factor"]} for k, m in models.items()},
            "difference": {k: v for k, v in c["difference"].items() if k != "of"}}


def _render_compare(values: dict) -> str:
    def row(label: str, m: dict) -> str:
        p = m["final_pose"]
        return (f"  | {label} | {p['x']:.3f}, {p['y']:.3f}, {p['yaw']:.3f} | {m['path_length']:.2f} | "
                f"{m['real_time_factor']:.1f} |").replace("-", "\u2212")

    d = values["difference"]
    lines = ["  | | final tail x, y (m), yaw (rad) | path (m) | run RTF (machine loaded) |", "  |---|---|---|---|",
             row("stock", values["models"]["stock"]), row("screw (default ice)", values["models"]["screw"]),
             f"  | screw \u2212 stock | max {d['x']['max']:.2f} / {d['y']['max']:.2f} m, {d['yaw']['max']:.2f} rad; "
             f"RMS {d['x']['rms']:.2f} / {d['y']['rms']:.2f} m, {d['yaw']['rms']:.2f} rad | | |"]
    return "\n".join(lines) + "\n  "


def _tube_dangle(out: Path, stdout: str) -> dict:
    m = json.loads((out / "metrics.json").read_text())
    return {"status": m["status"], "robot_mass_kg": m["robot_mass_kg"], "weight_n": m["weight_n"],
            "tether_force_vertical_n": m["tether_force_vertical_n"], "tether_tension_n": m["tether_tension_n"],
            "min_clearance_settled_m": m["min_clearance_settled_m"]}


def _render_tube_dangle(v: dict) -> str:
    off = abs(v["tether_force_vertical_n"] / v["weight_n"] - 1.0) * 100.0
    within = "< 0.1 %" if off < 0.1 else f"{off:.1f} %"
    tensions = " / ".join(f"{t:.0f}" for t in v["tether_tension_n"])
    return (f"three tethers (1e5 N/m) carry {v['tether_force_vertical_n']:.1f} N vertically = m g of the "
            f"{v['robot_mass_kg']:.2f} kg model to {within} ({tensions} N from tail to head); hangs "
            f"{v['min_clearance_settled_m']:.2f} m clear of the ice")


def _screw_spin(out: Path, stdout: str) -> dict:
    m = json.loads((out / "metrics.json").read_text())
    return {k: m[k] for k in ("status", "roll_change_rad", "yaw_change_rad", "displacement_m")}


def _minus(x: float, digits: int) -> str:
    return f"{x:.{digits}f}".replace("-", "\u2212")


def _render_screw_spin(v: dict) -> str:
    # the rates between (\\1) are read off the run's plot by hand: not regenerated
    return (f"rolls {_minus(v['roll_change_rad'], 2)} rad, \\1; yaws {_minus(v['yaw_change_rad'], 2)} rad, "
            f"{v['displacement_m']:.1f} m travelled")


SCREW_SPIN_PATTERN = r"rolls \u2212?[0-9.]+ rad, ([^;|]*); yaws \u2212?[0-9.]+ rad, [0-9.]+ m travelled"

TUBE_DANGLE_PATTERN = (r"three tethers \(1e5 N/m\) carry [0-9.]+ N vertically = m g of the [0-9.]+ kg model to "
                       r"[<0-9. ]+ % \([0-9 /]+ N from tail to head\); hangs [0-9.]+ m clear of the ice")

SIDEWIND_PATTERN = (r"default ice: [0-9.]+ cm/s, [0-9]+ deg from the body axis; mars_dem: [0-9.]+ cm/s, [0-9]+ deg")

def _bench(out: Path, stdout: str) -> dict:
    """A bench/ script's JSON (written to ``{out}/bench.json``), whole; status ok unless it says otherwise."""
    values = json.loads((out / "bench.json").read_text())
    values.setdefault("status", "ok" if values.get("same_bytes", True) else "bytes differ")
    return values


def _metrics(out: Path, stdout: str) -> dict:
    """A scenario run's metrics.json, whole."""
    return json.loads((out / "metrics.json").read_text())


def _shares(v: dict) -> list[float]:
    return list(v["hold_statics"]["along_thread_share"].values())


WALL_CLIMB_QUOTES = (
    Quote(r"screws locked: (?P<n>[0-9.]+) kN mean total screw load", lambda v: f"{v['mean_screw_load_n'] / 1e3:.1f}"),
    Quote(r"the robot holds for (?P<n>[0-9]+) s with [0-9.]+ mm drift", lambda v: f"{v['hold_time_s']:.0f}"),
    Quote(r"the robot holds for [0-9]+ s with (?P<n>[0-9.]+) mm drift", lambda v: f"{1e3 * v['hold_drift_m']:.1f}"),
    Quote(r"\*\*Climb\*\* \(20 s at 0.02 m/s commanded\): (?P<n>[0-9.]+) m", lambda v: f"{v['climbed_m']:.2f}"),
    Quote(r"`climb_ratio` (?P<n>[0-9.]+), the tail axis", lambda v: f"{v['climb_ratio']:.2f}"),
    Quote(r"the tail axis tilting up to (?P<n>[0-9]+) deg", lambda v: f"{v['max_axis_gravity_angle_deg']:.0f}"),
    Quote(r"\(held (?P<n>[0-9]+) s with [0-9.]+ mm drift\)", lambda v: f"{v['hold_time_s']:.0f}"),
    Quote(r"\(held [0-9]+ s with (?P<n>[0-9.]+) mm drift\)", lambda v: f"{1e3 * v['hold_drift_m']:.1f}"),
)

DOWN = r"\*\*down-climb\*\* \(`--set scenario.climb_speed=-0.02 --set scenario.tail_z=0.8`, "
WALL_CLIMB_DOWN_QUOTES = (
    Quote(DOWN + r"(?P<n>[0-9]+) s\)", lambda v: f"{v['climb_time_s']:.0f}"),
    Quote(DOWN + r"[0-9]+ s\): (?P<n>[0-9.]+) m at a steady", lambda v: f"{-v['climbed_m']:.2f}"),
    Quote(r"m at a steady (?P<n>[0-9]+) mm/s, ratio", lambda v: f"{-1e3 * v['climbed_m'] / v['climb_time_s']:.0f}"),
    Quote(r"mm/s, ratio (?P<n>[0-9.]+), axis within", lambda v: f"{v['climb_ratio']:.2f}"),
    Quote(r"ratio [0-9.]+, axis within (?P<n>[0-9.]+) deg", lambda v: f"{v['max_axis_gravity_angle_deg']:.1f}"),
)

WALL_CLIMB_STOCK_QUOTES = (
    Quote(r"same push: `slip_failure` (?P<n>[0-9.]+) s after the rope", lambda v: f"{v['held_s']:.2f}"),
)

MOULIN_QUOTES = (
    Quote(r"the slot measures (?P<n>[0-9.]+) m there", lambda v: f"{v['gap_m']:.3f}"),
    Quote(r"under the placement springs at (?P<n>[0-9.]+) s simulated", lambda v: f"{v['placement']['time']:.1f}"),
    Quote(r"deepest sample point (?P<n>[0-9.]+) mm in", lambda v: f"{1e3 * v['placement']['penetration_m']:.1f}"),
    Quote(r"(?P<n>[0-9]+) screws touch, ", lambda v: f"{v['hold_statics']['screws_in_contact']}"),
    Quote(r"screws touch, (?P<n>[0-9.]+)-[0-9.]+ of the weight", lambda v: f"{min(_shares(v)):.2f}"),
    Quote(r"screws touch, [0-9.]+-(?P<n>[0-9.]+) of the weight", lambda v: f"{max(_shares(v)):.2f}"),
    Quote(r"squeeze balance (?P<n>[0-9.]+) \(facing walls", lambda v: f"{v['hold_statics']['squeeze_balance']:.3f}"),
    Quote(r"rope at (?P<n>[0-9]+) N by the end of the push", lambda v: f"{v['rope_force_n']:.0f}"),
    Quote(r"held: (?P<n>[0-9.]+) kN of screw load", lambda v: f"{v['hold_statics']['normal_force_n'] / 1e3:.2f}"),
    Quote(r"of screw load against the (?P<n>[0-9.]+) kN friction along",
          lambda v: f"{v['hold_statics']['holding_normal_force_n'] / 1e3:.2f}"),
    Quote(r"(?P<n>[0-9.]+) mm drift over the [0-9]+ s hold", lambda v: f"{1e3 * v['hold_drift_m']:.2f}"),
    Quote(r"mm drift over the (?P<n>[0-9]+) s hold", lambda v: f"{v['hold_time_s']:.0f}"),
    Quote(r"Then (?P<n>[0-9.]+) m down in [0-9]+ s", lambda v: f"{v['descended_m']:.2f}"),
    Quote(r"m down in (?P<n>[0-9]+) s at", lambda v: f"{v['climb_time_s']:.0f}"),
    Quote(r"a steady (?P<n>[0-9]+) mm/s \(ratio", lambda v: f"{1e3 * v['descent_rate_m_s']:.0f}"),
    Quote(r"\(ratio (?P<n>[0-9.]+): before issue 33", lambda v: f"{v['climb_ratio']:.2f}"),
    Quote(r"tail axis within (?P<n>[0-9.]+) deg of vertical", lambda v: f"{v['max_axis_gravity_angle_deg']:.1f}"),
)

def _moulin_helix(out: Path, stdout: str) -> dict:
    """The helix's metrics, with the weight's share along the threads split by screw hand (the
    variant's, eels_gz.registry.screw_handedness)."""
    from eels_gz import registry

    values = _metrics(out, stdout)
    robot = json.loads((out / "summary.json").read_text())["settings"]["config"]["robot"]["name"]
    record = registry.eels_variants()[robot]
    shares = values["hold_analysis"]["along_thread_share"]
    values["along_thread_share_by_hand"] = {
        hand: sorted(v for k, v in shares.items() if registry.screw_handedness(record, k) == sign)
        for hand, sign in (("right", 1), ("left", -1))}
    return values


HELIX_QUOTES = (
    Quote(r"touching the wall \((?P<n>[0-9]+) screws, [0-9]+ N in all\)",
          lambda v: f"{v['hold_analysis']['screws_in_contact']}"),
    Quote(r"touching the wall \([0-9]+ screws, (?P<n>[0-9]+) N in all\)",
          lambda v: f"{v['hold_analysis']['normal_force_n']:.0f}"),
    Quote(r"the tail drops (?P<n>[0-9]+) cm in [0-9.]+ s", lambda v: f"{100 * v['descended_m']:.0f}"),
    Quote(r"the tail drops [0-9]+ cm in (?P<n>[0-9.]+) s", lambda v: f"{v['duration_s']:.2f}"),
    Quote(r"(?P<n>[0-9.]+)-[0-9.]+ of the weight runs along the threads",
          lambda v: f"{min(v['along_thread_share_by_hand']['right']):.2f}"),
    Quote(r"[0-9.]+-(?P<n>[0-9.]+) of the weight runs along the threads",
          lambda v: f"{max(v['along_thread_share_by_hand']['right']):.2f}"),
    Quote(r"right-handed screws and (?P<n>[0-9.]+)-[0-9.]+ along its left-handed",
          lambda v: f"{min(v['along_thread_share_by_hand']['left']):.2f}"),
    Quote(r"right-handed screws and [0-9.]+-(?P<n>[0-9.]+) along its left-handed",
          lambda v: f"{max(v['along_thread_share_by_hand']['left']):.2f}"),
    Quote(r"friction along the threads would need (?P<n>[0-9.]+) kN",
          lambda v: f"{v['hold_analysis']['holding_normal_force_n'] / 1e3:.1f}"),
    Quote(r"not self-balanced \(`squeeze_balance` (?P<n>[0-9.]+)\)",
          lambda v: f"{v['hold_analysis']['squeeze_balance']:.2f}"),
)

LF = r"the robot follows the path: "
LEADER_FOLLOWER_QUOTES = (
    Quote(LF + r"(?P<n>[0-9.]+) m in [0-9]+ s", lambda v: f"{v['travelled_m']:.2f}"),
    Quote(LF + r"[0-9.]+ m in (?P<n>[0-9]+) s", lambda v: f"{v['duration_s']:.0f}"),
    Quote(r"commanded \((?P<n>[0-9.]+) cm/s\), mean [0-9.]+ cm", lambda v: f"{100 * v['average_speed_m_s']:.2f}"),
    Quote(r"cm/s\), mean (?P<n>[0-9.]+) cm, std", lambda v: f"{100 * v['tracking_error']['mean_m']:.1f}"),
    Quote(r"cm/s\), mean [0-9.]+ cm, std (?P<n>[0-9.]+) cm", lambda v: f"{100 * v['tracking_error']['std_m']:.1f}"),
    Quote(r"cm/s\), mean [0-9.]+ cm, std [0-9.]+ cm, max (?P<n>[0-9.]+) cm \(the tail end",
          lambda v: f"{100 * v['tracking_error']['max_m']:.0f}"),
)

GRIP = r"no test runs it\): 0\.05 m/s: mean "
LEADER_FOLLOWER_GRIP_QUOTES = (
    Quote(GRIP + r"(?P<n>[0-9.]+) cm, std", lambda v: f"{100 * v['tracking_error']['mean_m']:.2f}"),
    Quote(GRIP + r"[0-9.]+ cm, std (?P<n>[0-9.]+) cm", lambda v: f"{100 * v['tracking_error']['std_m']:.2f}"),
    Quote(GRIP + r"[0-9.]+ cm, std [0-9.]+ cm, max (?P<n>[0-9.]+) cm \(tail",
          lambda v: f"{100 * v['tracking_error']['max_m']:.1f}"),
    Quote(r"\(tail; head (?P<n>[0-9.]+) / [0-9.]+ cm\)",
          lambda v: f"{100 * v['tracking_error_per_point']['head']['mean_m']:.1f}"),
    Quote(r"\(tail; head [0-9.]+ / (?P<n>[0-9.]+) cm\)",
          lambda v: f"{100 * v['tracking_error_per_point']['head']['max_m']:.1f}"),
    Quote(r"head [0-9.]+ / [0-9.]+ cm\), (?P<n>[0-9.]+) cm/s achieved",
          lambda v: f"{100 * v['average_speed_m_s']:.2f}"),
)

CREEP = r"under the regulated law, no static friction\), over its first 60 s: "
LEADER_FOLLOWER_REGULATED_QUOTES = (
    Quote(CREEP + r"(?P<n>[0-9.]+) cm/s", lambda v: f"{100 * v['average_speed_m_s']:.1f}"),
    Quote(CREEP + r"[0-9.]+ cm/s, mean (?P<n>[0-9]+) cm", lambda v: f"{100 * v['tracking_error']['mean_m']:.0f}"),
    Quote(CREEP + r"[0-9.]+ cm/s, mean [0-9]+ cm, max (?P<n>[0-9]+) cm",
          lambda v: f"{100 * v['tracking_error']['max_m']:.0f}"),
    Quote(CREEP + r"[0-9.]+ cm/s, mean [0-9]+ cm, max [0-9]+ cm over (?P<n>[0-9]+) s",
          lambda v: f"{v['duration_s']:.0f}"),
)

def _ws(pattern: str) -> str:
    """``pattern`` with each space matching any run of white space (a quote wrapped over lines)."""
    return pattern.replace(" ", r"\s+")


SOIL_QUOTES = (
    Quote(_ws(r"At a load average of (?P<n>[0-9.]+) on this 2-core machine"),
          lambda v: f"{v['load_average_1_5_15'][0]:.1f}"),
    Quote(_ws(r"the system takes (?P<n>[0-9]+) µs of a"), lambda v: f"{v['soil_system_us_per_step']:.0f}"),
    Quote(_ws(r"µs of a (?P<n>[0-9]+) µs step: a median"), lambda v: f"{v['step_us_with_soil']:.0f}"),
    Quote(_ws(r"a median share of (?P<n>[0-9.]+) %"), lambda v: f"{100 * v['soil_share_of_step']:.1f}"),
    Quote(_ws(r"\(rounds (?P<n>[0-9.]+)–[0-9.]+ %\)"), lambda v: f"{100 * min(v['soil_share_of_step_rounds']):.1f}"),
    Quote(_ws(r"\(rounds [0-9.]+–(?P<n>[0-9.]+) %\)"), lambda v: f"{100 * max(v['soil_share_of_step_rounds']):.1f}"),
    Quote(_ws(r"rover's on ice: (?P<n>[0-9]+) vs [0-9]+ µs"), lambda v: f"{v['step_us_with_soil']:.0f}"),
    Quote(_ws(r"rover's on ice: [0-9]+ vs (?P<n>[0-9]+) µs"), lambda v: f"{v['step_us_stock']:.0f}"),
)

RFT_QUOTES = (
    Quote(_ws(r"In sand the robot advances at (?P<n>[0-9.]+) cm/s"), lambda v: f"{100 * v['advance_speed_m_s']:.1f}"),
    Quote(_ws(r"it rolls (?P<n>[0-9.]+) rad about its axis over the run"), lambda v: f"{abs(v['roll_change_rad']):.2f}"),
    Quote(_ws(r"the run above ends (?P<n>[0-9.]+) rad from where it started"),
          lambda v: f"{abs(v['roll_change_rad']):.2f}"),
)
RFT_ICE_QUOTES = (
    Quote(_ws(r"against (?P<n>[0-9.]+) cm/s on ice"), lambda v: f"{100 * v['advance_speed_m_s']:.1f}"),
    Quote(_ws(r"\(on ice (?P<n>[0-9.]+)\)"), lambda v: f"{abs(v['roll_change_rad']):.2f}"),
)
BENCH_RFT_QUOTES = (
    Quote(_ws(r"At a load average of (?P<n>[0-9.]+) on this 2-core machine the RFT system"),
          lambda v: f"{v['load_average_1_5_15'][0]:.1f}"),
    Quote(_ws(r"spinning its 20 screws \((?P<n>[0-9]+) surface"), lambda v: f"{v['surface_elements']}"),
    Quote(_ws(r"the RFT system takes (?P<n>[0-9]+) µs of a"), lambda v: f"{v['rft_system_us_per_step']:.0f}"),
    Quote(_ws(r"µs of a (?P<n>[0-9]+) µs step \(a median"), lambda v: f"{v['step_us_with_rft']:.0f}"),
    Quote(_ws(r"a median share of (?P<n>[0-9.]+) %\); the"), lambda v: f"{100 * v['rft_share_of_step']:.1f}"),
    Quote(_ws(r"contact's system takes (?P<n>[0-9]+) µs of a"), lambda v: f"{v['screw_system_us_per_step']:.0f}"),
    Quote(_ws(r"contact's system takes [0-9]+ µs of a (?P<n>[0-9]+) µs step"),
          lambda v: f"{v['step_us_with_screw_contact']:.0f}"),
    Quote(_ws(r"heightfield at every element \(about (?P<n>[0-9]+) µs\)"),
          lambda v: f"{v['parts_us']['terrain_query']:.0f}"),
    Quote(_ws(r"placing the elements \((?P<n>[0-9]+) µs\)"), lambda v: f"{v['parts_us']['place']:.0f}"),
    Quote(_ws(r"the stresses themselves cost about (?P<n>[0-9]+) µs"), lambda v: f"{v['parts_us']['stresses']:.0f}"),
)

CAMPAIGN_QUOTES = (
    Quote(r"the last run\ntook (?P<n>[0-9.]+) min on this", lambda v: f"{v['_run']['wall_time_s'] / 60:.1f}"),
    Quote(r"min on this 2-core machine under a load average of (?P<n>[0-9.]+) \(the last",
          lambda v: f"{v['_run']['machine']['load_average'][0]:.1f}"),
)

REST_NOTES = {("eels_1_5", "ice_regulated"): "(onto its cross bar)"}  # what the run's plot shows, by hand


def _render_rest(v: dict) -> str:
    """docs/contact.md's "At rest" table from bench/screw_rest.py's JSON."""
    def cell(r: dict) -> str:
        if r["drift_m"] < 1e-9 and r["roll_rad"] < 1e-9:  # below a nanometre and a nanoradian
            moved = "0, 0"
        else:
            mm = 1e3 * r["drift_m"]
            drift = f"{mm:.3f} mm" if mm < 1 else f"{mm:.0f} mm"
            roll = (f"{r['roll_rad']:.0e}".replace("e-0", "e-") if r["roll_rad"] < 0.01 else f"{r['roll_rad']:.2f}")
            moved = f"{drift}, {roll} rad"
        pct = 100 * r["worst_flip_share"]
        return f"{moved}, {pct:.1f} %" if pct < 10 or pct > 99 else f"{moved}, {pct:.0f} %"

    lines = ["| variant | default `ice`: horizontal drift, roll, worst sign-flip share | `ice_regulated` |",
             "|---|---|---|"]
    for robot, sets in v["rest"].items():
        ice, reg = cell(sets["ice"]), cell(sets["ice_regulated"])
        note = REST_NOTES.get((robot, "ice_regulated"))
        if note:
            reg = reg.replace(" rad,", f" rad {note},", 1)
        label = f"`{robot}`" + ("" if sets["ice"]["screw_contact"] else " (no screws, native contact)")
        lines.append(f"| {label} | {ice} | {'same' if reg == ice else reg} |")
    return "\n".join(lines) + "\n"


SCREW_SPIN_STOCK_QUOTES = (
    Quote(r"\| roll within [0-9.]+ rad; yaws (?P<n>\u2212?[0-9.]+) rad \|", lambda v: _minus(v["yaw_change_rad"], 2)),
)

def _mib(x: float) -> str:
    return f"{x / 1024:.1f} GiB" if x >= 1024 else f"{x:.0f} MiB"


WRONG_SIGN_PLACES = {"bore": "in the bore", "ice": "0.3 m into the ice", "behind_holes": "behind the holes",
                     "above_top": "above the open top", "below_bottom": "below the open bottom"}


def _render_scans(v: dict) -> str:
    """docs/worlds.md's scale table from bench/terrain_scans.py's and bench/terrain_dem.py's JSON."""
    lines = ["| input | time | peak memory | model folder | voxel | field error near the wall (max / p99) | "
             "wrong signs | collision mesh to the true wall (max) |", "|---|---|---|---|---|---|---|---|"]
    for k, scan in enumerate(v["scans"]):
        d, a = scan["derived"], scan["accuracy"]
        label = f"{scan['points'] / 1e6:g}M points" if scan["points"] >= 1e6 else f"{scan['points'] / 1e3:g}k points"
        if d["points_used"] < d["points_read"]:
            factor = d["points_read"] / d["points_used"]
            label += f" (downsampled {factor:.2f}x" + (", warned)" if scan["warnings"] else ")")
        wrong = [f"{100 * share:.2f} % of the probes {WRONG_SIGN_PLACES.get(place, place)}"
                 for place, share in a["wrong_sign_share"].items() if share > 0]
        voxel = f"{100 * a['voxel']:.1f} cm" + (" (node budget)" if k == 0 else "")
        lines.append(f"| {label} | {scan['seconds']:.0f} s | {_mib(scan['peak_rss_mib'])} | "
                     f"{scan['model_mb']:.1f} MB | "
                     f"{voxel} | {a['field_error_max_voxels']:.2f} / {a['field_error_p99_voxels']:.2f} voxel | "
                     f"{'; '.join(wrong) or '0'} | {a['mesh_error_max_voxels']:.2f} voxel |")
    mesh = v["mesh"]
    if mesh:
        a = mesh["accuracy"]
        wrong = a["wrong_sign_inside"] + a["wrong_sign_ice"]
        lines.append(f"| `eels-gz world mesh`, glacier channel 60 m long, {mesh['faces'] / 1e6:.1f}M faces, 12 holes "
                     f"0.3 m across | {mesh['seconds']:.0f} s | {_mib(mesh['peak_rss_mib'])} | "
                     f"{mesh['model_mb']:.1f} MB | "
                     f"{100 * a['voxel']:.1f} cm | {a['wall']['max_voxels']:.2f} / {a['wall']['p99_voxels']:.2f} voxel "
                     f"({a['across_holes']['max_voxels']:.2f} across the holes) | "
                     f"{'0' if wrong == 0 else f'{100 * wrong:.2f} %'} | {a['mesh_error_max_voxels']:.2f} voxel |")
    return "\n".join(lines) + "\n"


def _bench_runs(out: Path, stdout: str) -> dict:
    """A bench/ script's JSON whose runs each hold a ``returncode``: ok when every one is 0."""
    values = json.loads((out / "bench.json").read_text())
    runs = [*values.get("scans", []), *([values["mesh"]] if values.get("mesh") else []),
            *([values["world"]] if "world" in values else [])]
    for r in runs:
        r.pop("output_tail", None)
    values["status"] = "ok" if all(r["returncode"] == 0 for r in runs) else "a run failed"
    return values


def _scan(v: dict, points: int) -> dict:
    return next(s for s in v["scans"] if s["points"] == points)


BENCH = "docs/benchmarks.md"
SCANS_QUOTES = (
    Quote(r"1M points: (?P<n>[0-9.]+) s, [0-9]+ MiB", lambda v: f"{_scan(v, 10**6)['seconds']:.0f}", BENCH),
    Quote(r"1M points: [0-9.]+ s, (?P<n>[0-9]+) MiB", lambda v: f"{_scan(v, 10**6)['peak_rss_mib']:.0f}", BENCH),
    Quote(r"1M points: [0-9.]+ s, [0-9]+ MiB, (?P<n>[0-9.]+) MB", lambda v: f"{_scan(v, 10**6)['model_mb']:.1f}",
          BENCH),
    Quote(r"field within (?P<n>[0-9.]+) voxel near the wall, no wrong sign",
          lambda v: f"{_scan(v, 10**6)['accuracy']['field_error_max_voxels']:.2f}", BENCH),
    Quote(r"no wrong sign; 10M: (?P<n>[0-9.]+) s", lambda v: f"{_scan(v, 10**7)['seconds']:.0f}", BENCH),
    Quote(r"load average (?P<n>[0-9.]+) at the end of the\s+scans",
          lambda v: f"{v['machine']['load_avg_at_end'][0]:.1f}"),
)

DEM = r"A DEM, `eels-gz world dem` on "
DEM_QUOTES = (
    Quote(DEM + r"(?P<n>[0-9]+) x [0-9]+ posts", lambda v: f"{v['posts']}"),
    Quote(DEM + r"[0-9]+ x (?P<n>[0-9]+) posts", lambda v: f"{v['posts']}"),
    Quote(r"posts 1 m apart \(`bench/terrain_dem.py`\): (?P<n>[0-9.]+) s, [0-9]+ MiB",
          lambda v: f"{v['world']['seconds']:.1f}"),
    Quote(r"posts 1 m apart \(`bench/terrain_dem.py`\): [0-9.]+ s, (?P<n>[0-9]+) MiB",
          lambda v: f"{v['world']['peak_rss_mib']:.0f}"),
    Quote(r"MiB, a (?P<n>[0-9.]+) MB model folder \(the full raster\)", lambda v: f"{v['model_mb']:.1f}"),
    Quote(r"placed at (?P<n>[0-9]+) spots and rested", lambda v: f"{len(v['rest']['spots'])}"),
    Quote(r"every wheel within (?P<n>[0-9.]+) mm of the \*true\* surface",
          lambda v: f"{1e3 * v['rest']['max_abs_gap_m']:.1f}"),
    Quote(r"then a rover at 20 spots \| (?P<n>[0-9.]+) s, [0-9]+ MiB", lambda v: f"{v['world']['seconds']:.1f}", BENCH),
    Quote(r"then a rover at 20 spots \| [0-9.]+ s, (?P<n>[0-9]+) MiB", lambda v: f"{v['world']['peak_rss_mib']:.0f}",
          BENCH),
    Quote(r"MiB; wheels within (?P<n>[0-9.]+) mm of the true surface",
          lambda v: f"{1e3 * v['rest']['max_abs_gap_m']:.1f}", BENCH),
    Quote(r"the \*true\* surface \(load average (?P<n>[0-9.]+) at its end\)",
          lambda v: f"{v['machine']['load_avg_at_end'][0]:.1f}"),
)

OPT = r"EELS 1.0 alternating with head: "
OPTIMIZER_QUOTES = (
    Quote(r"with head \| (?P<n>[0-9]+) → [0-9]+ bodies", lambda v: f"{v['dart_bodies']['unoptimized']}", BENCH),
    Quote(r"with head \| [0-9]+ → (?P<n>[0-9]+) bodies", lambda v: f"{v['dart_bodies']['optimized']}", BENCH),
    Quote(r"→ [0-9]+ bodies; step (?P<n>[0-9.]+)× \(load", lambda v: f"{v['step_cost_ratio_optimized']:.2f}", BENCH),
    Quote(r"bodies; step [0-9.]+× \(load average (?P<n>[0-9.]+)\)",
          lambda v: f"{v['_run']['machine']['load_average'][0]:.1f}", BENCH),
    Quote(OPT + r"(?P<n>[0-9]+) -> [0-9]+ bodies", lambda v: f"{v['dart_bodies']['unoptimized']}"),
    Quote(OPT + r"[0-9]+ -> (?P<n>[0-9]+) bodies", lambda v: f"{v['dart_bodies']['optimized']}"),
    Quote(OPT + r"[0-9]+ -> [0-9]+ bodies, step (?P<n>[0-9.]+)x", lambda v: f"{v['step_cost_ratio_optimized']:.2f}"),
    Quote(r"step [0-9.]+x\s+\(`bench/optimizer.py`, load average (?P<n>[0-9.]+)\)",
          lambda v: f"{v['_run']['machine']['load_average'][0]:.1f}"),
)

def _worst(v: dict, key: str) -> float:
    return max(shape[key]["max"] for shape in v["accuracy_voxels"].values())


FIELDS_QUOTES = (
    Quote(r"HeightField 1024²: (?P<n>[0-9.]+) M points/s",
          lambda v: f"{v['queries']['heightfield']['best_points_per_s'] / 1e6:.1f}"),
    Quote(r"SdfGrid 256³: (?P<n>[0-9.]+) M points/s",
          lambda v: f"{v['queries']['sdf_grid']['best_points_per_s'] / 1e6:.1f}"),
    Quote(r"256³ grid from a (?P<n>[0-9]+)k-face mesh", lambda v: f"{v['build']['faces'] / 1e3:.0f}"),
    Quote(r"k-face mesh in (?P<n>[0-9.]+) s", lambda v: f"{v['build']['seconds']:.1f}"),
    Quote(r"error near the surface ≤ (?P<n>[0-9.]+) voxel", lambda v: f"{_worst(v, 'queries_near_surface'):.2f}"),
    Quote(r"voxel \(≤ (?P<n>[0-9.]+) over the whole grid\)", lambda v: f"{_worst(v, 'queries_whole_grid'):.2f}"),
    Quote(r"over the whole grid\), load average (?P<n>[0-9.]+) \|",
          lambda v: f"{v['_run']['machine']['load_average'][0]:.1f}"),
)

MCAP_ROW = r"chunked as the log is \| "
MCAP_QUOTES = (
    Quote(r"\((?P<n>[0-9,]+) messages at their sizes", lambda v: f"{v['messages']:,}"),
    Quote(MCAP_ROW + r"(?P<n>[0-9.]+) against", lambda v: f"{v['chunk_writer_us_per_message']:.1f}"),
    Quote(MCAP_ROW + r"[0-9.]+ against (?P<n>[0-9.]+) µs", lambda v: f"{v['mcap_writer_us_per_message']:.1f}"),
    Quote(MCAP_ROW + r"[0-9.]+ against [0-9.]+ µs a message \((?P<n>[0-9.]+)×\)", lambda v: f"{v['speedup']:.1f}"),
    Quote(r"(?P<n>[0-9.]+) against [0-9.]+ µs a message without the lidar",
          lambda v: f"{v['without_lidar']['chunk_writer_us_per_message']:.1f}"),
    Quote(r"[0-9.]+ against (?P<n>[0-9.]+) µs a message without the lidar",
          lambda v: f"{v['without_lidar']['mcap_writer_us_per_message']:.1f}"),
    Quote(r"without the lidar clouds \((?P<n>[0-9.]+)×\)", lambda v: f"{v['without_lidar']['speedup']:.1f}"),
    Quote(r"without the lidar clouds \([0-9.]+×\), load average (?P<n>[0-9.]+) when measured",
          lambda v: f"{v['_run']['machine']['load_average'][0]:.1f}"),
)


def _archimede_slopes(out: Path, stdout: str) -> dict:
    """bench/archimede_slopes.py's JSON without each drive's slip (the boxes' data stay in the bench's own
    file and figure): every setup's medians and quartiles, the checks, the run's wall time and load."""
    values = json.loads((out / "bench.json").read_text())
    for s in values["setups"].values():
        s.pop("slips", None)
    values["status"] = "ok" if set(values["statuses"]) == {"ok"} else "not ok"
    return values


def _pct(x) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}"


def _render_archimede_slopes(values: dict) -> str:
    s = values["setups"]
    a, b = s["A"], s["B"]
    lines = ["| slope | A: median [quartiles] | B: median [quartiles] | B / A | A at 1.2, 2.4 rad/s | "
             "B at 1.2, 2.4 rad/s |", "|---:|---|---|---:|---|---|"]
    for k, slope in enumerate(a["slopes"]):
        ratio = b["median"][k] / a["median"][k] if a["median"][k] else None
        rates = [", ".join(_pct(v[k]) for _, v in sorted(x["median_by_rate"].items())) for x in (a, b)]
        lines.append(f"| {slope:g} deg | {_pct(a['median'][k])} [{_pct(a['q1'][k])}, {_pct(a['q3'][k])}] | "
                     f"{_pct(b['median'][k])} [{_pct(b['q1'][k])}, {_pct(b['q3'][k])}] | "
                     f"{'n/a' if ratio is None else f'{ratio:.2f}'} | {rates[0]} | {rates[1]} |")
    names = ["A", "B", "wheel A on soil B", "wheel B on soil A", "A grousers off", "B grousers off"]
    lines += ["", "Driving straight (the cross and the grouser-off setups drive straight only):", "",
              "| slope | " + " | ".join(names) + " |", "|---:|" + "---|" * len(names)]
    for k, slope in enumerate(a["slopes"]):
        lines.append(f"| {slope:g} deg | " + " | ".join(_pct(_straight(s[n])[k]) if n in s else "n/a" for n in names)
                     + " |")
    return "\n".join(lines) + "\n"


def _straight(setup: dict) -> list:
    return setup["median_by_mode"].get("straight") or setup["median"]


ARCHIMEDE_SLOPES_QUOTES = (
    Quote(_ws(r"The 500 runs took (?P<n>[0-9.]+) min"), lambda v: f"{v['wall_time_s'] / 60:.1f}"),
    Quote(_ws(r"ending under a load average of (?P<n>[0-9.]+) from other"),
          lambda v: f"{v['load_average_1_5_15']['after'][0]:.1f}"),
    Quote(_ws(r"15° and 20°: met\*\* \((?P<n>[0-9.]+) and"),
          lambda v: f"{v['checks']['b_over_a']['ratios']['15']:.2f}"),
    Quote(_ws(r"15° and 20°: met\*\* \([0-9.]+ and (?P<n>[0-9.]+)\)"),
          lambda v: f"{v['checks']['b_over_a']['ratios']['20']:.2f}"),
    Quote(_ws(r"both setups: missed for A\*\* \((?P<n>[0-9.]+) %"),
          lambda v: f"{100 * v['checks']['flat']['medians']['A']:.1f}"),
    Quote(_ws(r"both setups: missed for A\*\* \([0-9.]+ %; B (?P<n>[0-9.]+) %"),
          lambda v: f"{100 * v['checks']['flat']['medians']['B']:.1f}"),
)


FIGURES = {
    "rover_campaign": Figure("rover_campaign", ("rover", "campaign", "--out", "{out}", "--workers", "2"),
                             _rover_campaign, "docs/robots.md", _render_campaign, quotes=CAMPAIGN_QUOTES),
    "archimede_slopes": Figure("archimede_slopes", ("bench/archimede_slopes.py", "--out", "{out}/bench.json"),
                               _archimede_slopes, "docs/soil.md", _render_archimede_slopes, program="python",
                               quotes=ARCHIMEDE_SLOPES_QUOTES),
    "sidewind_ice": Figure("sidewind_ice", ("run", "--scenario", "sidewind", "--contact", "screw", "--out", "{out}"),
                           _sidewind, "docs/scenarios.md", lambda v: "", SIDEWIND_PATTERN),
    "sidewind_mars_dem": Figure("sidewind_mars_dem", ("run", "--scenario", "sidewind", "--contact", "screw",
                                                      "--world", "mars_dem", "--out", "{out}"),
                                _sidewind, "docs/scenarios.md", lambda v: "", SIDEWIND_PATTERN),
    "tube_dangle": Figure("tube_dangle", ("run", "--scenario", "tube_dangle", "--out", "{out}"), _tube_dangle,
                          "docs/scenarios.md", _render_tube_dangle, TUBE_DANGLE_PATTERN),
    "screw_spin_alternating": Figure("screw_spin_alternating", ("run", "--robot", "eels_1_0_alternating", "--scenario",
                                                                "screw_spin", "--contact", "screw", "--out", "{out}"),
                                     _screw_spin, "docs/contact.md", _render_screw_spin, SCREW_SPIN_PATTERN),
    "screw_spin_alternating_stock": Figure("screw_spin_alternating_stock",
                                           ("run", "--robot", "eels_1_0_alternating", "--scenario", "screw_spin",
                                            "--contact", "stock", "--out", "{out}"),
                                           _metrics, "docs/contact.md", None, quotes=SCREW_SPIN_STOCK_QUOTES),
    "compare_demo": Figure("compare_demo", ("compare", "--robot", "eels_1_0_front_only", "--world", "ice_plane",
                                            "--scenario", "surface_traverse", "--duration", "45", "--out", "{out}"),
                           _compare, "docs/contact.md", _render_compare),
    "wall_climb": Figure("wall_climb", ("run", "--scenario", "wall_climb", "--out", "{out}"), _metrics,
                         "docs/scenarios.md", None, quotes=WALL_CLIMB_QUOTES),
    "wall_climb_down": Figure("wall_climb_down", ("run", "--scenario", "wall_climb", "--set",
                                                  "scenario.climb_speed=-0.02", "--set", "scenario.tail_z=0.8",
                                                  "--out", "{out}"),
                              _metrics, "docs/scenarios.md", None, quotes=WALL_CLIMB_DOWN_QUOTES),
    "wall_climb_stock": Figure("wall_climb_stock", ("run", "--scenario", "wall_climb", "--contact", "stock", "--out",
                                                    "{out}"), _metrics, "docs/scenarios.md", None,
                               quotes=WALL_CLIMB_STOCK_QUOTES, status="slip_failure"),
    "moulin_descent": Figure("moulin_descent", ("run", "--scenario", "moulin_descent", "--out", "{out}"), _metrics,
                             "docs/scenarios.md", None, quotes=MOULIN_QUOTES),
    "moulin_helix": Figure("moulin_helix", ("run", "--scenario", "moulin_descent", "--set", "scenario.helix=1", "--set",
                                            "scenario.z_start=-2", "--set", "scenario.mobility_threshold=1.396",
                                            "--out", "{out}"), _moulin_helix, "docs/scenarios.md", None,
                           quotes=HELIX_QUOTES, status="slip_failure"),
    "leader_follower": Figure("leader_follower", ("run", "--scenario", "leader_follower", "--out", "{out}"), _metrics,
                              "docs/scenarios.md", None, quotes=LEADER_FOLLOWER_QUOTES),
    "leader_follower_grip": Figure("leader_follower_grip", ("run", "--scenario", "leader_follower", "--set",
                                                            "contact.params=ice_grip", "--out", "{out}"),
                                   _metrics, "docs/scenarios.md", None, quotes=LEADER_FOLLOWER_GRIP_QUOTES),
    "leader_follower_regulated": Figure("leader_follower_regulated",
                                        ("run", "--scenario", "leader_follower", "--set",
                                         "contact.params=ice_regulated", "--duration", "60", "--out", "{out}"),
                                        _metrics, "docs/scenarios.md", None, quotes=LEADER_FOLLOWER_REGULATED_QUOTES),
    "bench_screw_rest": Figure("bench_screw_rest", ("bench/screw_rest.py", "--out", "{out}/bench.json"), _bench,
                               "docs/contact.md", _render_rest, program="python"),
    "bench_terrain_scans": Figure("bench_terrain_scans", ("bench/terrain_scans.py", "--out", "{out}/bench.json"),
                                  _bench_runs, "docs/worlds.md", _render_scans, quotes=SCANS_QUOTES,
                                  program="python"),
    "bench_terrain_dem": Figure("bench_terrain_dem", ("bench/terrain_dem.py", "--out", "{out}/bench.json"),
                                _bench_runs, "docs/worlds.md", None, quotes=DEM_QUOTES, program="python"),
    "bench_optimizer": Figure("bench_optimizer", ("bench/optimizer.py", "--out", "{out}/bench.json"), _bench,
                              "docs/robots.md", None, quotes=OPTIMIZER_QUOTES, program="python"),
    "bench_terrain_fields": Figure("bench_terrain_fields", ("bench/terrain_fields.py", "--out", "{out}/bench.json"),
                                   _bench, "docs/benchmarks.md", None, quotes=FIELDS_QUOTES, program="python"),
    "bench_soil": Figure("bench_soil", ("bench/soil.py", "--out", "{out}/bench.json"), _bench, "docs/soil.md", None,
                         quotes=SOIL_QUOTES, program="python"),
    "rft_screw_spin": Figure("rft_screw_spin", ("run", "--robot", "eels_1_0_alternating", "--world", "soil_bin",
                                                "--scenario", "screw_spin", "--contact", "rft", "--set",
                                                "robot.xacro_args.head=false", "--out", "{out}"),
                             _metrics, "docs/granular.md", None, quotes=RFT_QUOTES),
    "rft_screw_spin_ice": Figure("rft_screw_spin_ice", ("run", "--robot", "eels_1_0_alternating", "--world",
                                                        "ice_plane", "--scenario", "screw_spin", "--contact", "screw",
                                                        "--set", "robot.xacro_args.head=false", "--out", "{out}"),
                                 _metrics, "docs/granular.md", None, quotes=RFT_ICE_QUOTES),
    "bench_rft": Figure("bench_rft", ("bench/rft.py", "--out", "{out}/bench.json"), _bench, "docs/granular.md", None,
                        quotes=BENCH_RFT_QUOTES, program="python"),
    "bench_mcap_writer": Figure("bench_mcap_writer", ("bench/mcap_writer.py", "--out", "{out}/bench.json"), _bench,
                                "docs/benchmarks.md", None, quotes=MCAP_QUOTES, program="python"),
}
