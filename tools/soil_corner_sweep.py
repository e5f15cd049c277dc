#!/usr/bin/env python3
"""The slope campaign's uncertainty with many more draws than its rover runs afford, on one corner (issue 44).

The campaign (config/sweeps/archimede_slopes.yaml) runs 5 draws of the unpublished values; its
quartiles are those of 5 parameter sets. This draws ``--draws`` sets from the same ranges (read from the
spec's setup A and B cases: one source) and balances one Archimede corner up each slope with each
(eels_gz.soil.identify.corner_slip: the steady single-wheel balance the rover runs follow within 2
points, slip measured with the nominal radius): the medians and quartiles of many draws, the share of
draws meeting issue 44's bounds, and which value sets the flat slip (Spearman rank correlations).
A stuck corner counts as slip 1.

    PYTHONPATH=. python tools/soil_corner_sweep.py [--draws 200] [--seed 1] [--json]
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from scipy.stats import spearmanr

from eels_gz import registry
from eels_gz.description.xacro_loader import process_xacro
from eels_gz.paths import asset
from eels_gz.soil.identify import SEED_004_SLOPES, corner_slip, rover_corner
from eels_gz.soil.params import resolve_soil_params
from eels_gz.sweep import load_spec

SETUPS = {"A": ("lava_gravel", "low_grousers"), "B": ("eac1a", "high_grousers")}


def ranges(setup: str) -> dict:
    """The random dispersions (key -> (lo, hi)) of the spec's straight case of ``setup``."""
    spec = load_spec(asset("config", "sweeps", "archimede_slopes.yaml"))
    for labels, case in zip(spec.case_labels, spec.case_dispersions()):
        if labels["setup"] == setup and labels["mode"] == "straight":
            return {d.key: tuple(d.values) for d in case if d.random}
    raise KeyError(setup)


def sweep(setup: str, draws: int, rng) -> tuple[list[dict], np.ndarray]:
    soil, wheels = SETUPS[setup]
    keys = ranges(setup)
    entry = registry.robot("archimede")
    sets, slips = [], []
    for _ in range(draws):
        values = {k: float(rng.uniform(lo, hi)) for k, (lo, hi) in keys.items()}
        extra = {"lug_height": repr(values["robot.xacro_args.lug_height"])} if "robot.xacro_args.lug_height" in values \
            else {}
        urdf = process_xacro(entry.path, entry.args(None, wheels=wheels, soil=soil, gazebo="true", **extra))
        corner = rover_corner(urdf)
        params = resolve_soil_params(soil, {k[len("soil."):]: v for k, v in values.items() if k.startswith("soil.")})
        row = [corner_slip(params, corner, a) for a in SEED_004_SLOPES]
        sets.append(values)
        slips.append([1.0 if s is None else s for s in row])
    return sets, np.array(slips)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    out = {"draws": args.draws, "slopes": list(SEED_004_SLOPES), "setups": {}}
    slips = {}
    for setup in SETUPS:
        sets, s = sweep(setup, args.draws, rng)
        slips[setup] = s
        q1, med, q3 = np.percentile(s, [25, 50, 75], axis=0)
        flat = s[:, 0]
        corr = {k: float(spearmanr([v[k] for v in sets], flat)[0]) for k in sets[0]}
        out["setups"][setup] = {"median": med.tolist(), "q1": q1.tolist(), "q3": q3.tolist(),
                                "flat_in_1_10_percent": float(np.mean((flat >= 0.01) & (flat <= 0.10))),
                                "stuck_at_20": float(np.mean(s[:, -1] >= 1.0)), "flat_rank_correlation": corr}
    a, b = out["setups"]["A"]["median"], out["setups"]["B"]["median"]
    out["b_over_a_medians"] = [y / x if x else None for x, y in zip(a, b)]
    if args.json:
        print(json.dumps(out, indent=2))
        return
    print(f"{args.draws} draws per setup; one corner, slip % (median [quartiles]) at " +
          ", ".join(f"{x:g}" for x in SEED_004_SLOPES) + " deg")
    for setup, v in out["setups"].items():
        cells = ", ".join(f"{100 * m:.1f} [{100 * lo:.1f}, {100 * hi:.1f}]" for m, lo, hi in
                          zip(v["median"], v["q1"], v["q3"]))
        print(f"  {setup}: {cells}")
        print(f"     flat slip within 1-10 %: {100 * v['flat_in_1_10_percent']:.0f} % of draws; stuck at 20 deg: "
              f"{100 * v['stuck_at_20']:.0f} %")
        top = sorted(v["flat_rank_correlation"].items(), key=lambda kv: -abs(kv[1]))[:4]
        print("     flat slip's rank correlations: " + ", ".join(f"{k} {c:+.2f}" for k, c in top))
    print("  B / A (medians): " + ", ".join("n/a" if r is None else f"{r:.2f}" for r in out["b_over_a_medians"]))


if __name__ == "__main__":
    main()
