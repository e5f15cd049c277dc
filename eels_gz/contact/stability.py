"""The largest step the screw contact's explicit forces allow.

The screw contact plugin computes its forces from the state at the start of a
step and the engine integrates them semi-implicitly (v += dt F / m, then
x += dt v). For a linear force F = -K x - C v on a mass M this recursion is
stable iff dt^2 K / M + 2 dt C / M < 4 (the Jury conditions of its 2 x 2
step matrix; a pure damper needs dt C / M < 2). config/contact/ice.yaml sizes
its parameters with these conditions; here they are solved for dt.

The friction across the thread, ``|e_v|`` times stiffer than along it, is
integrated implicitly at velocity level (``implicit.py``, issue 33): its step
is stable at any stiffness, so it sets no bound here, whatever ``|e_v|``. The
forces still explicit are:

- **normal spring-damper** on a lone screw of mass m resting on its
  ``points_axial`` = n contact points (the lightest body the penalty holds):
  K = n k, C = n c, M = m;
- **friction regulator** (``v_eps`` > 0, no stick) along the thread: below
  v_eps the friction of each point is a damper mu F / v_eps along the thread;
  on the screw's spin, of inertia I = m r_root^2 / 2 and lever r cos(a) along
  the thread: C = n mu F (r cos a)^2 / v_eps, M = I;
- **stick-slip bristle** (``stick_length`` z0 > 0) along the thread: a spring
  k_t = mu F / z0 per point with its damper tau k_t (``stick.STICK_DAMPING_TIME``)
  on the spin: K = n k_t (r cos a)^2, C = tau K, M = I.

F is a point's share of the screw's load, the robot's weight spread over its
screws (``points_axial`` points each on flat ground). A screw pressed harder
than that (a wall push) has a lower bound: these are a floor that catches a
step that cannot work, not a guarantee.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from eels_gz.contact.params import ContactParams
from eels_gz.contact.stick import STICK_DAMPING_TIME


@dataclass(frozen=True)
class ScrewLoad:
    """One screw and its static load: mass (kg), root radius (m, for the spin inertia), blade
    radius (m), lead angle (rad) and the normal load on the screw (N)."""

    mass: float
    root_radius: float
    radius: float
    lead_angle: float
    load: float


def _dt_max(stiffness_over_mass: float, damping_over_mass: float) -> float:
    """Largest dt with dt^2 a + 2 dt b < 4 (a = K / M, b = C / M); inf when both are 0."""
    a, b = stiffness_over_mass, damping_over_mass
    if a <= 0.0:
        return math.inf if b <= 0.0 else 2.0 / b
    return (-2.0 * b + math.sqrt(4.0 * b * b + 16.0 * a)) / (2.0 * a)


def step_bounds(params: ContactParams, screw: ScrewLoad) -> dict[str, float]:
    """Each explicit contact force's largest stable step (s), by name (module docstring)."""
    n = params.points_axial
    bounds = {"normal spring-damper": _dt_max(n * params.k / screw.mass, n * params.c / screw.mass)}
    inertia = 0.5 * screw.mass * screw.root_radius**2
    f_point = screw.load / n
    lever2 = (screw.radius * math.cos(screw.lead_angle)) ** 2  # along the thread, on the spin
    if params.stick_length > 0.0:
        k_t = params.mu * f_point / params.stick_length
        stiffness = n * k_t * lever2 / inertia
        bounds["stick-slip bristle"] = _dt_max(stiffness, STICK_DAMPING_TIME * stiffness)
    elif params.v_eps > 0.0:
        c_rot = n * params.mu * f_point * lever2 / params.v_eps
        bounds["friction regulator"] = _dt_max(0.0, c_rot / inertia)
    return bounds
