"""An analytic terrain for the DEM tests and bench/terrain_dem.py, and the check that a rover placed on
the DEM world rests on the *true* surface.

The surface ``z(x, y)`` is a sum of sinusoids: kilometre-scale relief (tens of metres) and metre-scale
undulations (decimetres). Sampled at posts of spacing ``s`` and interpolated bilinearly, it is off by
at most about ``(|z_xx| + |z_yy|) s^2 / 8``: under 0.022 1/m here, so 0.2 mm at 0.25 m posts and
2.8 mm at 1 m posts: the DEM's own sampling leaves the 1 cm bound on the rover's rest to the world.
"""

from __future__ import annotations

import numpy as np

# (amplitude m, wavelength x m, wavelength y m, phase rad)
WAVES = ((20.0, 3000.0, 2500.0, 0.3), (4.0, 700.0, 900.0, 1.1), (0.3, 41.0, 47.0, 2.0), (0.1, 29.0, 37.0, 0.7))


def height(x, y) -> np.ndarray:
    """True surface height (m) at world (x, y) (m)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    z = np.zeros(np.broadcast(x, y).shape)
    for a, lx, ly, ph in WAVES:
        z += a * np.sin(2 * np.pi * x / lx + ph) * np.cos(2 * np.pi * y / ly - ph)
    return z


def raster(n: int, spacing: float) -> np.ndarray:
    """``heights[j, i]`` at x = i s, y = j s (a ``.npy`` DEM read with reference 0 0 0)."""
    u = np.arange(n) * spacing
    out = np.empty((n, n))
    for j0 in range(0, n, 512):  # row blocks keep the temporaries small for 4097^2
        out[j0:j0 + 512] = height(u[None, :], u[j0:j0 + 512, None])
    return out


def true_gap(centres: np.ndarray, radius: np.ndarray, step: float = 2e-3) -> np.ndarray:
    """Distance (m) from each wheel centre to the true surface, minus the wheel radius: the nearest
    point is searched over a grid of ``step`` within a radius (exact to step^2 / (8 R))."""
    out = np.empty(len(centres))
    for k, (c, r) in enumerate(zip(centres, np.broadcast_to(radius, len(centres)))):
        u = np.arange(-r, r + step / 2, step)
        X, Y = np.meshgrid(c[0] + u, c[1] + u)
        Z = height(X, Y)
        d = float(np.sqrt(np.min((X - c[0]) ** 2 + (Y - c[1]) ** 2 + (Z - c[2]) ** 2)))
        out[k] = (d if height(c[0], c[1]) < c[2] else -d) - r
    return out


def rest_on_dem(world, robot: str, spots, steps: int = 300):
    """Place ``robot`` (ROAMS placement on the world's heightfield) at each (x, y) of ``spots`` in the
    host, let it settle for ``steps`` steps under gravity, and return each wheel's true gap (m) per spot
    (spots x wheels). One simulation: the robot is moved from spot to spot."""
    from eels_gz import registry
    from eels_gz.description.assemble import robot_description
    from eels_gz.description.xacro_loader import load_description
    from scipy.spatial.transform import Rotation

    from eels_gz.gzapi import gzsim
    from eels_gz.dart.dart_build import isometry
    from eels_gz.dart.simulation import RobotSpec, Simulation
    from eels_gz.rover.resting_pose import RoverKinematics, place
    from eels_gz.terrain.world_terrain import find_terrain_field

    kin = RoverKinematics(load_description(registry.robot(robot).path).model)
    field = find_terrain_field(world)
    placements = [place(kin, field, x, y) for x, y in spots]
    desc = robot_description(registry.robot(robot), gazebo=True)
    sim = Simulation(world, RobotSpec(robot, desc, list(placements[0].pose)))
    skel = sim.robot_skeleton
    model = gzsim.Model(sim.robot_entity)
    gaps = []
    for p in placements:
        skel.setVelocities(np.zeros(skel.getNumDofs()))
        pose = skel.getJoint(0)  # the free root joint
        T = np.eye(4)
        T[:3, :3] = Rotation.from_euler("xyz", p.pose[3:6]).as_matrix()
        T[:3, 3] = p.pose[:3]
        pose.setPositions(pose.convertToPositions(isometry(T)))
        for name, q in p.joints.items():
            gzsim.Joint(model.joint_by_name(sim.ecm, name)).reset_position(sim.ecm, [q])
        for _ in range(steps):
            sim.step()
        centres = np.array([skel.getBodyNode(f"{w}_wheel_link").getWorldTransform().translation()
                            for w in kin.names])
        gaps.append(true_gap(centres, kin.radius))
    return np.array(gaps), kin
