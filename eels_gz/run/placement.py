"""Placement in the embedded host (EELS-DARTS §2.2.6): the settling loop.

With gravity off, every step:

1. :func:`~eels_gz.snake.placement.sample_points` gives terrain-facing points
   on the robot's collision cylinders (world) and their offsets in their links;
2. :func:`~eels_gz.snake.placement.settling_forces` gives the springs
   ``F = -k d n`` toward the nearest terrain point, with a damper
   ``-k DAMPING_TIME v`` on each point's velocity ``v``;
3. each force is applied at its point as a world force on the body that
   carries the link (summed per body into a force at the body origin and a
   torque), for one step, while joint control holds the shape;
4. :class:`~eels_gz.snake.placement.SettlingMonitor` watches the robot's
   body origins for motion (surface points of a free-spinning screw move while
   the robot rests) and the sample points' distances for penetration.

On settling, gravity comes back on (the world's gravity from before) and the
joint angles the robot settled in become the joint controller's set points.
On timeout gravity is restored too and the report says why placement failed
(:attr:`PlacementReport.message`); :func:`settle` never raises on a timeout,
the caller decides (scenarios put the message in the run status).
"""

from __future__ import annotations

import logging

import numpy as np

from eels_gz.snake.params import PlacementParams
from eels_gz.snake.placement import PlacementReport, SettlingMonitor, sample_points, settling_forces

log = logging.getLogger(__name__)
RESAMPLE_EVERY = 20  # steps between choices of the terrain-facing sample points
# Each spring gets a damper c = k * DAMPING_TIME on its point's velocity: with
# gravity off nothing else takes the energy out, and a robot that rests on
# regularized (creeping) screw friction under unbalanced springs would slide
# on for ever; the damper slows that creep below the settling threshold.
DAMPING_TIME = 0.5  # s


def _set_gravity(sim, g: np.ndarray) -> None:
    sim.world.setGravity(np.asarray(g, float))
    sim.ecm.gravity = np.asarray(g, float).copy()


class BodyPoints:
    """Points fixed in the robot's bodies: link names and link-frame offsets
    (N, 3), mapped once to their DART bodies (merged links followed)."""

    def __init__(self, sim, links: tuple[str, ...], offsets: np.ndarray):
        skel = sim.robot_skeleton
        names: list[str] = []
        index = np.empty(len(links), dtype=int)
        p_body = np.empty((len(links), 3))
        for k, (link, p) in enumerate(zip(links, np.asarray(offsets, float))):
            frame = sim.robot_frames.get(link)
            name = frame.body if frame else link
            if name not in names:
                names.append(name)
            index[k] = names.index(name)
            p_body[k] = (frame.pose @ np.r_[p, 1.0])[:3] if frame else p
        self.bodies = [skel.getBodyNode(n) for n in names]
        self.index, self.p_body = index, p_body

    def transforms(self) -> np.ndarray:
        return np.array([b.getWorldTransform().matrix() for b in self.bodies])

    def world(self, T: np.ndarray | None = None) -> np.ndarray:
        """World positions (N, 3) at the current state."""
        T = self.transforms() if T is None else T
        Ti = T[self.index]
        return np.einsum("nij,nj->ni", Ti[:, :3, :3], self.p_body) + Ti[:, :3, 3]

    def velocities(self, T: np.ndarray | None = None) -> np.ndarray:
        """World velocities (N, 3) of the points at the current state."""
        T = self.transforms() if T is None else T
        v = np.array([b.getLinearVelocity() for b in self.bodies])
        w = np.array([b.getAngularVelocity() for b in self.bodies])
        lever = self.world(T) - T[self.index, :3, 3]
        return v[self.index] + np.cross(w[self.index], lever)

    def apply(self, forces: np.ndarray) -> None:
        """World ``forces`` (N, 3) at the points for one step: one force at each
        body origin plus the world moment about it."""
        T = self.transforms()
        lever = self.world(T) - T[self.index, :3, 3]
        f_sum = np.zeros((len(self.bodies), 3))
        m_sum = np.zeros((len(self.bodies), 3))
        np.add.at(f_sum, self.index, forces)
        np.add.at(m_sum, self.index, np.cross(lever, forces))
        zero = np.zeros(3)
        for body, f, m in zip(self.bodies, f_sum, m_sum):
            body.addExtForce(f, zero, False, True)
            body.addExtTorque(m, False)


def body_origins(sim) -> np.ndarray:
    """World positions (B, 3) of every robot body origin: they move only when
    the robot does (a spinning screw's surface points move, its origin not)."""
    skel = sim.robot_skeleton
    return np.array([skel.getBodyNode(i).getWorldTransform().translation() for i in range(skel.getNumBodyNodes())])


def settle(sim, snake, terrain, params: PlacementParams, resample_every: int = RESAMPLE_EVERY) -> PlacementReport:
    """Run the settling loop on ``snake`` (a :class:`~eels_gz.scenarios.snake_host.SnakeHost`) in
    ``terrain`` (a distance field); returns the :class:`PlacementReport` (converged or timed out).

    The terrain-facing sample points are chosen again every ``resample_every``
    steps (the facing side turns slowly); in between the same link points are
    followed with the bodies.
    """
    g = np.asarray(sim.world.getGravity(), float).copy()
    _set_gravity(sim, np.zeros(3))
    monitor = SettlingMonitor(params.speed_threshold, params.hold_time, params.timeout)
    snake.command(positions={n: v for n, v in snake.angles().items() if n in snake.shape_joints})
    t0 = sim.time
    report, steps, pts = None, 0, None
    try:
        while True:
            if steps % resample_every == 0:
                sp = sample_points(snake.chain, snake.angles(), snake.base_pose(), terrain, params.samples_per_link)
                pts = BodyPoints(sim, sp.links, sp.offsets)
                # joint control holds the shape the springs have brought it to: the PID's steady error
                # under the spring loads would otherwise creep on (integral action) and never settle
                snake.command(positions={n: v for n, v in snake.angles().items() if n in snake.shape_joints})
            forces, distances = settling_forces(pts.world(), terrain, params.stiffness)
            forces -= params.stiffness * DAMPING_TIME * pts.velocities()
            if steps:
                report = monitor.update(sim.time - t0, body_origins(sim), distances)
                if report is not None:
                    break
            else:
                monitor.update(1e-12, body_origins(sim), distances)
            pts.apply(forces)
            sim.step()
            steps += 1
    finally:
        _set_gravity(sim, g)
    if report.converged:
        snake.command(positions={n: v for n, v in snake.angles().items() if n in snake.shape_joints})
        log.info("%s", report.message)
    else:
        log.warning("%s", report.message)
    return report


def bore_center(terrain, z: float, around=(0.0, 0.0), reach: float = 1.0, step: float = 0.02) -> np.ndarray:
    """Centre (3,) of a vertical shaft's cross-section at height ``z`` (m): the
    point of the horizontal square of half-side ``reach`` about ``around``
    farthest from the terrain (grid of ``step``, m)."""
    g = np.arange(-reach, reach + step / 2, step)
    X, Y = np.meshgrid(g + around[0], g + around[1])
    pts = np.column_stack([X.ravel(), Y.ravel(), np.full(X.size, float(z))])
    d, _ = terrain.query(pts)
    return pts[int(np.argmax(d))]
