"""Mobility-failure check (EELS-DARTS §4.3.1): "a mobility error when the
angle between the pitch of the body and the gravity vector exceeded 60
degrees, which was determined to be irrecoverable"; the run then ends.

Reading used here. The body's pitch is the direction of its long axis (the
link's x axis, :attr:`MobilityParams.link`, the tail by default). The check
is for the vertical scenarios of §4.3 (walls, moulin), where a robot that
climbs or down-climbs holds its axis along the gravity line, head up or head
down alike. So the angle is taken between the axis and the gravity *line*,
``angle = atan2(|a x g|, |a . g|)`` in ``[0, pi/2]`` (atan2 keeps it
accurate at every angle), and the run fails when it is strictly greater than
the threshold (default 60 deg, ``config/snake.yaml``): the robot has tipped
to within 30 deg of horizontal. A surface robot is always near 90 deg, so
surface scenarios do not enable the check. With gravity off (placement) the
angle is undefined and the status is ``ok``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from eels_gz.errors import SnakeModelError

OK = "ok"
MOBILITY_FAILURE = "mobility_failure"


@dataclass(frozen=True)
class MobilityStatus:
    """``status`` (``ok`` or ``mobility_failure``), the angle (rad, NaN with
    gravity off) and the threshold (rad)."""

    status: str
    angle: float
    threshold: float

    @property
    def failed(self) -> bool:
        return self.status == MOBILITY_FAILURE


def axis_gravity_angle(R_world_body: np.ndarray, gravity: np.ndarray, axis=(1.0, 0.0, 0.0)) -> float:
    """Angle (rad, in [0, pi/2]) between the body ``axis`` (body frame) turned
    into the world by ``R_world_body`` and the line of ``gravity``; NaN if
    gravity or the axis is zero. (Checked every step of a vertical scenario: plain floats,
    not numpy's small-array calls, which cost 25 µs here.)"""
    R = np.asarray(R_world_body, float)
    g = np.asarray(gravity, float)
    if R.shape != (3, 3) or g.shape != (3,):
        raise SnakeModelError(f"mobility: expected a finite 3x3 rotation and gravity 3-vector, got {R.shape}, "
                              f"{g.shape}")
    (r00, r01, r02), (r10, r11, r12), (r20, r21, r22) = R.tolist()
    gx, gy, gz = g.tolist()
    ux, uy, uz = (float(c) for c in axis)
    ax, ay, az = r00 * ux + r01 * uy + r02 * uz, r10 * ux + r11 * uy + r12 * uz, r20 * ux + r21 * uy + r22 * uz
    if not all(map(math.isfinite, (r00, r01, r02, r10, r11, r12, r20, r21, r22, gx, gy, gz))):
        raise SnakeModelError(f"mobility: expected a finite 3x3 rotation and gravity 3-vector, got {R.tolist()}, "
                              f"{g.tolist()}")
    if gx == gy == gz == 0.0 or ax == ay == az == 0.0:
        return math.nan
    cx, cy, cz = ay * gz - az * gy, az * gx - ax * gz, ax * gy - ay * gx  # atan2 needs no normalising
    return math.atan2(math.sqrt(cx * cx + cy * cy + cz * cz), abs(ax * gx + ay * gy + az * gz))


def check_mobility(R_world_body: np.ndarray, gravity: np.ndarray, threshold: float,
                   axis=(1.0, 0.0, 0.0)) -> MobilityStatus:
    """``mobility_failure`` when the axis is more than ``threshold`` (rad) from the gravity line."""
    if not 0.0 < threshold <= math.pi / 2:
        raise SnakeModelError(f"mobility: threshold = {threshold!r} rad; expected an angle in (0, pi/2]")
    angle = axis_gravity_angle(R_world_body, gravity, axis)
    failed = not math.isnan(angle) and angle > threshold
    return MobilityStatus(MOBILITY_FAILURE if failed else OK, angle, threshold)
