"""Low-level drive control of a steered rover (Archimede §2.2.4).

- Steering joints: PID with feed-forward. The set point is slewed towards
  the ICR planner's angle at the steering motor's speed limit; the PID acts
  on the error to the slewed set point and the feed-forward term
  ``ff x (set-point rate)`` supplies the motor's viscous torque, so a
  steering motion needs no standing error.
- Wheels: PI on the rate error.
- Both are clipped to the motor's stall torque, with anti-windup
  (eels_gz.control.pid: bounded, conditional integration).
- Wheel rate set points above the motor's speed limit are scaled down, all
  wheels by the same factor, so the ICR is kept.
- Wheel rate set points change at most ``wheel_acceleration`` (rad/s^2),
  all wheels by the same factor, so speeding up and slowing down keep the
  ICR and stay below the traction limit.
- Stop-and-resteer: when any steering joint is farther than
  ``resteer_tolerance`` from the planner's angle (at start, after a jump of
  the projected ICR between disconnected regions of S+, or at a corner of a
  path), the rover first ramps its wheels down to rest with the steering
  held, then re-steers at the motors' rate limit with the wheels stopped,
  then ramps up on the new ICR. ``resteering`` is True meanwhile.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from eels_gz.control.pid import PidArray, PidGains
from eels_gz.errors import RoverError
from eels_gz.rover.steering import IcrSteering, SteeringCommand


def _check(value: float, name: str, who: str, positive: bool = False) -> None:
    if not (isinstance(value, (int, float)) and math.isfinite(value) and (value > 0 if positive else value >= 0)):
        raise RoverError(f"{who}: {name} must be a finite number {'> 0' if positive else '>= 0'}, got {value!r}")


@dataclass(frozen=True)
class SteeringGains:
    """PID + feed-forward gains of a steering joint: p (N m/rad), i (N m/(rad s)),
    d (N m s/rad), i_max (N m), ff (N m s/rad)."""

    p: float
    i: float
    d: float
    i_max: float
    ff: float

    def __post_init__(self) -> None:
        for name in ("p", "i", "d", "i_max", "ff"):
            _check(getattr(self, name), name, "steering gains")


@dataclass(frozen=True)
class DriveGains:
    """PI gains of a wheel: p (N m s/rad), i (N m/rad), i_max (N m)."""

    p: float
    i: float
    i_max: float

    def __post_init__(self) -> None:
        for name in ("p", "i", "i_max"):
            _check(getattr(self, name), name, "drive gains")


@dataclass(frozen=True)
class MotorLimits:
    """Per-joint limits: steering effort (N m) and speed (rad/s), drive effort
    (N m) and speed (rad/s), from the joints' <limit effort velocity>."""

    steer_effort: tuple[float, ...]
    steer_speed: tuple[float, ...]
    drive_effort: tuple[float, ...]
    drive_speed: tuple[float, ...]

    def __post_init__(self) -> None:
        for name in ("steer_effort", "steer_speed", "drive_effort", "drive_speed"):
            for v in getattr(self, name):
                _check(v, name, "motor limits", positive=True)


class DriveController:
    """Steering-joint and wheel-joint efforts for body-velocity commands.

    ``steered`` indexes the wheels (in ``steering.wheels`` order) that have a
    steering joint; the others are fixed.
    """

    def __init__(self, steering: IcrSteering, steered: Sequence[int], steer_gains: SteeringGains,
                 drive_gains: DriveGains, limits: MotorLimits, resteer_tolerance: float,
                 wheel_acceleration: float):
        self.steering = steering
        self.steered = np.asarray(steered, dtype=int)
        n, m = len(steering.wheels), len(self.steered)
        if len(limits.drive_effort) != n or len(limits.drive_speed) != n or len(limits.steer_effort) != m \
                or len(limits.steer_speed) != m:
            raise RoverError(f"DriveController: motor limits for {m} steering and {n} drive joints expected")
        _check(resteer_tolerance, "resteer_tolerance", "DriveController", positive=True)
        _check(wheel_acceleration, "wheel_acceleration", "DriveController", positive=True)
        self.acceleration = float(wheel_acceleration)
        self.rate_ref = np.zeros(n)
        self.ff = steer_gains.ff
        self.steer_pid = PidArray([PidGains(steer_gains.p, steer_gains.i, steer_gains.d, steer_gains.i_max, e)
                                   for e in limits.steer_effort])
        self.drive_pi = PidArray([PidGains(drive_gains.p, drive_gains.i, 0.0, drive_gains.i_max, e)
                                  for e in limits.drive_effort])
        self.steer_effort = np.array(limits.steer_effort)
        self.steer_speed = np.array(limits.steer_speed)
        self.drive_speed = np.array(limits.drive_speed)
        self.tolerance = float(resteer_tolerance)
        self.steer_ref: np.ndarray | None = None
        self.resteering = True
        self.last: SteeringCommand | None = None
        self._cmd: tuple[float, float, float] | None = None

    def reset(self) -> None:
        """Back to the state at construction (a world reset): wheels at rest, steering taken from the next update."""
        self.rate_ref[:] = 0.0
        self.steer_pid.reset()
        self.drive_pi.reset()
        self.steer_ref = None
        self.resteering = True
        self.last = None
        self._cmd = None

    def plan(self, cmd: tuple[float, float, float]) -> SteeringCommand:
        """The ICR planner's set points for a command (recomputed only when it changes)."""
        if cmd != self._cmd or self.last is None:
            self.last = self.steering.command(*cmd)
            self._cmd = cmd
        return self.last

    def update(self, cmd, steer_q, steer_dq, wheel_dq, dt: float) -> tuple[np.ndarray, np.ndarray]:
        """(steering efforts, wheel efforts) in N m for one step of dt seconds,
        from the measured steering angles/rates and wheel rates."""
        sc = self.plan(tuple(float(c) for c in cmd))
        q = np.asarray(steer_q, dtype=float)
        dq = np.asarray(steer_dq, dtype=float)
        target = np.array(sc.steer_angles)[self.steered]
        if self.steer_ref is None:
            self.steer_ref = q.copy()
        self.resteering = bool(target.size and np.max(np.abs(target - q)) > self.tolerance)
        moving = bool(np.any(self.rate_ref != 0.0))
        dv = self.acceleration * dt
        if self.resteering and moving:
            # stop first, steering held: scale every wheel down together (same ICR)
            peak = float(np.max(np.abs(self.rate_ref)))
            self.rate_ref = self.rate_ref * max(0.0, 1.0 - dv / peak)
            step = np.zeros_like(target)
        else:
            step = np.clip(target - self.steer_ref, -self.steer_speed * dt, self.steer_speed * dt)
            rates = np.zeros_like(self.rate_ref) if self.resteering else np.array(sc.wheel_rates)
            peak = np.max(np.abs(rates) / self.drive_speed) if rates.size else 0.0
            if peak > 1.0:
                rates = rates / peak  # same factor for every wheel: the ICR is kept
            change = rates - self.rate_ref
            largest = float(np.max(np.abs(change))) if change.size else 0.0
            self.rate_ref = self.rate_ref + (change * (dv / largest) if largest > dv else change)
        self.steer_ref = self.steer_ref + step
        ref_rate = step / dt if dt > 0 else np.zeros_like(step)
        tau_s = self.steer_pid.update(self.steer_ref - q, ref_rate - dq, dt) + self.ff * ref_rate
        tau_s = np.clip(tau_s, -self.steer_effort, self.steer_effort)
        tau_w = self.drive_pi.update(self.rate_ref - np.asarray(wheel_dq, dtype=float),
                                     np.zeros_like(self.rate_ref), dt)
        return tau_s, tau_w
