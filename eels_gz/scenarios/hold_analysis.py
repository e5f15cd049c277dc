"""Can a placed robot hold its weight on its screws? The figures of ``hold_analysis`` in metrics.json
(wall_climb's ``hold_statics``, moulin_descent's ``hold_analysis``), pure, from
:mod:`eels_gz.snake.holding`: from the robot's pose now, the screws touching the ice, the weight's
share along their threads, the least total normal force that carries it on Coulomb friction along the
threads (under screw contact, with its ``mu``), the normal force on them at the last step and the
squeeze balance of their contacts."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from eels_gz.snake.chain import SnakeChain
from eels_gz.snake.holding import along_thread_share, holding_normal_force, screw_wall_contacts, squeeze_balance

CONTACT_REACH = 0.005  # m: a screw within this of the ice counts as touching it


def hold_analysis(chain: SnakeChain, angles: Mapping[str, float], base_pose: np.ndarray, terrain,
                  geometry: Mapping, gravity, screw_loads: Mapping[str, float], mass: float,
                  mu: float | None) -> dict:
    """The figures (module docstring) of the robot with joint ``angles`` (rad) and base at
    ``base_pose`` (4x4, world) in ``terrain`` (a distance field): ``geometry`` the ScrewGeometry per
    screw link, ``gravity`` (3,) m/s^2, ``screw_loads`` each screw's normal load at the last step (N),
    ``mass`` the robot's (kg), ``mu`` the screw contact's friction coefficient (None under stock
    contact: no ``holding_normal_force_n``)."""
    contacts = screw_wall_contacts(chain, angles, base_pose, terrain, list(geometry), CONTACT_REACH)
    out: dict = {"screws_in_contact": len(contacts)}
    if not contacts:
        return out
    g = np.asarray(gravity, float)
    share = along_thread_share(g, contacts, geometry)
    mean_share = float(np.mean(list(share.values())))
    length = float(chain.segment_lengths().sum())
    balance, _ = squeeze_balance([c.point for c in contacts], [c.normal for c in contacts], length)
    out.update({
        "along_thread_share": {k: round(v, 4) for k, v in share.items()},
        "along_thread_share_mean": mean_share,
        "squeeze_balance": balance,
        "normal_force_n": float(sum(screw_loads.values())),
    })
    if mu is not None:
        out["holding_normal_force_n"] = holding_normal_force(mass, g, mean_share, mu)
    return out
