"""joint_control drives a counter-rotating screw pair as a pair: the scenario
names only the leader, and the follower turns at multiplier × its set point."""

from __future__ import annotations

import pytest

from eels_gz.description.xacro_loader import split_gazebo
from eels_gz.dart.simulation import RobotSpec, Simulation
from eels_gz.paths import asset

RATE = 3.0  # rad/s


def screw(name: str, x: float) -> str:
    return f"""
  <joint name="{name}" type="continuous"><parent link="world"/><child link="{name}_link"/>
    <origin xyz="{x} 0 1"/><axis xyz="1 0 0"/><limit effort="60" velocity="10"/></joint>
  <link name="{name}_link"><inertial><mass value="2.5"/>
    <inertia ixx="0.005" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.02"/></inertial></link>"""


def pair_robot(scenario: str) -> str:
    return f"""<robot name="pair"><link name="world"/>{screw("screw_front", 0.0)}{screw("screw_rear", 0.5)}
  <gazebo><plugin filename="gz-sim-python-system-loader-system" name="gz::sim::systems::PythonSystemLoader">
    <module_name>joint_control</module_name><scenario>{scenario}</scenario>
    <gains name="screw" pattern="screw_(front|rear)" mode="velocity" p="4" i="20" d="0" i_max="30" effort_max="60"/>
    <pair leader="screw_front" follower="screw_rear" multiplier="-1"/>
  </plugin></gazebo></robot>"""


def test_follower_mirrors_leader(tmp_path):
    scenario = tmp_path / "spin.yaml"
    scenario.write_text(f"duration: 2\nsetpoints:\n  - t: 0.0\n    velocity: {{screw_front: {RATE}}}\n")
    desc = split_gazebo(pair_robot(str(scenario)), "pair.urdf")
    sim = Simulation(asset("worlds", "ice_plane.sdf"), RobotSpec("pair", desc))
    for _ in range(2000):
        sim.step()
    skel = sim.robot_skeleton
    front, rear = skel.getJoint("screw_front"), skel.getJoint("screw_rear")
    # PI on a free inertia: the speed error decays well within 2 s (time
    # constant I/p ~ 1 ms, integral closes the rest); 1 % tolerance
    assert front.getVelocity(0) == pytest.approx(RATE, rel=1e-2)
    assert rear.getVelocity(0) == pytest.approx(-RATE, rel=1e-2)
    # identical inertias and gains with mirrored set points: mirrored angles
    assert abs(front.getPosition(0) + rear.getPosition(0)) < 1e-6


def test_pair_naming_an_unknown_joint_is_an_error(tmp_path):
    text = pair_robot("").replace('follower="screw_rear"', 'follower="screw_back"')
    with pytest.raises(Exception, match=r"screw_back.*not a controlled joint"):
        Simulation(asset("worlds", "ice_plane.sdf"), RobotSpec("pair", split_gazebo(text, "pair.urdf")))
