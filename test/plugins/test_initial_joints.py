"""plugins_py/initial_joints.py: the joint angles the launch's placement found hold from the first step.

The host runs the system from the same ``<gazebo>`` block the launch adds to
the description Gazebo spawns (eels_gz.ros.launch_setup.spawn_urdf)."""

from __future__ import annotations

import pytest

from eels_gz import registry
from eels_gz.description.assemble import robot_description
from eels_gz.description.xacro_loader import split_gazebo
from eels_gz.errors import PluginError
from eels_gz.dart.simulation import RobotSpec, Simulation
from eels_gz.ros.launch_setup import spawn_urdf
from eels_gz.spawn import Spawn

# set points the rover's own controllers do not move: the legs' differential and the steering at rest
BENT = {"left_leg_joint": 0.12, "right_leg_joint": -0.12}


def _sim(joints: dict) -> Simulation:
    desc = robot_description(registry.robot("archimede"), gazebo=True)
    spawned = split_gazebo(spawn_urdf(desc, Spawn((0.0, 0.0, 0.5, 0.0, 0.0, 0.0), joints)), "spawned.urdf")
    return Simulation(registry.world_path("ice_plane"), RobotSpec("archimede", spawned, [0, 0, 0.5, 0, 0, 0]))


def _positions(sim) -> dict[str, float]:
    skel = sim.robot_skeleton
    return {n: float(skel.getJoint(n).getPosition(0)) for n in BENT}


def test_initial_joint_positions_are_set_before_the_first_step():
    sim = _sim(BENT)
    assert "initial_joints" in [s.module for s in sim.systems]
    assert _positions(sim) == pytest.approx(BENT, abs=1e-12)
    sim.step()
    # one step of 1 ms from rest: the joints move by at most ~ g dt^2 / lever, far below 1e-4 rad
    assert _positions(sim) == pytest.approx(BENT, abs=1e-4)


def test_unknown_joint_is_named():
    with pytest.raises(PluginError, match="initial_joints: joint 'no_such_joint' is not a joint of model"):
        _sim({"no_such_joint": 0.1})
