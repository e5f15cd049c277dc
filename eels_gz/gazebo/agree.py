"""How far two runs of one resolved configuration are apart: the embedded host's and gz-sim's
(``--host gazebo``), or the host's and the host's with a perturbed step (the test tier's tolerances,
tools/gazebo_tolerances.py).

- **Metrics**: every leaf of ``metrics.json`` (nested keys joined with ``.``, list items by index);
  numbers as the absolute difference, anything else equal or not. ``sim_time_s`` (when the Gazebo
  systems last wrote) is left out.
- **Trajectory**: the base's ground truth (``/ground_truth/odom`` in ``log.mcap``) at the times both
  logged, after aligning the clocks: the host's timed run starts after its placement's simulated
  seconds (``setup_sim_time`` less the systems' lead-in, which both hosts step as simulated time), a
  Gazebo world at 0 from the placed start. The largest distance (m) and yaw difference (rad).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

SKIPPED = ("sim_time_s",)
TOPIC = "/ground_truth/odom"


def flat(value, prefix: str = "") -> dict:
    """``{dotted.key: leaf}`` of a JSON value (dicts by key, lists by index)."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            out.update(flat(v, f"{prefix}{k}."))
        return out
    if isinstance(value, list):
        out = {}
        for i, v in enumerate(value):
            out.update(flat(v, f"{prefix}{i}."))
        return out
    return {prefix[:-1]: value}


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def metric_differences(a: dict, b: dict) -> dict[str, float | str]:
    """Per leaf of two ``metrics.json``: ``|a - b|`` for numbers (inf where one is NaN and the other
    not, 0 where both are), ``"equal"``/``"differs: A != B"`` for the rest, ``"missing in ..."``."""
    fa = {k: v for k, v in flat(a).items() if k not in SKIPPED}
    fb = {k: v for k, v in flat(b).items() if k not in SKIPPED}
    out: dict[str, float | str] = {}
    for key in sorted(set(fa) | set(fb)):
        if key not in fb:
            out[key] = "missing in the second"
        elif key not in fa:
            out[key] = "missing in the first"
        elif _number(fa[key]) and _number(fb[key]):
            x, y = float(fa[key]), float(fb[key])
            out[key] = 0.0 if (math.isnan(x) and math.isnan(y)) or x == y else (
                math.inf if math.isnan(x) or math.isnan(y) else abs(x - y))
        else:
            out[key] = "equal" if fa[key] == fb[key] else f"differs: {fa[key]!r} != {fb[key]!r}"
    return out


def ground_truth(mcap_path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Times (s, the message stamps), positions (N, 3) and unwrapped yaw (N,) of the base."""
    from mcap.reader import make_reader

    from eels_gz.ros.messages import typestore

    store = typestore()
    t, pos, yaw = [], [], []
    with open(mcap_path, "rb") as f:
        for _, _, message in make_reader(f).iter_messages(topics=[TOPIC]):
            odom = store.deserialize_cdr(message.data, "nav_msgs/msg/Odometry")
            p, q = odom.pose.pose.position, odom.pose.pose.orientation
            stamp = odom.header.stamp
            t.append(stamp.sec + 1e-9 * stamp.nanosec)
            pos.append((p.x, p.y, p.z))
            yaw.append(math.atan2(2 * (q.w * q.z + q.x * q.y), 1 - 2 * (q.y * q.y + q.z * q.z)))
    return np.array(t), np.array(pos).reshape(-1, 3), np.unwrap(np.array(yaw))


def placement_offset(summary: dict) -> float:
    """s of a run's clock before its robot started from its placed pose (an embedded-host run's
    placement steps; 0 for a Gazebo run)."""
    if summary.get("host", {}).get("name") == "gazebo":
        return 0.0
    lead_in = float(summary.get("settings", {}).get("resolved", {}).get("lead_in_s", 0.0) or 0.0)
    return max(0.0, float(summary.get("setup_sim_time", 0.0)) - lead_in)


def trajectory_difference(a_dir: Path, b_dir: Path, dt: float) -> dict:
    """The largest distance (m) and yaw difference (rad) of the two runs' bases at the times both logged
    (matched to within half a step ``dt`` after aligning their clocks), and how many times matched."""
    runs = []
    for d in (a_dir, b_dir):
        t, pos, yaw = ground_truth(Path(d) / "log.mcap")
        runs.append((t - placement_offset(json.loads((Path(d) / "summary.json").read_text())), pos, yaw))
    (ta, pa, ya), (tb, pb, yb) = runs
    if len(ta) == 0 or len(tb) == 0:  # a description without an OdometryPublisher (a rig) in gz-sim
        return {"position_m": math.inf, "yaw_rad": math.inf, "samples": 0,
                "logged": [len(ta), len(tb)]}
    idx = np.clip(np.searchsorted(tb, ta), 1, len(tb) - 1) if len(tb) > 1 else np.zeros(len(ta), int)
    if len(tb) > 1:
        left = idx - 1
        idx = np.where(np.abs(tb[left] - ta) <= np.abs(tb[idx] - ta), left, idx)
    ok = np.abs(tb[idx] - ta) <= 0.5 * dt + 1e-9
    if not ok.any():
        return {"position_m": math.inf, "yaw_rad": math.inf, "samples": 0}
    dp = np.linalg.norm(pa[ok] - pb[idx[ok]], axis=1)
    dyaw = np.abs((ya[ok] - yb[idx[ok]] + np.pi) % (2 * np.pi) - np.pi)
    return {"position_m": float(dp.max()), "yaw_rad": float(dyaw.max()), "samples": int(ok.sum()),
            "until_s": float(ta[ok][-1])}


def agreement(a_dir: Path, b_dir: Path) -> dict:
    """Metrics and trajectory differences of two run folders of one configuration."""
    a, b = Path(a_dir), Path(b_dir)
    sa, sb = (json.loads((d / "summary.json").read_text()) for d in (a, b))
    dt = float(sa["settings"]["resolved"]["dt"])
    out = {"status": [sa["status"], sb["status"]], "trajectory": trajectory_difference(a, b, dt)}
    ma, mb = a / "metrics.json", b / "metrics.json"
    if ma.exists() or mb.exists():
        out["metrics"] = metric_differences(json.loads(ma.read_text()) if ma.exists() else {},
                                            json.loads(mb.read_text()) if mb.exists() else {})
    return out
