"""Every shipped scenario with systems, under each contact model it takes (cases.yaml), runs in the real
gz-sim 8 server (`eels-gz run --host gazebo`: exported headless, a private GZ_PARTITION, loopback) and
agrees with the embedded host's run of the same resolved configuration: each metric of metrics.json and
the base's trajectory (/ground_truth/odom over gz-transport) within the tolerance committed for the case
in tolerances.json before the first comparison (tools/gazebo_tolerances.py says how it is derived). A
Python system gz-sim disabled fails the run (status plugin_error), never passes as metrics of 0."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eels_gz.gazebo.agree import agreement
from eels_gz.gazebo.cases import load_cases
from eels_gz.run.hosts import run

HERE = Path(__file__).parent
CASES = load_cases(HERE / "cases.yaml")
TOLERANCES = json.loads((HERE / "tolerances.json").read_text())["cases"]


def test_every_scenario_with_systems_is_a_case():
    from eels_gz import registry
    from eels_gz.yamlio import load

    with_systems = {n for n, p in registry.scenarios().items() if (load(p) or {}).get("systems")}
    assert with_systems == {c.scenario for c in CASES}
    assert {c.name for c in CASES} == set(TOLERANCES), "run tools/gazebo_tolerances.py for new cases"


def beyond(diff: dict, tol: dict, trajectory: bool = True) -> list[str]:
    """What of ``diff`` (eels_gz.gazebo.agree.agreement) lies outside ``tol`` (``trajectory``: compare it)."""
    out = []
    if diff["status"][0] != diff["status"][1]:
        out.append(f"status: host {diff['status'][0]}, gz-sim {diff['status'][1]}")
    for key, d in diff.get("metrics", {}).items():
        t = tol["metrics"].get(key)
        if isinstance(d, float):
            if not isinstance(t, float) or not d <= t:
                out.append(f"metric {key}: differs by {d:.3g} (tolerance {t})")
        elif d != "equal":
            out.append(f"metric {key}: {d}")
    traj = diff["trajectory"]
    if not trajectory:
        return out
    if traj["samples"] == 0:
        out.append("trajectory: no common times")
    for key in ("position_m", "yaw_rad"):
        if not traj[key] <= tol["trajectory"][key]:
            out.append(f"trajectory {key}: {traj[key]:.3g} (tolerance {tol['trajectory'][key]:.3g})")
    return out


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_the_scenario_in_gz_sim_agrees_with_the_host(case, tmp_path):
    host = tmp_path / "host"
    gz = tmp_path / "gz"
    run(case.config("embedded"), host)
    summary = run(case.config("gazebo"), gz)
    assert summary["host"]["name"] == "gazebo" and "plugin_errors" not in summary
    diff = agreement(host, gz)
    (tmp_path / "agreement.json").write_text(json.dumps(diff, indent=1, default=str))
    # a rig's description loads no OdometryPublisher: gz-sim publishes no ground truth to compare
    urdf = next((gz / "export").glob("*.urdf")).read_text()
    has_odometry = "gz-sim-odometry-publisher-system" in urdf
    assert has_odometry == ("/ground_truth/odom" in summary["host"]["topics"])
    wrong = beyond(diff, TOLERANCES[case.name], trajectory=has_odometry)
    assert not wrong, f"{case.name}: gz-sim against the host:\n  " + "\n  ".join(wrong)
    # the metrics compared are those of the whole run: written at its last whole second, or when a
    # scenario system ended it (the world paused)
    written = json.loads((gz / "metrics.json").read_text()).get("sim_time_s")
    if written is not None and summary["status"] == "ok" and "message" not in summary:
        assert written == pytest.approx(summary["setup_sim_time"] + case.duration, abs=1e-6)
