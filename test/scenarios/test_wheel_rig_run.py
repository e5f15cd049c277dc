"""`eels-gz run --scenario wheel_rig` (issue 34, a contract): the single-wheel soil rig under the run
path. The rig's system (plugins_py/wheel_rig.py) holds the commanded slip; the run writes its
steady-state figures to metrics.json, which must be the Wong-Reece integrals computed here by
quadrature (test/soil_truth.py) at the measured sinkage, that sinkage carrying the load; the wheel is
the Archimede set `scenario.grousers` picks, read from Archimede's own URDF; bad `scenario.*` and
`soil.*` values stop with exit 2 and a message naming the setting, before any output is written."""

from __future__ import annotations

import json
import math

import pytest
import yaml
from click.testing import CliRunner
from lxml import etree
from soil_truth import quad_wong_reece

from eels_gz import registry
from eels_gz.cli import main
from eels_gz.description.model import RobotModel
from eels_gz.description.xacro_loader import process_xacro
from eels_gz.rover.from_urdf import soil_contact_wheels
from eels_gz.soil.grousers import WheelGeometry, contact_geometry
from eels_gz.soil.params import load_soil_params

KEYS = {"drawbar_pull_N", "sinkage_m", "wheel_torque_Nm", "normal_load_N", "slip", "wheel_radius_m", "wheel_width_m"}


def archimede_wheel(wheels: str) -> tuple[float, float]:
    """(radius, width) of Archimede's wheel set ``wheels``, from its URDF: its nominal radius."""
    entry = registry.robot("archimede")
    tree = etree.fromstring(process_xacro(entry.path, entry.args(None, wheels=wheels)).encode())
    link = tree.find("link[@name='fl_wheel_link']")
    return (float(link.find("collision/geometry/sphere").get("radius")),
            float(link.find("visual/geometry/cylinder").get("length")))


def soil_wheel(wheels: str, params):
    """The contact geometry (eels_gz.soil.grousers) of Archimede's wheel set ``wheels`` on ``params``, its lugs
    read from Archimede's URDF built with a soil."""
    entry = registry.robot("archimede")
    urdf = process_xacro(entry.path, entry.args(None, wheels=wheels, soil="eac1a", gazebo="true", world_file="w.sdf"))
    w = soil_contact_wheels(RobotModel.from_urdf(urdf, "archimede"))[0][0]
    return contact_geometry(WheelGeometry(w["radius"], w["width"], w["lug_height"], w["lug_count"]), params)


def contact_sinkage(metrics: dict, contact_radius: float) -> float:
    """The sinkage of the contact cylinder from the rig's, which is the nominal wheel's (its lowest point
    below the surface): both read the same distance of the wheel centre to the soil."""
    return metrics["sinkage_m"] - (metrics["wheel_radius_m"] - contact_radius)


def kernel_slip(slip: float, radius: float, contact_radius: float) -> float:
    """The slip the soil sees (on the contact radius) of a wheel the rig drives at ``slip`` measured with its
    nominal ``radius``: the carriage runs at R omega (1 - s) or R omega / (1 + s); the textbook piecewise
    slip of that speed against r_c omega (omega = 1)."""
    v = radius * (1.0 - slip) if slip >= 0.0 else radius / (1.0 + slip)
    return (contact_radius - v) / max(contact_radius, v)


def run(tmp_path, *sets: str):
    out = tmp_path / "run"
    args = ["run", "--scenario", "wheel_rig", "--out", str(out), "--set", "log.plot=false"]
    for item in sets:
        args += ["--set", item]
    return CliRunner().invoke(main, args), out


@pytest.mark.parametrize("slip, load, grousers, soil", [
    (0.3, 16.0, True, None),  # the scenario's soil (eac1a), high grousers, driving
    (-0.3, 20.0, False, "lava_gravel"),  # braking, low grousers, the soil set named on the command line
])
def test_run_metrics_are_wong_reece(tmp_path, slip, load, grousers, soil):
    """Tolerances, as for the rig's system in test/plugins/test_soil_contact.py: 1e-3 of the load (N) for
    the load and the drawbar pull, 1e-3 of load x radius (N m) for the torque; the PI loops and the shear
    state have settled long before the measuring window."""
    sets = [f"scenario.slip={slip}", f"scenario.load={load}", f"scenario.grousers={str(grousers).lower()}"]
    if soil:
        sets.append(f"soil.params={soil}")
    res, out = run(tmp_path, *sets)
    assert res.exit_code == 0, res.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "ok"
    metrics = json.loads((out / "metrics.json").read_text())
    assert KEYS <= set(metrics) and metrics["scenario"] == "wheel_rig"
    radius, width = archimede_wheel("high_grousers" if grousers else "low_grousers")
    assert (metrics["slip"], metrics["normal_load_N"]) == (slip, load)
    assert (metrics["wheel_radius_m"], metrics["wheel_width_m"]) == (radius, width)
    params = load_soil_params(soil or yaml.safe_load(registry.scenario_path("wheel_rig").read_text())["soil"])
    assert summary["settings"]["resolved"]["soil_params"] == params.to_dict()
    g = soil_wheel("high_grousers" if grousers else "low_grousers", params)
    w_ref, dp_ref, t_ref = quad_wong_reece(params, g.radius, width, contact_sinkage(metrics, g.radius),
                                           kernel_slip(slip, radius, g.radius), tuple(g.record()))
    assert w_ref == pytest.approx(load, rel=1e-3)
    assert metrics["drawbar_pull_N"] == pytest.approx(dp_ref, abs=1e-3 * load)
    assert metrics["wheel_torque_Nm"] == pytest.approx(t_ref, abs=1e-3 * load * g.radius)
    assert abs(dp_ref) > 10e-3 * load  # the figures are not trivially small


@pytest.mark.parametrize("soil", ["lava_gravel", "eac1a"])
def test_the_high_grouser_wheel_pulls_harder_than_the_low(tmp_path, soil):
    """Issue 44: on one soil, at equal slip (0.4, measured with each wheel's nominal radius, as the rover's
    slip is) and equal load, the high-grouser wheel's drawbar pull exceeds the low-grouser wheel's. Both
    measured to 1e-3 of the load (test_run_metrics_are_wong_reece); the margin asked, 0.1 N, is six times
    that. (Measured: lava_gravel 1.46 against 1.02 N, eac1a 4.11 against 3.31 N.)"""
    pulls = {}
    for grousers in (True, False):
        res, out = run(tmp_path / str(grousers), "scenario.slip=0.4", f"scenario.grousers={str(grousers).lower()}",
                       f"soil.params={soil}")
        assert res.exit_code == 0, res.output
        pulls[grousers] = json.loads((out / "metrics.json").read_text())["drawbar_pull_N"]
    assert pulls[True] > pulls[False] + 0.1, pulls


def test_soil_keys_set_on_their_own_reach_the_rig(tmp_path):
    """--set soil.shear_modulus_K=0.03 over eac1a: the run writes the resolved set (soil.yaml) and the rig
    measures that soil (a slacker shear spring: less pull than eac1a's 1.5 cm at the same slip)."""
    res, out = run(tmp_path, "scenario.slip=0.3", "soil.shear_modulus_K=0.03")
    assert res.exit_code == 0, res.output
    written = yaml.safe_load((out / "soil.yaml").read_text())
    assert written == {**load_soil_params("eac1a").to_dict(), "shear_modulus_K": 0.03}
    params = load_soil_params(out / "soil.yaml")
    metrics = json.loads((out / "metrics.json").read_text())
    radius, width = archimede_wheel("high_grousers")
    g = soil_wheel("high_grousers", params)
    s = kernel_slip(0.3, radius, g.radius)
    w_ref, dp_ref, _ = quad_wong_reece(params, g.radius, width, contact_sinkage(metrics, g.radius), s,
                                       tuple(g.record()))
    assert w_ref == pytest.approx(metrics["normal_load_N"], rel=1e-3)
    assert metrics["drawbar_pull_N"] == pytest.approx(dp_ref, abs=1e-3 * metrics["normal_load_N"])
    base = quad_wong_reece(load_soil_params("eac1a"), g.radius, width, contact_sinkage(metrics, g.radius), s,
                           tuple(soil_wheel("high_grousers", load_soil_params("eac1a")).record()))[1]
    assert metrics["drawbar_pull_N"] < base - 0.1  # N


@pytest.mark.parametrize("item, message", [
    ("scenario.slip=1.2", "scenario.slip = 1.2 is out of range; expected a slip in [-0.5, 0.9]"),
    ("scenario.slip=-0.7", "scenario.slip = -0.7 is out of range"),
    ("scenario.load=1", "scenario.load = 1.0 N is below the wheel's own weight"),
    ("scenario.load=.nan", "parameter 'load' must be a finite number"),
    ("scenario.grousers=2", "parameter 'grousers' is a switch: it must be true or false, got 2"),
    ("scenario.grousers=high", "scenario parameter 'scenario.grousers' must be a number or true/false"),
    ("scenario.wheels=1", "scenario has no parameter 'wheels'"),
    ("soil.params=basalt", "unknown soil parameter set 'basalt'"),
    ("soil.cohesion=-5", "'soil.cohesion' = -5 is out of range; expected a cohesion >= 0 in Pa"),
    ("soil.k_x=1", "unknown config key 'soil.k_x'"),
])
def test_bad_values_exit_2_naming_the_setting(tmp_path, item, message):
    res, out = run(tmp_path, item)
    assert res.exit_code == 2, res.output
    assert message in res.output
    assert "Traceback" not in res.output
    assert not out.exists()


def test_soil_on_a_robot_without_soil_is_refused(tmp_path):
    res = CliRunner().invoke(main, ["run", "--robot", "eels_1_0_front_only", "--duration", "0.01", "--out",
                                    str(tmp_path / "r"), "--set", "soil.params=eac1a"])
    assert res.exit_code == 2 and "'eels_1_0_front_only' takes no soil" in res.output


def test_the_scenario_default_load_is_about_an_archimede_corner():
    """The scenario's default load stands for a quarter of Archimede's weight (within 5 %: it is rounded)."""
    entry = registry.robot("archimede")
    tree = etree.fromstring(process_xacro(entry.path, entry.args(None)).encode())
    corner = sum(float(m.get("value")) for m in tree.iter("mass")) / 4.0 * 9.80665
    load = yaml.safe_load(registry.scenario_path("wheel_rig").read_text())["params"]["load"]
    assert math.isclose(load, corner, rel_tol=0.05)


def test_the_rigs_log_replays_its_carriage(tmp_path):
    """The scene log of a fixed-base rig (its URDF root is `world`): /tf holds world -> carriage_x (no
    world -> world), whose last transform is the carriage's final pose in summary.json, and the viewer
    reads the run."""
    from mcap.reader import make_reader

    from eels_gz.ros.messages import typestore
    from eels_gz.viewer.replay import load_run

    res, out = run(tmp_path, "scenario.slip=0.3")
    assert res.exit_code == 0, res.output
    store, last = typestore(), None
    with open(out / "log.mcap", "rb") as f:
        for schema, _, message in make_reader(f).iter_messages(topics=["/tf"]):
            last = store.deserialize_cdr(message.data, schema.name)
    pairs = {(t.header.frame_id, t.child_frame_id): t.transform.translation for t in last.transforms}
    assert set(pairs) == {("world", "carriage_x"), ("carriage_x", "carriage_z"), ("carriage_z", "wheel_link")}
    final = json.loads((out / "summary.json").read_text())["final_base_pose"]["position"]
    assert pairs[("world", "carriage_x")].x == pytest.approx(final[0], abs=1e-9) and final[0] > 0.3  # m
    assert len(load_run(out).times) > 100
