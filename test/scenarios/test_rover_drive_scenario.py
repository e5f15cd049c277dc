"""The rover drive as a scenario of `eels-gz run` (issue 32 item 5: config/scenarios/rover_drive.yaml,
the gz-sim system plugins_py/rover_drive.py), on hard ice and on soil; `compare` for a rover (issue 34
item 7); the Archimede slope campaign's table (issue 34 item 6), shortened."""

from __future__ import annotations

import json
import math

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from eels_gz import config
from eels_gz.cli import main
from eels_gz.paths import asset
from eels_gz.run.runner import run
from eels_gz.yamlio import load

SCALE = 0.1  # a straight of 0.2 m


def drive_cfg(**sets) -> dict:
    cfg = config.resolve()
    for key, value in {"robot.name": "archimede", "scenario.name": "rover_drive", "scenario.scale": SCALE,
                       "log.mcap": False, "log.plot": False, **sets}.items():
        config.set_key(cfg, key, value, "test")
    return cfg


def test_the_run_ends_when_the_system_has_driven_the_path(tmp_path):
    """On hard ice at 1.2 rad/s the system holds v = rate R for L / v, then stops for rate / a + 1 s
    (a: config/rover_control.yaml wheel_acceleration) and ends the run: the run's simulated time is
    that sum (within 0.1 s: the steering's start and the sampling), far below the scenario's 600 s cap;
    the rover covers the 0.2 m (5 %: ramps and steering lag) without slipping (|s| < 0.1 %: rigid
    floor, rates below the traction limit), and the odometry ends within 1 % of the distance."""
    summary = run(drive_cfg(), tmp_path)
    m = json.loads((tmp_path / "metrics.json").read_text())
    acc = float(load(asset("config", "rover_control.yaml"))["wheel_acceleration"])
    length = 2.0 * SCALE
    expected = length / m["speed"] + 1.2 / acc + 1.0
    assert summary["status"] == "ok" and m["drive_status"] == "ok"
    assert summary["sim_time"] == pytest.approx(expected, abs=0.1)
    assert m["distance"] == pytest.approx(length, rel=0.05)
    assert abs(m["slip"]) < 1e-3 and m["slip_count"] >= 10
    assert m["end_error_relative"] < 0.01
    assert m["t"][-1] == pytest.approx(summary["sim_time"], abs=1e-9)  # the last state is recorded
    assert m["slope_deg"] == pytest.approx(0.0, abs=1e-9)


def test_robot_yaw_lays_the_rover_for_a_lateral_climb(tmp_path):
    """robot.yaw (with pose auto) turns the rover before it is placed: at -90 deg its lateral drive (the slope
    campaign's lateral mode) runs along world +x, the 0.2 m within 5 % and no more than 1 % of it sideways;
    Gazebo's spawn (eels_gz.spawn.spawn_pose, the export's) lays it at the same heading."""
    from eels_gz import registry
    from eels_gz.description.assemble import robot_description
    from eels_gz.spawn import spawn_pose

    summary = run(drive_cfg(**{"scenario.path": 1, "robot.yaw": -math.pi / 2}), tmp_path)
    x, y, _ = summary["final_base_pose"]["position"]
    assert summary["status"] == "ok"
    assert x == pytest.approx(2.0 * SCALE, rel=0.05) and abs(y) < 0.01 * 2.0 * SCALE
    assert summary["final_base_pose"]["rpy"][2] == pytest.approx(-math.pi / 2, abs=0.01)
    desc = robot_description(registry.robot("archimede"), gazebo=True)
    pose = spawn_pose(desc, None, yaw=-math.pi / 2).pose
    assert pose[5] == pytest.approx(-math.pi / 2, abs=1e-12) and pose[:2] == pytest.approx((0.0, 0.0), abs=1e-12)


@pytest.mark.parametrize("soil, wheels, slope", [("eac1a", "high_grousers", 10.0),
                                                ("lava_gravel", "low_grousers", 0.0)])
def test_the_slip_on_soil_is_the_single_corner_balance(tmp_path, soil, wheels, slope):
    """Setup B straight up the 10 deg sandbox, and Setup A on the flat one: the median slip over the drive
    (measured as seed 004 does: the wheels' nominal radius, the tracked motion) equals the steady slip at
    which one corner's drawbar pull (quadrature with its lugs, eels_gz.soil.identify) carries a quarter of
    the weight's downhill part, W sin a, while pressing W cos a, converted to the nominal radius. Tolerance
    2 points of slip: the balance leaves out the load transfer between the axles and the bulldozing the
    system adds, and the drive's start (the wheels' ramp) is in its median; on the campaign's 0.4 m drives
    (measured: 0.2 points on B at 10 deg; 2.8 on a 0.2 m drive, whose ramp weighs twice as much)."""
    summary = run(drive_cfg(**{"world": f"sandbox_{slope:g}", "soil.params": soil, "scenario.scale": 0.2,
                               "robot.xacro_args": {"wheels": wheels}}), tmp_path)
    m = json.loads((tmp_path / "metrics.json").read_text())
    from eels_gz import registry
    from eels_gz.description.xacro_loader import process_xacro
    from eels_gz.soil.identify import corner_slip, rover_corner
    from eels_gz.soil.params import resolve_soil_params

    entry = registry.robot("archimede")
    corner = rover_corner(process_xacro(entry.path, entry.args(None, wheels=wheels, soil=soil, gazebo="true")))
    expected = corner_slip(resolve_soil_params(soil, {}), corner, slope)
    assert summary["status"] == "ok" and m["drive_status"] == "ok"
    assert m["slope_deg"] == pytest.approx(slope, abs=1e-6)
    assert 0.05 < expected < 0.5
    assert m["slip"] == pytest.approx(expected, abs=0.02)


def test_compare_runs_a_rover_on_soil_and_on_rigid_ground(tmp_path):
    """compare for a rover: soil/ under the soil model, stock/ on the engine's rigid contact. On the
    10 deg sandbox (engine friction 0.15 < tan 10 deg = 0.176) the rigid wheels cannot hold and the
    rover slides downhill, while on lava it climbs (slowly: 5 cm); compare.json's poses are the runs' own."""
    out = tmp_path / "cmp"
    args = ["compare", "--robot", "archimede", "--world", "sandbox_10", "--scenario", "rover_drive",
            "--set", f"scenario.scale={SCALE}", "--set", "soil.params=lava_gravel", "--out", str(out), "--json"]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    result = json.loads(res.output[res.output.index("{"):])
    assert set(result["models"]) == {"stock", "soil"} and result["difference"]["of"] == "soil - stock"
    stock, soil = (json.loads((out / m / "summary.json").read_text()) for m in ("stock", "soil"))
    assert "soil_params" not in stock["settings"]["resolved"]
    assert soil["settings"]["resolved"]["soil_params"] == result["soil"]
    assert "soil_contact" in soil["settings"]["resolved"]["systems"]
    assert "soil_contact" not in stock["settings"]["resolved"]["systems"]
    for name, summary in (("stock", stock), ("soil", soil)):
        p = result["models"][name]["final_pose"]
        assert [p["x"], p["y"]] == pytest.approx(summary["final_base_pose"]["position"][:2], abs=1e-12)
    assert result["models"]["soil"]["final_pose"]["x"] > 0.02  # climbed (lava slips 75 % of its 0.2 m here)
    assert result["models"]["stock"]["final_pose"]["x"] < -0.1  # slid down
    assert result["difference"]["x"]["max"] > 0.2


def test_compare_refuses_a_rover_without_a_soil(tmp_path):
    res = CliRunner().invoke(main, ["compare", "--robot", "archimede", "--scenario", "rover_drive",
                                    "--out", str(tmp_path / "c")])
    assert res.exit_code == 2, res.output
    assert "soil.params" in res.output and "Traceback" not in res.output
    assert not (tmp_path / "c").exists()


def test_the_slope_campaign_table_has_the_papers_columns(tmp_path):
    """config/sweeps/archimede_slopes.yaml cut to setups A and B driving straight, at 0 and 20 deg, 1.2 rad/s,
    one draw and 0.2 m drives (CI's reduced campaign; the full one is bench/archimede_slopes.py): one row per
    setup and slope with the labels setup, wheel, soil, grousers and mode, slope_deg (measured under the
    start), wheel_rate and slip (the drive's median); slip rises with slope in both setups; the Figs. 12-13
    plots are drawn, and eels_gz.sweep.slopes summarises the rows and checks issue 44's bounds on them."""
    pytest.importorskip("ray")
    from eels_gz.sweep import load_spec, run_sweep
    from eels_gz.sweep.slopes import checks, summarise
    from eels_gz.sweep.spec import check_spec, parse_spec

    raw = load_spec(asset("config", "sweeps", "archimede_slopes.yaml")).raw
    straight = [c for c in raw["cases"] if c["labels"]["mode"] == "straight" and c["labels"]["setup"] in "AB"]
    raw = {**raw, "base": {**raw["base"], "scenario.scale": SCALE, "log.plot": False}, "samples": 1,
           "cases": straight,
           "dispersions": {"world": {"grid": ["sandbox_0", "sandbox_20"]}, "scenario.rate": {"grid": [1.2]}}}
    spec = parse_spec(raw, "slopes.yaml")
    check_spec(spec)
    run_sweep(spec, tmp_path / "slopes", workers=2)
    rows = pq.read_table(tmp_path / "slopes" / "results.parquet").to_pylist()
    assert len(rows) == 4 and all(r["status"] == "ok" for r in rows), rows
    assert {"setup", "wheel", "soil", "grousers", "mode", "slope_deg", "wheel_rate", "slip"} <= set(rows[0])
    by = {(r["setup"], round(r["slope_deg"])): r for r in rows}
    assert set(by) == {("A", 0), ("A", 20), ("B", 0), ("B", 20)}
    assert all(r["wheel_rate"] == 1.2 and math.isfinite(r["slip"]) for r in rows)
    for setup in "AB":  # (the first draw is the campaign's weakest soil: A slips 81 % on flat ground)
        assert by[(setup, 20)]["slip"] > by[(setup, 0)]["slip"]
    plots = tmp_path / "slopes" / "plots"
    assert (plots / "slope_slip_median.png").is_file() and (plots / "slope_slip_boxes.png").is_file()
    summary = summarise(rows)
    assert summary["setups"]["A"]["slopes"] == [0.0, 20.0] and summary["statuses"] == {"ok": 4}
    assert summary["setups"]["B"]["median"] == [by[("B", 0)]["slip"], by[("B", 20)]["slip"]]
    bounds = checks(summary)
    assert bounds["b_over_a"]["ratios"]["20"] == pytest.approx(by[("B", 20)]["slip"] / by[("A", 20)]["slip"])
    assert bounds["b_over_a"]["met"] is None  # no 15 deg in the cut
