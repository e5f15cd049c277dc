"""plugins_py/snake_io.py (SnakeIO, the snake scenario systems' view of the robot through the gz API)
reads what the engine holds: every 1-DOF chain joint's position and rate, the base link's pose and
twist, the module points from them; nothing before the first physics update (gz-sim reports joint
positions from then on); set points reach the joint_control system; screw loads are the
screw_contact system's. Tolerances: the same state read through two paths (the host's batch and
DART) differs by round-off only, 1e-12 (rad, m, m/s)."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from lxml import etree

from eels_gz import config, registry
from eels_gz.gzapi.element import Element
from eels_gz.paths import asset
from eels_gz.run.resolve import resolve_run
from eels_gz.run.runner import prepare

TOL = 1e-12
ROBOT = "eels_1_0_front_only"


@pytest.fixture
def robot(tmp_path, monkeypatch):
    cfg = config.resolve(overrides={"robot": {"name": ROBOT}, "contact": {"model": "screw"},
                                    "sensors": {"enabled": False}, "scenario": {"name": "screw_spin"}})
    sim = prepare(resolve_run(cfg, tmp_path)).sim
    urdf = tmp_path / "robot_source.urdf"
    urdf.write_text(sim.robot_source_urdf)
    world = registry.world_path("ice_plane").resolve()
    sdf = Element(etree.fromstring(f"<plugin><description_file>{urdf}</description_file><robot>{ROBOT}</robot>"
                                   f"<world_file>{world}</world_file></plugin>"), "test")
    monkeypatch.syspath_prepend(str(asset("plugins_py")))
    sys.modules.pop("snake_io", None)
    from snake_io import SnakeIO

    jc = next(s for s in sim.systems if s.module == "joint_control")
    io = SnakeIO(jc.entity, sdf, sim.ecm, "test")
    yield sim, io, jc.system
    sim.close()


def test_reads_what_the_engine_holds(robot):
    sim, io, _ = robot
    assert not io.read(sim.ecm) and not io.ready  # gz-sim: no joint positions before the first physics update
    assert io.read_base(sim.ecm)  # the base's pose is
    np.testing.assert_allclose(io.base_pose(), sim.frame_world_pose(io.chain.root), rtol=0, atol=TOL)
    for _ in range(30):
        sim.step()
    assert io.read(sim.ecm) and io.ready
    skel = sim.robot_skeleton
    q, dq = skel.getPositions(), skel.getVelocities()
    angles, rates = io.angles(), io.rates()
    assert set(angles) == set(io.joint_names) and len(angles) >= 2 * io.chain.n_modules
    for name in io.joint_names:
        k = skel.getJoint(name).getIndexInSkeleton(0)
        assert angles[name] == pytest.approx(q[k], abs=TOL) and rates[name] == pytest.approx(dq[k], abs=TOL)
    T = sim.frame_world_pose(io.chain.root)
    np.testing.assert_allclose(io.base_pose(), T, rtol=0, atol=TOL)
    body = skel.getBodyNode(io.chain.root)
    v, w = io.base_twist_world()
    assert np.abs(v).max() > 1e-6  # settling on the ice: the comparison is not of zeros
    np.testing.assert_allclose(v, body.getLinearVelocity(), rtol=0, atol=TOL)
    np.testing.assert_allclose(w, body.getAngularVelocity(), rtol=0, atol=TOL)
    np.testing.assert_allclose(io.module_points(), io.chain.module_points(angles, T), rtol=0, atol=TOL)
    np.testing.assert_allclose(io.down_in_base(), T[:3, :3].T @ np.array([0.0, 0.0, -1.0]), rtol=0, atol=TOL)


def test_screw_loads_are_the_screw_contacts(robot):
    sim, io, _ = robot
    for _ in range(30):
        sim.step()
    contact = next(s.system for s in sim.systems if s.module == "screw_contact")
    loads = io.screw_loads()
    assert list(loads) == list(contact.points.names) and all(f > 0.0 for f in loads.values())
    assert sorted(io.screws_in_contact()) == sorted(loads)
    assert io.total_screw_load() == pytest.approx(float(contact.last.normal_force.sum()), rel=1e-12)
    assert set(io.screws) == set(loads)  # the variant's geometry names the screw contact's links


def test_commands_reach_joint_control(robot):
    sim, io, jc = robot
    bend = io.chain.bend_joints()[0]
    screw = io.screw_actuators[0]
    io.command(positions={bend: 0.2}, velocities={screw: 1.5})
    k, j = jc.names.index(bend), jc.names.index(screw)
    assert jc.loops.external_pos[k] == 0.2 and jc.loops.external_vel[j] == 1.5
    assert np.isnan(jc.loops.external_vel[k]) and np.isnan(jc.loops.external_pos[j])


def test_world_facts(tmp_path):
    sys.path.insert(0, str(asset("plugins_py")))
    try:
        from snake_io import world_facts
    finally:
        sys.path.remove(str(asset("plugins_py")))
    name, g = world_facts(str(registry.world_path("ice_plane")))
    assert name == "ice_plane" and g[2] < -9.0 and g[:2].tolist() == [0.0, 0.0]
    bad = tmp_path / "w.sdf"
    bad.write_text("<sdf><world name='w'><gravity>0 0</gravity></world></sdf>")
    with pytest.raises(ValueError, match="w.sdf.*not three numbers"):
        world_facts(str(bad))
