"""Every EELS variant at rest under screw contact: docs/contact.md's "At rest" table.

The ``hold`` scenario (every shape joint held straight, every screw held at zero speed) for 10 s on
``ice_plane``, sensors off, for each variant and each contact parameter set named (default: the
default ``ice`` and ``ice_regulated``): the metrics the scenario's ``hold`` system writes
(eels_gz.scenarios.hold), which ``test/scenarios/test_screw_rest_roll.py`` checks too: the base's
(tail's) largest horizontal distance from where it started (m), its largest roll about its own x
axis (rad), and the largest share of steps on which one joint's velocity changed sign (step-rate
chatter), with that joint's name. Writes JSON (``--out``) and prints it.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path

from rtf import emit

from eels_gz import config, registry
from eels_gz.run.runner import run


def rest(robot: str, params: str) -> dict:
    """One hold run of ``robot`` under contact parameter set ``params``: the metrics its ``hold``
    system wrote (eels_gz.scenarios.hold), and whether the screw contact ran."""
    # a variant without screws (mini EELS) rests under stock contact: screw contact is refused for it
    model = "screw" if registry.eels_variants()[robot]["screws"] > 0 else "stock"
    cfg = config.resolve(overrides={"robot": {"name": robot}, "scenario": "hold", "sensors": {"enabled": False},
                                    "contact": {"model": model, "params": params},
                                    "log": {"mcap": False, "plot": False}})
    with tempfile.TemporaryDirectory(prefix="screw_rest_") as tmp:
        summary = run(cfg, Path(tmp))
        metrics = json.loads((Path(tmp) / "metrics.json").read_text())
    return {"screw_contact": "screw_contact" in summary["settings"]["resolved"]["systems"],
            **{k: v for k, v in metrics.items() if k not in ("scenario", "status")}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--robot", action="append", help="EELS variant (repeatable; default: every one)")
    ap.add_argument("--params", action="append", help="contact parameter set (repeatable; default: ice, ice_regulated)")
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args()
    robots = a.robot or sorted(registry.eels_variants())
    sets = a.params or ["ice", "ice_regulated"]
    result = {"machine": {"cpus": os.cpu_count(), "load_avg_at_start": os.getloadavg()}, "status": "ok",
              "rest": {r: {p: rest(r, p) for p in sets} for r in robots}}
    emit(result, a.out)


if __name__ == "__main__":
    main()
