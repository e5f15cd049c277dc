"""Least-squares wheel odometry (Archimede §2.1, Eq. 5-7).

Each wheel j gives two equations of the rigid motion x_R = (vx, vy, wz) of
the body: [1, 0, -y_j] x_R = R_j phi_j cos d_j and [0, 1, x_j] x_R =
R_j phi_j sin d_j (Eq. 2-4 with L_j sin a_j = y_j, L_j cos a_j = x_j). The
body twist is their least-squares solution x_R = (A^T A)^-1 A^T B (Eq. 5).

Integration. Eq. 7 sums R(theta)^T x_R dt; here each step moves the pose by
the exact rigid motion of a twist held constant over the step (the SE(2)
exponential), which equals Eq. 7 to first order in dt and is exact for the
piecewise-constant twists an encoder sampler sees: arcs and spins are
recovered without an O(dt^2) drift per step.

The residual is the RMS of A x_R - B over the 2N equations (m/s): zero for
a rolling-without-slip rigid motion, positive when wheels disagree (slip).
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from eels_gz.errors import RoverError
from eels_gz.rover.wheels import Wheel, check_wheels, positions


def se2_step(x: float, y: float, yaw: float, vx: float, vy: float, wz: float, dt: float) -> tuple[float, float, float]:
    """Pose after moving with the body twist (vx, vy, wz) held for dt (exact)."""
    a = wz * dt
    if abs(a) < 1e-6:
        # series of sin(a)/a and (1 - cos a)/a; the next terms are a^4/120 and a^5/720 < 1e-26
        s, c = 1.0 - a * a / 6.0, a / 2.0 - a ** 3 / 24.0
    else:
        s, c = math.sin(a) / a, (1.0 - math.cos(a)) / a
    dx_b = (s * vx - c * vy) * dt
    dy_b = (c * vx + s * vy) * dt
    cy, sy = math.cos(yaw), math.sin(yaw)
    return x + cy * dx_b - sy * dy_b, y + sy * dx_b + cy * dy_b, yaw + a


class WheelOdometry:
    """Dead reckoning from steer angles and wheel rates of every wheel."""

    def __init__(self, wheels: Sequence[Wheel], pose: tuple[float, float, float] = (0.0, 0.0, 0.0)):
        self.wheels = check_wheels(wheels, "WheelOdometry")
        p = positions(self.wheels)
        n = len(self.wheels)
        A = np.zeros((2 * n, 3))
        A[0::2, 0] = 1.0
        A[0::2, 2] = -p[:, 1]
        A[1::2, 1] = 1.0
        A[1::2, 2] = p[:, 0]
        if np.linalg.matrix_rank(A) < 3:
            raise RoverError(f"WheelOdometry: wheels {', '.join(w.name for w in self.wheels)} do not determine "
                             "the body rotation (one wheel, or all at one point); need two at distinct positions")
        self.A = A
        self.pinv = np.linalg.pinv(A)  # (A^T A)^-1 A^T, Eq. 5
        self.radius = np.array([w.radius for w in self.wheels])
        self.pose = tuple(float(v) for v in pose)
        self.twist = (0.0, 0.0, 0.0)
        self.residual = 0.0

    def body_twist(self, steer_angles, wheel_rates) -> tuple[np.ndarray, float]:
        """(vx, vy, wz) least-squares body twist and the RMS residual (m/s)."""
        d = np.asarray(steer_angles, dtype=float).reshape(-1)
        w = np.asarray(wheel_rates, dtype=float).reshape(-1)
        n = len(self.wheels)
        if d.size != n or w.size != n:
            raise RoverError(f"WheelOdometry: expected {n} steer angles and {n} wheel rates, "
                             f"got {d.size} and {w.size}")
        if not (np.all(np.isfinite(d)) and np.all(np.isfinite(w))):
            raise RoverError("WheelOdometry: steer angles and wheel rates must be finite")
        speed = self.radius * w
        B = np.empty(2 * n)
        B[0::2] = speed * np.cos(d)
        B[1::2] = speed * np.sin(d)
        x = self.pinv @ B
        r = self.A @ x - B
        return x, float(math.sqrt(float(r @ r) / (2 * n)))

    def update(self, steer_angles, wheel_rates, dt: float) -> tuple[float, float, float]:
        """Advance by dt (s) with the encoders' steer angles (rad) and wheel rates
        (rad/s); returns the pose (x, y, yaw) in the odometry frame (m, m, rad)."""
        if not (math.isfinite(dt) and dt >= 0):
            raise RoverError(f"WheelOdometry.update: dt must be finite and >= 0 s, got {dt}")
        x, self.residual = self.body_twist(steer_angles, wheel_rates)
        self.twist = (float(x[0]), float(x[1]), float(x[2]))
        self.pose = se2_step(*self.pose, *self.twist, dt)
        return self.pose

    def reset(self, pose: tuple[float, float, float] = (0.0, 0.0, 0.0)) -> None:
        self.pose = tuple(float(v) for v in pose)
        self.twist = (0.0, 0.0, 0.0)
        self.residual = 0.0
