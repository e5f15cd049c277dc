"""Model.set_world_pose_cmd teleports a model before the next step."""

from __future__ import annotations

import pytest

from eels_gz.gzapi.gzmath import Pose3d
from eels_gz.gzapi.gzsim import Link, Model, World
from eels_gz.dart.simulation import Simulation

WORLD = """<?xml version="1.0"?>
<sdf version="1.9"><world name="w">
  <physics name="p" type="dart"><max_step_size>0.001</max_step_size></physics>
  <gravity>0 0 0</gravity>
  <model name="wall"><static>true</static><link name="l">
    <collision name="c"><pose>0 0 -10 0 0 0</pose><geometry><box><size>1 1 1</size></box></geometry></collision>
  </link></model>
  <model name="box"><pose>0 0 1 0 0 0</pose><link name="l">
    <inertial><mass>1</mass><inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.1</izz></inertia></inertial>
    <collision name="c"><geometry><box><size>0.1 0.1 0.1</size></box></geometry></collision>
  </link></model>
</world></sdf>
"""


def test_pose_command_moves_a_free_model_and_static_ones_are_refused(tmp_path):
    path = tmp_path / "w.sdf"
    path.write_text(WORLD)
    sim = Simulation(path)
    ecm = sim.ecm
    world = World(ecm.world_entity)
    box = Model(world.model_by_name(ecm, "box"))
    box.set_world_pose_cmd(ecm, Pose3d(2.0, -1.0, 3.0, 0.0, 0.0, 0.5))
    sim.step()
    # no gravity and no contact: the commanded pose holds exactly after the step
    pose = Link(box.canonical_link(ecm)).world_pose(ecm)
    assert [pose.x(), pose.y(), pose.z(), pose.yaw()] == pytest.approx([2.0, -1.0, 3.0, 0.5], abs=1e-12)
    wall = Model(world.model_by_name(ecm, "wall"))
    with pytest.raises(ValueError, match="model 'wall' is static"):
        wall.set_world_pose_cmd(ecm, Pose3d(0, 0, 0, 0, 0, 0))
