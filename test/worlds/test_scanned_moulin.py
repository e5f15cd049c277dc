"""A robot in a *scanned* moulin (issue 22, use in a run).

The scan is built from the shipped ``moulin`` generator's own surface: points sampled on the bore wall of
``make_primitive("moulin")`` between 4 m and 1 m down (so the scan is open at both ends), 5 mm of noise,
and eight occlusion holes 0.4 m across (wider than a screw), two of them where the robot comes to touch
the wall. It goes through the scan pipeline at its defaults (``eels-gz world pointcloud``'s
``scan_surface``) into a world.

EELS 1.0 (front-only screws, five modules) is laid on a helix in the shaft and settled by the placement
algorithm (gravity off, springs to the nearest ice, stock contact on the one-sided collision mesh), as in
test/plugins/test_placement.py. Then it hangs, gravity on and joints held, from a stiff tether at its
top module, while a second tether pulls the point that touches over a hole outward through the hole
with 300 N. Checks:

- placement converges, with no sample point more than the issue's 5 mm inside the ice, and the robot
  touches the wall (a point within 1 cm), some of it over a hole;
- hanging, no point of the robot goes more than 5 mm into the *true* ice (the generator's exact
  signed distance), over the holes too: the reconstruction closed them, so nothing falls through;
  the tether holds it (its top moves less than 2 cm).

The test fails if the holes are left open (tried with a fill radius of 0.06 m: a screw sinks 29 mm
into the hole already during placement).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import trimesh

from eels_gz import config
from eels_gz.dart.body_points import joint_positions
from eels_gz.run.placing import settle
from eels_gz.run.resolve import resolve_run
from eels_gz.run.runner import prepare
from eels_gz.scenarios.moulin_descent import bore_center
from eels_gz.snake.chain import SnakeChain
from eels_gz.snake.tethers import Tether
from eels_gz.snake.params import load_snake_params
from eels_gz.snake.settling import helix_shape, sample_points
from eels_gz.terrain.pointcloud import ScanOptions, scan_surface
from eels_gz.terrain.worldgen import make_primitive, scan_terrain
from eels_gz.terrain.writers import write_terrain

Z_SCAN = (-4.0, -1.0)  # m, the scanned part of the 10 m shaft
Z_HELIX = -2.0  # m, the helix centre's height
HOLE_R = 0.2  # m: 0.4 m across, more than a screw (0.18 m), less than twice the default fill radius
PENETRATION_MAX = 0.005  # m, the placement bound, held while hanging too
HANG_STEPS = 1500  # 1.5 s at 1 ms
PULL = 300.0  # N, outward on the point over a hole
N_MODULES = 5  # a 2 m EELS 1.0: half a turn of helix touches the wall all round, in seconds of test


def moulin_wall_scan(n: int = 40_000, seed: int = 0, noise: float = 0.005):
    """Points on the generator's bore wall in Z_SCAN, holes and noise; also the generator's terrain."""
    moulin = make_primitive("moulin")  # the shipped recipe's defaults, round all the way down
    mesh = moulin.collision
    c, nrm = mesh.triangles_center, mesh.face_normals
    # the bore's faces: their normals (out of the ice) point at the shaft's axis, i.e. at the centroid of
    # the faces at their height (inner and outer walls share the centre line); caps excluded
    slab = np.round(c[:, 2] / 0.1).astype(int)
    keys, inverse = np.unique(slab, return_inverse=True)
    centre = np.column_stack([np.bincount(inverse, c[:, k]) / np.bincount(inverse) for k in range(2)])[inverse]
    bore = (np.einsum("ni,ni->n", nrm[:, :2], centre - c[:, :2]) > 0) & (np.abs(nrm[:, 2]) < 0.9)
    bore &= (c[:, 2] > Z_SCAN[0]) & (c[:, 2] < Z_SCAN[1])
    wall = mesh.submesh([np.flatnonzero(bore)], append=True)
    pts, face = trimesh.sample.sample_surface(wall, 3 * n, seed=seed)
    rng = np.random.default_rng(seed)
    # holes where the settled robot touches the wall (found by settling it in this scan without them; the
    # reconstruction closes them, so it settles the same way), and a ring of others
    theta = np.arctan2(pts[:, 1], pts[:, 0])
    keep = np.ones(len(pts), bool)
    holes = [(-0.8, -2.02), (-1.76, -2.5)] + [(k * np.pi / 3, Z_HELIX - 0.9) for k in range(6)]
    for t0, z0 in holes:
        arc = np.angle(np.exp(1j * (theta - t0))) * 0.8
        keep &= arc**2 + (pts[:, 2] - z0) ** 2 > HOLE_R**2
    pts = pts[keep][:n] + rng.normal(0.0, noise, (min(n, int(keep.sum())), 3)) * wall.face_normals[face[keep][:n]]
    return pts, holes, moulin


@pytest.fixture(scope="module")
def scanned(tmp_path_factory):
    out = tmp_path_factory.mktemp("scanned_moulin")
    pts, holes, moulin = moulin_wall_scan()
    surface = scan_surface(pts, ScanOptions(), "moulin scan")
    write_terrain(scan_terrain(surface, "pointcloud", "scan of the moulin generator's wall"), "moulin_scan",
                  out / "models", out / "worlds")
    truth = moulin.build_field()  # the generator's exact signed distance grid
    return out, surface, holes, truth


def test_scanned_moulin_placement_and_hang(scanned, monkeypatch):
    out, surface, holes, truth = scanned
    monkeypatch.setenv("GZ_SIM_RESOURCE_PATH", str(out / "models"))
    cfg = config.resolve(overrides={"robot": {"name": "eels_1_0_front_only", "n_modules": N_MODULES},
                                    "world": str(out / "worlds" / "moulin_scan.sdf"), "sensors": {"enabled": False}})
    sim = prepare(resolve_run(cfg)).sim
    chain = SnakeChain.from_urdf(sim.robot_source_urdf, sim.robot_description.source)
    angles = lambda: joint_positions(sim, chain.joints)  # noqa: E731
    base_pose = lambda: sim.frame_world_pose(chain.root)  # noqa: E731
    field = surface.field
    params = replace(load_snake_params().placement, helix_radius=0.5)
    shape = helix_shape(chain, params.helix_radius, params.helix_pitch, bore_center(field, Z_HELIX),
                        (0.0, 0.0, -1.0), (1.0, 0.0, 0.0))
    report = settle(sim, field, shape.base_pose, shape.angles, params).report
    assert report["converged"], report["message"]
    pts = sample_points(chain, angles(), base_pose(), field, params.samples_per_link)
    d = field.query(pts.points)[0]
    assert d.min() > -PENETRATION_MAX and d.min() < 0.01
    touching = pts.points[d < 0.01]
    theta = np.arctan2(touching[:, 1], touching[:, 0])
    over_hole = [np.min(np.hypot(np.angle(np.exp(1j * (theta - t0))) * 0.8, touching[:, 2] - z0)) < HOLE_R
                 for t0, z0 in holes]
    assert any(over_hole), "no contact over a hole: move the holes to where the robot touches"

    # hang from a stiff tether at the top module (the helix's tail is on top), gravity on, joints held;
    # a second tether pulls the point touching over a hole outward through the hole's centre with
    # PULL N, as a rope over a lip would: where the wall has a hole, it presses the screw into it
    poses = chain.link_poses(angles(), base_pose())
    top = max(chain.links, key=lambda link: poses[link][2, 3])
    k = int(np.argmin([np.min(np.hypot(np.angle(np.exp(1j * (theta - t0))) * 0.8, touching[:, 2] - z0))
                       for t0, z0 in holes]))
    t0, z0 = holes[k]
    near = np.flatnonzero(d < 0.01)[np.argmin(np.hypot(np.angle(np.exp(1j * (theta - t0))) * 0.8,
                                                         touching[:, 2] - z0))]
    anchor = (2.0 * np.cos(t0), 2.0 * np.sin(t0), z0)  # 1.2 m beyond the 0.8 m wall, through the hole
    stretch = float(np.linalg.norm(np.array(anchor) - pts.points[near]))
    # the tethers system (plugins_py/tethers.py), attached here to the placed robot
    import gz_compat
    import tethers as tether_system

    tethers = tether_system.Tethers()
    tethers.model = gz_compat.sim.Model(sim.robot_entity)
    tethers.setup(sim.ecm, [Tether(top, (0.0, 0.0, 0.0), None, 1.0e5, 2.0e3),
                            Tether(pts.links[near], tuple(pts.offsets[near]), anchor, PULL / stretch, 20.0)],
                  sim.robot_source_urdf, "test")
    sim.add_pre_update(tethers.pre_update)
    z_top = poses[top][2, 3]
    worst = np.inf
    for step in range(HANG_STEPS):
        sim.step()
        if step % 50 == 49:
            p = sample_points(chain, angles(), base_pose(), field, params.samples_per_link)
            worst = min(worst, float(truth.query(p.points)[0].min()))
    assert worst > -PENETRATION_MAX, worst
    drop = z_top - chain.link_poses(angles(), base_pose())[top][2, 3]
    assert abs(drop) < 0.02, drop
