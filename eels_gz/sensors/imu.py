"""IMU readings from rigid-body kinematics.

An accelerometer measures specific force, f = a - g (so at rest, z up, it
reads +9.81 m/s^2 on z); a gyroscope the angular velocity; both in the
sensor frame. Orientation is the sensor frame's in the world (REP-103/105).
"""

from __future__ import annotations

import numba
import numpy as np

from eels_gz.rotations import quat_from_matrix


def imu_reading(R_world_sensor: np.ndarray, omega_world: np.ndarray, a_world: np.ndarray,
                g_world: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(angular velocity rad/s, specific force m/s^2) in the sensor frame."""
    Rt = R_world_sensor.T
    return Rt @ omega_world, Rt @ (a_world - g_world)


@numba.njit(cache=True)
def imu_values(T_world_body, T_body_sensor, omega_world, a_world, g_world, out):
    """One IMU sample into ``out`` (10,): angular velocity (rad/s) and specific force (m/s^2) in the
    sensor frame, then the sensor frame's orientation in the world as a unit quaternion w, x, y, z
    (w >= 0): ``imu_reading`` and ``rotations.quat_from_matrix`` of R = R_world_body R_body_sensor, compiled."""
    R = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            R[i, j] = (T_world_body[i, 0] * T_body_sensor[0, j] + T_world_body[i, 1] * T_body_sensor[1, j]
                       + T_world_body[i, 2] * T_body_sensor[2, j])
    for j in range(3):  # R^T w and R^T (a - g)
        out[j] = R[0, j] * omega_world[0] + R[1, j] * omega_world[1] + R[2, j] * omega_world[2]
        out[3 + j] = (R[0, j] * (a_world[0] - g_world[0]) + R[1, j] * (a_world[1] - g_world[1])
                      + R[2, j] * (a_world[2] - g_world[2]))
    quat_from_matrix(R, out, 6)


@numba.njit(cache=True)
def imu_values_from_origin(T_world_body, T_body_sensor, omega_world, alpha_world, a_origin, g_world,
                           out):  # pragma: no cover - compiled
    """``imu_values`` from the body's origin acceleration ``a_origin`` and angular acceleration
    ``alpha_world``: the sensor point's acceleration a + alpha x r + w x (w x r), r = R_world_body
    times the sensor's offset in the body."""
    r = np.empty(3)
    for i in range(3):
        r[i] = (T_world_body[i, 0] * T_body_sensor[0, 3] + T_world_body[i, 1] * T_body_sensor[1, 3]
                + T_world_body[i, 2] * T_body_sensor[2, 3])
    wx, wy, wz = omega_world[0], omega_world[1], omega_world[2]
    ux, uy, uz = wy * r[2] - wz * r[1], wz * r[0] - wx * r[2], wx * r[1] - wy * r[0]  # w x r
    a = np.empty(3)
    a[0] = a_origin[0] + alpha_world[1] * r[2] - alpha_world[2] * r[1] + wy * uz - wz * uy
    a[1] = a_origin[1] + alpha_world[2] * r[0] - alpha_world[0] * r[2] + wz * ux - wx * uz
    a[2] = a_origin[2] + alpha_world[0] * r[1] - alpha_world[1] * r[0] + wx * uy - wy * ux
    imu_values(T_world_body, T_body_sensor, omega_world, a, g_world, out)
