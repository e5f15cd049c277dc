#!/usr/bin/env python3
"""Steady slip of one Archimede corner driving straight up a slope on a soil set, by the Wong-Reece
balance of eels_gz.soil with the wheel's lugs, measured as seed 004 measures it (nominal radius;
eels_gz.soil.identify.corner_slip): how each soil key moves the slopes' slips (docs/soil.md).

For a slope alpha, the corner presses W cos(alpha) into the soil (W a quarter of Archimede's weight,
from its URDF) and must pull W sin(alpha): at each slip s the sinkage carries the load
(``solve_sinkage``), and the slip is the least at which the drawbar pull DP(s) equals W sin(alpha). A
single wheel, no load transfer and no bulldozing: a figure to compare soil sets and parameter choices,
not the rover's measured slip (the campaign, config/sweeps/archimede_slopes.yaml, is that).

    PYTHONPATH=. python tools/soil_slope_slips.py [--set eac1a:shear_modulus_K=0.005 ...] [--identify] [--json]

``--identify`` first sets each row's K to the one that shows seed 004's flat 5 % (``calibrate soil``; the
shipped sets do not use it). Each ``--set NAME[:key=value,...]`` adds a row: a soil set with some keys
replaced, and optionally ``wheels=low_grousers|high_grousers`` (default: the set's setup, high for eac1a,
low otherwise), ``lug_height=M`` and ``grousers=false``.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace

from eels_gz import registry
from eels_gz.description.xacro_loader import process_xacro
from eels_gz.soil.identify import SEED_004_FLAT_SLIP, corner_slip, identify_shear_modulus, rover_corner
from eels_gz.soil.identify import SEED_004_SLOPES as SLOPES
from eels_gz.soil.params import resolve_soil_params


def archimede(wheels: str, soil: str, **extra: str):
    """One corner of Archimede with wheel set ``wheels`` (eels_gz.soil.identify.Corner), from its URDF."""
    entry = registry.robot("archimede")
    urdf = process_xacro(entry.path, entry.args(None, wheels=wheels, soil=soil, gazebo="true", **extra))
    return rover_corner(urdf, str(entry.path))


def row(spec: str, identify: bool = False) -> dict:
    name, _, rest = spec.partition(":")
    overrides, wheels, extra = {}, "high_grousers" if name == "eac1a" else "low_grousers", {}
    for item in filter(None, rest.split(",")):
        key, _, value = item.partition("=")
        if key == "wheels":
            wheels = value
        elif key == "lug_height":
            extra["lug_height"] = value
        elif key == "grousers":
            extra["grouser_terms"] = value
        else:
            overrides[key] = float(value)
    corner = archimede(wheels, name, **extra)
    params = resolve_soil_params(name, overrides)
    if identify:  # calibrate soil's rule: K from the paper's flat-ground slip, with this row's wheel and keys
        params = replace(params, shear_modulus_K=identify_shear_modulus(params, corner, SEED_004_FLAT_SLIP))
    slips = [corner_slip(params, corner, a) for a in SLOPES]
    return {"set": spec, "wheels": wheels, "shear_modulus_K": params.shear_modulus_K,
            "slip_percent": [None if s is None else round(100 * s, 1) for s in slips]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", dest="sets", action="append", help="NAME[:key=value,...] (repeatable)")
    parser.add_argument("--identify", action="store_true",
                        help="identify each row's K from seed 004's flat-ground slip first (calibrate soil)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = [row(s, args.identify) for s in (args.sets or ["lava_gravel", "eac1a"])]
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print("slopes (deg): " + ", ".join(f"{a:g}" for a in SLOPES))
    for r in rows:
        cells = ", ".join("stuck" if s is None else f"{s:g}" for s in r["slip_percent"])
        print(f"{r['set']:<40} {r['wheels']:<14} K {1000 * r['shear_modulus_K']:6.2f} mm  slip %: {cells}")


if __name__ == "__main__":
    main()
