"""plugins_py/joint_coupling.py holds a rover's differential where the engine drops <mimic>.

Gazebo's DART (gz-physics 7) creates no mimic constraint, so the host is run
here the way Gazebo would run the rover: Archimede's URDF without its
``<mimic>``, the body started 0.1 rad off the relation. With the coupling
system the legs come back to q_r = -q_l within the static bound of
config/rover_control.yaml (the body's weight 2 cm above its pivots over the
stiffness); without it nothing restores the relation. The host's default
(``physics.mimic: none``) does the same with ``<mimic>`` kept, as gz-sim does;
with ``physics.mimic: exact`` (the host enforces it exactly) the system
changes nothing.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import yaml
from lxml import etree

from eels_gz import registry
from eels_gz.control.coupling import CouplingGains, coupling_torques
from eels_gz.description.assemble import robot_description
from eels_gz.dart.simulation import RobotSpec, Simulation
from eels_gz.paths import asset

GAINS = yaml.safe_load(asset("config", "rover_control.yaml").read_text())["differential"]


def _description(mimic: bool, coupling: bool):
    desc = robot_description(registry.robot("archimede"), gazebo=True)
    root = etree.fromstring(desc.urdf.encode())
    if not mimic:
        for m in root.iter("mimic"):
            m.getparent().remove(m)
    blocks = [b for b in desc.gazebo if coupling or b.findtext("plugin/module_name") != "joint_coupling"]
    return dataclasses.replace(desc, urdf=etree.tostring(root, encoding="unicode"), gazebo=blocks)


def _settle(mimic: bool, coupling: bool, steps: int = 1000, tilt: float = 0.0, host_mimic: str = "none"):
    """Run Archimede on the ice for ``steps``, the body started ``tilt`` rad off its legs' mean; ``mimic``:
    the URDF keeps its ``<mimic>``; ``host_mimic``: the host's ``physics.mimic``."""
    sim = Simulation(registry.world_path("ice_plane"), RobotSpec("archimede", _description(mimic, coupling)),
                     mimic=host_mimic)
    skel = sim.robot_skeleton
    if tilt:  # both legs turned the same way relative to the body: the body pitched between them
        for name in ("left_leg_joint", "right_leg_joint"):
            skel.getJoint(name).setPosition(0, tilt)
    errors = []
    for _ in range(steps):
        sim.step()
        errors.append(skel.getJoint("right_leg_joint").getPosition(0) + skel.getJoint("left_leg_joint").getPosition(0))
    T = skel.getRootBodyNode().getWorldTransform().matrix()
    return np.array(errors), T, [s.module for s in sim.systems]


def test_the_law_is_a_constraint_force_on_the_error():
    g = CouplingGains(500.0, 5.0)
    tau_l, tau_f = coupling_torques(np.array([0.1]), np.array([0.0]), np.array([-0.08]), np.array([0.0]),
                                    np.array([-1.0]), np.array([0.0]), g)
    # e = -0.08 - (-1)(0.1) = 0.02: the follower is pushed back by k e, the leader by -m times that
    assert tau_f[0] == pytest.approx(-10.0) and tau_l[0] == pytest.approx(-10.0)


def test_coupling_holds_the_differential_without_mimic():
    errors, T, systems = _settle(mimic=False, coupling=True, tilt=0.05)
    assert abs(errors[0]) > 0.05  # started 0.1 rad off the relation
    assert "joint_coupling" in systems
    bound = 1.61 * 9.81 * 0.02 / GAINS["stiffness"]  # the body's weight 2 cm above its pivots over k
    assert np.abs(errors[-200:]).max() < bound  # at rest: within the static bound


def test_without_coupling_or_mimic_the_differential_is_free():
    """The control case: nothing restores the relation, the body swings between its legs."""
    errors, _, _ = _settle(mimic=False, coupling=False, tilt=0.05)
    bound = 1.61 * 9.81 * 0.02 / GAINS["stiffness"]
    assert np.abs(errors[-200:]).max() > 10 * bound


def test_with_mimic_enforced_the_coupling_changes_nothing():
    _, T_with, _ = _settle(mimic=True, coupling=True, steps=300, host_mimic="exact")
    _, T_without, _ = _settle(mimic=True, coupling=False, steps=300, host_mimic="exact")
    assert np.abs(T_with - T_without).max() < 1e-6


@pytest.mark.parametrize("coupling", [True, False])
def test_by_default_the_host_drops_mimic_as_gz_sim_does(coupling):
    """physics.mimic none: a URDF that keeps its <mimic> runs exactly as one without it (gz-physics 7's
    DART plugin creates no mimic constraint), so the pair is the coupling system's alone, and free
    without it."""
    kept, T_kept, _ = _settle(mimic=True, coupling=coupling, steps=300, tilt=0.05)
    dropped, T_dropped, _ = _settle(mimic=False, coupling=coupling, steps=300, tilt=0.05)
    assert np.array_equal(kept, dropped) and np.array_equal(T_kept, T_dropped)
