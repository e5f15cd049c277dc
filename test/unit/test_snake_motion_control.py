"""Screw motion controller (NEO Eq. 2-5): the single-screw advance
v = h omega r tan(alpha), rates that reproduce the commanded twist exactly
through the forward map (planar and se(3)), counter-rotating pairs, the
shape-rate term against finite differences, the pencil reported instead of
divided through, and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from eels_gz.description.assemble import robot_description
from eels_gz.errors import SingularContactError, SnakeModelError
from eels_gz.registry import robot
from eels_gz.snake.chain import SnakeChain, screw_geometries
from eels_gz.snake.motion_control import ScrewMotionController
from eels_gz.snake.params import load_snake_params

# Rates and twists come from a least-squares solve of a well-conditioned
# (condition <= condition_max = 100) system of O(1) entries: error
# ~ cond * 1e-16 relative, so 1e-12 relative is a safe bound.
RTOL = 1e-12
COND_MAX = load_snake_params().motion_control.condition_max


def build(variant: str, n_modules=None):
    desc = robot_description(robot(variant), n_modules=n_modules, gazebo=True, xacro_args={"contact": "screw"})
    return SnakeChain.from_urdf(desc.urdf), screw_geometries(desc.gazebo)


@pytest.fixture(scope="module")
def front_only():
    return build("eels_1_0_front_only")


def crescent(chain, total=1.2):
    return {b: total / chain.n_modules for b in chain.bend_joints()}


def test_single_screw_advance_is_omega_r_tan_alpha(front_only):
    chain, geoms = front_only
    basis = np.eye(6)[:, [0]]  # command vx only
    ctrl = ScrewMotionController(chain, geoms, COND_MAX, basis)
    v = 0.05
    res = ctrl.solve(None, ["module_3_screw_link"], [v, 0, 0, 0, 0, 0]).require()
    g = geoms["module_3_screw_link"]
    expected = v / (g.handedness * g.radius * math.tan(g.lead_angle))  # inverse of the contact model's advance
    assert res.rates["module_3_screw"] == pytest.approx(expected, rel=RTOL)
    assert g.advance_speed(res.rates["module_3_screw"]) == pytest.approx(v, rel=RTOL)
    # a straight robot: every screw asks for the same rate
    assert all(r == pytest.approx(expected, rel=RTOL) for r in res.rates.values())


@pytest.mark.parametrize("twist", [[0.05, 0, 0, 0, 0, 0], [0, 0.03, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0.04],
                                   [0.02, -0.01, 0, 0, 0, 0.03]])
def test_crescent_rates_reproduce_the_planar_twist(front_only, twist):
    chain, geoms = front_only
    ctrl = ScrewMotionController(chain, geoms, COND_MAX, "planar")
    q = crescent(chain)
    contact = list(geoms)
    res = ctrl.solve(q, contact, twist).require()
    assert res.rank == 3 and res.condition <= COND_MAX
    assert res.residual <= 1e-12  # one screw per actuated joint: B is square diagonal
    np.testing.assert_allclose(ctrl.forward_twist(q, contact, res.rates), twist, rtol=RTOL, atol=1e-14)


def test_se3_twist_with_contacts_all_around(front_only):
    chain, geoms = front_only
    ctrl = ScrewMotionController(chain, geoms, COND_MAX, "se3")
    # a coil (equal bends and twists: a discrete helix); a near-straight robot has little
    # roll authority (moment arm r against its length L), hence a coiled shape
    q = {b: 0.5 for b in chain.bend_joints()} | {t: 0.6 for t in chain.twist_joints()}
    # contacts on every side (a tube): down rotates about the tail's x axis
    down = {link: np.array([0.0, math.cos(2.1 * k), math.sin(2.1 * k)]) for k, link in enumerate(geoms)}
    twist = np.array([0.04, -0.02, 0.01, 0.03, -0.05, 0.02])
    res = ctrl.solve(q, list(geoms), twist, down).require()
    assert res.rank == 6
    np.testing.assert_allclose(ctrl.forward_twist(q, list(geoms), res.rates, down), twist, rtol=RTOL, atol=1e-14)


def test_pencil_is_reported_not_divided_through(front_only):
    chain, geoms = front_only
    ctrl = ScrewMotionController(chain, geoms, COND_MAX, "planar")
    # straight robot, all screw axes parallel and collinear: rows (cos a, -h sin a, -h sin a x_k)
    # span only 2 of the 3 planar directions
    res = ctrl.solve(None, list(geoms), [0.0, 0.0, 0.0, 0.0, 0.0, 0.05])
    assert not res.ok and res.rank == 2 and math.isinf(res.condition)
    assert all(r == 0.0 for r in res.rates.values())
    with pytest.raises(SingularContactError, match="rank 2 for 3 commanded twist directions"):
        res.require()
    with pytest.raises(SingularContactError):
        ctrl.forward_twist(None, list(geoms), res.rates)
    # near-pencil: a barely bent robot is ill-conditioned, not solved
    near = ctrl.solve({b: 1e-4 for b in chain.bend_joints()}, list(geoms), [0, 0, 0, 0, 0, 0.05])
    assert not near.ok and COND_MAX < near.condition < math.inf
    # too few contacts: two screws cannot set three planar rates
    few = ctrl.solve(crescent(chain), ["module_1_screw_link", "module_9_screw_link"], [0.05, 0, 0, 0, 0, 0])
    assert not few.ok and few.rank == 2


def test_counter_rotating_pair_drives_along_its_axis_only():
    chain, geoms = build("eels_1_0_alternating", n_modules=4)
    basis = np.eye(6)[:, [0, 1]]  # vx, vy
    ctrl = ScrewMotionController(chain, geoms, COND_MAX, basis)
    g = geoms["module_2_screw_link"]
    res = ctrl.solve(None, list(geoms), [0.05, 0, 0, 0, 0, 0])
    # the pair's rows: (c a - h s e_th) and (c a + h s e_th) -> axial advance h omega r tan(alpha)
    assert res.rates["module_2_screw"] == pytest.approx(0.05 / (g.handedness * g.radius * math.tan(g.lead_angle)),
                                                        rel=RTOL)
    assert res.residual <= 1e-14
    # the pair cancels sideways drive: the pair's two rows demand e_theta . v = 0, so a
    # sideways command leaves a residual h r sin(alpha)-weighted mismatch, reported
    side = ctrl.solve(None, list(geoms), [0.0, 0.05, 0, 0, 0, 0])
    assert side.rates["module_2_screw"] == pytest.approx(0.0, abs=1e-12)
    s = math.sin(g.lead_angle)
    assert side.residual == pytest.approx(math.sqrt(len(geoms)) * s * 0.05, rel=1e-12)


def test_shape_rate_term_matches_finite_differences(front_only):
    chain, geoms = front_only
    ctrl = ScrewMotionController(chain, geoms, COND_MAX, "planar")
    q = crescent(chain)
    qd = {"module_2_bend": 0.3, "module_5_twist": -0.2, "module_7_bend": 0.1}
    rows = ctrl.rows(q, theta_dot=qd)
    poses = chain.link_poses(q)
    h = 1e-6
    shifted = [chain.link_poses({k: q.get(k, 0.0) + s * h * qd.get(k, 0.0) for k in set(q) | set(qd)})
               for s in (1.0, -1.0)]
    for link, r in rows.items():
        # the material point of the screw link at the contact point, moved by the shape
        # joints alone; central differences: error O(h^2) ~ 1e-12 plus rounding 1e-16/h
        p_link = np.linalg.solve(poses[link], np.append(r.point, 1.0))
        v_fd = ((shifted[0][link] @ p_link)[:3] - (shifted[1][link] @ p_link)[:3]) / (2 * h)
        assert r.shape_term == pytest.approx(r.e_v @ v_fd, abs=1e-8)
    assert any(abs(r.shape_term) > 1e-3 for r in rows.values())


def test_bad_input(front_only):
    chain, geoms = front_only
    ctrl = ScrewMotionController(chain, geoms, COND_MAX, "planar")
    with pytest.raises(SnakeModelError, match="outside the commanded subspace"):
        ctrl.solve(crescent(chain), list(geoms), [0, 0, 0.1, 0, 0, 0])
    with pytest.raises(SnakeModelError, match="module_1_shell are not screws"):
        ctrl.solve(None, ["module_1_shell"], [0.1, 0, 0, 0, 0, 0])
    with pytest.raises(SnakeModelError, match="twist must be 6 finite numbers"):
        ctrl.solve(None, [], [0.1, 0, 0])
    with pytest.raises(SnakeModelError, match="'down' at screw"):
        ctrl.solve(None, list(geoms), [0.1, 0, 0, 0, 0, 0], down=(1.0, 0.0, 0.0))
    with pytest.raises(SnakeModelError, match="not screw links of the chain"):
        ScrewMotionController(chain, {"base_link": geoms["module_1_screw_link"]}, COND_MAX)
    with pytest.raises(SnakeModelError, match="subspace 'xy'"):
        ScrewMotionController(chain, geoms, COND_MAX, "xy")
