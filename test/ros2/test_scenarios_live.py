"""Every shipped scenario launches with ``scenario:=NAME`` (its export, headless, run by the real gz-sim
server) from a Python that provably lacks dartpy and has the rest of package.xml's dependencies (the
shipped placements stand in for the engine's), and its systems write metrics.json; and on ``hang`` the
force-torque wrenches over ROS 2 (ros_gz_bridge) equal the weights they carry within 1 %."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from launching import Launch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "gazebo"))
from test_sensors import carried_masses  # noqa: E402  (the real-Gazebo tier's closed form of the carried weight)

from eels_gz import registry  # noqa: E402
from eels_gz.yamlio import load  # noqa: E402

WITH_SYSTEMS = sorted(n for n, p in registry.scenarios().items() if (load(p) or {}).get("systems"))
G = 9.80665


def metrics_of(tmpdir: Path) -> dict | None:
    found = sorted(tmpdir.rglob("metrics.json"))
    return json.loads(found[0].read_text()) if found else None


@pytest.mark.parametrize("scenario", WITH_SYSTEMS)
def test_every_scenario_launches_without_dartpy_and_writes_its_metrics(scenario, launch_env, tmp_path):
    launch = Launch(launch_env, tmp_path / "launch.log", f"scenario:={scenario}", "gui:=false", "headless:=true",
                    tmpdir=tmp_path)
    try:
        end = time.monotonic() + 240
        metrics = None
        while time.monotonic() < end:
            assert launch.proc.poll() is None, f"the launch ended ({launch.proc.returncode}):\n{launch.tail()}"
            metrics = metrics_of(tmp_path)
            if metrics is not None and metrics.get("sim_time_s", 0) >= 1.0 - 1e-9:
                break
            time.sleep(0.5)
        assert metrics is not None, f"no metrics.json after 240 s:\n{launch.tail()}"
        assert metrics["scenario"] == scenario
        log = launch.log_path.read_text(errors="replace")
        assert "[PythonSystemLoader.cc" not in log, f"gz-sim disabled a Python system:\n{launch.tail(80)}"
    finally:
        launch.stop()


def test_force_torque_over_ros_carries_the_weight_below_it(launch_env, tmp_path):
    launch = Launch(launch_env, tmp_path / "launch.log", "scenario:=hang", "gui:=false", "headless:=true",
                    tmpdir=tmp_path)
    try:
        launch.wait_for_clock()
        seen = launch.probe("listen", "4")
        urdf = next(tmp_path.rglob("eels_1_5.urdf")).read_text()
    finally:
        launch.stop()
    settle = load(registry.scenario_path("hang"))["params"]["settle_time"]
    carried = carried_masses(urdf)
    assert {f"/eels_1_5/fts/{n}/wrench" for n in carried} == set(seen["wrench"])
    for name, m in carried.items():
        w = np.array(seen["wrench"][f"/eels_1_5/fts/{name}/wrench"])
        after = w[w[:, 0] >= settle]
        assert len(after) > 10
        force = np.linalg.norm(after[:, 1:].mean(axis=0))
        assert force == pytest.approx(m * G, rel=0.01), f"{name}: {force:.2f} N over ROS 2, weight {m * G:.2f} N"
