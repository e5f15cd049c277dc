"""The fused joint-control step (eels_gz/control/joint_targets.py) is the
law it replaced: the numpy reference below, step after step, with set
points missing (NaN), external overrides, coupled pairs, position- and
velocity-mode joints and saturating efforts. Both evaluate the same
expressions in double precision; 1e-12 (relative to the effort limits)
leaves room for the order of operations only."""

from __future__ import annotations

import numpy as np
import pytest

from eels_gz.control.joint_targets import JointLoops
from eels_gz.control.pid import PidArray, PidGains


class Reference:
    """The joint-control plugin's law in numpy, as written before the fused kernel."""

    def __init__(self, gains, velocity_mode, pairs):
        self.pid = PidArray(gains)
        self.velocity_mode = np.asarray(velocity_mode)
        self.position_mode = (~self.velocity_mode).astype(float)
        self.lead = np.array([a for a, _, _ in pairs], dtype=int)
        self.follow = np.array([b for _, b, _ in pairs], dtype=int)
        self.mult = np.array([m for _, _, m in pairs], dtype=float)
        self.pairs = pairs
        self.q_hold = None

    def step(self, q, dq, q_ref, v_ref, ext_pos, ext_vel, dt):
        if self.q_hold is None:
            self.q_hold = q.copy()
        q_ref = np.where(np.isnan(ext_pos), q_ref, ext_pos)
        v_ref = np.where(np.isnan(ext_vel), v_ref, ext_vel)
        if self.pairs:
            q_ref, v_ref = q_ref.copy(), v_ref.copy()
            q_ref[self.follow] = self.mult * q_ref[self.lead]
            v_ref[self.follow] = self.mult * v_ref[self.lead]
        no_pos = np.isnan(q_ref)
        v_ref = np.where(np.isnan(v_ref), 0.0, v_ref)
        self.q_hold = np.where(no_pos, self.q_hold + v_ref * dt * self.position_mode, q_ref)
        err = np.where(self.velocity_mode, v_ref - dq, self.q_hold - q)
        err_rate = np.where(self.velocity_mode, 0.0, v_ref - dq)
        return self.pid.update(err, err_rate, dt)


@pytest.mark.parametrize("seed", range(5))
def test_fused_step_equals_the_numpy_law(seed):
    rng = np.random.default_rng(seed)
    n, dt = 12, 1e-3
    gains = [PidGains(*rng.uniform(0.1, 50.0, 3), rng.uniform(0.0, 5.0), rng.uniform(1.0, 20.0)) for _ in range(n)]
    velocity_mode = rng.random(n) < 0.4
    pairs = [(0, 1, -1.0), (4, 7, 0.5)]
    ref = Reference(gains, velocity_mode, pairs)
    fused = JointLoops(PidArray(gains), velocity_mode, pairs)
    for step in range(200):
        q, dq = rng.normal(size=n), rng.normal(size=n)
        q_ref = np.where(rng.random(n) < 0.3, np.nan, rng.normal(size=n))
        v_ref = np.where(rng.random(n) < 0.3, np.nan, rng.normal(size=n))
        ext_pos = np.where(rng.random(n) < 0.8, np.nan, rng.normal(size=n))
        ext_vel = np.where(rng.random(n) < 0.8, np.nan, rng.normal(size=n))
        fused.external_pos[:], fused.external_vel[:] = ext_pos, ext_vel
        expected = ref.step(q, dq, q_ref, v_ref, ext_pos, ext_vel, dt)
        got = fused.step(q, dq, q_ref, v_ref, dt)
        limit = np.array([g.effort_max for g in gains])
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12 * limit.max(), err_msg=f"step {step}")
        np.testing.assert_allclose(fused.pid.integral, ref.pid.integral, rtol=0, atol=1e-12 * limit.max())
        position = ~velocity_mode
        np.testing.assert_allclose(fused.q_hold[position], ref.q_hold[position], rtol=0, atol=1e-12)


def test_reset_clears_integrators_and_the_held_shape():
    loops = JointLoops(PidArray([PidGains(1.0, 1.0, 0.0, 10.0, 10.0)]), np.array([False]), [])
    nan = np.full(1, np.nan)
    loops.step(np.array([0.5]), np.zeros(1), nan, nan, 0.1)
    loops.step(np.array([0.2]), np.zeros(1), nan, nan, 0.1)
    assert loops.pid.integral[0] != 0.0 and loops.q_hold[0] == 0.5
    loops.reset()
    assert loops.pid.integral[0] == 0.0 and loops.q_hold is None
