"""The slope campaign's figures (config/sweeps/archimede_slopes.yaml; issue 44), from its results rows.

A row is one drive: its case's labels ``setup`` (A, B, the cross's and the grouser-off setups),
``wheel`` and ``soil`` (A or B), ``grousers`` (on/off) and ``mode`` (straight, lateral, parallel), the
measured ``slope_deg``, ``wheel_rate`` and ``slip`` (the drive's median slip, measured as seed 004
measures it: nominal wheel radius and the tracked motion). Per setup and slope the statistics are over
the drives (every draw of the unpublished values, every drive mode and both wheel rates): the median
and the quartiles of Fig. 13's boxes, and Fig. 12's median per wheel rate.

:func:`checks` holds issue 44's "done when" bounds, each with what it compared:

- B's median slip at most 0.8 of A's at 15 and 20 deg;
- the flat slip (0 deg) within 1-10 % in both setups;
- slip rising convexly with slope: the medians rise and each 5 deg adds at least as much as the one
  before;
- the 2x2 cross and the grouser-off A-B differences (what the difference comes from: reported, no bound),
  over straight drives, as those cases drive.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict

import numpy as np

RATIO_BOUND = 0.8  # B's median over A's, at most, at 15 and 20 deg (issue 44)
RATIO_SLOPES = (15.0, 20.0)
FLAT_BOUNDS = (0.01, 0.10)  # flat slip, both setups (issue 44; seed 004 §4.2: "around 5 %")


def _ok(rows: list[dict]) -> list[dict]:
    need = ("setup", "slope_deg", "wheel_rate", "slip")
    return [r for r in rows if r.get("status") == "ok" and all(r.get(k) is not None for k in need)
            and math.isfinite(float(r["slip"]))]


def summarise(rows: list[dict]) -> dict:
    """Per setup: its labels, the slopes (deg, rounded to 0.1), and at each slope the drives' count,
    median, quartiles and slips; the median per wheel rate and per drive mode. ``statuses`` counts every
    row's status (a drive that did not end ok is not in the statistics)."""
    groups: dict[str, dict] = {}
    for r in _ok(rows):
        g = groups.setdefault(str(r["setup"]), {"labels": {k: r.get(k) for k in ("wheel", "soil", "grousers")},
                                                "slips": defaultdict(list), "rate": defaultdict(list),
                                                "mode": defaultdict(list)})
        a = round(float(r["slope_deg"]), 1)
        g["slips"][a].append(float(r["slip"]))
        g["rate"][(float(r["wheel_rate"]), a)].append(float(r["slip"]))
        g["mode"][(str(r.get("mode")), a)].append(float(r["slip"]))
    out = {}
    for name, g in groups.items():
        slopes = sorted(g["slips"])
        q = [np.percentile(g["slips"][a], [25, 50, 75]) for a in slopes]
        rates = sorted({k[0] for k in g["rate"]})
        modes = sorted({k[0] for k in g["mode"]})
        out[name] = {**g["labels"], "slopes": slopes, "n": [len(g["slips"][a]) for a in slopes],
                     "median": [float(x[1]) for x in q], "q1": [float(x[0]) for x in q],
                     "q3": [float(x[2]) for x in q], "slips": [sorted(g["slips"][a]) for a in slopes],
                     "median_by_rate": {f"{w:g}": [_median(g["rate"].get((w, a))) for a in slopes] for w in rates},
                     "median_by_mode": {m: [_median(g["mode"].get((m, a))) for a in slopes] for m in modes}}
    return {"setups": out, "statuses": dict(Counter(str(r.get("status")) for r in rows))}


def _median(values) -> float | None:
    return float(np.median(values)) if values else None


def _at(setup: dict, slope: float) -> float | None:
    return next((m for a, m in zip(setup["slopes"], setup["median"]) if abs(a - slope) < 0.5), None)


def checks(summary: dict) -> dict:
    """Issue 44's bounds on a :func:`summarise` of a campaign with setups A and B (module docstring);
    each entry says what it compared and whether it was met (None when the campaign lacks the data)."""
    s = summary["setups"]
    a, b = s.get("A"), s.get("B")
    out: dict = {}
    if a and b:
        ratios = {f"{x:g}": (None if _at(a, x) in (None, 0.0) or _at(b, x) is None else _at(b, x) / _at(a, x))
                  for x in RATIO_SLOPES}
        out["b_over_a"] = {"bound": RATIO_BOUND, "ratios": ratios,
                           "met": None if None in ratios.values() else all(v <= RATIO_BOUND for v in ratios.values())}
        flat = {k: _at(v, 0.0) for k, v in (("A", a), ("B", b))}
        out["flat"] = {"bounds": list(FLAT_BOUNDS), "medians": flat,
                       "met": None if None in flat.values() else all(FLAT_BOUNDS[0] <= v <= FLAT_BOUNDS[1]
                                                                     for v in flat.values())}
    convex = {}
    for name in ("A", "B"):
        if name in s and len(s[name]["slopes"]) >= 3:
            m = np.array(s[name]["median"])
            steps = np.diff(m)
            convex[name] = {"steps": steps.tolist(), "rising": bool(np.all(steps > 0)),
                            "convex": bool(np.all(np.diff(steps) >= 0))}
    if convex:
        out["convex"] = {**convex, "met": all(v["rising"] and v["convex"] for v in convex.values())}
    # the cross and the grouser-off runs drive straight: the setups' straight drives are compared with them
    cross = {f"wheel {v['wheel']}, soil {v['soil']}": {"setup": k, "slopes": v["slopes"], "median": straight(v)}
             for k, v in s.items() if v.get("grousers") == "on" and v.get("wheel") and v.get("soil")}
    if cross:
        out["cross"] = cross
    off = {v["wheel"]: v for v in s.values() if v.get("grousers") == "off" and v.get("wheel") == v.get("soil")}
    if a and b and set(off) == {"A", "B"}:
        out["grouser_off"] = {"slopes": a["slopes"],
                              "a_minus_b_on": [x - y for x, y in zip(straight(a), straight(b))],
                              "a_minus_b_off": [x - y for x, y in zip(straight(off["A"]), straight(off["B"]))],
                              "a_off": straight(off["A"]), "b_off": straight(off["B"])}
    return out


def straight(setup: dict) -> list[float]:
    """A setup's medians over its straight drives (all its drives when it has no mode)."""
    return setup["median_by_mode"].get("straight") or setup["median"]
