"""Scenario ``hang`` with EELS 1.5: the robot hangs head up from a stiff
tether at its front module, joints held by PID. In equilibrium each
force-torque sensor carries the links below it:

- force: m_below g, upward, where m_below is the mass of every body on the
  parent side of the sensor joint (from the simulated model, whose masses come
  from the xacro), within the issue's 1 %;
- torque about the sensor origin balances gravity on those bodies:
  tau = (c_below - o) x F, with c_below their centre of mass.

Settling. Hung from one point the robot is a pendulum nothing damps (the
tether damps only its own stretch): started with its centre of mass 6.5 mm
off the anchor's vertical it swings +-6.5 mm with a 2.6 s period for ever,
and the sensors see the swing's inertial torque (1e-2 N m). So the test
first settles it as the placement algorithm does, with a settling aid: a
drag -GAMMA m v on its centre of mass (near critical for that pendulum)
until every velocity is below STILL, then lets go and waits until it is
still again before it measures. It is never quite still: the tether reads
its link's pose and velocity as gz-sim reports them, only once the link has
moved 1 um (eels_gz/gzapi/reported_links.py), so it pulls and damps with a
state up to 1 um old and keeps the robot moving at 1e-4 m/s and rad/s.

Torque, derived. Newton-Euler for the bodies below (nothing but gravity and
the sensor joint acts on them): F = -m g + sum m_i a_i and
tau + (c - o) x m g = sum (r_i - o) x m_i a_i + I_i alpha_i + w_i x I_i w_i
=: H, so tau - (c - o) x F = D := H - (c - o) x sum m_i a_i, the inertial
moment of the residual motion, computed from the bodies' accelerations and
rates as the engine reports them. The test asserts tau - (c - o) x F - D
within a rounding floor of 1e-9 |F| L (L the robot's length): a lever arm
wrong by 0.1 mm across the 170-500 N forces, or any wrong body set, frame or
sign, fails. (D is 5e-4 to 1e-2 N m, under 1 % of the torques.)

Also: tethers follow their documented law, and bad tether entries are refused."""

from __future__ import annotations

import math

import numpy as np
import pytest

import yaml

from eels_gz import config, registry
from eels_gz.errors import ConfigError
from eels_gz.run.resolve import resolve_run
from eels_gz.run.runner import prepare
from eels_gz.dart.sensors import HostSensors
from eels_gz.errors import PluginError
from eels_gz.snake.tethers import parse_tethers

FORCE_TOL = 0.01  # the 1 %
GAMMA = 6.0  # 1/s, settling drag on the centre of mass: the pendulum (2.6 s period) near critically damped
STILL = 1e-3  # rad/s and m/s: every generalized velocity below this is "still" (module docstring)
SETTLE_MAX_S = 15.0  # s of settling before the test gives up
ROUNDING = 1e-9  # relative floor of the torque bound


def _hang():
    cfg = config.resolve(overrides={"robot": {"name": "eels_1_5", "pose": [0, 0, 2.0, 0, -math.pi / 2, 0]},
                                    "scenario": "hang"})
    return prepare(resolve_run(cfg)).sim


def _subtree(body) -> set[str]:
    out, todo = set(), [body]
    while todo:
        b = todo.pop()
        out.add(b.getName())
        todo += [b.getChildBodyNode(i) for i in range(b.getNumChildBodyNodes())]
    return out


def _still(skel) -> bool:
    return float(np.abs(skel.getVelocities()).max()) < STILL


def _settle(sim) -> float:
    """Step with the settling drag until still, let go, step until still again; the time taken (s)."""
    skel = sim.robot_skeleton
    base, mass = skel.getBodyNode(0), skel.getMass()
    drag = [True]

    def aid(info, ecm):
        if drag[0]:  # -GAMMA m v_com at the centre of mass, through the base
            T = base.getWorldTransform()
            offset = T.rotation().T @ (skel.getCOM() - T.translation())
            base.addExtForce(-GAMMA * mass * skel.getCOMLinearVelocity(), offset, False, True)

    sim.add_pre_update(aid)
    for phase in (0, 1):
        steps = 0
        while steps < 500 or not _still(skel):  # at least 0.5 s per phase
            sim.step()
            steps += 1
            assert sim.time < SETTLE_MAX_S, \
                f"not still after {sim.time:.1f} s: max |dq| {np.abs(skel.getVelocities()).max():.2e}"
        drag[0] = False
    return sim.time


@pytest.fixture(scope="module")
def hung():
    sim = _hang()
    sensors = HostSensors(sim, noise=False)
    _settle(sim)
    skel = sim.robot_skeleton
    bodies = [skel.getBodyNode(i) for i in range(skel.getNumBodyNodes())]
    length = float(np.ptp([b.getCOM() for b in bodies], axis=0).max())
    data = {}
    for s in (s for s in sensors.sensors if type(s).__name__ == "ForceTorque"):
        f, m = s.measure()
        T = s.child.getWorldTransform().matrix()
        R, o = T[:3, :3], T[:3, 3]
        below = [b for b in bodies if b.getName() not in _subtree(s.child)]
        mass = sum(b.getMass() for b in below)
        com = sum(b.getMass() * b.getCOM() for b in below) / mass
        F = R @ f
        # the inertial moment D of the residual motion (module docstring), from the bodies' own motion
        H, P = np.zeros(3), np.zeros(3)
        for b in below:
            Rb = b.getWorldTransform().rotation()
            inertia = Rb @ b.getInertia().getMoment() @ Rb.T
            w, a = np.asarray(b.getAngularVelocity()), np.asarray(b.getCOMLinearAcceleration())
            H += (np.cross(b.getCOM() - o, b.getMass() * a) + inertia @ b.getAngularAcceleration()
                  + np.cross(w, inertia @ w))
            P += b.getMass() * a
        D = H - np.cross(com - o, P)
        data[s.name] = {"force": F, "torque": R @ m, "lever": np.cross(com - o, F), "mass": mass, "inertial": D,
                        "floor": ROUNDING * np.linalg.norm(F) * length}
    return sim, data


def test_each_fts_force_is_the_weight_below(hung):
    sim, data = hung
    g = np.asarray(sim.world.getGravity(), dtype=float)
    assert len(data) == 3
    for name, d in data.items():
        expected = -d["mass"] * g  # the upper part holds the lower part up
        assert np.linalg.norm(d["force"] - expected) <= FORCE_TOL * np.linalg.norm(expected), (name, d, expected)


def test_each_fts_torque_matches_the_static_lever_arm(hung):
    _, data = hung
    for name, d in data.items():
        error = np.linalg.norm(d["torque"] - d["lever"] - d["inertial"])
        assert error <= d["floor"], (name, d)
        # nearly still: the residual motion's moment is under 2 % of the torque
        assert np.linalg.norm(d["inertial"]) < 2e-2 * np.linalg.norm(d["torque"]), (name, d)


def _tether_system(sim):
    return next(s.system for s in sim.systems if s.module == "tethers")


def test_tether_law():
    sim = _hang()
    tset = _tether_system(sim)
    t = tset.tethers[0]
    force, moment = tset.wrenches(sim.ecm)
    assert np.allclose(force[0], 0.0)  # anchored where it starts, at rest: no stretch
    anchor = tset.anchor[0].copy()
    tset.anchor[0] = anchor + np.array([0.0, 0.0, 0.01])  # anchor 1 cm higher
    force, moment = tset.wrenches(sim.ecm)
    assert np.allclose(force[0], [0.0, 0.0, t.stiffness * 0.01])  # pulled up by k s
    # at the attachment point: the moment about the link origin is its lever arm across the force
    pos, rot, _, _ = gz_compat().link_world_states(sim.ecm, tset.links)
    assert np.allclose(moment[0], np.cross(rot[0] @ tset.point[0], force[0]), atol=1e-9)
    tset.anchor[0] = anchor - np.array([0.0, 0.0, 0.01])
    tset.kcl[0, 2] = 0.02  # a rest length of 2 cm: the point is 1 cm from its anchor
    force, _ = tset.wrenches(sim.ecm)
    assert np.allclose(force[0], 0.0)  # within its rest length a tether does not push


def gz_compat():
    import gz_compat as module

    return module


@pytest.mark.parametrize("items, match", [
    ({"link": "x"}, "must be a list"),
    ([{"stiffness": 1.0}], "at least 'link'"),
    ([{"link": "a", "stiffness": -1.0}], "stiffness > 0"),
    ([{"link": "a", "stiffness": 1.0, "anchor": [0, 0]}], "'anchor' must be 3 finite numbers"),
    ([{"link": "a", "stiffness": 1.0, "rope": 1}], "unknown keys"),
])
def test_bad_tethers(items, match):
    with pytest.raises(ConfigError, match=match):
        parse_tethers(items, "hang.yaml")


def test_tether_on_unknown_link(tmp_path, monkeypatch):
    scenario = config.load_yaml(registry.scenario_path("hang"))
    scenario["tethers"][0]["link"] = "no_link"
    path = tmp_path / "hang.yaml"
    path.write_text(yaml.safe_dump(scenario))
    monkeypatch.setattr(registry, "scenario_path", lambda name: path)
    cfg = config.resolve(overrides={"robot": {"name": "eels_1_5"}, "scenario": {"name": "hang"}})
    with pytest.raises(PluginError, match="'no_link' is not a link of the robot"):
        prepare(resolve_run(cfg))


def test_tethers_need_the_tethers_system():
    """A scenario's tethers: are applied by the tethers system; without it in systems: they would be
    silently dropped, so the scenario is refused, naming the system."""
    from eels_gz.scenarios.plugin_elements import scenario_plugins

    scenario = config.load_yaml(registry.scenario_path("hang"))
    scenario["systems"] = []
    with pytest.raises(ConfigError, match="add it to 'systems:'"):
        scenario_plugins("hang", scenario, robot="eels_1_5", description_file="r.urdf", world_file="w.sdf",
                         source="hang.yaml")
    scenario["systems"] = ["tethers"]
    (plugin,) = scenario_plugins("hang", scenario, robot="eels_1_5", description_file="r.urdf",
                                 world_file="w.sdf", source="hang.yaml")
    assert plugin.count("<tether ") == len(scenario["tethers"]) and 'link="module_8_shell"' in plugin


def test_a_tether_on_a_merged_link_acts_on_the_link_that_carries_it():
    """A link lumped into its parent across a fixed joint (gz-sim's URDF import does it; so does the
    host's optimizer: EELS 1.5's avionics_box into module_4_yoke) is followed through the URDF's fixed
    joints (urdf_tree.fixed_carrier): its tether pulls the carrier at the same point, which the
    optimizer's own frame map places independently."""
    from eels_gz.snake.tethers import Tether

    sim = _hang()
    tset = _tether_system(sim)
    frame = sim.robot_frames["avionics_box"]
    assert frame.body == "module_4_yoke"
    p = np.array([0.01, 0.02, 0.03])
    p_carrier = (frame.pose @ np.r_[p, 1.0])[:3]
    anchor = (0.3, -0.2, 3.0)
    tset.setup(sim.ecm, [Tether("avionics_box", tuple(p), anchor, 1000.0, 0.0),
                         Tether("module_4_yoke", tuple(p_carrier), anchor, 1000.0, 0.0)],
               sim.robot_source_urdf, "test")
    assert tset.links[0].entity() == tset.links[1].entity()
    force, moment = tset.wrenches(sim.ecm)
    assert np.linalg.norm(force[0]) > 100.0
    np.testing.assert_allclose(force[0], force[1], rtol=0, atol=1e-9)
    np.testing.assert_allclose(moment[0], moment[1], rtol=0, atol=1e-9)


# The run's tether force against the weight. The tether (k = 1e5 N/m, c = 2e3 N s/m, about 65 kg)
# bounces with damping ratio 0.38 at 38 rad/s, gone by a factor e^-14 a second after the start, so
# the mean over the steps after settle_time (1 s) is m (g + the mean vertical acceleration of the
# centre of mass); the undamped pendulum (6.5 mm, 2.6 s) changes the vertical force by about
# m g (6.5 mm / 1.7 m)^2 ~ 1.5e-5 m g, and the joints held by their PIDs move the centre of mass by
# a fraction of a millimetre. 1e-3 of the weight bounds all of it by an order of magnitude; a
# force counted twice, a wrong mass or a sign fails by far more.
WEIGHT_TOL = 1e-3


def test_a_hang_run_reports_the_tether_carrying_the_weight(tmp_path):
    import json

    from eels_gz.run.runner import run

    cfg = config.resolve(overrides={"robot": {"name": "eels_1_5"}, "scenario": "hang", "sensors": {"enabled": False},
                                    "log": {"mcap": False, "plot": False}})
    skeleton_mass = _hang().robot_skeleton.getMass()
    summary = run(cfg, tmp_path)
    assert summary["status"] == "ok"
    m = json.loads((tmp_path / "metrics.json").read_text())
    assert m["scenario"] == "hang" and m["settle_time_s"] == 1.0
    assert m["robot_mass_kg"] == pytest.approx(skeleton_mass, rel=1e-9)  # the URDF's masses, as DART has them
    assert m["weight_n"] == pytest.approx(skeleton_mass * 9.81, rel=1e-3)  # the world's gravity, 9.81 m/s^2
    assert abs(m["tether_force_over_weight"] - 1.0) < WEIGHT_TOL, m
    assert len(m["tether_tension_n"]) == 1 and m["tether_tension_n"][0] == pytest.approx(m["weight_n"], rel=WEIGHT_TOL)
    assert m["final_base_position"][2] > 0.5  # still hanging, the tail well above the ice


def test_hang_needs_a_settle_time():
    from eels_gz.scenarios.hang import check_params

    for bad in (None, -1.0, "1", True):
        with pytest.raises(ConfigError, match="params.settle_time must be a number of seconds >= 0"):
            check_params({} if bad is None else {"settle_time": bad})
    check_params({"settle_time": 0.0})
