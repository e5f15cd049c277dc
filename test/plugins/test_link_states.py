"""The host's batched link and joint access (eels_gz/dart/kinematics.py and
the gz_compat helpers built on it) gives what DART and the per-link gz API
give, so plugins may use either path."""

from __future__ import annotations

import numpy as np
import pytest

from eels_gz import registry
from eels_gz.dart.kinematics import SkeletonKinematics, wrench_forces
from eels_gz.dart.simulation import RobotSpec, Simulation
from eels_gz.description.assemble import robot_description
from eels_gz.gzapi import gzsim

# round-off of 4x4 products down a 40-body chain at unit scale
TOL = 1e-12


def simulation(name: str) -> Simulation:
    desc = robot_description(registry.robot(name), gazebo=True)
    # the <mimic> pairs exact (physics.mimic: exact): the couplings' own tests below need them
    return Simulation(registry.world_path("ice_plane"), RobotSpec(name, desc), mimic="exact")


def randomize(skel, seed: int) -> None:
    rng = np.random.default_rng(seed)
    skel.setPositions(0.5 * rng.normal(size=skel.getNumDofs()))
    skel.setVelocities(rng.normal(size=skel.getNumDofs()))


@pytest.mark.parametrize("name", sorted(registry.ROBOTS))
def test_batched_kinematics_equals_dart(name):
    sim = simulation(name)
    skel = sim.robot_skeleton
    randomize(skel, 3)
    kin = SkeletonKinematics.build(skel)
    assert kin is not None
    kin.update(skel.getPositions(), skel.getVelocities())
    for b in range(skel.getNumBodyNodes()):
        body = skel.getBodyNode(b)
        np.testing.assert_allclose(kin.T[b], body.getWorldTransform().matrix(), atol=TOL, rtol=0)
        np.testing.assert_allclose(kin.w[b], body.getAngularVelocity(), atol=TOL, rtol=0)
        np.testing.assert_allclose(kin.v[b], body.getLinearVelocity(), atol=TOL, rtol=0)


@pytest.mark.parametrize("name", sorted(registry.ROBOTS))
def test_batched_accelerations_equal_darts(name):
    """SkeletonKinematics.accelerations gives every body's angular and classical linear acceleration
    as DART computes them from the same generalized accelerations, at random states: free bases,
    revolute and prismatic joints, welds. The tolerance is round-off relative to the largest value
    (the centripetal terms of unit-scale velocities down a 40-body chain)."""
    sim = simulation(name)
    skel = sim.robot_skeleton
    kin = SkeletonKinematics.build(skel)
    for seed in (3, 4):
        randomize(skel, seed)
        ddq = np.random.default_rng(seed + 10).normal(size=skel.getNumDofs())
        skel.setAccelerations(ddq)
        kin.update(skel.getPositions(), skel.getVelocities())
        assert kin.accelerations(skel.getVelocities(), ddq)
        alpha = np.array([skel.getBodyNode(b).getAngularAcceleration() for b in range(skel.getNumBodyNodes())])
        acc = np.array([skel.getBodyNode(b).getLinearAcceleration() for b in range(skel.getNumBodyNodes())])
        scale = max(np.abs(alpha).max(), np.abs(acc).max())
        np.testing.assert_allclose(kin.alpha, alpha, atol=1e-12 * scale, rtol=0)
        np.testing.assert_allclose(kin.a, acc, atol=1e-12 * scale, rtol=0)


@pytest.mark.parametrize("name", sorted(registry.ROBOTS))
def test_center_of_mass_equals_darts(name):
    """mass_matrix.center_of_mass on the batched kinematics (the world-bounds check) is DART's getCOM()."""
    from eels_gz.dart.mass_matrix import body_inertias, center_of_mass

    skel = simulation(name).robot_skeleton
    mass, com, _ = body_inertias(skel)
    kin = SkeletonKinematics.build(skel)
    out = np.empty(3)
    for seed in (3, 4):
        randomize(skel, seed)
        kin.update(skel.getPositions(), skel.getVelocities())
        center_of_mass(kin.T, mass, com, out)
        np.testing.assert_allclose(out, skel.getCOM(), atol=TOL, rtol=0)


@pytest.mark.parametrize("name", sorted(registry.ROBOTS))
def test_mass_matrix_equals_darts(name):
    """eels_gz.dart.mass_matrix (composite rigid bodies on the batched kinematics) gives DART's
    getMassMatrix() at random configurations: free bases, revolute and prismatic joints, welds. The
    tolerance is round-off relative to the largest entry (sums over a 40-body chain)."""
    from eels_gz.dart.mass_matrix import MassMatrix

    skel = simulation(name).robot_skeleton
    mm = MassMatrix.build(skel)
    assert mm is not None
    for seed in (3, 4):
        randomize(skel, seed)
        want = skel.getMassMatrix()
        got = mm.matrix(skel.getPositions(), skel.getVelocities())
        np.testing.assert_allclose(got, want, atol=1e-12 * np.abs(want).max(), rtol=0)


@pytest.mark.parametrize("name", ["eels_1_0_alternating", "archimede", "rocky7"])
def test_wrench_generalized_forces_equal_dart_external_forces(name):
    """J^T [torque; force] summed over the ancestors gives the accelerations
    DART gives for the same external forces (relative 1e-12 of their size)."""
    a, b = simulation(name), simulation(name)
    ska, skb = a.robot_skeleton, b.robot_skeleton
    randomize(ska, 5)
    randomize(skb, 5)
    rng = np.random.default_rng(9)
    n = ska.getNumBodyNodes()
    bodies = np.array([0, n // 3, n // 2, n - 1])
    forces, torques = 10 * rng.normal(size=(4, 3)), rng.normal(size=(4, 3))
    for k, i in enumerate(bodies):
        ska.getBodyNode(int(i)).addExtForce(forces[k], np.zeros(3), False, True)
        ska.getBodyNode(int(i)).addExtTorque(torques[k], False)
    kin = SkeletonKinematics.build(skb)
    kin.update(skb.getPositions(), skb.getVelocities())
    tau = np.zeros(skb.getNumDofs())
    wrench_forces(kin, bodies, forces, torques, tau)
    skb.setForces(tau)
    ska.computeForwardDynamics()
    skb.computeForwardDynamics()
    acc = ska.getAccelerations()
    np.testing.assert_allclose(skb.getAccelerations(), acc, atol=1e-12 * np.abs(acc).max(), rtol=0)


def test_compat_batch_equals_the_per_link_api():
    """gz_compat's batched reads equal the gz-sim Link/Joint API link by link,
    and a batched wrench moves the robot as Link.add_world_wrench does."""
    import gz_compat

    sims = [simulation("eels_1_0_alternating") for _ in range(2)]
    ecm = sims[0].ecm
    model = gzsim.Model(sims[0].robot_entity)
    links = [gzsim.Link(e) for e in model.links(ecm)]
    joints = [gzsim.Joint(e) for e in model.joints(ecm)
              if ecm.joints[e].ndofs == 1]
    assert gz_compat.link_world_states(ecm, links) is None  # velocity checks off
    assert gz_compat.joint_states(ecm, joints) is None
    for link in links:
        link.enable_velocity_checks(ecm, True)
    for joint in joints:
        joint.enable_position_check(ecm)
        joint.enable_velocity_check(ecm)
    # enabled, no physics update yet: poses, zero velocities (gz-sim 8), and no joint state ([] per joint)
    batched, each = gz_compat.link_world_states(ecm, links), gz_compat.link_world_states_each(ecm, links)
    for x, y in zip(batched, each):
        np.testing.assert_allclose(x, y, atol=TOL, rtol=0)
    assert not batched[2].any() and not batched[3].any()
    assert gz_compat.joint_states(ecm, joints) is None and gz_compat.joint_states_each(ecm, joints) is None
    for _ in range(3):
        sims[0].step()
    batched, each = gz_compat.link_world_states(ecm, links), gz_compat.link_world_states_each(ecm, links)
    for x, y in zip(batched, each):
        np.testing.assert_allclose(x, y, atol=TOL, rtol=0)
    q, dq = gz_compat.joint_states(ecm, joints)
    np.testing.assert_array_equal(q, [j.position(ecm)[0] for j in joints])
    np.testing.assert_array_equal(dq, [j.velocity(ecm)[0] for j in joints])

    # the same wrenches through both paths, on two identical simulations
    for s in sims[1:]:
        for _ in range(3):
            s.step()
    rng = np.random.default_rng(2)
    forces, torques = 20 * rng.normal(size=(len(links), 3)), rng.normal(size=(len(links), 3))
    links_b = [gzsim.Link(e) for e in gzsim.Model(sims[1].robot_entity).links(sims[1].ecm)]
    gz_compat.add_link_world_wrenches(ecm, links, forces, torques)
    gz_compat.add_link_world_wrenches_each(sims[1].ecm, links_b, forces, torques)
    sims[0].step()
    sims[1].step()
    va, vb = sims[0].robot_skeleton.getVelocities(), sims[1].robot_skeleton.getVelocities()
    np.testing.assert_allclose(va, vb, atol=1e-9 * np.abs(vb).max(), rtol=0)


def _link(name: str) -> str:
    return (f'<link name="{name}"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.2" izz="0.3" ixy="0" '
            f'ixz="0" iyz="0"/></inertial></link>')


def _joint(kind: str, parent: str, child: str, xyz: str, rpy: str, axis: str = "0 0 1") -> str:
    limit = '<limit lower="-1" upper="1" effort="1" velocity="1"/>' if kind in ("revolute", "prismatic") else ""
    return (f'<joint name="{parent}_{child}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{xyz}" rpy="{rpy}"/><axis xyz="{axis}"/>{limit}</joint>')


def test_batched_accelerations_through_prismatic_joints():
    """The same on a chain no registry robot has: prismatic joints below turning bodies (their
    Coriolis term 2 w x u dq), between revolute joints on tilted axes and a weld."""
    from eels_gz.dart.dart_build import load_urdf

    links = ["base", "arm", "slide", "wrist", "tool", "slide2"]
    joints = [_joint("revolute", "base", "arm", "0.1 0.2 0.3", "0.3 -0.2 0.5", "0.6 0 0.8"),
              _joint("prismatic", "arm", "slide", "0.4 0 0", "0 0.4 0", "1 0 0"),
              _joint("revolute", "slide", "wrist", "0 0.2 0.1", "-0.5 0 0.2", "0 1 0"),
              _joint("fixed", "wrist", "tool", "0.05 0 0.3", "0.1 0.2 0.3"),
              _joint("prismatic", "tool", "slide2", "0 0 0.1", "0.2 0 0", "0 0.6 0.8")]
    urdf = f'<robot name="chain">{"".join(_link(n) for n in links)}{"".join(joints)}</robot>'
    skel = load_urdf(urdf, "chain", "<test chain>", {})
    kinds = {skel.getJoint(j).getType() for j in range(skel.getNumJoints())}
    assert {"FreeJoint", "RevoluteJoint", "PrismaticJoint", "WeldJoint"} <= kinds
    kin = SkeletonKinematics.build(skel)
    for seed in (1, 2, 3):
        randomize(skel, seed)
        ddq = np.random.default_rng(seed + 10).normal(size=skel.getNumDofs())
        skel.setAccelerations(ddq)
        kin.update(skel.getPositions(), skel.getVelocities())
        assert kin.accelerations(skel.getVelocities(), ddq)
        for b in range(skel.getNumBodyNodes()):
            body = skel.getBodyNode(b)
            np.testing.assert_allclose(kin.alpha[b], body.getAngularAcceleration(), atol=1e-12, rtol=0)
            np.testing.assert_allclose(kin.a[b], body.getLinearAcceleration(), atol=1e-12, rtol=0)


@pytest.mark.parametrize("name", sorted(registry.ROBOTS))
def test_mass_matrix_sparsity_is_the_trees(name):
    """mass_matrix.dof_parents: DART's own mass matrix is zero wherever neither DOF is an ancestor of
    the other (the sparsity the couplings' L^T L factor relies on), and each parent comes first."""
    from eels_gz.dart.mass_matrix import MassMatrix

    skel = simulation(name).robot_skeleton
    parent = MassMatrix.build(skel).dof_parent
    n = skel.getNumDofs()
    related = np.eye(n, dtype=bool)
    for k in range(n):
        j = parent[k]
        while j >= 0:
            assert j < k
            related[k, j] = related[j, k] = True
            j = parent[j]
    randomize(skel, 5)
    M = skel.getMassMatrix()
    assert np.all(M[~related] == 0.0)
    assert np.all(np.diag(M) > 0.0)


def test_dof_parents_refuses_children_numbered_first():
    from types import SimpleNamespace

    from eels_gz.dart.kinematics import REVOLUTE
    from eels_gz.dart.mass_matrix import dof_parents

    kin = SimpleNamespace(kind=np.array([REVOLUTE, REVOLUTE]), parent=np.array([-1, 0]), dof=np.array([1, 0]))
    with pytest.raises(ValueError, match="DOF 0's parent DOF 1 comes after it"):
        dof_parents(kin, 2)
    kin.dof = np.array([0, 1])
    assert dof_parents(kin, 2).tolist() == [-1, 0]


@pytest.mark.parametrize("name", sorted(registry.ROBOTS))
def test_coupling_gain_equals_a_dense_solve(name):
    """couplings._coupling_gain (the tree's L^T L factor and the two joints' sparse right-hand sides)
    gives the mass-weighted projection M^-1 J^T (J M^-1 J^T)^-1 of a dense LU solve on DART's own
    mass matrix. Tolerance: both are backward stable, so they differ by about cond(M) eps relative to
    the largest entry (cond(M) is about 1e6 here: light screws against the body); 100 cond(M) eps."""
    sim = simulation(name)
    if not sim.couplings:
        pytest.skip(f"{name} has no <mimic> joints")
    for solver in sim.couplings:
        skel = solver.skel
        for seed in (6, 7):
            randomize(skel, seed)
            solver.project_positions()
            q, dq = skel.getPositions(), skel.getVelocities()
            solver._age = solver.refresh_steps
            solver._refresh(q, dq)
            M = skel.getMassMatrix()
            rel = 100 * np.linalg.cond(M) * np.finfo(float).eps
            X = np.linalg.solve(M, solver.J.T)
            A_inv = np.linalg.inv(solver.J @ X)
            gain = X @ A_inv
            np.testing.assert_allclose(solver._gain, gain, atol=rel * np.abs(gain).max(), rtol=0)
            np.testing.assert_allclose(solver._A_inv, A_inv, atol=rel * np.abs(A_inv).max(), rtol=0)
            # the property the gain exists for: the corrected velocities satisfy J dq = 0
            v = dq.copy()
            v -= solver._gain @ (solver.J @ v)
            assert np.abs(solver.J @ v).max() <= 1e-12 * np.abs(dq).max()


def test_coupling_gain_on_a_non_finite_state_lets_the_nan_through():
    """A mass matrix that is not positive definite (a state already gone non-finite) falls back to LU,
    whose NaN reaches the velocities and so the host's divergence check, which names the DOF."""
    sim = simulation("eels_1_0_alternating")
    solver = sim.couplings[0]
    q, dq = solver.skel.getPositions(), solver.skel.getVelocities()
    q[10] = np.nan
    solver._age = solver.refresh_steps
    solver._refresh(q, dq)
    assert np.isnan(solver._gain).any()


def test_frame_world_pose_is_darts_whether_the_state_cache_is_current_or_not():
    """Simulation.frame_world_pose reads the step's batched kinematics while the host's state cache holds
    the skeleton's positions, else DART: both give DART's getWorldTransform (times the frame's pose in its
    body) to round-off (TOL), for links lumped into others by the optimizer and for bodies."""
    sim = Simulation(registry.world_path("ice_plane"),
                     RobotSpec("eels_1_0_alternating", robot_description(registry.robot("eels_1_0_alternating"),
                                                                         gazebo=True)))
    skel = sim.robot_skeleton
    names = list(sim.robot_frames)[:6] + [skel.getBodyNode(b).getName() for b in (0, skel.getNumBodyNodes() - 1)]

    def dart(name):
        frame = sim.robot_frames.get(name)
        T = skel.getBodyNode(frame.body if frame else name).getWorldTransform().matrix()
        return T @ frame.pose if frame else T

    for _ in range(5):
        sim.step()
    for name in names:  # the cache is current: batched
        np.testing.assert_allclose(sim.frame_world_pose(name), dart(name), atol=TOL, rtol=0)
    randomize(skel, 8)  # set on DART behind the host's back: the cache is stale, DART answers
    for name in names:
        np.testing.assert_allclose(sim.frame_world_pose(name), dart(name), atol=TOL, rtol=0)
    with pytest.raises(KeyError, match="no link or frame 'nope'"):
        sim.frame_world_pose("nope")


@pytest.mark.parametrize("batch_api", [True, False])
def test_tethers_system_equals_a_force_at_the_point(tmp_path, batch_api):
    """plugins_py/tethers.py reads its links through link_world_states (batched, or one link at a time
    as under Gazebo) and adds each tether's force at its attachment point as a wrench at the link
    origin, the force and its moment about the origin. Twenty steps with it equal twenty steps in
    which the same law, read from DART, is applied as DART's own force at the body-frame point
    (addExtForce), to round-off (1e-9 of the motion). Without the moment the robot would turn
    differently: the points sit 2-5 cm off the link origins."""
    from eels_gz.scenarios.plugin_elements import scenario_plugins

    name = "eels_1_0_alternating"
    desc = robot_description(registry.robot(name), gazebo=True)
    urdf = tmp_path / "robot.urdf"
    urdf.write_text(desc.urdf)
    world = registry.world_path("ice_plane")
    tethers = [{"link": "module_1_shell", "point": [0.01, 0.02, 0.03], "anchor": [0.5, 0.2, 1.0],
                "stiffness": 1000.0, "damping": 30.0, "length": 0.1},
               {"link": "module_2_shell", "point": [0.0, 0.05, 0.0], "anchor": [-2.0, 0.0, 0.5],
                "stiffness": 500.0}]
    plugins = scenario_plugins("t", {"systems": ["tethers"], "tethers": tethers, "params": {}}, robot=name,
                               description_file=str(urdf), world_file=str(world))
    with_system = Simulation(world, RobotSpec(name, desc, plugins=tuple(plugins)), batch_api=batch_api)
    by_dart = Simulation(world, RobotSpec(name, desc))
    for sim in (with_system, by_dart):
        skel = sim.robot_skeleton
        skel.setPositions(skel.getPositions() + 0.05 * np.random.default_rng(4).normal(size=skel.getNumDofs()))
        for st in sim.states:
            st.refresh()
    skel = by_dart.robot_skeleton
    attached = [(skel.getBodyNode(t["link"]), np.array(t["point"]), np.array(t["anchor"]), t["stiffness"],
                 t.get("damping", 0.0), t.get("length", 0.0)) for t in tethers]

    def dart_law(info, ecm):
        for body, p_body, anchor, k, c, length in attached:
            p = (body.getWorldTransform().matrix() @ np.r_[p_body, 1.0])[:3]
            u = (p - anchor) / np.linalg.norm(p - anchor)
            v = np.asarray(body.getLinearVelocity(p_body))
            f = -(k * (np.linalg.norm(p - anchor) - length) + c * (u @ v)) * u
            body.addExtForce(f, p_body, False, True)

    by_dart.add_pre_update(dart_law)
    for _ in range(20):
        with_system.step()
        by_dart.step()
    a, b = with_system.robot_skeleton, by_dart.robot_skeleton
    moved = np.abs(b.getVelocities()).max()
    assert moved > 1e-3  # the tethers moved it
    np.testing.assert_allclose(a.getVelocities(), b.getVelocities(), atol=1e-9 * moved, rtol=0)
    np.testing.assert_allclose(a.getPositions(), b.getPositions(), atol=1e-9, rtol=0)

