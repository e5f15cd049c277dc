"""plugins_py/rft_contact.py in the embedded host, on a one-screw rig built here from the robots' own screw
macro (urdf/eels_macros.xacro, EELS 1.0's screw): the screw hangs from an x carriage and a z carriage that
carries a load, its spin a continuous joint; ice_plane's plane is the grains' surface (mars_simulant_mms).

- the engine's contact on the screw is off while the system runs;
- left on the sand with its spin held, the screw sinks until the grains carry the rig's weight: RFT has no
  static hold (the stress fades below velocity_reg), so it keeps creeping, slower than velocity_reg, with the
  RFT force equal to the weight (no acceleration left) and steady (the implicit step,
  eels_gz.granular.implicit);
- spinning, it is pushed along its axis the way its thread advances (h omega > 0: +x), reversing the spin or
  the hand reverses it, and it advances slower than the no-slip speed h omega r tan(alpha).
"""

from __future__ import annotations

import math

import pytest

from eels_gz import registry
from eels_gz.dart.simulation import RobotSpec, Simulation
from eels_gz.description.xacro_loader import load_description
from eels_gz.gzapi import gzsim
from eels_gz.paths import asset

WORLD = registry.world_path("ice_plane")
G = 9.80665  # ice_plane's <gravity>
LOAD = 8.0  # kg on the z carriage, about a module's share of EELS 1.0 (5.5 kg shell + 2.5 kg screw)

RIG = """<?xml version="1.0"?>
<robot name="rft_rig" xmlns:xacro="http://www.ros.org/wiki/xacro">
  <xacro:property name="v" value="${{xacro.load_yaml('{variants}')['variants']['eels_1_0_front_only']}}"/>
  <xacro:include filename="{macros}"/>
  <link name="world"/>
  <link name="carriage_x"><inertial><mass value="1.0"/>
    <inertia ixx="1e-3" ixy="0" ixz="0" iyy="1e-3" iyz="0" izz="1e-3"/></inertial></link>
  <link name="carriage_z"><inertial><mass value="{load}"/>
    <inertia ixx="1e-3" ixy="0" ixz="0" iyy="1e-3" iyz="0" izz="1e-3"/></inertial></link>
  <joint name="rig_x" type="prismatic"><parent link="world"/><child link="carriage_x"/><axis xyz="1 0 0"/>
    <limit lower="-100" upper="100" effort="1e6" velocity="100"/></joint>
  <joint name="rig_z" type="prismatic"><parent link="carriage_x"/><child link="carriage_z"/><axis xyz="0 0 1"/>
    <limit lower="-100" upper="100" effort="1e6" velocity="100"/></joint>
  <xacro:eels_screw name="screw" parent="carriage_z" x="0"/>
  <gazebo>
    <plugin filename="gz-sim-python-system-loader-system" name="gz::sim::systems::PythonSystemLoader">
      <module_name>rft_contact</module_name>
      <granular_params>mars_simulant_mms</granular_params>
      <world_file>{world}</world_file>
      <screw link="screw_link" radius="${{v.screw.radius}}" root_radius="${{v.screw.root_radius}}"
             length="${{v.screw.length}}" lead_angle="${{v.screw.lead_angle}}" handedness="{hand}"/>
    </plugin>
  </gazebo>
  <gazebo reference="screw_link">
    <collision><surface><contact><collide_bitmask>0x00</collide_bitmask></contact></surface></collision>
  </gazebo>
</robot>
"""


def rig(tmp_path, hand: int = 1):
    path = tmp_path / f"rft_rig_{hand}.urdf.xacro"
    path.write_text(RIG.format(variants=asset("urdf", "eels_variants.yaml"), macros=asset("urdf", "eels_macros.xacro"),
                               load=LOAD, world=WORLD, hand=hand))
    desc = load_description(path)
    sim = Simulation(WORLD, RobotSpec("rft_rig", desc, [0.0, 0.0, 0.1, 0.0, 0.0, 0.0], optimize=False))
    model = gzsim.Model(sim.robot_entity)
    joints = {n: gzsim.Joint(model.joint_by_name(sim.ecm, n)) for n in ("rig_x", "rig_z", "screw")}
    system = next(s.system for s in sim.systems if s.module == "rft_contact")
    return sim, joints, system


def q(sim, joint: str) -> float:
    return float(sim.robot_skeleton.getJoint(joint).getPosition(0))


def test_left_on_sand_the_screw_sinks_until_the_grains_carry_the_rig(tmp_path):
    """After 2 s the fall's transient is over: the RFT force is the rig's weight within 1 % (what the creep's
    slow deceleration leaves) and it sinks slower than velocity_reg; the engine's contact is off on it."""
    sim, joints, system = rig(tmp_path)
    skel = sim.robot_skeleton
    assert not skel.getBodyNode("screw_link").isCollidable()
    fz = []
    for _ in range(2000):
        joints["screw"].set_velocity(sim.ecm, [0.0])
        sim.step()
        fz.append(float(system.last.force[0, 2]))
    weight = (skel.getMass() - 1.0) * G  # the x carriage rides on its rail
    assert float(system.last.force[0, 2]) == pytest.approx(weight, rel=0.01)
    # steady, not chattering about the weight (held explicitly it swung between -8 and +300 N)
    assert max(fz[-500:]) - min(fz[-500:]) < 0.01 * weight
    assert system.last.immersed[0] > 0.0
    vz = float(skel.getJoint("rig_z").getVelocity(0))
    assert -system.params.velocity_reg < vz <= 0.0


@pytest.mark.parametrize("hand, omega", [(1, 3.0), (1, -3.0), (-1, 3.0)])
def test_a_spinning_screw_advances_along_its_thread(tmp_path, hand, omega):
    sim, joints, system = rig(tmp_path, hand)
    geom = system.contact.geometries[0]
    for _ in range(1000):
        joints["screw"].set_velocity(sim.ecm, [0.0])
        sim.step()
    x0 = q(sim, "rig_x")
    seconds = 2.0
    for _ in range(int(seconds * 1000)):
        joints["screw"].set_velocity(sim.ecm, [omega])
        sim.step()
    advance = q(sim, "rig_x") - x0
    no_slip = geom.advance_speed(omega) * seconds
    assert math.copysign(1.0, advance) == math.copysign(1.0, hand * omega)
    assert 0.05 * abs(no_slip) < abs(advance) < abs(no_slip)
