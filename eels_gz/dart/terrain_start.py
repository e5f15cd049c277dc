"""The robot and the terrain at the start and during a run: the engine's part of placement.

Placement before the run has one run-side module (:mod:`eels_gz.run.placing`: the scenario's
``place(ctx)``, ``placement.json``, shipped placements), one pure module per robot kind
(:mod:`eels_gz.snake.settling`, :mod:`eels_gz.rover.resting_pose`), the engine-free resting pose of any
robot for Gazebo's spawn (:mod:`eels_gz.spawn`) and this module, what needs the engine.

``robot.pose: auto`` first lays the robot at the origin with its lowest
collision 1 mm above z = 0 (:class:`~eels_gz.dart.simulation.Simulation`);
on a terrain whose extent does not cover the origin (georeferenced), above
the centre of that extent (:func:`eels_gz.spawn.centre_start`).
On any other terrain than a flat ground at z = 0, :func:`place_on_terrain`
then puts it on the terrain under it:

- a rover (a description with ``*_wheel_joint`` wheels) gets the ROAMS
  placement (:func:`eels_gz.rover.resting_pose.place`): base height, roll, pitch
  and suspension angles with every wheel on the surface;
- any other robot keeps its shape and heading: it is pitched about its base
  so that its body origins follow the line fitted (least squares, along the
  robot's horizontal axis) to the terrain under them, then moved along z
  until the lowest corner of its collision boxes is ``clearance`` from the
  terrain's distance field. A robot longer than the terrain's bumps still
  rests on their tops: it settles from there.

The arithmetic is :mod:`eels_gz.spawn`'s, which computes the same pose from
the description alone for Gazebo's spawn (launch/sim.launch.py).

A scenario's placement settles the robot with :func:`settle` (EELS-DARTS §2.2.6): the robot is put at
``base_pose`` (the description's root link, 4x4 world) with ``joints`` (rad), and with gravity off,
every step:

1. :func:`~eels_gz.snake.settling.sample_points` gives terrain-facing points
   on the robot's collision cylinders (world) and their offsets in their links;
2. :func:`~eels_gz.snake.settling.settling_forces` gives the springs
   ``F = -k d n`` toward the nearest terrain point, with a damper
   ``-k DAMPING_TIME v`` on each point's velocity ``v``;
3. each force is applied at its point as a world force on the body that
   carries the link (summed per body into a force at the body origin and a
   torque), for one step, while joint control holds the shape;
4. :class:`~eels_gz.snake.settling.SettlingMonitor` watches the robot's
   body origins for motion (surface points of a free-spinning screw move while
   the robot rests) and the sample points' distances for penetration.

On settling, gravity comes back on (the world's gravity from before) and the joint angles the robot
settled in become the joint controller's set points. On timeout gravity is restored too and the
report says so (:func:`eels_gz.run.placing.settle` turns it into a ``placement_failed`` placement).

:class:`WorldBounds` watches the robot during the run: a body origin deeper
than ``DEPTH`` inside the terrain ends it with ``fell_through_terrain``, a
centre of mass beyond the world's static geometry (``MARGIN`` outside its
bounding box, or below it) with ``left_world`` (or ``fell_through_terrain``
when it went out through the bottom).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import dartpy as dart
import numpy as np

from eels_gz.dart.dart_build import collision_box_corners, isometry
from eels_gz.dart.mass_matrix import body_inertias, center_of_mass
from eels_gz.description.xacro_loader import Description
from eels_gz.errors import ConfigError, PlacementError, TerrainError
from eels_gz.gzapi.gzmath import Pose3d, pose_matrix
from eels_gz.spawn import TOLERANCE, centre_start, drop, slope_rotation

if TYPE_CHECKING:  # the settling's modules are imported by a run that settles, not by every run
    from eels_gz.snake.params import PlacementParams
    from eels_gz.snake.settling import PlacementReport

log = logging.getLogger(__name__)
DEPTH = 0.05  # m: a body origin this deep in the terrain has passed through it (50 x the design penetration)
MARGIN = 1.0  # m: beyond the static geometry's box, the robot has left the world
# m: a given start pose (robot.pose [x, y, z, roll, pitch, yaw]) may put the robot's collision shapes
# this deep into the terrain, 10 x the design penetration (DEPTH / 50): a pose saved from a settled
# run starts as it was; deeper, the robot would start buried (refused, see check_start_pose)
START_DEPTH = 0.01
RESAMPLE_EVERY = 20  # steps between choices of the settling's terrain-facing sample points
# Each settling spring gets a damper c = k * DAMPING_TIME on its point's velocity: with
# gravity off nothing else takes the energy out, and a robot that rests on
# regularized (creeping) screw friction under unbalanced springs would slide
# on for ever; the damper slows that creep below the settling threshold.
DAMPING_TIME = 0.5  # s


def terrain_field(sim):
    """The world's terrain distance field (eels_gz.terrain.world_terrain.find_terrain_field), or None."""
    from eels_gz.terrain.world_terrain import find_terrain_field

    try:
        return find_terrain_field(sim.spec)
    except TerrainError as exc:
        log.warning("world '%s': no terrain distance field (%s); pose auto and the terrain watch use "
                    "the flat ground rule only", sim.spec.name, exc)
        return None


def _state(sim):
    return next(s for s in sim.states if s.skel is sim.robot_skeleton)


def _set_base(sim, T: np.ndarray) -> None:
    skel = sim.robot_skeleton
    skel.getRootJoint().setPositions(dart.dynamics.FreeJoint.convertToPositions(isometry(T)))
    _state(sim).refresh()


def place_on_terrain(sim, description: Description, field, clearance: float) -> dict | None:
    """Put the robot (at the auto pose) on ``field`` under it (module docstring); returns what
    was done (``{"method", "shift"|"pose", ...}``), or None when it already rests on it."""
    skel = sim.robot_skeleton
    if field is None or skel is None or skel.getRootJoint().getNumDofs() != 6:
        return None
    moved = centre_start(field)
    if moved is not None:  # a terrain away from the world origin: start above its centre
        T0 = skel.getRootBodyNode().getWorldTransform().matrix().copy()
        T0[:3, 3] += moved
        _set_base(sim, T0)
    done = _place(sim, description, field, clearance)
    if moved is None:
        return done
    done = done or {"method": "terrain centre"}
    if done["method"] != "terrain centre":
        done["method"] += " at the terrain's centre"
    return done


def _place(sim, description: Description, field, clearance: float) -> dict | None:
    skel = sim.robot_skeleton
    if description.model.is_rover:
        from eels_gz.rover.resting_pose import RoverKinematics

        return _place_rover(sim, RoverKinematics(description.model), field, clearance)
    T = skel.getRootBodyNode().getWorldTransform().matrix()
    pitch = _follow_slope(sim, field, clearance)
    corners = collision_box_corners(skel)
    if not len(corners):
        return None
    shift = drop(field, corners, clearance)
    if shift is None:
        log.warning("pose auto: no terrain under the robot at x=%.3g, y=%.3g; it starts where it was laid, z = %.3g",
                    T[0, 3], T[1, 3], T[2, 3])
        if pitch:
            _set_base(sim, T)
        return None
    if abs(shift) < TOLERANCE and not pitch:
        return None
    T2 = skel.getRootBodyNode().getWorldTransform().matrix().copy()
    T2[2, 3] += shift
    _set_base(sim, T2)
    log.info("pose auto: the robot pitched %.4f rad along the terrain and moved %+.4f m along z onto it", pitch, shift)
    return {"method": "distance field", "shift": shift, "pitch": pitch}


def _follow_slope(sim, field, clearance: float) -> float:
    """Pitch the robot about its base origin so that its body origins follow the terrain's line under
    them (:func:`eels_gz.spawn.slope_rotation`); returns the pitch (rad), 0 when it does not turn."""
    skel = sim.robot_skeleton
    origins = np.array([skel.getBodyNode(i).getWorldTransform().translation() for i in range(skel.getNumBodyNodes())])
    pitch, R = slope_rotation(origins, field, clearance)
    if not pitch:
        return 0.0
    T = skel.getRootBodyNode().getWorldTransform().matrix().copy()
    T[:3, :3] = R @ T[:3, :3]
    _set_base(sim, T)
    return pitch


def _place_rover(sim, kin, field, clearance: float) -> dict | None:
    from eels_gz.gzapi import gzsim
    from eels_gz.rover.resting_pose import CONTACT_TOL, place, surface_distance

    skel = sim.robot_skeleton
    T = skel.getRootBodyNode().getWorldTransform().matrix()
    x, y, yaw = float(T[0, 3]), float(T[1, 3]), float(np.arctan2(T[1, 0], T[0, 0]))
    centres = np.array([skel.getBodyNode(f"{w}_wheel_link").getWorldTransform().translation() for w in kin.names])
    gaps = surface_distance(field, centres, kin.radius) - kin.radius
    if np.all(np.abs(gaps - clearance) <= CONTACT_TOL):
        return None  # every wheel already rests on the ground (flat terrain)
    try:
        p = place(kin, field, x, y, yaw)
    except PlacementError as exc:
        raise PlacementError(f"pose auto: {exc}; give robot.pose [x, y, z, roll, pitch, yaw]") from None
    pose = list(p.pose)
    pose[2] += clearance
    _set_base(sim, pose_matrix(Pose3d(*pose)))
    model = gzsim.Model(sim.robot_entity)
    for name, q in p.joints.items():
        entity = model.joint_by_name(sim.ecm, name)
        if entity != gzsim.NULL_ENTITY:
            gzsim.Joint(entity).reset_position(sim.ecm, [q])
    log.info("pose auto: rover placed on the terrain (ROAMS): base %s", np.round(pose, 4).tolist())
    return {"method": "rover placement", "pose": pose, "joints": p.joints}


class _Robot:
    """The robot of ``sim`` as the settling loop sees it: its chain, joint angles, base pose and the
    joint-control system's set points."""

    def __init__(self, sim):
        from eels_gz.snake.chain import SnakeChain

        self.sim = sim
        self.chain = SnakeChain.from_model(sim.robot_source_model)
        self.joints = list(self.chain.joints)
        self.shape_joints = set(self.chain.bend_joints() + self.chain.twist_joints())
        self.joint_control = next((s.system for s in sim.systems if s.module == "joint_control"), None)
        if self.joint_control is None:
            raise ConfigError("placement: the robot has no joint_control system to hold its shape while it settles")

    def angles(self) -> dict[str, float]:
        from eels_gz.dart.body_points import joint_positions

        return joint_positions(self.sim, self.joints)

    def base_pose(self) -> np.ndarray:
        return self.sim.frame_world_pose(self.chain.root)

    def hold_shape(self) -> None:
        """Joint control's position set points: the shape joints where they are now."""
        shape = {n: v for n, v in self.angles().items() if n in self.shape_joints}
        names = sorted(shape)
        self.joint_control.set_targets(names, [shape[n] for n in names], [float("nan")] * len(names))


def settle(sim, terrain, base_pose, joints: dict[str, float], params: PlacementParams,
           resample_every: int = RESAMPLE_EVERY) -> tuple[np.ndarray, dict[str, float], PlacementReport]:
    """Put the robot of ``sim`` at ``base_pose`` with ``joints`` and run the settling loop (module
    docstring) in ``terrain`` (a distance field); (base pose 4x4, every 1-DOF joint of the robot's chain,
    the settling's report) once it settled or timed out. The terrain-facing sample points are chosen
    again every ``resample_every`` steps (the facing side turns slowly); in between the same link points
    are followed with the bodies."""
    from eels_gz.dart.body_points import BodyPoints, body_origins
    from eels_gz.snake.settling import SettlingMonitor, sample_points, settling_forces

    robot = _Robot(sim)
    sim.place_robot(base_pose, joints, robot.chain.root)
    g = sim.gravity
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
    return robot.base_pose(), robot.angles(), report


def start_penetration(sim) -> tuple[float, str, str, list[float]] | None:
    """The deepest contact of the robot with the world's static geometry at the current pose, from
    the engine's own collision detection on the real shapes: (depth m, robot collision, terrain
    collision, world point), or None when the robot touches nothing static."""
    group = sim.world.getConstraintSolver().getCollisionGroup()
    option = dart.collision.CollisionOption()
    option.enableContact = True
    option.maxNumContacts = 10000
    result = dart.collision.CollisionResult()
    group.collide(option, result)
    robot = sim.robot_skeleton
    deepest = None
    for i in range(result.getNumContacts()):
        c = result.getContact(i)
        nodes = [o.getShapeFrame().asShapeNode() for o in (c.collisionObject1, c.collisionObject2)]
        if any(n is None for n in nodes):
            continue
        skels = [n.getBodyNodePtr().getSkeleton() for n in nodes]
        mine = [s.getName() == robot.getName() for s in skels]
        if mine[0] == mine[1] or skels[1 - mine.index(True)].isMobile():
            continue  # self-contact, or contact with another moving body
        if deepest is None or c.penetrationDepth > deepest[0]:
            k = mine.index(True)
            deepest = (float(c.penetrationDepth), nodes[k].getName(), nodes[1 - k].getName(),
                       [float(v) for v in c.point])
    return deepest


def check_start_pose(sim, pose) -> None:
    """Refuse a given start pose that puts the robot more than START_DEPTH inside the world's static
    geometry (it would run buried, and report ``ok``); ``robot.pose: auto`` places it on the terrain."""
    found = start_penetration(sim)
    if found is None or found[0] <= START_DEPTH:
        return
    depth, mine, theirs, point = found
    raise PlacementError(
        f"robot.pose {list(pose)} puts collision '{mine}' {depth:.3f} m inside the terrain ('{theirs}', at "
        f"{np.round(point, 3).tolist()}); a start pose may reach at most {START_DEPTH:g} m into it. Raise the "
        f"pose (z by about {depth:.3f} m on flat ground) or use robot.pose auto (--set robot.pose=auto), which "
        "places the robot on the terrain")


def static_bounds(sim) -> tuple[np.ndarray, np.ndarray] | None:
    """World bounding box (lo, hi) of every static collision shape, or None if there is none."""
    boxes = []
    for skel in (sim.world.getSkeleton(i) for i in range(sim.world.getNumSkeletons())):
        if skel is sim.robot_skeleton or skel.isMobile():
            continue
        corners = collision_box_corners(skel)
        if len(corners):
            boxes.append((corners.min(axis=0), corners.max(axis=0)))
    if not boxes:
        return None
    return np.min([b[0] for b in boxes], axis=0), np.max([b[1] for b in boxes], axis=0)


class WorldBounds:
    """Whether the robot is still on and in the world (module docstring)."""

    def __init__(self, sim, field=None):
        self.sim = sim
        self.field = field
        self.box = static_bounds(sim)
        # the centre of mass may go this far: MARGIN past the box across, MARGIN below it (no bound above)
        self.limits = (None if self.box is None else
                       ((self.box[0] - MARGIN).tolist(), (self.box[1][:2] + MARGIN).tolist()))
        skel = sim.robot_skeleton
        self.bodies = [skel.getBodyNode(i) for i in range(skel.getNumBodyNodes())] if skel is not None else []
        self.state = next((st for st in sim.states if st.skel is skel), None)
        self.mass, self.com, _ = body_inertias(skel) if skel is not None else (None, None, None)
        self._com = np.empty(3)
        if self.box is None:
            log.warning("world '%s' (%s) has no static collision geometry: nothing holds the robot up",
                        sim.spec.name, sim.spec.file)

    def check(self) -> tuple[str, str] | None:
        """(status, message) if the robot passed through the terrain or left the world, else None."""
        if not self.bodies:
            return None
        t = self.sim.time
        kin = self.state.kinematics() if self.state is not None else None
        if kin is not None and len(kin.T) != len(self.bodies):
            kin = None
        if self.field is not None:
            origins = (kin.T[:, :3, 3] if kin is not None
                       else np.array([b.getWorldTransform().translation() for b in self.bodies]))
            d, _ = self.field.query(origins)
            if d.min() < -DEPTH:
                k = int(np.argmin(d))
                return ("fell_through_terrain", f"body '{self.bodies[k].getName()}' is {-d[k]:.3f} m inside the "
                        f"terrain at t = {t:.4f} s (it passed through it; is the step {self.sim.dt:g} s too long?)")
        if self.box is not None:
            if kin is not None:  # from the step's batched kinematics, as DART's getCOM()
                center_of_mass(kin.T, self.mass, self.com, self._com)
                x, y, z = self._com.tolist()
            else:
                x, y, z = self.sim.robot_skeleton.getCOM().tolist()
            (x0, y0, z0), (x1, y1) = self.limits
            outside = x < x0 or y < y0 or x > x1 or y > y1
            if outside or z < z0:
                lo, hi = self.box
                status = "left_world" if outside else "fell_through_terrain"
                return (status, f"the robot's centre of mass {np.round([x, y, z], 3).tolist()} is more than "
                        f"{MARGIN:g} m outside the world's static geometry {np.round(lo, 3).tolist()} .. "
                        f"{np.round(hi, 3).tolist()} at t = {t:.4f} s")
        return None
