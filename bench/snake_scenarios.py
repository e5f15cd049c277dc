"""Wall time of the snake scenarios (the registry's scenarios with a
``controller:`` or ``systems:``, on an EELS robot), each shortened to ``--duration`` simulated seconds after
its setup: the setup (placement, settling, pushing into the walls) and the
run are timed apart, and the run's real-time factor is reported. Sensors,
the MCAP log and the plot are off, so this measures physics, contact,
plugins and the scenario's systems or controller.

Each scenario runs with its own robot, world and contact (its ``contact:``
key, else the defaults), as ``eels-gz run --scenario NAME`` would, one after
the other on one core. Writes JSON (``--out``) and prints it.
"""

from __future__ import annotations

import argparse
import platform
import tempfile
import time
from pathlib import Path

from rtf import emit

from eels_gz import config, registry
from eels_gz.config import load_yaml
from eels_gz.run.runner import run


def snake_scenarios() -> dict[str, dict]:
    """The registry's scenarios with a controller or systems on an EELS robot, by name: their YAML."""
    loaded = {name: load_yaml(path) for name, path in sorted(registry.scenarios().items())}
    return {name: sc for name, sc in loaded.items() if (sc.get("controller") or sc.get("systems"))
            and (not sc.get("robot") or registry.robot(sc["robot"]).family == "eels")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=float, default=2.0, help="simulated seconds after each scenario's setup")
    ap.add_argument("--only", nargs="*", help="scenario names (default: every snake scenario)")
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args()
    known = snake_scenarios()
    names = a.only or list(known)
    unknown = [n for n in names if n not in known]
    if unknown:
        ap.error(f"not snake scenarios: {', '.join(unknown)} (known: {', '.join(known)})")
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            cfg = config.resolve(overrides={"scenario": {"name": name}, "duration": a.duration,
                                            "sensors": {"enabled": False}, "log": {"mcap": False, "plot": False}})
            t0 = time.perf_counter()
            summary = run(cfg, Path(tmp) / name)
            total = time.perf_counter() - t0
            rows[name] = {
                "robot": summary["settings"]["config"]["robot"]["name"],
                "world": summary["settings"]["config"]["world"],
                "contact": summary["settings"]["resolved"]["contact"],
                "status": summary["status"],
                "setup_sim_s": summary["setup_sim_time"],
                "setup_wall_s": total - summary["wall_time"],
                "run_sim_s": summary["sim_time"] - summary["setup_sim_time"],
                "run_wall_s": summary["wall_time"],
                "run_real_time_factor": summary["real_time_factor"],
            }
    emit({"duration_s": a.duration, "scenarios": rows,
          "machine": {"python": platform.python_version(), "processor": platform.processor() or platform.machine()}},
         a.out)


if __name__ == "__main__":
    main()
