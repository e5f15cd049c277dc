"""The per-step law of the joint-control plugin, for N joints in one call.

From the set points of the moment (NaN: none), the measured positions and
velocities, and the loops' state, the efforts:

- external set points (e.g. ROS ``/joint_commands``) override the
  schedule's joint by joint;
- coupled pairs: a follower's set points are its leader's times the
  multiplier;
- a position-mode joint tracks ``q_hold``: the position set point when there
  is one, else the last ``q_hold`` moved at the velocity set point (0 if
  none); its error rate is ``v_ref - dq``;
- a velocity-mode joint tracks the velocity set point (0 if none); its error
  rate is 0;
- the PID law of ``pid.py`` (saturation, bounded integral, conditional
  integration) turns errors into efforts.

One numba call replaces some twenty numpy operations per step (the joint
control of a 46-DOF EELS at 1 kHz): the same law as before, checked against
it in test/unit/test_joint_targets.py.
"""

from __future__ import annotations

import numba
import numpy as np

from eels_gz.control.pid import PidArray


@numba.njit(cache=True)
def _joint_control_step(q, dq, q_ref, v_ref, ext_pos, ext_vel, lead, follow, mult, velocity_mode, q_hold, dt,
                        p, i, d, i_max, effort_max, integral, q_target, v_target, out):
    n = q.shape[0]
    for k in range(n):
        qr = q_ref[k]
        vr = v_ref[k]
        if not np.isnan(ext_pos[k]):
            qr = ext_pos[k]
        if not np.isnan(ext_vel[k]):
            vr = ext_vel[k]
        q_target[k] = qr
        v_target[k] = vr
    for m in range(lead.shape[0]):
        q_target[follow[m]] = mult[m] * q_target[lead[m]]
        v_target[follow[m]] = mult[m] * v_target[lead[m]]
    for k in range(n):
        vr = v_target[k]
        if np.isnan(vr):
            vr = 0.0
        if velocity_mode[k]:
            e = vr - dq[k]
            e_rate = 0.0
        else:
            qr = q_target[k]
            if np.isnan(qr):
                q_hold[k] = q_hold[k] + vr * dt
            else:
                q_hold[k] = qr
            e = q_hold[k] - q[k]
            e_rate = vr - dq[k]
        unsat = p[k] * e + integral[k] + d[k] * e_rate
        pushing_out = (unsat >= effort_max[k] and e > 0.0) or (unsat <= -effort_max[k] and e < 0.0)
        if not pushing_out:
            integral[k] = min(max(integral[k] + i[k] * e * dt, -i_max[k]), i_max[k])
        u = p[k] * e + integral[k] + d[k] * e_rate
        out[k] = min(max(u, -effort_max[k]), effort_max[k])


class JointLoops:
    """The joint-control law's state for a fixed list of joints: ``step`` gives the efforts of one step."""

    def __init__(self, pid: PidArray, velocity_mode: np.ndarray, pairs: list[tuple[int, int, float]]):
        n = len(velocity_mode)
        self.pid = pid
        self.velocity_mode = np.ascontiguousarray(velocity_mode, dtype=np.bool_)
        self.lead = np.array([a for a, _, _ in pairs], dtype=np.int64)
        self.follow = np.array([b for _, b, _ in pairs], dtype=np.int64)
        self.mult = np.array([m for _, _, m in pairs], dtype=float)
        self.external_pos = np.full(n, np.nan)
        self.external_vel = np.full(n, np.nan)
        self.q_hold: np.ndarray | None = None
        self._q_target, self._v_target, self._out = np.empty(n), np.empty(n), np.empty(n)

    def reset(self) -> None:
        """Integrators cleared; the shape to hold is taken again from the next measurement."""
        self.pid.reset()
        self.q_hold = None

    def step(self, q: np.ndarray, dq: np.ndarray, q_ref: np.ndarray, v_ref: np.ndarray, dt: float) -> np.ndarray:
        """Efforts (N m or N) for measured ``q``, ``dq`` and the schedule's set points ``q_ref``, ``v_ref``
        (NaN: none); the returned array is reused by the next call."""
        if self.q_hold is None:
            self.q_hold = np.array(q, dtype=float)
        pid = self.pid
        _joint_control_step(q, dq, q_ref, v_ref, self.external_pos, self.external_vel, self.lead, self.follow,
                            self.mult, self.velocity_mode, self.q_hold, dt, pid.p, pid.i, pid.d, pid.i_max,
                            pid.effort_max, pid.integral, self._q_target, self._v_target, self._out)
        return self._out
