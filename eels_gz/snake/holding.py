"""Can a robot pressed against the ice hold its weight on its screws? Pure statics.

Two questions decide whether a snake in a shaft (``moulin_descent``) or
between walls can carry its weight on screw friction.

1. **How much of the weight runs along the threads.** At a screw's contact
   with a wall, the thread tangent is ``t = cos(a) e_theta + h sin(a) e_x``
   (``eels_gz.contact.screw_points``). The screw–ice model resists slip along
   ``t`` with ``mu F_n`` only, and across it with ``mu |e_v| F_n``. The weight's
   share along the threads, ``|g_hat . t|``, must therefore be carried by
   plain Coulomb friction: holding needs at least

       sum F_n >= m g |g_hat . t| / mu,

   whatever the across-thread grip. For a helix of pitch angle ``beta`` on a
   vertical wall (screw axes tangent to the helix, right-handed screws of lead
   ``a``) ``|g_hat . t| = |cos(beta + a)|``: 0.66 for the 28 deg helix that
   placement lays by default, 0 only for a 70 deg helix.
2. **Whether the contacts can be squeezed at all.** Joint motors exert only
   internal forces: with no other support, the wall's normal forces
   ``lambda_i n_i`` (``lambda_i >= 0``) on a static robot must balance as a
   wrench, ``sum lambda_i [n_i; (p_i - c) x n_i] = 0``. :func:`squeeze_balance`
   is the smallest norm of that wrench over ``lambda >= 0, sum lambda = 1``
   (moments divided by a length so both compare): 0 when a self-balanced
   squeeze exists (contacts all round a shaft, or two facing walls), about 1
   when the contacts all face one way (a robot leaning on one side of a shaft)
   and any push of its motors only pushes it off the wall.

SI units; gravity and normals as 3-vectors in one frame.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from scipy.optimize import nnls

from eels_gz.contact.screw_points import ScrewGeometry
from eels_gz.errors import SnakeModelError
from eels_gz.snake.chain import SnakeChain
from eels_gz.snake.settling import sample_points
from eels_gz.terrain.fields import DistanceField


@dataclass(frozen=True)
class ScrewWallContact:
    """A screw's envelope point nearest the terrain: ``point`` (m, world), the
    terrain's outward ``normal`` there, ``distance`` (m, < 0 inside the ice),
    and the screw's unit ``axis`` (world)."""

    link: str
    point: np.ndarray
    normal: np.ndarray
    distance: float
    axis: np.ndarray


def thread_tangent(axis, normal, geometry: ScrewGeometry) -> np.ndarray:
    """Unit thread tangent (3,) at the contact of a screw with spin ``axis`` on a
    surface of outward ``normal``: the envelope point faces the wall, so its
    radial direction is ``-normal`` off the axis."""
    a = np.asarray(axis, float) / np.linalg.norm(axis)
    radial = -np.asarray(normal, float)
    radial = radial - (radial @ a) * a
    norm = np.linalg.norm(radial)
    if not norm > 1e-9:
        raise SnakeModelError("thread_tangent: the screw axis is along the wall normal (the screw stands on its end)")
    radial /= norm
    e_theta = np.cross(a, radial)
    return math.cos(geometry.lead_angle) * e_theta + geometry.handedness * math.sin(geometry.lead_angle) * a


def along_thread_share(gravity, contacts: list[ScrewWallContact], geometries: Mapping[str, ScrewGeometry]) -> dict:
    """``|g_hat . t|`` per contact link: the share of the weight along its threads (0 to 1)."""
    g = np.asarray(gravity, float)
    g_hat = g / np.linalg.norm(g)
    return {c.link: abs(float(g_hat @ thread_tangent(c.axis, c.normal, geometries[c.link]))) for c in contacts}


def holding_normal_force(mass: float, gravity, share: float, mu: float) -> float:
    """Least total normal force (N) for Coulomb friction ``mu`` along the threads to carry the
    weight share ``share`` of a robot of ``mass`` kg: ``m |g| share / mu``."""
    if not mu > 0.0:
        raise SnakeModelError(f"holding_normal_force: mu = {mu!r}; expected > 0")
    return float(mass * np.linalg.norm(gravity) * share / mu)


def squeeze_balance(points, normals, length: float) -> tuple[float, np.ndarray]:
    """(residual, weights): the smallest ``|sum l_i [n_i; (p_i - c) x n_i / length]|`` over
    ``l_i >= 0``, ``sum l_i = 1`` (``c`` the points' centroid), and those ``l``.
    0: a squeeze the joints alone can hold exists; near 1: none (module docstring)."""
    p = np.asarray(points, float).reshape(-1, 3)
    n = np.asarray(normals, float).reshape(-1, 3)
    if len(p) == 0 or len(p) != len(n):
        raise SnakeModelError(f"squeeze_balance: need as many normals as points (>= 1), got {len(p)} and {len(n)}")
    if not length > 0.0:
        raise SnakeModelError(f"squeeze_balance: length = {length!r}; expected > 0 m")
    n = n / np.linalg.norm(n, axis=1)[:, None]
    W = np.vstack([n.T, np.cross(p - p.mean(axis=0), n).T / length])  # 6 x k
    # sum l = 1 as a heavily weighted row: NNLS then minimises |W l| on the simplex to ~1e-6 relative
    big = 1e3
    lam, _ = nnls(np.vstack([W, big * np.ones((1, len(p)))]), np.r_[np.zeros(6), big])
    lam = lam / lam.sum()
    return float(np.linalg.norm(W @ lam)), lam


def screw_wall_contacts(chain: SnakeChain, q: Mapping[str, float], base_pose: np.ndarray, terrain: DistanceField,
                        links, reach: float, stations: int = 5) -> list[ScrewWallContact]:
    """Screws of ``links`` whose envelope comes within ``reach`` m of the terrain, each at its
    terrain-facing point (placement's :func:`~eels_gz.snake.settling.sample_points`, ``stations``
    along its length) nearest the terrain."""
    sp = sample_points(chain, q, base_pose, terrain, stations)
    d, n = terrain.query(sp.points)
    owners = np.array(sp.links)
    spins = chain.screw_axes(q, base_pose)
    out = []
    for link in dict.fromkeys(sp.links):  # in chain order
        if link not in links:
            continue
        idx = np.flatnonzero(owners == link)
        k = idx[int(np.argmin(d[idx]))]
        if d[k] <= reach:
            spin = np.asarray(spins[link].axis, float)
            out.append(ScrewWallContact(link, sp.points[k], n[k], float(d[k]), spin))
    return out
