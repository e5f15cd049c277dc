"""The robot's resting pose on a world's terrain, without an engine: ``robot.pose: auto``.

The embedded host places a robot in two steps (:mod:`eels_gz.dart.simulation`,
:mod:`eels_gz.dart.terrain_start`); this module holds the arithmetic of both,
on the description's own geometry, so that Gazebo's spawn (launch/sim.launch.py
passes :func:`spawn_pose` to ``ros_gz_sim create -x -y -z -R -P -Y``) puts the
robot where the host does:

1. every joint at zero, the base at the origin, level, with the lowest corner of
   the collision shapes' bounding boxes ``AUTO_CLEARANCE`` above z = 0 (on a terrain
   whose extent does not cover the origin, a georeferenced one, above the centre of
   that extent instead, over its top);
2. on a terrain with a distance field (:func:`eels_gz.terrain.world_terrain.find_terrain_field`):
   a rover gets the ROAMS placement (:func:`eels_gz.rover.resting_pose.place`:
   base height, roll, pitch and suspension angles, every wheel on the ground),
   unless every wheel already rests on it; any other robot is pitched so that
   its body origins follow the terrain's line under them
   (:func:`slope_rotation`), then moved along z until its lowest corner is
   ``AUTO_CLEARANCE`` from the terrain (:func:`drop`).

Bodies are the links of the description after the multibody optimizer (the
host's default; DART makes one body per link of that URDF), and a collision
shape's bounding box is DART's: a box's half sizes, a cylinder's radius and
half length along its z, a sphere's radius. No dartpy, gz or rclpy here.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np

from eels_gz.errors import DescriptionError, PlacementError
from eels_gz.rover.from_urdf import origin_matrix

log = logging.getLogger(__name__)
AUTO_CLEARANCE = 0.001  # m above the ground for pose "auto"
TOLERANCE = 1e-5  # m: placement converged
MAX_ITERATIONS = 400
NO_GROUND = 1e4  # m: a robot sent this far down has no terrain under it


@dataclass(frozen=True)
class Spawn:
    """Base pose [x, y, z, roll, pitch, yaw] (m, rad; URDF fixed-axis rpy) and initial joint
    positions (rad or m, by joint name; empty: every joint at zero), and how they were found."""

    pose: tuple[float, float, float, float, float, float]
    joints: dict[str, float] = field(default_factory=dict)
    method: str = "flat ground"


def drop(field, points: np.ndarray, clearance: float) -> float | None:
    """The z shift (m) that brings the lowest of ``points`` (N, 3) to ``clearance`` above the terrain
    below them, or None if there is none. Each step ``z += clearance - min d`` never overshoots (a point
    moved by s changes its distance by at most s): it comes to the first terrain below, or climbs out
    of a hill the points start inside."""
    shift = 0.0
    for _ in range(MAX_ITERATIONS):
        d, _ = field.query(points + [0.0, 0.0, shift])
        step = clearance - float(np.min(d))
        if abs(step) < TOLERANCE:
            return shift
        shift += step
        if shift < -NO_GROUND:
            return None
    log.warning("pose auto: the placement on the terrain did not converge in %d steps", MAX_ITERATIONS)
    return shift


def slope_rotation(origins: np.ndarray, field, clearance: float) -> tuple[float, np.ndarray]:
    """(pitch rad, world rotation 3x3 about the base origin ``origins[0]``) that makes the body
    origins (N, 3) follow the line fitted (least squares, along the robot's horizontal axis) to the
    terrain under them; (0, I) for a robot with less than two bodies over the terrain or already along it."""
    base = origins[0]
    flat = origins[:, :2] - base[:2]
    if len(origins) < 2 or np.max(np.linalg.norm(flat, axis=1)) < 1e-6:
        return 0.0, np.eye(3)
    _, _, vt = np.linalg.svd(flat, full_matrices=False)
    u = np.r_[vt[0], 0.0]  # the robot's horizontal axis
    ground = np.empty(len(origins))
    for k, p in enumerate(origins):  # the terrain under each body origin
        shift = drop(field, p[None, :], clearance)
        ground[k] = np.nan if shift is None else p[2] + shift
    ok = np.isfinite(ground)
    s = (origins - base) @ u
    if ok.sum() < 2 or np.ptp(s[ok]) < 1e-6:
        return 0.0, np.eye(3)
    slope = np.polyfit(s[ok], ground[ok], 1)[0]
    pitch = float(np.arctan(slope))
    if abs(pitch) < 1e-6:
        return 0.0, np.eye(3)
    axis = np.cross([0.0, 0.0, 1.0], u)  # rotating about it by -pitch raises +u by pitch
    c, sn = np.cos(-pitch), np.sin(-pitch)
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return pitch, np.eye(3) + sn * K + (1 - c) * K @ K


def _shape_box(geometry, where: str) -> tuple[np.ndarray, np.ndarray]:
    """(lo, hi) of a URDF collision geometry's bounding box in its own frame, as DART gives it."""
    shape = geometry[0] if len(geometry) else None
    tag = shape.tag if shape is not None else None
    if tag == "box":
        h = 0.5 * np.array([float(v) for v in shape.get("size").split()])
        return -h, h
    if tag == "cylinder":
        r, half = float(shape.get("radius")), 0.5 * float(shape.get("length"))
        return np.array([-r, -r, -half]), np.array([r, r, half])
    if tag == "sphere":
        r = float(shape.get("radius"))
        return -np.full(3, r), np.full(3, r)
    raise DescriptionError(f"{where}: pose auto outside the host supports box, cylinder and sphere collisions, "
                           f"not <{tag}>; give the pose")


class ZeroPose:
    """Link frames and collision box corners of a robot model (eels_gz.description.model) with every
    joint at zero, in the base frame."""

    def __init__(self, model):
        source = model.source
        self.links: dict[str, np.ndarray] = {model.root: np.eye(4)}
        pending = list(model.links)
        while pending:  # parents before children
            rest = []
            for name in pending:
                if name in self.links:
                    continue
                joint = model.joint_elements[model.parent_joint[name]]
                parent = model.parent_link(name)
                if parent in self.links:
                    self.links[name] = self.links[parent] @ origin_matrix(joint)
                else:
                    rest.append(name)
            if len(rest) == len(pending):
                raise DescriptionError(f"{source}: links {rest} are not connected to the root {model.root}")
            pending = rest
        corners = []
        for name, link in model.link_elements.items():
            for k, col in enumerate(link.findall("collision")):
                lo, hi = _shape_box(col.find("geometry"), f"{source}: link '{name}' collision {k}")
                box = np.array([[x, y, z, 1.0] for x in (lo[0], hi[0]) for y in (lo[1], hi[1])
                                for z in (lo[2], hi[2])])
                corners.append((self.links[name] @ origin_matrix(col) @ box.T)[:3].T)
        self.corners = np.vstack(corners) if corners else np.zeros((0, 3))
        # body origins, the base first (DART's body 0)
        bodies = [model.root] + [n for n in model.links if n != model.root]
        self.origins = np.array([self.links[n][:3, 3] for n in bodies])

    def world(self, points: np.ndarray, T: np.ndarray) -> np.ndarray:
        return points @ T[:3, :3].T + T[:3, 3]


def pose_of(T: np.ndarray) -> tuple[float, ...]:
    """[x, y, z, roll, pitch, yaw] of a 4x4 transform (URDF fixed-axis rpy, pitch within +-pi/2)."""
    R = T[:3, :3]
    pitch = float(np.arcsin(np.clip(-R[2, 0], -1.0, 1.0)))
    roll, yaw = float(np.arctan2(R[2, 1], R[2, 2])), float(np.arctan2(R[1, 0], R[0, 0]))
    return (float(T[0, 3]), float(T[1, 3]), float(T[2, 3]), roll, pitch, yaw)


def spawn_pose(description, field, clearance: float = AUTO_CLEARANCE, optimize: bool = True,
               yaw: float = 0.0) -> Spawn:
    """The resting pose of ``description`` (an :class:`~eels_gz.description.xacro_loader.Description`)
    on the terrain ``field`` (a distance field, or None for the flat ground at z = 0), laid at heading
    ``yaw`` (rad about z): the host's ``pose: auto`` (module docstring). PlacementError when a rover fits
    nowhere there."""
    bodies = description
    if optimize:
        from eels_gz.description.optimizer import optimize_description

        bodies, _ = optimize_description(description)
    zero = ZeroPose(bodies.model)
    if not len(zero.corners):
        raise DescriptionError(f"{description.source}: the robot has no collision shapes, so pose 'auto' cannot "
                               "rest it on the ground; give the pose")
    T = np.eye(4)
    T[:2, :2] = [[np.cos(yaw), -np.sin(yaw)], [np.sin(yaw), np.cos(yaw)]]
    T[2, 3] = -float(zero.corners[:, 2].min()) + clearance
    flat = Spawn(pose_of(T))
    if field is None:
        return flat
    moved = centre_start(field)
    if moved is not None:
        T[:3, 3] += moved
        return _on_terrain(zero, description, field, T, clearance, Spawn(pose_of(T), {}, "terrain centre"),
                           " at the terrain's centre")
    return _on_terrain(zero, description, field, T, clearance, flat)


def centre_start(field) -> np.ndarray | None:
    """Where ``pose: auto`` moves the level start on a terrain whose extent does not cover the world
    origin (a georeferenced scan or DEM): the shift (3,) that puts the base above the centre of the
    terrain's horizontal extent and lifts it by the terrain's top, from where it is brought down onto
    the terrain as at the origin; None for a terrain over the origin (every shipped one)."""
    lo, hi = (np.asarray(b, float) for b in field.bounds)
    if lo[0] <= 0.0 <= hi[0] and lo[1] <= 0.0 <= hi[1]:
        return None
    shift = np.array([0.5 * (lo[0] + hi[0]), 0.5 * (lo[1] + hi[1]), max(float(hi[2]), 0.0)])
    log.info("pose auto: the terrain (x %.1f..%.1f, y %.1f..%.1f m) does not cover the world origin; the robot "
             "starts above its centre (%.1f, %.1f)", lo[0], hi[0], lo[1], hi[1], shift[0], shift[1])
    return shift


def _on_terrain(zero: "ZeroPose", description, field, T: np.ndarray, clearance: float, flat: Spawn,
                at: str = "") -> Spawn:
    """:func:`spawn_pose` on a terrain, from the level start ``T`` (``flat``, its Spawn): the rover
    placement, or the pitch along the terrain and the drop onto it (module docstring); ``at`` ends the
    method's name (where the start was)."""
    if description.model.is_rover:
        from eels_gz.rover.resting_pose import CONTACT_TOL, RoverKinematics, place, surface_distance

        kin = RoverKinematics(description.model)
        centres = kin.wheel_centres(flat.pose, np.zeros(len(kin.free)))
        gaps = surface_distance(field, centres, kin.radius) - kin.radius
        if np.all(np.abs(gaps - clearance) <= CONTACT_TOL):
            return flat  # every wheel already rests on the ground
        try:
            p = place(kin, field, float(T[0, 3]), float(T[1, 3]), float(np.arctan2(T[1, 0], T[0, 0])))
        except PlacementError as exc:
            raise PlacementError(f"pose auto: {exc}; give the pose [x, y, z, roll, pitch, yaw]") from None
        pose = list(p.pose)
        pose[2] += clearance
        return Spawn(tuple(pose), dict(p.joints), "rover placement" + at)
    pitch, R = slope_rotation(zero.world(zero.origins, T), field, clearance)
    T1 = T.copy()
    T1[:3, :3] = R @ T[:3, :3]
    shift = drop(field, zero.world(zero.corners, T1), clearance)
    if shift is None:
        log.warning("pose auto: no terrain under the robot at x=%g, y=%g; it starts at z = %g", T[0, 3], T[1, 3],
                    T[2, 3])
        return flat
    if abs(shift) < TOLERANCE and not pitch:
        return flat
    T1[2, 3] += shift
    return Spawn(pose_of(T1), {}, "distance field" + at)
