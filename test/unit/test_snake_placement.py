"""Placement (EELS-DARTS §2.2.6, pure parts): the spring law on analytic
terrain (direction = -gradient, magnitude = k |d|, analytic normal equal to
the finite-difference gradient), terrain-facing sample points, the initial
shapes, and the settling monitor's convergence and timeout reports."""

from __future__ import annotations


import numpy as np
import pytest

from eels_gz.description.assemble import robot_description
from eels_gz.errors import SnakeModelError
from eels_gz.registry import eels_variants, robot
from eels_gz.snake.chain import SnakeChain
from eels_gz.snake.params import load_snake_params
from eels_gz.snake.settling import (
    SettlingMonitor,
    crescent_shape,
    distance_gradient,
    helix_shape,
    sample_points,
    settling_forces,
    straight_shape,
)
from eels_gz.terrain.primitives import Plane, Tube

K = load_snake_params().placement.stiffness


@pytest.fixture(scope="module")
def chain():
    return SnakeChain.from_urdf(robot_description(robot("eels_1_0_front_only"), gazebo=False).urdf)


TERRAINS = [Plane(np.array([0.0, 0.0, -0.3]), np.array([0.2, -0.1, 1.0])),
            Tube(0.8, center=np.array([0.0, 0.0, 1.0]), axis=np.array([0.0, 1.0, 1.0]))]


@pytest.mark.parametrize("terrain", TERRAINS, ids=["plane", "tube"])
def test_force_is_minus_k_d_gradient(terrain):
    rng = np.random.default_rng(4)
    pts = rng.uniform(-0.5, 0.5, size=(200, 3)) + [0.0, 0.0, 1.0]
    F, d = settling_forces(pts, terrain, K)
    g = distance_gradient(terrain, pts)
    # central differences of an exact distance: O(h^2 curvature) + rounding 1e-16/h ~ 1e-10
    np.testing.assert_allclose(np.linalg.norm(g, axis=1), 1.0, atol=1e-8)
    np.testing.assert_allclose(F, -K * d[:, None] * g, atol=K * 1e-8)
    np.testing.assert_allclose(np.linalg.norm(F, axis=1), K * np.abs(d), rtol=1e-12)
    # the force points at the nearest surface point: p + F/k is on the surface
    d_after, _ = terrain.query(pts + F / K)
    np.testing.assert_allclose(d_after, 0.0, atol=1e-12)


def test_sample_points_face_the_terrain(chain):
    v = eels_variants()["eels_1_0_front_only"]
    h = 0.5
    base = np.eye(4)
    base[2, 3] = h
    plane = Plane()
    sp = sample_points(chain, None, base, plane, 3)
    n_cyl = len(chain.cylinders)
    assert len(sp.points) == 3 * n_cyl
    # the lowest line of each cylinder: z = h - r, with r that link's radius
    radius = {"base_link": v["tail"]["radius"], "yoke": v["shell"]["radius"], "shell": v["shell"]["radius"],
              "screw": v["screw"]["radius"]}
    for link, p in zip(sp.links, sp.points):
        key = "base_link" if link == "base_link" else link.split("_")[2]
        assert p[2] == pytest.approx(h - radius[key], abs=1e-12)
    # offsets are in the link frames: mapping them back gives the world points
    poses = chain.link_poses(None, base)
    back = np.array([(poses[link] @ np.append(o, 1.0))[:3] for link, o in zip(sp.links, sp.offsets)])
    np.testing.assert_allclose(back, sp.points, atol=1e-12)
    F, d = settling_forces(sp.points, plane, K)
    np.testing.assert_allclose(F[:, :2], 0.0, atol=1e-12)
    assert (F[:, 2] < 0).all()


def test_initial_shapes(chain):
    assert set(straight_shape(chain).values()) == {0.0}
    total = load_snake_params().placement.crescent_bend
    cres = crescent_shape(chain, total)
    bends = [cres[b] for b in chain.bend_joints()]
    assert sum(bends) == pytest.approx(total, abs=1e-12) and max(bends) == min(bends)
    with pytest.raises(SnakeModelError, match="outside 'module_1_bend' limits"):
        crescent_shape(chain, 20.0)
    p = load_snake_params().placement
    shape = helix_shape(chain, p.helix_radius, p.helix_pitch, center=(0, 0, 0), axis=(0, 0, 1))
    fk = chain.module_points(shape.angles, shape.base_pose)
    np.testing.assert_allclose(np.linalg.norm(fk[:, :2], axis=1), p.helix_radius, atol=1e-10)
    with pytest.raises(SnakeModelError, match="past the limits"):
        helix_shape(chain, 0.2, 0.1)
    # the shipped helix also fits EELS 1.5 (the tube and moulin robot)
    c15 = SnakeChain.from_urdf(robot_description(robot("eels_1_5"), gazebo=False).urdf)
    assert helix_shape(c15, p.helix_radius, p.helix_pitch).max_error < 1e-10


def test_monitor_converges_after_hold_time():
    mon = SettlingMonitor(speed_threshold=0.01, hold_time=0.5, timeout=10.0)
    pts = np.zeros((4, 3))
    dt = 0.1
    reports = []
    for k in range(20):
        # moving at 0.05 m/s for 5 steps, then at 0.005 m/s (below threshold)
        v = 0.05 if k < 5 else 0.005
        pts = pts + [v * dt, 0.0, 0.0]
        reports.append(mon.update(k * dt, pts, np.array([0.001, -0.002, 0.0, 0.01])))
        if reports[-1] is not None:
            break
    rep = reports[-1]
    # first calm step is k = 5 (speed measured over step 4->5); 0.5 s later is k = 10
    assert rep.converged and not rep.timed_out and rep.time == pytest.approx(1.0)
    assert rep.penetration == pytest.approx(0.002)
    assert all(r is None for r in reports[:-1])


def test_monitor_reports_timeout():
    mon = SettlingMonitor(speed_threshold=0.01, hold_time=0.5, timeout=1.0)
    rep = None
    for k in range(12):
        rep = mon.update(k * 0.1, np.full((2, 3), 0.02 * k))
        if rep is not None:
            break
    assert rep is not None and not rep.converged and rep.timed_out
    assert "did not converge within the 1 s timeout" in rep.message
    with pytest.raises(SnakeModelError, match="time must increase"):
        mon.update(0.5, np.zeros((2, 3)))
