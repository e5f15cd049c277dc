"""The per-entity gz API path that Gazebo runs (gz_compat's ``*_each``
fallbacks: one ``Link``/``Joint`` call per entity) runs in CI for every
plugin, with the host's batch helpers withheld (``sim.batch_api: false``),
and gives the same trajectory as the batched path.

Tolerance: the two paths compute the same wrenches and joint forces with
different floating-point operation orders (a batched Jᵀ wrench mapping
against DART's per-body external forces), ~1e-16 relative per step. Over a
few hundred steps of contact dynamics these differences grow but stay far
below a micrometre and a microradian; 1e-6 (m, rad) is the bound. A
plugin whose per-entity path did anything else (a missing wrench, a skipped
joint, a state read one step late) moves the robot by millimetres in that
time."""

from __future__ import annotations

import numpy as np
import pytest

from eels_gz import registry
from eels_gz.description.assemble import robot_description
from eels_gz.gzapi import msgs, transport
from eels_gz.dart.simulation import RobotSpec, Simulation

TOL = 1e-6  # m and rad (see the module docstring)


def snake(batch: bool) -> Simulation:
    """EELS 1.0 alternating spinning its screws under screw contact: joint_control and screw_contact."""
    world = registry.world_path("ice_plane")
    entry = registry.robot("eels_1_0_alternating")
    scenario = str(registry.scenario_path("screw_spin"))
    desc = robot_description(entry, xacro_args={"contact": "screw", "contact_params": "ice",
                                                "world_file": str(world.resolve())},
                             gazebo=True, scenario=scenario)
    return Simulation(world, RobotSpec(entry.name, desc), batch_api=batch)


def rover(batch: bool) -> Simulation:
    """Archimede turning on the ice: icr_steering and wheel_odometry."""
    world = registry.world_path("ice_plane")
    sim = Simulation(world, RobotSpec("archimede", robot_description(registry.robot("archimede"), gazebo=True)),
                     batch_api=batch)
    node = transport.node_on(sim.transport)
    cmd = msgs.Twist()
    cmd.linear.x, cmd.angular.z = 0.1, 0.2
    node.advertise("/cmd_vel", msgs.Twist).publish(cmd)
    sim.odom = []
    node.subscribe(msgs.Odometry, "/odom", sim.odom.append)
    return sim


def soil_rover(batch: bool) -> Simulation:
    """Archimede turning on EAC-1A: icr_steering, wheel_odometry and soil_contact."""
    world = registry.world_path("ice_plane")
    desc = robot_description(registry.robot("archimede"), gazebo=True,
                             xacro_args={"soil": "eac1a", "world_file": str(world.resolve())})
    sim = Simulation(world, RobotSpec("archimede", desc), batch_api=batch)
    node = transport.node_on(sim.transport)
    cmd = msgs.Twist()
    cmd.linear.x, cmd.angular.z = 0.1, 0.2
    node.advertise("/cmd_vel", msgs.Twist).publish(cmd)
    return sim


def wheel_rig(batch: bool) -> Simulation:
    """The single-wheel soil rig driven at 20 % slip: soil_contact and wheel_rig (a test wheel of 8.5 cm
    radius, 7 cm width and 0.2 kg pressed with 16 N; any wheel would do)."""
    from eels_gz.description.xacro_loader import load_description
    from eels_gz.paths import asset

    world = registry.world_path("ice_plane")
    desc = load_description(asset("urdf", "wheel_rig.urdf.xacro"), {
        "radius": "0.085", "width": "0.07", "wheel_mass": "0.2", "normal_load": "16.0", "gravity": "9.80665",
        "soil": "eac1a", "world_file": str(world.resolve()), "slip": "0.2"})
    return Simulation(world, RobotSpec("wheel_rig", desc, [0.0, 0.0, 0.085, 0.0, 0.0, 0.0], optimize=False),
                      batch_api=batch)


@pytest.mark.parametrize("build, steps, modules", [
    (snake, 400, {"joint_control", "screw_contact"}),
    (rover, 600, {"icr_steering", "wheel_odometry"}),
    (soil_rover, 600, {"icr_steering", "wheel_odometry", "soil_contact"}),
    (wheel_rig, 600, {"soil_contact", "wheel_rig"}),
], ids=["snake", "rover", "soil_rover", "wheel_rig"])
def test_per_entity_path_gives_the_batched_trajectory(build, steps, modules):
    sims = {batch: build(batch) for batch in (True, False)}
    assert modules <= {s.module for s in sims[True].systems}
    for _ in range(steps):
        for sim in sims.values():
            sim.step()
    q = {batch: sim.robot_skeleton.getPositions() for batch, sim in sims.items()}
    moved = np.abs(q[True] - sims[True]._initial[-1][0]).max()
    assert moved > 100 * TOL, f"the robot barely moved ({moved:.2e}): the comparison would prove nothing"
    np.testing.assert_allclose(q[False], q[True], rtol=0, atol=TOL)
    # the batch path built its caches; the per-entity path never touched them
    assert sims[True].ecm.batches and not sims[False].ecm.__dict__.get("_batches")
    if build is rover:
        a, b = (np.array([(m.pose.position.x, m.pose.position.y) for m in sims[k].odom]) for k in (True, False))
        assert len(a) == len(b) > 10
        np.testing.assert_allclose(b, a, rtol=0, atol=TOL)
    for sim in sims.values():
        sim.close()
