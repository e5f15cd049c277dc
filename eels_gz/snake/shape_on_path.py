"""Leader-follower shape control (NEO §III-B.1, Fig. 4): bend and twist
angles, and the base pose, that lay the robot's module points on a 3D path.

The module points (:meth:`SnakeChain.module_points`: tail end, bend joints,
front end) are placed on the path by :func:`~eels_gz.snake.reference_paths.chord_points`
at the chain's rigid segment lengths, tail at arc length ``s_tail``. Then,
walking from the tail (NEO Fig. 4): the frame of the body before bend joint
``i`` is known; the next point ``P_{i+1}`` in that frame gives the bend

    b_i = atan2(d . m_i, d . x),    d = unit(P_{i+1} - P_i) in the frame,

with ``m_i = u_i x e_x`` the direction a positive bend about the joint axis
``u_i`` turns the x axis to; the frame is rotated by ``b_i`` about ``u_i``.
The following point in the rotated frame gives the twist that brings it
into the next bend's plane (NEO: ``tau = atan(z/y)``)

    t_i = atan2(d_z, d_y) - atan2(m_z, m_y)      (the next module's m),

and the frame is rotated by ``t_i`` about x. NEO takes ``tau`` with
``beta >= 0``; ``(t + pi, -b)`` gives the same direction, and here the twist
is wrapped into ``(-pi/2, pi/2]`` with a signed bend, so that planar paths
need no twist and a curvature sign change does not flip a twist joint by pi.
The tail has no twist joint before bend 1: its roll plays that part (with
``up`` fixing the roll of a straight start). The last module's twist has
nothing after it and is 0.

This needs a chain whose segments run along each body's x axis, with bend
axes perpendicular and twist axes along x (every EELS variant with twist
joints); robots without twist joints (Mini EELS) follow only paths whose
bends lie in their fixed bend planes, which ``max_error`` reports.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from eels_gz.errors import SnakeModelError
from eels_gz.snake.chain import SnakeChain, axis_rotation, cross3
from eels_gz.snake.reference_paths import Path3, chord_points

EX = np.array([1.0, 0.0, 0.0])


@dataclass(frozen=True)
class LaidShape:
    """Result of :func:`lay_on_path`: base pose (4x4, world), joint angles
    (rad), arc lengths (n + 2,) and path points (n + 2, 3) of the module
    points; ``max_error`` (m) is the largest distance between the forward
    kinematics and those path points; ``violations`` names joints past their
    limits."""

    base_pose: np.ndarray
    angles: dict[str, float]
    s: np.ndarray
    points: np.ndarray
    max_error: float
    violations: tuple[str, ...]

    @property
    def within_limits(self) -> bool:
        return not self.violations


def _twist_for(d: np.ndarray, m: np.ndarray) -> float:
    """Twist (rad, in (-pi/2, pi/2]) about x that turns ``m`` into the plane of x and ``d``."""
    if math.hypot(d[1], d[2]) < 1e-12:
        return 0.0
    t = math.atan2(d[2], d[1]) - math.atan2(m[2], m[1])
    t = (t + math.pi) % (2.0 * math.pi) - math.pi
    if t > math.pi / 2:
        t -= math.pi
    elif t <= -math.pi / 2:
        t += math.pi
    return t


def _check_structure(chain: SnakeChain) -> list[np.ndarray]:
    """Bend axes u_i (in their joint frames) after checking the layout the algorithm assumes."""
    pts = chain.module_points()
    if np.abs(pts[:, 1:]).max() > 1e-9 or (np.diff(pts[:, 0]) <= 0).any():
        raise SnakeModelError(f"leader-follower: {chain.source}: the module points of the zero pose are not "
                              "on the base x axis in order; expected segments along each body's x axis")
    axes = []
    for name in chain.bend_joints() + chain.twist_joints():
        j = chain.joint(name)
        if np.abs(j.origin[:3, :3] - np.eye(3)).max() > 1e-12:
            raise SnakeModelError(f"leader-follower: joint '{name}' has a rotated origin; expected rpy = 0")
        if name.endswith("_bend"):
            if abs(j.axis @ EX) > 1e-9:
                raise SnakeModelError(f"leader-follower: bend joint '{name}' axis {j.axis.tolist()} is not "
                                      "perpendicular to the module axis x")
            axes.append(j.axis)
        elif abs(abs(j.axis @ EX) - 1.0) > 1e-9:
            raise SnakeModelError(f"leader-follower: twist joint '{name}' axis {j.axis.tolist()} is not along x")
        elif j.axis @ EX < 0:
            raise SnakeModelError(f"leader-follower: twist joint '{name}' axis points along -x; expected +x")
    return axes


def _rx(t: float) -> np.ndarray:
    return axis_rotation(EX, t)


def lay_on_path(chain: SnakeChain, path: Path3, s_tail: float, up=(0.0, 0.0, 1.0)) -> LaidShape:
    """Base pose and bend/twist angles laying ``chain`` on ``path`` from arc length ``s_tail`` (m).

    ``up`` (world) fixes the tail's roll where the start is straight (the
    base z axis is as close to ``up`` as the path allows).
    """
    axes = _check_structure(chain)
    n = chain.n_modules
    s, P = chord_points(path, s_tail, chain.segment_lengths())
    dirs = np.diff(P, axis=0)
    dirs /= np.linalg.norm(dirs, axis=1)[:, None]
    ms = [cross3(u, EX) for u in axes]
    twist = bool(chain.twist_joints())
    # tail frame: x along the first segment, z towards up, then rolled for bend 1
    x0 = dirs[0]
    z = np.asarray(up, float) - (np.asarray(up, float) @ x0) * x0
    if np.linalg.norm(z) < 1e-9:
        z = np.cross(x0, np.eye(3)[int(np.argmin(np.abs(x0)))])
    z /= np.linalg.norm(z)
    F = np.column_stack([x0, np.cross(z, x0), z])
    F = F @ _rx(_twist_for(F.T @ dirs[1], ms[0]))
    base = np.eye(4)
    base[:3, :3], base[:3, 3] = F, P[0]
    angles: dict[str, float] = {}
    for i in range(1, n + 1):
        d = F.T @ dirs[i]
        b = math.atan2(d @ ms[i - 1], d[0])
        angles[f"module_{i}_bend"] = b
        F = F @ axis_rotation(axes[i - 1], b)
        if twist:
            t = _twist_for(F.T @ dirs[i + 1], ms[i]) if i < n else 0.0
            angles[f"module_{i}_twist"] = t
            F = F @ _rx(t)
    fk = chain.module_points(angles, base)
    violations = tuple(k for k, v in angles.items()
                       if not chain.joint(k).lower - 1e-12 <= v <= chain.joint(k).upper + 1e-12)
    return LaidShape(base, angles, s, P, float(np.linalg.norm(fk - P, axis=1).max()), violations)
