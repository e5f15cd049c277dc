"""The implicit step of the friction across the thread (eels_gz/contact/implicit.py, issue 33).

- A point's mobility from its link's own inertia is the rigid body's closed form
  ``1/m + (c x e) . I^-1 (c x e)``, whatever the link's pose (the record is built in the link frame).
- The step's recursion, linearised, is stable over the range the module docstring claims (true to
  estimated mobility 0.03-1.5, stick springs 1e4-1e8 N/m, sliding leaks 0-0.5 per step, estimated
  mobilities 0.3-5 1/kg) at dt = 1 ms; the explicit step it replaces is not, past ``dt^2 K w = 4``;
  and the estimate E needs its low-pass: with none (time constant = dt) a stiff spring diverges.
- Its steady state is the explicit law's, exactly: a constant slip and a constant explicit force f0
  give back f0 (no softening), the bias ``f0 x / (1 + x)`` of the first step decaying with
  EXTERNAL_FORCE_TIME.
"""

from __future__ import annotations

import numpy as np
import pytest

from eels_gz.contact.implicit import (ACROSS_WIDTH, EXTERNAL_FORCE_TIME, implicit_across_force, link_mobility,
                                      point_mobility, spectral_radius)
from eels_gz.rotations import quat_to_matrix

DT = 1e-3  # s
TAU = 2e-3  # s, the bristle's damping time (stick.STICK_DAMPING_TIME)


def test_point_mobility_is_the_rigid_body_closed_form():
    rng = np.random.default_rng(33)
    for _ in range(20):
        q = rng.normal(size=4)
        rot = quat_to_matrix(q / np.linalg.norm(q))
        pos = rng.normal(size=3)
        mass = rng.uniform(0.5, 3.0)
        a = rng.normal(size=(3, 3))
        moi_link = a @ a.T + 0.01 * np.eye(3)  # about the centre of mass, link axes
        com_link = rng.normal(scale=0.05, size=3)
        moi_world = rot @ moi_link @ rot.T
        com_world = pos + rot @ com_link
        record = link_mobility([mass], [com_world], [moi_world], [pos], [rot])
        offset = rng.normal(scale=0.1, size=3)  # point minus link origin, world
        e = rng.normal(size=3)
        e /= np.linalg.norm(e)
        c = offset - (com_world - pos)
        q_ = np.cross(c, e)
        expected = 1.0 / mass + q_ @ np.linalg.solve(moi_world, q_)
        got = point_mobility(0, 0, offset.reshape(1, 1, 3), rot.reshape(1, 3, 3), record, *e)
        assert got == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("leak", [0.0, 0.2, 0.5])
def test_the_recursion_is_stable_over_the_claimed_range(leak):
    worst = max(spectral_radius(k, w, r, DT, TAU, leak)
                for k in (1e4, 1e5, 1e6, 1e7, 1e8) for w in (0.3, 1.0, 5.0) for r in (0.03, 0.1, 0.3, 1.0, 1.5))
    assert worst < 1.0


def test_the_explicit_step_it_replaces_is_not_stable():
    """The same spring and mobility, explicit (the engine's semi-implicit Euler on F = -K x - K tau v):
    it grows past dt^2 K w + 2 dt tau K w = 4 (stability.py), e.g. K = 1e6 N/m on w = 1 1/kg."""
    def explicit_grows(k, w):
        x, v = 1e-4, 0.0
        for _ in range(2000):
            v += DT * w * (-k * x - k * TAU * v)
            x += DT * v
            if abs(x) > 1e-3:
                return True
        return False
    assert not explicit_grows(1e5, 0.3)  # 0.03 + 0.12 < 4
    assert explicit_grows(1e6, 1.0)  # 1 + 4 > 4
    assert spectral_radius(1e6, 1.0, 1.0, DT, TAU) < 1.0


def test_the_estimate_needs_its_low_pass():
    """With E unfiltered (time constant = dt) a stiff stick spring on an overestimated mobility diverges."""
    assert spectral_radius(1e7, 1.0, 0.1, DT, TAU, external_time=DT) > 1.0
    assert spectral_radius(1e7, 1.0, 0.1, DT, TAU) < 1.0


@pytest.mark.parametrize("x", [0.1, 5.0, 50.0])
def test_the_steady_force_is_the_explicit_law(x):
    """A constant slip and explicit force: the first step gives f0 / (1 + x) (implicit Euler without E);
    then E takes up the rest, the gap shrinking by 1 - (dt / EXTERNAL_FORCE_TIME) / (1 + x) a step: the
    force reaches f0 to 1e-9 of it in 25 of those time constants."""
    across = np.zeros((1, 1, ACROSS_WIDTH))
    f0, a, v = -7.5, 2e-3, 0.01
    slope = x / a
    first = implicit_across_force(across, 0, 0, f0, slope, a, v, 1e3, DT)
    assert first == pytest.approx(f0 / (1.0 + x), rel=1e-12)
    for _ in range(int(25 * (1.0 + x) * EXTERNAL_FORCE_TIME / DT)):
        f = implicit_across_force(across, 0, 0, f0, slope, a, v, 1e3, DT)
    assert f == pytest.approx(f0, rel=1e-9)


def test_the_force_stays_in_eq6s_set():
    across = np.zeros((1, 1, ACROSS_WIDTH))
    assert implicit_across_force(across, 0, 0, -50.0, 0.0, 1e-3, 0.0, 20.0, DT) == -20.0
    assert implicit_across_force(across, 0, 0, 50.0, 0.0, 1e-3, 0.0, 20.0, DT) == 20.0
