"""`eels-gz calibrate friction` and `calibrate simulate` (issue 5): the
Fig. 6/7 pipeline from the command line, and the closed loop through drags
simulated in the host."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
import yaml
from click.testing import CliRunner

from eels_gz.cli import main
from eels_gz.contact.calibration import synthetic_drags, write_drag_csv
from eels_gz.contact.params import load_contact_params
from eels_gz.paths import asset


def cli(*args):
    return CliRunner().invoke(main, ["calibrate", *args])


def json_of(res) -> dict:
    return json.loads(res.output[res.output.index("{"):])


@pytest.mark.parametrize("params_name, params_override", [
    ("ice", {}), ("ice", {"mu": 0.2, "ev_a": 2.0, "ev_b": 0.06}), ("ice_regulated", {})])
def test_simulated_drags_recover_the_configured_parameters(tmp_path, params_name, params_override):
    """The default ice's bristle law gives Eq. 6 exactly while sliding, so
    the drags return mu, ev_a and ev_b as configured. Under the regulated law
    drags at 20 v_eps scale friction by 20/sqrt(401) = 0.99875, so mu comes
    back 0.125 % low and |e_v| (a ratio of two drags at the same speed)
    exactly; the issue's bound is 5 %, met with room. Under the regulated law the implicit step of the
    across-thread friction (eels_gz/contact/implicit.py) starts a perpendicular drag at f0 / (1 + x) and
    converges to the law over EXTERNAL_FORCE_TIME (1 + x): here x = dt n_c w mu |e_v| F_n (1 - u_e^2) / s
    <= 1e-3 * 4 * 1.3 * 0.15 * 300 * 196 / 401 / 1.0 = 0.11 (20 kg, the drag at 20 v_eps), so over the
    200 steps before the averaging window the gap shrinks to at most x / (1 + x) (1 - 0.01 / (1 + x))^200
    = 1.6 %: the regulated ev_a is checked to 2 % (measured 9e-5) and ev_b, a slope of 0.1 under an
    intercept of 300, to the issue's 5 %; the bristle law slides across with u_e^2 = 1 (x = 0) and stays
    exact."""
    params = params_name
    if params_override:
        p = {**yaml.safe_load(asset("config", "contact", f"{params_name}.yaml").read_text()), **params_override}
        params = str(tmp_path / "other.yaml")
        (tmp_path / "other.yaml").write_text(yaml.safe_dump(p))
    truth = load_contact_params(params)
    csv = tmp_path / "drags.csv"
    res = cli("simulate", "--out", str(csv), "--params", params, "--loads", "2,8,20")
    assert res.exit_code == 0, res.output
    fit = json_of(cli("friction", str(csv), "--json"))
    regulator = 20.0 / (20.0 ** 2 + 1.0) ** 0.5 if truth.stick_length == 0.0 else 1.0
    assert fit["mu"] == pytest.approx(truth.mu * regulator, rel=1e-6)
    assert fit["mu"] == pytest.approx(truth.mu, rel=0.05)
    ev_rel = 1e-6 if truth.stick_length > 0.0 else 0.02
    assert fit["ev_a"] == pytest.approx(truth.ev_a, rel=ev_rel)
    assert fit["ev_b"] == pytest.approx(truth.ev_b, rel=1e-6 if truth.stick_length > 0.0 else 0.05)
    assert fit["r2"] == pytest.approx(1.0, abs=1e-9 if truth.stick_length > 0.0 else 1e-5)  # (measured 8e-7)
    assert fit["counts"] == {"parallel": 3, "perpendicular": 3, "perpendicular_loads": 3}


def test_friction_cli_on_noisy_synthetic_drags(tmp_path):
    """1 % noise on 40 drags per load at 6 loads: the standard error of the
    slope is ~0.3 % of b here; 2 % is the issue's bound. The truth is the default ice with the steep
    line 3 + 0.04 F_n of before issue 33 (on the identified 300 + 0.1 F_n, 1 % noise on |e_v| ~ 310 hides
    the slope: its standard error is ~5 % of b)."""
    truth = replace(load_contact_params("ice"), ev_a=3.0, ev_b=0.04)
    samples = synthetic_drags(truth, [20.0, 50.0, 80.0, 110.0, 140.0, 170.0], n=40, noise=0.01, seed=7)
    csv = write_drag_csv(samples, tmp_path / "drags.csv")
    res = cli("friction", str(csv), "--json", "--plot", str(tmp_path / "fit.png"))
    assert res.exit_code == 0, res.output
    fit = json_of(res)
    for key in ("mu", "ev_a", "ev_b"):
        assert fit[key] == pytest.approx(getattr(truth, key), rel=0.02)
    assert len(fit["residuals"]) == 240 and 0.9 < fit["r2"] <= 1.0
    assert (tmp_path / "fit.png").stat().st_size > 10_000
    text = cli("friction", str(csv))
    assert text.exit_code == 0 and "R^2" in text.output and "residuals" in text.output


@pytest.mark.parametrize("text, message", [
    ("direction,normal_force_N\nparallel,10\n", "missing column(s) drag_force_N"),
    ("direction,normal_force_N,drag_force_N\nparallel,-10,1.5\nperpendicular,10,6\nperpendicular,20,15\n",
     "a load must be > 0 N, got -10"),
    ("direction,normal_force_N,drag_force_N\nparallel,10,1.5\nperpendicular,10,6\nperpendicular,10,7\n",
     "has a single load level (10 N)"),
])
def test_bad_csv_is_named_on_the_command_line(tmp_path, text, message):
    csv = tmp_path / "bad.csv"
    csv.write_text(text)
    res = cli("friction", str(csv))
    assert res.exit_code == 2
    assert str(csv) in res.output and message in res.output


@pytest.mark.parametrize("args, message", [
    (["--loads", "5"], "give at least two load masses"),
    (["--loads", "5,x"], "expected comma-separated numbers"),
    (["--variant", "mini_eels_1_0"], "has no screws to drag"),
    (["--variant", "eels_9"], "unknown EELS variant 'eels_9'"),
    (["--speed-factor", "0"], "'--speed-factor': must be a finite number > 0"),  # click, when parsed
])
def test_bad_simulate_arguments_are_named(tmp_path, args, message):
    res = cli("simulate", "--out", str(tmp_path / "d.csv"), *args)
    assert res.exit_code == 2
    assert message in res.output


def test_friction_cli_warns_when_ev_is_below_one(tmp_path):
    """Across-thread drags lighter than along-thread ones (|e_v| = 0.6 + 0.001 F_n):
    the fit is printed and exits 0, with a warning on stderr and in the JSON."""
    p = load_contact_params("ice")
    line = type(p)(**{**p.to_dict(), "ev_a": 0.6, "ev_b": 0.001})
    csv = write_drag_csv(synthetic_drags(line, [20.0, 60.0, 100.0], n=2, noise=0.0, seed=1), tmp_path / "drags.csv")
    res = CliRunner().invoke(main, ["calibrate", "friction", str(csv)])
    assert res.exit_code == 0
    assert f"eels-gz: warning: {csv}: |e_v| = 0.6 + 0.001 F_n is 0.62 < 1 at F_n = 20 N" in res.output
    fit = json_of(cli("friction", str(csv), "--json"))
    assert len(fit["warnings"]) == 1 and "contradicts the screw model" in fit["warnings"][0]
    clean = write_drag_csv(synthetic_drags(p, [20.0, 60.0, 100.0], n=2, noise=0.0, seed=1), tmp_path / "ok.csv")
    res = CliRunner().invoke(main, ["calibrate", "friction", str(clean)])
    assert res.exit_code == 0 and "warning" not in res.output


def test_the_drag_rig_scenario_runs_on_its_own(tmp_path):
    """`eels-gz run --scenario drag_rig` as a user types it (default pose, load and direction): the rig's
    origin is the ground point under its screw (urdf/drag_rig.urdf.xacro), so the screw rests on the ice
    and the run ends ok. The z slide carries nothing but the load and the screw, so once settled the
    contact's mean normal force is their weight, (m_load + m_screw) g, to the steady state's round-off
    (1e-6 relative: measured 1e-13)."""
    from lxml import etree

    from eels_gz import registry
    from eels_gz.description.xacro_loader import process_xacro

    out = tmp_path / "run"
    res = CliRunner().invoke(main, ["run", "--scenario", "drag_rig", "--out", str(out), "--set", "log.mcap=false",
                                    "--set", "log.plot=false"])
    assert res.exit_code == 0, res.output
    summary = json.loads((out / "summary.json").read_text())
    metrics = json.loads((out / "metrics.json").read_text())
    assert summary["status"] == "ok", summary.get("message")
    entry = registry.robot("drag_rig")
    urdf = etree.fromstring(process_xacro(entry.path, entry.args(None)).encode())
    mass = sum(float(urdf.find(f"link[@name='{name}']/inertial/mass").get("value"))
               for name in ("carriage_z", "drag_screw_link"))
    g = 9.80665  # ice_plane's <gravity>
    assert metrics["samples"] > 0 and metrics["normal_force_N"] == pytest.approx(mass * g, rel=1e-6)
