"""Scenario ``hang`` with EELS 1.5: the robot hangs head up from a stiff
tether at its front module, joints held by PID. In equilibrium each
force-torque sensor carries the links below it:

- force: m_below g, upward, where m_below is the mass of every body on the
  parent side of the sensor joint (from the simulated model, whose masses come
  from the xacro), within the issue's 1 %;
- torque about the sensor origin balances gravity on those bodies:
  tau = (c_below - o) x F, with c_below their centre of mass.

Also: tethers follow their documented law, and bad tether entries are refused."""

from __future__ import annotations

import math

import numpy as np
import pytest

from eels_gz import config
from eels_gz.errors import ConfigError
from eels_gz.host.runner import prepare
from eels_gz.host.sensors import HostSensors
from eels_gz.host.tethers import TetherSet, parse_tethers

SETTLE_STEPS = 2000  # 2 s at 1 ms: the tether's bounce is damped out (hang.yaml)
AVERAGE_STEPS = 200  # the residual swing averages out over 0.2 s
FORCE_TOL = 0.01  # the 1 %


def _hang():
    cfg = config.resolve(overrides={"robot": {"name": "eels_1_5", "pose": [0, 0, 2.0, 0, -math.pi / 2, 0]},
                                    "scenario": "hang"})
    return prepare(cfg).sim


def _subtree(body) -> set[str]:
    out, todo = set(), [body]
    while todo:
        b = todo.pop()
        out.add(b.getName())
        todo += [b.getChildBodyNode(i) for i in range(b.getNumChildBodyNodes())]
    return out


@pytest.fixture(scope="module")
def hung():
    sim = _hang()
    sensors = HostSensors(sim, noise=False)
    for _ in range(SETTLE_STEPS):
        sim.step()
    fts = [s for s in sensors.sensors if type(s).__name__ == "ForceTorque"]
    sums = {s.name: [np.zeros(3), np.zeros(3), np.zeros(3), np.zeros(3)] for s in fts}
    for _ in range(AVERAGE_STEPS):
        sim.step()
        for s in fts:
            f, m = s.measure()
            T = s.child.getWorldTransform().matrix()
            R, o = T[:3, :3], T[:3, 3]
            below = [sim.robot_skeleton.getBodyNode(i) for i in range(sim.robot_skeleton.getNumBodyNodes())
                     if sim.robot_skeleton.getBodyNode(i).getName() not in _subtree(s.child)]
            mass = sum(b.getMass() for b in below)
            com = sum(b.getMass() * b.getCOM() for b in below) / mass
            acc = sums[s.name]
            acc[0] += R @ f
            acc[1] += R @ m
            acc[2] += np.cross(com - o, R @ f)
            acc[3] += np.array([mass, 0, 0])
    return sim, {k: [v / AVERAGE_STEPS for v in vals] for k, vals in sums.items()}


def test_each_fts_force_is_the_weight_below(hung):
    sim, data = hung
    g = np.asarray(sim.world.getGravity(), dtype=float)
    assert len(data) == 3
    for name, (f_world, _, _, m) in data.items():
        expected = -m[0] * g  # the upper part holds the lower part up
        assert np.linalg.norm(f_world - expected) <= FORCE_TOL * np.linalg.norm(expected), (name, f_world, expected)


def test_each_fts_torque_matches_the_lever_arm(hung):
    _, data = hung
    for name, (f_world, tau_world, lever, m) in data.items():
        # tolerance: 1 % of |F| times the arm length scale (1 m), as for the force
        assert np.linalg.norm(tau_world - lever) <= FORCE_TOL * np.linalg.norm(f_world) * 1.0, (name, tau_world, lever)


def test_tether_law():
    sim = _hang()
    (tset,) = [cb.__self__ for cb in sim._pre if isinstance(getattr(cb, "__self__", None), TetherSet)]
    t, body, p_body, anchor = tset.attached[0]
    assert np.allclose(tset.forces()[0], 0.0)  # anchored where it starts, at rest: no stretch
    tset.attached[0] = (t, body, p_body, anchor + np.array([0.0, 0.0, 0.01]))  # anchor 1 cm higher
    assert np.allclose(tset.forces()[0], [0.0, 0.0, t.stiffness * 0.01])  # pulled up by k s
    tset.attached[0] = (t, body, p_body, anchor - np.array([0.0, 0.0, 0.01]))
    slack = TetherSet.__new__(TetherSet)
    slack.attached = [(type(t)(t.link, t.point, None, t.stiffness, t.damping, length=0.02), body, p_body,
                       anchor - np.array([0.0, 0.0, 0.01]))]
    assert np.allclose(slack.forces()[0], 0.0)  # within its rest length a tether does not push


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


def test_tether_on_unknown_link():
    sim = _hang()
    with pytest.raises(ConfigError, match="tether link 'no_link' is not a link"):
        TetherSet(sim, parse_tethers([{"link": "no_link", "stiffness": 1.0}], "x.yaml"), "x.yaml")
