"""``<gazebo reference="LINK"><mu1>``/``<mu2>`` in a robot's description, as gz-sim applies them: sdformat
writes them in every collision of the link and gz-physics sets DART's coefficient; DART gives a contact the
smaller of its two shapes' coefficients. The host does the same (``Simulation._link_friction``).

Closed form: a flat block sliding on ice_plane (``<mu>`` 0.15) along x decelerates at ``min(mu1, 0.15) g``.
Sliding along a tangent axis of DART's friction pyramid, the box friction is exact, so the tolerance is the
LCP's (DART solves the 4 corner contacts to about 1e-6 relative); 1e-3 relative leaves room for that and
for the block's pitch under the friction moment (its half-height 0.02 m against a half-width 0.2 m).
"""

from __future__ import annotations

import numpy as np
import pytest

from eels_gz import registry
from eels_gz.dart.simulation import RobotSpec, Simulation
from eels_gz.description.xacro_loader import load_description
from eels_gz.errors import SdfError
from eels_gz.sdf_reader import load_world

WORLD = registry.world_path("ice_plane")
ICE_MU = next(c.surface.mu for m in load_world(WORLD).models for link in m.links for c in link.collisions)
G = 9.80665  # ice_plane's <gravity>

BLOCK = """<?xml version="1.0"?>
<robot name="block">
  <link name="block">
    <inertial><mass value="2.0"/><inertia ixx="0.027" ixy="0" ixz="0" iyy="0.027" iyz="0" izz="0.053"/></inertial>
    <collision><geometry><box size="0.4 0.4 0.04"/></geometry></collision>
  </link>
  {gazebo}
</robot>
"""


def block(tmp_path, gazebo: str = "") -> Simulation:
    path = tmp_path / "block.urdf"
    path.write_text(BLOCK.format(gazebo=gazebo))
    return Simulation(WORLD, RobotSpec("block", load_description(path), [0.0, 0.0, 0.02, 0.0, 0.0, 0.0],
                                       optimize=False))


def deceleration(sim: Simulation) -> float:
    """The block's deceleration sliding at 1 m/s along x, after 0.1 s at rest (m/s^2)."""
    skel = sim.robot_skeleton
    for _ in range(100):
        sim.step()
    v = np.asarray(skel.getVelocities(), float)
    v[3] = 1.0  # FreeJoint: angular, then linear velocity
    skel.setVelocities(v)
    steps = 200
    for _ in range(steps):
        sim.step()
    return (1.0 - float(skel.getVelocities()[3])) / (steps * sim.dt)


@pytest.mark.parametrize("mu1, expected", [(None, ICE_MU), (0.05, 0.05), (0.5, ICE_MU)])
def test_a_link_meets_the_smaller_coefficient(tmp_path, mu1, expected):
    gazebo = "" if mu1 is None else f'<gazebo reference="block"><mu1>{mu1}</mu1><mu2>{mu1}</mu2></gazebo>'
    assert deceleration(block(tmp_path, gazebo)) == pytest.approx(expected * G, rel=1e-3)


@pytest.mark.parametrize("gazebo, message", [
    ('<gazebo reference="block"><mu1>0.1</mu1><mu2>0.2</mu2></gazebo>', "mu2 0.2 differs from mu1 0.1"),
    ('<gazebo reference="block"><mu1>slippery</mu1></gazebo>', "<mu1> 'slippery' is not a friction coefficient"),
    ('<gazebo reference="block"><mu2>-1</mu2></gazebo>', "<mu2> '-1' is not a friction coefficient"),
])
def test_a_coefficient_the_host_cannot_apply_is_named(tmp_path, gazebo, message):
    with pytest.raises(SdfError) as err:
        block(tmp_path, gazebo)
    assert message in str(err.value) and "block.urdf" in str(err.value)
