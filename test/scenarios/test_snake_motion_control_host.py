"""Screw motion control (NEO Eq. 5) in closed loop in the host (issue 8).

Robot and shape. EELS 1.0 front-only (one screw per module, no pairs: the
robot of NEO's field tests; a pair makes a yaw couple and drives only along
its axis) lies on ``ice_plane`` in a crescent of CRESCENT rad (0.4 rad per
bend joint, inside the 0.7 rad limit). Why so curved: each screw gives one
no-slip row, and the planar twist (vx, vy, wz of the tail) is determined by
how much the screw axes differ in direction. The placement crescent of
config/snake.yaml (1.2 rad) has a scaled condition number of ~11, and the
across-thread slip that the along-blade friction forces need (~1/|e_v| of
the blade speed) is amplified by it into 10-20 % twist errors; at 4 rad the
condition number is ~3 and forward, sideways and yaw are all driven.

Contact. ``config/contact/ice_regulated.yaml`` (the regulated law) with
``|e_v| = EV`` at every load and ``v_eps = V_EPS``: NEO's kinematic
assumption, screws that do not slip across their threads, is what this test
checks the controller under (the default ice's |e_v| of 3-12 is the
leader_follower figures' subject, docs/scenarios.md). The default's bristle
law is not used here: its stick spring across the thread, mu |e_v| F_n / z0,
is 100 times stiffer at |e_v| = 300 and past the explicit step's bound on
the screw spin (the robot shakes, errors of 100-200 %). Stability of the explicit step sets ``v_eps``: across the
blade the friction acts as a viscous damper on the screw's spin of
``c = mu |e_v| F_n (r sin a)^2 / v_eps`` (N m s); with the heaviest screw's
F_n = 170 N, r = 0.09 m, a = 0.35 rad and mu = 0.15 that is 4.8 N m s at
|e_v| = 300, v_eps = 1.5 m/s, and ``dt (c + p) / I = 0.001 (4.8 + 4) / 5.3e-3
= 1.7 < 2`` with the screw PI's p = 4 N m s/rad and the spin inertia
5.3e-3 kg m^2 (config/contact/ice.yaml's sizing). ``v_eps`` scales the
friction's magnitude, not its direction, so the kinematic limit (no slip
across the blades) is unchanged.

Loop. Every CONTROL_PERIOD the rates come from ``ScrewMotionController.solve``
on the current joint angles and the screws the contact plugin reports loaded
(:class:`eels_gz.scenarios.screw_drive.ScrewDrive`), sent as velocity set
points. The achieved average twist over DRIVE s is ``log(T0^-1 T1) / DRIVE``
of the tail poses.

Tolerance (the issue's 10 %). A twist is compared through the in-plane
velocities it gives the module points (tail end, bend joints, head end):
the RMS over those points of the velocity error, relative to the RMS of the
commanded velocities. That weighs a yaw error by the lever arms it acts
over, in m/s like the linear parts. The residual comes from the finite
|e_v| (across slip ~ F_along / (mu |e_v| F_n) of the blade speed) times the
conditioning, a few per cent.
"""

from __future__ import annotations

import numpy as np
import pytest
import yaml

from eels_gz import config
from eels_gz.run.resolve import resolve_run
from eels_gz.run.runner import prepare
from eels_gz.paths import asset
from eels_gz.scenarios.screw_drive import ScrewDrive, body_twist_between
from snake_probe import SnakeHost  # test helper: the robot read from the engine (test/scenarios/snake_probe.py)
from eels_gz.snake.settling import crescent_shape, straight_shape

CRESCENT = 4.0  # rad, total bend
EV, V_EPS = 300.0, 1.5  # |e_v| (ev_b = 0) and the regulator speed (m/s), module docstring
SETTLE = 1.0  # s: the shape settles on the ice, screws still
DRIVE = 5.0  # s: the averaging time
CONTROL_PERIOD = 0.01  # s
TOL = 0.10  # the 10 %
TWISTS = {  # tail body twists (v, w), m/s and rad/s: forward, sideways, yaw
    "forward": [0.05, 0.0, 0.0, 0.0, 0.0, 0.0],
    "sideways": [0.0, 0.03, 0.0, 0.0, 0.0, 0.0],
    "yaw": [0.0, 0.0, 0.0, 0.0, 0.0, 0.03],
}


def stiff_params(folder) -> str:
    p = yaml.safe_load(asset("config", "contact", "ice_regulated.yaml").read_text())
    p.update(ev_a=EV, ev_b=0.0, v_eps=V_EPS)
    path = folder / "contact_stiff.yaml"
    path.write_text(yaml.safe_dump(p))
    return str(path)


def new_robot(params: str, shape: str):
    cfg = config.resolve(overrides={"contact": {"model": "screw", "params": params},
                                    "sensors": {"enabled": False}})
    sim = prepare(resolve_run(cfg)).sim
    snake = SnakeHost(sim, "motion control test")
    q = crescent_shape(snake.chain, CRESCENT) if shape == "crescent" else straight_shape(snake.chain)
    snake.place(snake.base_pose(), q)
    while sim.time < SETTLE - 1e-9:
        sim.step()
    return sim, snake


def drive(params: str, twist, shape: str = "crescent") -> dict:
    sim, snake = new_robot(params, shape)
    screws = ScrewDrive(snake, period=CONTROL_PERIOD)
    T0, t0 = snake.base_pose(), sim.time
    points = snake.chain.module_points(snake.angles())  # tail frame
    while sim.time < t0 + DRIVE - 1e-9:
        screws.update(sim.time, np.asarray(twist, float))
        sim.step()
    return {"twist": body_twist_between(T0, snake.base_pose(), sim.time - t0), "points": points,
            "drive": screws, "moved": np.linalg.norm(snake.base_pose()[:3, 3] - T0[:3, 3])}


def planar_point_error(achieved, commanded, points) -> float:
    """RMS in-plane velocity error of the module points over their RMS commanded speed (module docstring)."""
    def velocities(xi):
        xi = np.asarray(xi, float)
        return (xi[:3] + np.cross(xi[3:], points))[:, :2]

    def planar(xi):
        return np.array([xi[0], xi[1], 0.0, 0.0, 0.0, xi[5]])

    err = velocities(planar(achieved) - planar(commanded))
    ref = velocities(planar(commanded))
    return float(np.sqrt((err ** 2).sum(axis=1).mean() / (ref ** 2).sum(axis=1).mean()))


@pytest.fixture(scope="module")
def params(tmp_path_factory):
    return stiff_params(tmp_path_factory.mktemp("stiff_contact"))


@pytest.mark.parametrize("name", list(TWISTS))
def test_commanded_twist_is_achieved_within_10_percent(params, name):
    run = drive(params, TWISTS[name])
    xi = run["twist"]
    err = planar_point_error(xi, TWISTS[name], run["points"])
    assert err <= TOL, f"{name}: achieved {np.round(xi, 4).tolist()}, error {err:.3f}"
    # the crescent is well conditioned throughout: never reported singular
    assert run["drive"].singular == 0 and run["drive"].updates >= DRIVE / CONTROL_PERIOD - 1
    # out of the commanded plane the robot stays on the ice: roll and pitch rates
    # below 5 % of a rad over the run (the shape's small settling)
    assert abs(xi[3]) * DRIVE < 0.05 and abs(xi[4]) * DRIVE < 0.05


def test_straight_robot_is_reported_singular_and_not_driven(params):
    """The pencil: ten parallel, collinear screw axes give two independent rows
    for (vx, vy, wz) (the row of a screw at x_k is (cos a, -sin a, -x_k sin a):
    vy and wz only through vy + x_k wz); the controller reports it every update and stops the
    screws (rates exactly 0), so the robot stays where it settled."""
    run = drive(params, TWISTS["sideways"], shape="straight")
    d = run["drive"]
    assert d.singular == d.updates > 0
    # the settled robot is straight to the joint controllers' error: rank 3 but
    # far past condition_max, or rank deficient
    assert not d.last.ok and "pencil" in d.last.message
    assert d.last.rank < 3 or d.last.condition > d.controller.condition_max
    assert all(r == 0.0 for r in d.last.rates.values())
    # 5 s of the commanded 0.03 m/s would be 0.15 m; stopped screws leave the
    # creep of the settling shape (the regulator with v_eps = 1.5 m/s has no
    # static friction; measured 1.7 cm): below a fifth of the commanded travel
    assert run["moved"] < 0.2 * np.linalg.norm(TWISTS["sideways"][:3]) * DRIVE
