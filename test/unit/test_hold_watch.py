"""eels_gz.scenarios.hold.RestWatch's chatter share: a velocity's sign flip counts as step-rate chatter,
round-off of a joint at rest (below AT_REST, as gz-sim's DART reports a still joint: 1e-31..1e-15)
does not."""

from __future__ import annotations

import numpy as np

from eels_gz.scenarios.hold import AT_REST, RestWatch


def _watch(velocities: list[float]) -> dict:
    w = RestWatch(["j"], 0.0)
    w.start(0.0, np.zeros(3), np.eye(3))
    for k, v in enumerate(velocities):
        w.add(0.001 * (k + 1), np.zeros(3), np.eye(3), np.array([v]))
    return w.metrics()


def test_a_joint_ringing_at_step_rate_flips_every_step():
    m = _watch([1e-4 * (-1) ** k for k in range(100)])
    assert m["worst_flip_share"] == 0.99 and m["worst_flip_joint"] == "j"


def test_round_off_of_a_joint_at_rest_is_not_chatter():
    m = _watch([3e-31 * (-1) ** k for k in range(100)])
    assert m["worst_flip_share"] == 0.0 and m["worst_flip_joint"] is None
    just_above = _watch([2 * AT_REST * (-1) ** k for k in range(100)])
    assert just_above["worst_flip_share"] == 0.99


def test_a_joint_is_named_only_when_it_chatters():
    quiet = _watch([1e-4 * (-1) ** k if k < 3 else 1e-4 for k in range(100)])  # 2 flips in 100 steps
    assert quiet["worst_flip_share"] == 0.02 and quiet["worst_flip_joint"] is None
