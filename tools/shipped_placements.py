"""Write or check config/placements/<scenario>.json: the placements before the run of the shipped
scenarios, for a Gazebo machine without the engine (eels_gz.run.placing, "shipped placements").

For every scenario of config/scenarios/ with ``placement:``, the configuration ``eels-gz export
--scenario NAME`` (and ``ros2 launch eels_gz sim.launch.py scenario:=NAME``) resolves with nothing
else given is placed with the engine, as ``run`` places it, and recorded under its
:func:`eels_gz.run.placing.placement_key`.

    python tools/shipped_placements.py            # write config/placements/
    python tools/shipped_placements.py --check    # compare with a fresh placement; exit 1 on a difference
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

from eels_gz import config, registry
from eels_gz.run.export import engine_placement
from eels_gz.run.placing import PLACEMENT_SECTIONS, placement_key, placement_record, shipped_placements_file
from eels_gz.run.resolve import resolve_run
from eels_gz.yamlio import load

# m and rad: a placement recomputed on the same pinned dartpy is the same to round-off; this leaves room
# for a libm's last bits, far below anything the robot's start could feel
TOLERANCE = 1e-7


def placed_scenarios() -> list[str]:
    """The scenarios whose YAML names a ``placement:``."""
    return [name for name, path in registry.scenarios().items() if (load(path) or {}).get("placement")]


def configurations(scenario: str) -> list[dict]:
    """The configurations shipped for ``scenario``: its own (what the launch's ``scenario:=`` resolves)."""
    return [config.resolve(None, {"scenario": scenario}, [])]


def compute(scenario: str) -> dict:
    """The shipped-placements file's content for ``scenario``, placed now with the engine."""
    entries = []
    for cfg in configurations(scenario):
        with tempfile.TemporaryDirectory(prefix="eels_gz_ship_") as scratch:
            plan = resolve_run(cfg, scratch)
            resolved = plan.resolved_config()
            placed = engine_placement(plan)
        entries.append({"key": placement_key(resolved),
                        "config": {k: resolved.get(k) for k in PLACEMENT_SECTIONS},
                        "placement": placement_record(placed)})
    return {"scenario": scenario, "written_by": "tools/shipped_placements.py", "placements": entries}


def differences(shipped: dict, fresh: dict) -> list[str]:
    """What differs between a shipped file's content and a fresh one (keys, status, pose, joints)."""
    out = []
    old = {e["key"]: e["placement"] for e in shipped.get("placements", [])}
    for entry in fresh["placements"]:
        key, new = entry["key"], entry["placement"]
        if key not in old:
            out.append(f"no shipped placement for key {key[:12]} ({json.dumps(entry['config'])[:200]})")
            continue
        was = old[key]
        if was["status"] != new["status"]:
            out.append(f"{key[:12]}: status {was['status']} -> {new['status']}")
        a = np.r_[was["base_pose"]["position"], was["base_pose"]["orientation_wxyz"]]
        b = np.r_[new["base_pose"]["position"], new["base_pose"]["orientation_wxyz"]]
        if not np.allclose(a, b, rtol=0, atol=TOLERANCE):
            out.append(f"{key[:12]}: base pose differs by {np.max(np.abs(a - b)):.3g}")
        if set(was["joints"]) != set(new["joints"]):
            out.append(f"{key[:12]}: joints {sorted(set(was['joints']) ^ set(new['joints']))} differ")
        else:
            worst = max((abs(was["joints"][k] - v) for k, v in new["joints"].items()), default=0.0)
            if worst > TOLERANCE:
                out.append(f"{key[:12]}: a joint differs by {worst:.3g}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    parser.add_argument("scenarios", nargs="*", help="only these (default: every placed scenario)")
    args = parser.parse_args(argv)
    failed = False
    for scenario in args.scenarios or placed_scenarios():
        fresh = compute(scenario)
        path = shipped_placements_file(scenario)
        if args.check:
            shipped = json.loads(path.read_text()) if path.is_file() else {}
            diff = differences(shipped, fresh) if shipped else [f"{path} is missing"]
            for line in diff:
                print(f"{scenario}: {line}", file=sys.stderr)
            failed |= bool(diff)
        else:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(fresh, indent=1) + "\n")
            print(f"{path}: {len(fresh['placements'])} placement(s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
