"""Closed-loop screw drive: NEO Eq. 5 (:class:`~eels_gz.snake.motion_control.ScrewMotionController`)
fed with the robot as it is now (pure: the robot is read and commanded through ``snake``, e.g.
plugins_py/snake_io.py's ``SnakeIO`` in a scenario system).

Every ``period`` (s) :meth:`ScrewDrive.update` takes the current joint
angles, the screws the screw contact reports loaded, the gravity
direction in the tail frame (the contact side of every screw on flat
ground), and the commanded body twist of the tail (``(v, w)`` in the tail
frame, m/s and rad/s); it solves for the screw rates and sends them to
joint control as velocity set points. Between updates the set points
hold. A contact set the controller reports singular (the straight "pencil"
of NEO §V, or too few screws) stops the screws and is counted, never
divided through.

:func:`body_twist_between` turns two tail poses into the constant body
twist that joins them (SE(3) log), the measure of what the screws achieved.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

import numpy as np

from eels_gz.snake.motion_control import MotionControlResult, ScrewMotionController
from eels_gz.snake.params import load_snake_params
from eels_gz.snake.path_tracker import se3_log

log = logging.getLogger(__name__)


def body_twist_between(T0: np.ndarray, T1: np.ndarray, duration: float) -> np.ndarray:
    """Constant body twist (6,) ``(v, w)`` in the frame of ``T0`` (4x4, world)
    that moves ``T0`` to ``T1`` in ``duration`` (s): ``log(T0^-1 T1) / duration``."""
    rel = np.linalg.inv(np.asarray(T0, float)) @ np.asarray(T1, float)
    v, w = se3_log(rel[:3, :3], rel[:3, 3], np.zeros(3))
    return np.concatenate([v, w]) / float(duration)


class ScrewDrive:
    """Screw rates for a commanded tail twist, recomputed every ``period`` (s).

    ``snake`` gives the robot: ``chain`` (SnakeChain), ``screws`` (ScrewGeometry by screw link),
    ``angles()`` (rad by joint), ``screws_in_contact()`` (screw links), ``down_in_base()`` (unit
    gravity direction in the tail frame) and ``command(positions, velocities)`` (set points by joint).
    ``subspace`` (``planar`` or ``se3``) and ``condition_max`` default to
    config/snake.yaml ``motion_control``.
    """

    def __init__(self, snake, period: float = 0.01, subspace: str | None = None,
                 condition_max: float | None = None):
        cfg = load_snake_params().motion_control
        self.snake = snake
        self.period = float(period)
        self.controller = ScrewMotionController(
            snake.chain, snake.screws, condition_max if condition_max is not None else cfg.condition_max,
            subspace if subspace is not None else cfg.subspace)
        self.next_time = -np.inf
        self.last: MotionControlResult | None = None
        self.updates = 0
        self.singular = 0
        self.singular_message = ""

    def solve(self, twist: np.ndarray, theta_dot: Mapping[str, float] | None = None,
              angles: Mapping[str, float] | None = None) -> MotionControlResult:
        """Eq. 5 for the robot as it is now, or at joint ``angles`` (rad) (no command sent)."""
        return self.controller.solve(self.snake.angles() if angles is None else angles,
                                     self.snake.screws_in_contact(), twist, self.snake.down_in_base(), theta_dot)

    def update(self, now: float, twist: np.ndarray, theta_dot: Mapping[str, float] | None = None,
               angles: Mapping[str, float] | None = None) -> MotionControlResult:
        """Once per ``period``, at simulated time ``now`` (s): solve (at ``angles``, default the robot's
        now) and command the screw rates; returns the latest result."""
        if now + 1e-12 < self.next_time and self.last is not None:
            return self.last
        self.next_time = now + self.period
        res = self.solve(twist, theta_dot, angles)
        self.updates += 1
        if not res.ok:
            self.singular += 1
            if self.singular_message != res.message:
                log.info("t = %.3f s: %s", now, res.message)
            self.singular_message = res.message
        self.snake.command(velocities=res.rates)
        self.last = res
        return res

    def stop(self) -> None:
        """Every screw set point to 0 rad/s."""
        self.snake.command(velocities={j: 0.0 for j in self.controller.actuated})

    def report(self) -> dict:
        """Counts of updates and of singular contact sets, the last condition number."""
        return {"updates": self.updates, "singular_updates": self.singular,
                "last_condition": None if self.last is None or not np.isfinite(self.last.condition)
                else float(self.last.condition),
                "singular_message": self.singular_message or None}
