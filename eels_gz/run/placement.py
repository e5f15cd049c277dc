"""Placement that needs the engine, before the run (EELS-DARTS §2.2.6): the settling loop.

A scenario's pure ``place(ctx)`` (eels_gz.scenarios) lays the robot out and calls ``ctx.settle(base_pose,
joints, params)``, which :func:`settler` makes for the run's simulation: the robot is put at
``base_pose`` (the description's root link, 4x4 world) with ``joints`` (rad), and with gravity off,
every step:

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

On settling, gravity comes back on (the world's gravity from before) and the joint angles the robot
settled in become the joint controller's set points. On timeout gravity is restored too; the
:class:`~eels_gz.scenarios.Placement` returned then has status ``placement_failed`` and the reason
(the run ends with it before its first step). Its ``report`` is the settling's: ``converged``,
``timed_out``, ``time`` (s), ``penetration_m``, ``message``. The engine is reached only through the DART adapter
(:class:`~eels_gz.dart.simulation.Simulation`, :mod:`eels_gz.dart.body_points`); the scenario's own
systems do not run during the settling (eels_gz.run.placing holds them out).
"""

from __future__ import annotations

import functools
import logging

import numpy as np

from eels_gz.dart.body_points import BodyPoints, body_origins, joint_positions
from eels_gz.errors import ConfigError
from eels_gz.scenarios import Placement
from eels_gz.snake.chain import SnakeChain
from eels_gz.snake.params import PlacementParams
from eels_gz.snake.placement import SettlingMonitor, sample_points, settling_forces

log = logging.getLogger(__name__)
PLACEMENT_FAILED = "placement_failed"
RESAMPLE_EVERY = 20  # steps between choices of the terrain-facing sample points
# Each spring gets a damper c = k * DAMPING_TIME on its point's velocity: with
# gravity off nothing else takes the energy out, and a robot that rests on
# regularized (creeping) screw friction under unbalanced springs would slide
# on for ever; the damper slows that creep below the settling threshold.
DAMPING_TIME = 0.5  # s


class _Robot:
    """The robot of ``sim`` as the settling loop sees it: its chain, joint angles, base pose and the
    joint-control system's set points."""

    def __init__(self, sim):
        self.sim = sim
        self.chain = SnakeChain.from_model(sim.robot_source_model)
        self.joints = list(self.chain.joints)
        self.shape_joints = set(self.chain.bend_joints() + self.chain.twist_joints())
        self.joint_control = next((s.system for s in sim.systems if s.module == "joint_control"), None)
        if self.joint_control is None:
            raise ConfigError("placement: the robot has no joint_control system to hold its shape while it settles")

    def angles(self) -> dict[str, float]:
        return joint_positions(self.sim, self.joints)

    def base_pose(self) -> np.ndarray:
        return self.sim.frame_world_pose(self.chain.root)

    def hold_shape(self) -> None:
        """Joint control's position set points: the shape joints where they are now."""
        shape = {n: v for n, v in self.angles().items() if n in self.shape_joints}
        names = sorted(shape)
        self.joint_control.set_targets(names, [shape[n] for n in names], [float("nan")] * len(names))


def settle(sim, terrain, base_pose, joints: dict[str, float], params: PlacementParams,
           resample_every: int = RESAMPLE_EVERY) -> Placement:
    """Put the robot of ``sim`` at ``base_pose`` with ``joints`` and run the settling loop (module
    docstring) in ``terrain`` (a distance field); the settled :class:`Placement` (every 1-DOF joint of
    the robot's chain), status ``placement_failed`` on a timeout. The terrain-facing sample points are
    chosen again every ``resample_every`` steps (the facing side turns slowly); in between the same
    link points are followed with the bodies."""
    robot = _Robot(sim)
    sim.place_robot(base_pose, joints, robot.chain.root)
    g = np.asarray(sim.world.getGravity(), float).copy()
    sim.set_gravity(np.zeros(3))
    monitor = SettlingMonitor(params.speed_threshold, params.hold_time, params.timeout)
    robot.hold_shape()
    t0 = sim.time
    report, steps, pts = None, 0, None
    try:
        while True:
            if steps % resample_every == 0:
                sp = sample_points(robot.chain, robot.angles(), robot.base_pose(), terrain, params.samples_per_link)
                pts = BodyPoints(sim, sp.links, sp.offsets)
                # joint control holds the shape the springs have brought it to: the PID's steady error
                # under the spring loads would otherwise creep on (integral action) and never settle
                robot.hold_shape()
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
        sim.set_gravity(g)
    if report.converged:
        robot.hold_shape()
        log.info("%s", report.message)
    else:
        log.warning("%s", report.message)
    figures = {"converged": report.converged, "timed_out": report.timed_out, "time": report.time,
               "penetration_m": report.penetration, "message": report.message}
    return Placement(robot.base_pose(), robot.angles(), report=figures,
                     status="ok" if report.converged else PLACEMENT_FAILED,
                     message="" if report.converged else report.message)


def settler(sim, terrain):
    """``ctx.settle`` for a placement on ``sim``: ``settle(base_pose, joints, params)``."""
    return functools.partial(settle, sim, terrain)
