"""A stiff spring-damper that holds two joints on ``q_f = m q_l + offset`` (a mimic relation).

gz-physics 7's DART plugin has no mimic constraint (gz-sim 8's Physics logs
an error and creates none; only bullet-featherstone implements it), so a
URDF ``<mimic>`` coupling a passive mechanism, such as a rover's
differential, is lost in Gazebo with its default engine. This law restores
it as a penalty: with the error ``e = q_f - (m q_l + offset)`` and its rate
``ė = dq_f - m dq_l``,

    λ = -(k e + c ė),   τ_f = λ,   τ_l = -m λ,

the generalized forces of a constraint force λ acting on ``e`` (virtual
work: ``δW = λ δe = λ δq_f - m λ δq_l``), so the pair exchanges torque and
does no net work on the rest of the robot. Units: rad, rad/s, N m/rad,
N m s/rad, N m (m and N for prismatic joints). Where the engine does
enforce the mimic (the embedded host), ``e`` and ``ė`` stay zero and so do
the torques.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class CouplingGains:
    stiffness: float  # k, N m / rad
    damping: float  # c, N m s / rad

    def __post_init__(self) -> None:
        if not (self.stiffness > 0 and self.damping >= 0):
            raise ValueError(f"coupling gains need stiffness > 0 and damping >= 0, got {self}")


def coupling_torques(q_lead: np.ndarray, dq_lead: np.ndarray, q_follow: np.ndarray, dq_follow: np.ndarray,
                     multiplier: np.ndarray, offset: np.ndarray,
                     gains: CouplingGains) -> tuple[np.ndarray, np.ndarray]:
    """(τ_lead, τ_follow) for arrays of pairs (module docstring)."""
    e = q_follow - (multiplier * q_lead + offset)
    de = dq_follow - multiplier * dq_lead
    lam = -(gains.stiffness * e + gains.damping * de)
    return -multiplier * lam, lam
