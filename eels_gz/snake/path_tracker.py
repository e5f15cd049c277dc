"""Path tracker (NEO §III-C.2): closest point on the path, Horn's closed-form
rigid fit between current and desired module points, and a proportional
body-twist correction for the screw motion controller.

Fit. :func:`horn_quaternion` (Horn 1987, unit quaternions: the optimal
rotation is the eigenvector of the largest eigenvalue of a symmetric 4x4
matrix built from the cross-covariance) and :func:`horn_svd` (the same
least-squares problem through the SVD of the cross-covariance, with the
reflection fixed) both return ``(R, t)`` minimizing
``sum |R p_k + t - q_k|^2``; they agree to rounding.

Command. With the current module points ``P`` (world, from the chain and
the estimated base pose), the desired points ``Q`` are the leader-follower
chord points starting at the path point closest to the current tail point.
The fit ``(R, t)`` maps ``P`` onto ``Q``; :func:`se3_log` turns it into the
constant twist that reaches it in unit time (base-origin velocity and
angular velocity, world frame); the correction is those times the gains
``k_position``, ``k_rotation`` (1/s).

Feed-forward. The desired placement moves along the path at ``speed``; the
base (tail) frame of the leader-follower shape
(:func:`~eels_gz.snake.shape_on_path.lay_on_path`) then moves by
``log(T(s)^-1 T(s + ds)) speed / ds`` (body twist), and the shape joints by
``d angles / ds * speed``. These two together move every module point along
the path; the motion controller needs the base's own twist because it
takes the shape rates separately (Eq. 3). The rigid fit from ``Q(s)`` to
``Q(s + ds)`` equals it only where the shape does not change (lines,
circles, helices: screw motions); on a path of varying curvature (an
S-curve) it is the average motion of the whole robot, not the tail's, and
with the shape rates on top it drives the robot off the path.
The twist is returned as the base's body twist ``(v, w)`` in the base frame
(the convention of :mod:`eels_gz.snake.motion_control`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from eels_gz.errors import SnakeModelError
from eels_gz.snake.chain import SnakeChain
from eels_gz.snake.params import PathTrackerParams
from eels_gz.snake.reference_paths import Path3, chord_points
from eels_gz.snake.shape_on_path import lay_on_path

FEED_FORWARD_DS = 1e-4  # m, arc-length step of the feed-forward (exact for screw-motion paths)


def _check_clouds(P: np.ndarray, Q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    P, Q = np.asarray(P, float), np.asarray(Q, float)
    if P.shape != Q.shape or P.ndim != 2 or P.shape[1] != 3 or len(P) < 3:
        raise SnakeModelError(f"rigid fit: point sets must both be (N >= 3, 3), got {P.shape} and {Q.shape}")
    if not (np.isfinite(P).all() and np.isfinite(Q).all()):
        raise SnakeModelError("rigid fit: point sets contain non-finite values")
    return P, Q


def horn_quaternion(P: np.ndarray, Q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rigid ``(R, t)`` with ``R P + t ~ Q`` (least squares), Horn's quaternion method."""
    P, Q = _check_clouds(P, Q)
    pc, qc = P.mean(axis=0), Q.mean(axis=0)
    S = (P - pc).T @ (Q - qc)  # S[a, b] = sum p_a q_b
    (sxx, sxy, sxz), (syx, syy, syz), (szx, szy, szz) = S
    N = np.array([
        [sxx + syy + szz, syz - szy, szx - sxz, sxy - syx],
        [syz - szy, sxx - syy - szz, sxy + syx, szx + sxz],
        [szx - sxz, sxy + syx, -sxx + syy - szz, syz + szy],
        [sxy - syx, szx + sxz, syz + szy, -sxx - syy + szz],
    ])
    w, x, y, z = np.linalg.eigh(N)[1][:, -1]
    R = np.array([
        [w * w + x * x - y * y - z * z, 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), w * w - x * x + y * y - z * z, 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), w * w - x * x - y * y + z * z],
    ])
    return R, qc - R @ pc


def horn_svd(P: np.ndarray, Q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The same fit through the SVD of the cross-covariance (reflection fixed)."""
    P, Q = _check_clouds(P, Q)
    pc, qc = P.mean(axis=0), Q.mean(axis=0)
    U, _, Vt = np.linalg.svd((P - pc).T @ (Q - qc))
    D = np.diag([1.0, 1.0, float(np.sign(np.linalg.det(Vt.T @ U.T)) or 1.0)])
    R = Vt.T @ D @ U.T
    return R, qc - R @ pc


def rotation_vector(R: np.ndarray) -> np.ndarray:
    """log(R) as a rotation vector (rad), accurate at every angle up to pi.

    ``v = vee(R - R^T) = 2 sin(a) u`` and ``trace(R) = 1 + 2 cos(a)`` give the
    angle by atan2 (well conditioned everywhere). Near pi, where ``v`` is
    tiny, the axis comes from the symmetric part ``(R + R^T)/2 - cos(a) I =
    (1 - cos(a)) u u^T`` and only its sign from ``v``.
    """
    v = np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    c = (np.trace(R) - 1.0) / 2.0
    angle = math.atan2(0.5 * np.linalg.norm(v), c)
    if angle < 1e-8:
        return 0.5 * v  # sin(a) ~ a
    if angle < math.pi - 1e-3:
        return angle / (2.0 * math.sin(angle)) * v
    B = 0.5 * (R + R.T) - c * np.eye(3)
    k = int(np.argmax(np.diag(B)))
    u = B[:, k] / math.sqrt(B[k, k] * (1.0 - c))
    return angle * (u if u @ v >= 0 else -u)


def se3_log(R: np.ndarray, t: np.ndarray, about: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The constant twist that moves rigidly by ``(R, t)`` (x -> R x + t) in unit time:
    (velocity of the point ``about``, angular velocity), world frame; exact for a
    screw motion. ``t = V(phi) v_0`` with ``V = I + (1 - cos a)/a^2 K + (a - sin a)/a^3 K^2``,
    ``K = [phi]x``, ``v_0`` the velocity of the origin."""
    phi = rotation_vector(R)
    a = float(np.linalg.norm(phi))
    K = np.array([[0.0, -phi[2], phi[1]], [phi[2], 0.0, -phi[0]], [-phi[1], phi[0], 0.0]])
    if a < 1e-6:  # series: (1 - cos a)/a^2 ~ 1/2 - a^2/24, (a - sin a)/a^3 ~ 1/6 - a^2/120
        V = np.eye(3) + (0.5 - a * a / 24.0) * K + (1.0 / 6.0 - a * a / 120.0) * K @ K
    else:
        V = np.eye(3) + (1.0 - math.cos(a)) / a ** 2 * K + (a - math.sin(a)) / a ** 3 * K @ K
    v0 = np.linalg.solve(V, np.asarray(t, float))
    return v0 + np.cross(phi, np.asarray(about, float)), phi


@dataclass(frozen=True)
class TrackerCommand:
    """Body twist (6,) of the base (v, w in the base frame), the closest arc
    length of the tail ``s`` (m), the desired points (n + 2, 3), each module
    point's distance to its desired place (m) and the fit ``(R, t)``."""

    twist: np.ndarray
    s: float
    desired: np.ndarray
    errors: np.ndarray
    R: np.ndarray
    t: np.ndarray


class PathTracker:
    """Proportional rigid-body path tracking for a chain on a path (module docstring)."""

    def __init__(self, chain: SnakeChain, path: Path3, params: PathTrackerParams, up=(0.0, 0.0, 1.0)):
        self.chain, self.path, self.params = chain, path, params
        self.up = tuple(float(x) for x in up)  # world, the roll of a straight start (lay_on_path)
        self.lengths = chain.segment_lengths()

    def command(self, q: Mapping[str, float] | None, base_pose: np.ndarray) -> TrackerCommand:
        """Twist command for joint angles ``q`` (rad) and base pose (4x4, world)."""
        base_pose = np.asarray(base_pose, float)
        P = self.chain.module_points(q, base_pose)
        s, _, _ = self.path.closest(P[0])
        _, Q = chord_points(self.path, s, self.lengths)
        R, t = horn_svd(P, Q)
        b = base_pose[:3, 3]
        v_b, phi = se3_log(R, t, b)
        Rb = base_pose[:3, :3]
        twist = np.concatenate([Rb.T @ (self.params.k_position * v_b), Rb.T @ (self.params.k_rotation * phi)])
        if self.params.speed > 0.0:
            twist = twist + self.feed_forward(s)
        return TrackerCommand(twist, s, Q, np.linalg.norm(P - Q, axis=1), R, t)

    def feed_forward(self, s: float) -> np.ndarray:
        """Body twist (6,) of the leader-follower base frame moving along the path
        from arc length ``s`` (m) at ``speed`` (module docstring); 0 at the path's end."""
        ds = min(FEED_FORWARD_DS, self.path.length - s)
        if not ds > 0.0:
            return np.zeros(6)
        T0 = lay_on_path(self.chain, self.path, s, self.up).base_pose
        T1 = lay_on_path(self.chain, self.path, s + ds, self.up).base_pose
        rel = np.linalg.solve(T0, T1)
        v, w = se3_log(rel[:3, :3], rel[:3, 3], np.zeros(3))
        return np.concatenate([v, w]) * (self.params.speed / ds)


def tracking_stats(errors: np.ndarray) -> dict[str, np.ndarray]:
    """Per module point mean, std and max of tracking errors (T, n + 2) over time (NEO Table II form), m."""
    e = np.asarray(errors, float)
    if e.ndim != 2 or len(e) == 0:
        raise SnakeModelError(f"tracking_stats: errors must be (T >= 1, points), got {e.shape}")
    return {"mean": e.mean(axis=0), "std": e.std(axis=0), "max": e.max(axis=0)}
