"""Limits that used to "succeed" silently (issue 17 §3): the step against the duration and
against the screw contact's stability bound, a robot through the terrain or out of the world,
an infinite duration, a rover command beyond its motors, pose auto on terrain, the module count."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pytest
from faults_cli import SMALL, cli, summary

from eels_gz import config, registry
from eels_gz.contact.params import load_contact_params
from eels_gz.contact.stability import ScrewLoad, _dt_max, step_bounds
from eels_gz.paths import asset

REPO = Path(__file__).resolve().parents[2]


def test_a_step_longer_than_the_duration_is_refused(tmp_path):
    res = cli("run", *SMALL, "--dt", "0.5", "--duration", "0.1", "--out", tmp_path / "r")
    assert res.exit_code == 2 and "physics.dt = 0.5 s is longer than the duration 0.1 s" in res.output
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("value", ["inf", "nan", "-1"])
def test_a_duration_must_be_finite_and_positive(tmp_path, value):
    res = cli("run", *SMALL, "--duration", value, "--out", tmp_path / "r")
    assert res.exit_code == 2 and "'--duration': must be a finite number > 0" in res.output
    assert "Traceback" not in res.output


def _grows(a: float, c: float, dt: float, steps: int = 4000) -> bool:
    """The engine's semi-implicit Euler step under an explicit force F = -K x - C v (a = K/M,
    c = C/M): v += dt (-a x - c v), then x += dt v. Does a unit state grow tenfold?"""
    x, v = 1.0, 1.0 / dt
    for _ in range(steps):
        v += dt * (-a * x - c * v)
        x += dt * v
        if abs(x) > 10.0 or abs(v) * dt > 10.0:
            return True
    return False


@pytest.mark.parametrize("a, c", [(4e4, 1280.0), (1e6, 10.0), (0.0, 800.0)])
def test_the_stability_bound_is_where_the_explicit_step_starts_to_grow(a, c):
    """_dt_max solves dt^2 a + 2 dt c = 4 (and dt c = 2 for a pure damper), the Jury conditions of
    the step; checked against the recursion itself, 2 % either side of the bound."""
    bound = _dt_max(a, c)
    assert not _grows(a, c, 0.98 * bound)
    assert _grows(a, c, 1.02 * bound)


def test_the_shipped_contact_sets_allow_the_default_step():
    """Every EELS variant with screws, under each shipped set, at its static load: the default
    1 ms step is below every bound, and 4 ms is above at least one (1.5-2.9 ms)."""
    for name, v in registry.eels_variants().items():
        if not v.get("screws"):
            continue
        s = v["screw"]
        mass = v["tail"]["mass"] + v["n_modules"] * (v["yoke"]["mass"] + v["shell"]["mass"] + v["screws"] * s["mass"])
        load = ScrewLoad(s["mass"], s["root_radius"], s["radius"], s["lead_angle"],
                         9.81 * mass / (v["n_modules"] * v["screws"]))
        for params in sorted(f.stem for f in asset("config", "contact").glob("*.yaml")):
            bounds = step_bounds(load_contact_params(params), load)
            assert 1e-3 < min(bounds.values()) < 4e-3, (name, params, bounds)


def test_a_step_above_the_contact_bound_is_refused(tmp_path):
    res = cli("run", *SMALL, "--contact", "screw", "--dt", "0.004", "--duration", "0.1", "--out", tmp_path / "r")
    assert res.exit_code == 2 and "above the stability bound" in res.output and "ice.yaml" in res.output
    assert not (tmp_path / "r").exists()
    res = cli("run", *SMALL, "--contact", "screw", "--dt", "0.001", "--duration", "0.01", "--out", tmp_path / "r")
    assert res.exit_code == 0, res.output


def test_falling_through_the_ice_is_its_own_status(tmp_path):
    out = tmp_path / "r"
    res = cli("run", *SMALL, "--dt", "0.4", "--duration", "1", "--out", out)
    assert res.exit_code == 3, res.output
    assert "fell through terrain" in res.output and "inside the terrain" in res.output
    s = summary(out)
    assert s["status"] == "fell_through_terrain" and s["sim_time"] == pytest.approx(0.4)
    assert s["final_base_pose"]["position"][2] < -1.0


def _world(tmp_path, body: str) -> str:
    path = tmp_path / "w.sdf"
    path.write_text(f"""<?xml version="1.0"?>
<sdf version="1.9"><world name="w"><physics name="1ms" type="dart"><max_step_size>0.001</max_step_size></physics>
<gravity>0 0 -9.80665</gravity>{body}</world></sdf>
""")
    return str(path)


def test_leaving_the_world_is_its_own_status(tmp_path):
    world = _world(tmp_path, """<model name="ground"><static>true</static><link name="l"><pose>0 0 -0.05 0 0 0</pose>
<collision name="c"><geometry><box><size>2 2 0.1</size></box></geometry></collision></link></model>""")
    out = tmp_path / "r"
    res = cli("run", *SMALL, "--world", world, "--set", "robot.pose=[5, 0, 0.3, 0, 0, 0]", "--duration", "0.5",
              "--out", out)
    assert res.exit_code == 3, res.output
    assert summary(out)["status"] == "left_world" and "outside the world's static geometry" in res.output


def test_a_world_without_ground_runs_with_a_warning(tmp_path, caplog):
    world = _world(tmp_path, "<wind><linear_velocity>5 0 0</linear_velocity></wind>"
                             "<spherical_coordinates><latitude_deg>-70</latitude_deg></spherical_coordinates>")
    res = cli("run", *SMALL, "--world", world, "--duration", "0.05", "--out", tmp_path / "r")
    assert res.exit_code == 0, res.output
    assert "has no static collision geometry" in caplog.text
    assert summary(tmp_path / "r")["final_base_pose"]["position"][2] < 0.09  # it falls, as it should


def test_a_rover_command_beyond_its_motors(tmp_path):
    res = cli("rover", "drive", "--path", "straight", "--speed", "100", "--out", tmp_path)
    assert res.exit_code == 2 and "beyond the drive motors' limit of 5.97 rad/s" in res.output
    assert not list(tmp_path.glob("*.json"))
    # a mean rate within the limit whose outer wheels would pass it on a curve is scaled, and says so
    res = cli("rover", "drive", "--path", "quarter_circle", "--speed", "5.9", "--scale", "0.05", "--out", tmp_path,
              "--json")
    assert res.exit_code == 0, res.output
    record = json.loads((tmp_path / "archimede_quarter_circle_5.9_ice_plane.json").read_text())
    (sat,) = record["saturated"]
    assert sat["segment"] == 1 and 0.8 < sat["factor"] < 1.0
    assert record["status"] == "ok"


def _prepared(**overrides):
    from eels_gz.run.resolve import resolve_run
    from eels_gz.run.runner import prepare

    return prepare(resolve_run(config.resolve(overrides=overrides)))


def test_pose_auto_puts_a_rover_on_a_dem():
    from eels_gz.description.xacro_loader import load_description
    from eels_gz.rover.resting_pose import CONTACT_TOL, RoverKinematics, surface_distance

    prep = _prepared(robot={"name": "archimede"}, world="mars_dem")
    assert prep.settings["resolved"]["auto_pose"] == "rover placement"
    skel = prep.sim.robot_skeleton
    kin = RoverKinematics(load_description(registry.robot("archimede").path).model)
    centres = np.array([skel.getBodyNode(f"{w}_wheel_link").getWorldTransform().translation() for w in kin.names])
    gaps = surface_distance(prep.terrain, centres, kin.radius) - kin.radius
    assert np.all(np.abs(gaps - 1e-3) < CONTACT_TOL + 1e-3), gaps  # every wheel on the ground, none 1 m up


def test_pose_auto_puts_eels_on_a_hill_not_in_it(tmp_path):
    from eels_gz.dart.dart_build import collision_box_corners

    res = cli("world", "dem", REPO / "examples" / "site.tif", "--name", "site", "--out", tmp_path)
    assert res.exit_code == 0, res.output
    os.environ["GZ_SIM_RESOURCE_PATH"] = str(tmp_path / "models")
    try:
        prep = _prepared(robot={"name": "eels_1_0_front_only", "n_modules": 2}, world=str(tmp_path / "worlds" /
                                                                                        "site.sdf"))
    finally:
        del os.environ["GZ_SIM_RESOURCE_PATH"]
    skel = prep.sim.robot_skeleton
    d, _ = prep.terrain.query(collision_box_corners(skel))
    assert float(np.min(d)) == pytest.approx(1e-3, abs=1e-4)  # the lowest point 1 mm above the terrain
    origins = np.array([skel.getBodyNode(i).getWorldTransform().translation() for i in range(skel.getNumBodyNodes())])
    assert np.all(prep.terrain.query(origins)[0] > 0)  # every body out of the hill
    assert origins[0, 2] > 4.5  # on the 5 m hilltop, where the flat rule left it at z = 0.09 inside the hill


@pytest.mark.parametrize("n, message", [("101", "above the limit of 100 modules"),
                                        ("0", "whole number >= 1"),
                                        ("four", "'four' is not a valid integer")])
def test_the_module_count_has_a_stated_limit(tmp_path, n, message):
    res = cli("run", "--n-modules", n, "--out", tmp_path / "r")
    assert res.exit_code == 2 and message in res.output and "recursion" not in res.output
    assert math.isfinite(registry.MAX_MODULES)


def _static_loads():
    for name, v in registry.eels_variants().items():
        if v.get("screws"):
            s = v["screw"]
            module = v["yoke"]["mass"] + v["shell"]["mass"] + v["screws"] * s["mass"]
            mass = v["tail"]["mass"] + v["n_modules"] * module
            yield name, ScrewLoad(s["mass"], s["root_radius"], s["radius"], s["lead_angle"],
                                  9.81 * mass / (v["n_modules"] * v["screws"]))


@pytest.mark.parametrize("ev", [300.0, 1000.0])
def test_a_stiff_ev_is_not_refused_and_a_stiff_bristle_along_the_thread_is(tmp_path, ev):
    """Issue 33: the friction across the thread is implicit, so |e_v| sets no bound (it was 0.757 ms at
    |e_v| = 300 on the explicit step); the bristle along the thread is still explicit, and a bristle
    100 times shorter than the default's (10 um) is refused with the message that names it."""
    ice = load_contact_params("ice")
    stiff = ice.__class__(**{**ice.to_dict(), "ev_a": ev, "ev_b": 0.0})
    short = ice.__class__(**{**ice.to_dict(), "stick_length": 1e-5})
    for name, load in _static_loads():
        assert min(step_bounds(stiff, load).values()) > 1e-3, name
        bounds = step_bounds(short, load)
        assert bounds["stick-slip bristle"] < 1e-3, (name, bounds)
    res = cli("run", *SMALL, "--contact", "screw", "--set", f"contact.ev_a={ev}", "--duration", "0.01",
              "--out", tmp_path / "a")
    assert res.exit_code == 0, res.output
    res = cli("run", *SMALL, "--contact", "screw", "--set", "contact.stick_length=1e-5", "--duration", "0.01",
              "--out", tmp_path / "b")
    assert res.exit_code == 2 and "above the stability bound" in res.output and "stick-slip bristle" in res.output
