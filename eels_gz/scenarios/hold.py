"""``hold`` metrics (pure; the system is plugins_py/hold.py, which only watches: the set points stay
those of config/scenarios/hold.yaml). How still the robot stayed, from its base link (the tail) and
its joint velocities, step by step:

- ``drift_m``: the base's largest horizontal distance from where it started;
- ``drift_settled_m``: its largest distance (3D) from where it was at ``settle`` s, after that (the
  drop through the placement clearance into contact is over by then);
- ``roll_rad``: the base's largest rotation about its own starting x axis (the body axis);
- ``worst_flip_share``: the largest share of steps on which one joint's velocity changed sign
  (step-rate chatter), and ``worst_flip_joint``, that joint when it chatters (a share above
  :data:`CHATTER`; None otherwise: which of several quiet joints flipped most is noise). A velocity within
  :data:`AT_REST` of zero has no sign: a joint at rest reads round-off there (gz-sim's DART gives
  1e-31..1e-15 rad/s where the host's reads 0), and its flips are not chatter.
"""

from __future__ import annotations

import math

import numpy as np

# rad/s or m/s: below this a joint's velocity is round-off of a joint at rest, 10^6 below the slowest
# chatter the metric is for (a position loop ringing at step rate moves a joint by 1e-6 rad a step or more)
AT_REST = 1e-9
CHATTER = 0.05  # a joint whose velocity changes sign on more than this share of steps chatters

METRICS = ("duration_s", "settle_s", "drift_m", "drift_settled_m", "roll_rad", "worst_flip_share",
           "worst_flip_joint")


def roll_about_x(R0: np.ndarray, R: np.ndarray) -> float:
    """Rotation of R relative to R0 about R0's x axis (rad)."""
    rel = R0.T @ R
    return math.atan2(rel[2, 1], rel[2, 2])


class RestWatch:
    """Accumulates the metrics above from the base's start pose and each step's pose and joint
    velocities; ``names``: the joints, in the order of the velocities given."""

    def __init__(self, names: list[str], settle_s: float):
        self.names, self.settle_s = list(names), float(settle_s)
        self.t0 = self.t = 0.0
        self.p0 = self.R0 = self.p_settled = None
        self.drift = self.drift_settled = self.roll = 0.0
        self.flips, self.prev, self.steps = np.zeros(len(self.names)), None, 0

    def start(self, t: float, pos: np.ndarray, rot: np.ndarray) -> None:
        self.t0 = self.t = t
        self.p0, self.R0 = np.array(pos, float), np.array(rot, float)

    def add(self, t: float, pos: np.ndarray, rot: np.ndarray, dq: np.ndarray) -> None:
        """One step's end: time (s), base position (3,) and rotation (3, 3), joint velocities."""
        self.t, self.steps = t, self.steps + 1
        dq = np.where(np.abs(dq) > AT_REST, dq, 0.0)
        if self.prev is not None:
            self.flips += np.sign(dq) * np.sign(self.prev) < 0
        self.prev = np.array(dq, float)
        self.drift = max(self.drift, float(np.linalg.norm(pos[:2] - self.p0[:2])))
        self.roll = max(self.roll, abs(roll_about_x(self.R0, rot)))
        if self.p_settled is None and t - self.t0 >= self.settle_s - 1e-9:
            self.p_settled = np.array(pos, float)
        if self.p_settled is not None:
            self.drift_settled = max(self.drift_settled, float(np.linalg.norm(pos - self.p_settled)))

    def metrics(self) -> dict:
        share = self.flips / max(self.steps, 1)
        worst = int(np.argmax(share)) if len(share) else None
        return {"duration_s": self.t - self.t0, "settle_s": self.settle_s, "drift_m": self.drift,
                "drift_settled_m": self.drift_settled if self.p_settled is not None else None,
                "roll_rad": self.roll, "worst_flip_share": float(share[worst]) if worst is not None else 0.0,
                "worst_flip_joint": self.names[worst] if worst is not None and share[worst] > CHATTER else None}
