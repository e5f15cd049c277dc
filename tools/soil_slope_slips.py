#!/usr/bin/env python3
"""Steady slip of one Archimede corner driving straight up a slope on a soil set, by the Wong-Reece
balance of eels_gz.soil (issue 34: why eac1a slips more than lava_gravel, the opposite of seed 004).

For a slope alpha, the corner presses W cos(alpha) into the soil (W a quarter of Archimede's weight,
from its URDF) and must pull W sin(alpha): at each slip s the sinkage carries the load
(``solve_sinkage``), and the slip is the one at which the drawbar pull DP(s) equals W sin(alpha)
(bisection; DP grows with s). A single wheel, no load transfer and no bulldozing: a figure to compare
soil sets and parameter choices, not the rover's measured slip.

    PYTHONPATH=. python tools/soil_slope_slips.py [--set eac1a:shear_modulus_K=0.005 ...] [--json]

Each ``--set NAME[:key=value,...]`` adds a row: a soil set with some keys replaced, and optionally
``wheels=low_grousers|high_grousers`` (default: the set's setup, high for eac1a, low otherwise).
"""

from __future__ import annotations

import argparse
import json
import math

from lxml import etree

from eels_gz import registry
from eels_gz.description.xacro_loader import process_xacro
from eels_gz.soil.params import resolve_soil_params
from eels_gz.soil.wong_reece import GL_U, GL_W, pack_soil, solve_sinkage, wong_reece

G = 9.80665
SLOPES = (0.0, 5.0, 10.0, 15.0, 20.0)  # deg, seed 004's sandbox


def archimede(wheels: str) -> tuple[float, float, float]:
    """(radius, width, corner load N) of Archimede with wheel set ``wheels``, from its URDF."""
    entry = registry.robot("archimede")
    tree = etree.fromstring(process_xacro(entry.path, entry.args(None, wheels=wheels)).encode())
    link = tree.find("link[@name='fl_wheel_link']")
    total = sum(float(m.get("value")) for m in tree.iter("mass"))
    return (float(link.find("collision/geometry/sphere").get("radius")),
            float(link.find("visual/geometry/cylinder").get("length")), total / 4.0 * G)


def pull(soil, r: float, b: float, load: float, s: float) -> float:
    """Drawbar pull (N) at slip s with the sinkage that carries ``load``."""
    h = solve_sinkage(load, r, b, 1.0, 1.0 - s, soil, GL_U, GL_W)
    return wong_reece(r, b, h, 1.0, 1.0 - s, 0.0, 0.0, soil, GL_U, GL_W)[1]


def slope_slip(soil, r: float, b: float, weight: float, slope_deg: float) -> float | None:
    """The slip at which DP = W sin(slope), or None if even s = 0.99 pulls less (the wheel cannot climb)."""
    a = math.radians(slope_deg)
    load, need = weight * math.cos(a), weight * math.sin(a)
    lo, hi = 0.0, 0.99
    if pull(soil, r, b, load, hi) < need:
        return None
    if pull(soil, r, b, load, lo) >= need:
        return 0.0
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if pull(soil, r, b, load, mid) < need else (lo, mid)
    return 0.5 * (lo + hi)


def row(spec: str) -> dict:
    name, _, rest = spec.partition(":")
    overrides, wheels = {}, "high_grousers" if name == "eac1a" else "low_grousers"
    for item in filter(None, rest.split(",")):
        key, _, value = item.partition("=")
        if key == "wheels":
            wheels = value
        else:
            overrides[key] = float(value)
    r, b, weight = archimede(wheels)
    soil = pack_soil(resolve_soil_params(name, overrides), G)
    slips = [slope_slip(soil, r, b, weight, a) for a in SLOPES]
    return {"set": spec, "wheels": wheels, "slip_percent": [None if s is None else round(100 * s, 1) for s in slips]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", dest="sets", action="append", help="NAME[:key=value,...] (repeatable)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = [row(s) for s in (args.sets or ["lava_gravel", "eac1a"])]
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print("slopes (deg): " + ", ".join(f"{a:g}" for a in SLOPES))
    for r in rows:
        cells = ", ".join("stuck" if s is None else f"{s:g}" for s in r["slip_percent"])
        print(f"{r['set']:<48} {r['wheels']:<14} slip %: {cells}")


if __name__ == "__main__":
    main()
