"""IMU readings from rigid-body kinematics.

An accelerometer measures specific force, f = a - g (so at rest, z up, it
reads +9.81 m/s^2 on z); a gyroscope the angular velocity; both in the
sensor frame. Orientation is the sensor frame's in the world (REP-103/105).
"""

from __future__ import annotations

import numpy as np


def point_acceleration(a_origin: np.ndarray, alpha: np.ndarray, omega: np.ndarray, r: np.ndarray) -> np.ndarray:
    """Acceleration (m/s^2) of a point at offset ``r`` from a body's reference point, all in one frame."""
    return a_origin + np.cross(alpha, r) + np.cross(omega, np.cross(omega, r))


def imu_reading(R_world_sensor: np.ndarray, omega_world: np.ndarray, a_world: np.ndarray,
                g_world: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(angular velocity rad/s, specific force m/s^2) in the sensor frame."""
    Rt = R_world_sensor.T
    return Rt @ omega_world, Rt @ (a_world - g_world)
