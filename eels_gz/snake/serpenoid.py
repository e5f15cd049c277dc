"""Serpenoid shape gaits (NEO §III-B.1, Eq. 1), with sidewinding.

Eq. 1, for module number ``n`` (the ``<n>`` of ``module_<n>_bend``) and time
``t`` (s)::

    theta_bend(n, t) = beta_e + A_e sin(omega_s n + omega_t t)           n even
    theta_bend(n, t) = beta_o + A_o sin(omega_s n + omega_t t + delta)   n odd

Sidewinding is ``beta_e = beta_o = 0``, ``delta = pi/4`` (NEO), usually with
``A_e = A_o``. It needs adjacent bend axes orthogonal, which EELS gets from
its twist joints: "offsetting adjacent twist actuators by pi/2". Here module
``i``'s twist joint holds ``+twist_offset`` for odd ``i`` and
``-twist_offset`` for even ``i``, so the modules' rolls alternate
``twist_offset, 0, twist_offset, ...``: adjacent modules are rolled ``pi/2``
apart, every odd bend turns about the tail's z axis (lateral wave) and every
even one about the same rolled axis (dorsal wave), the nominal configuration
of the snake robots the gait comes from. A robot without twist joints (Mini
EELS, alternating bend axes in the URDF) gets bend set points only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from eels_gz.errors import SnakeModelError
from eels_gz.snake.chain import SnakeChain
from eels_gz.snake.params import SerpenoidParams


def sidewinding(amplitude: float, omega_s: float, omega_t: float,
                twist_offset: float = math.pi / 2) -> SerpenoidParams:
    """Sidewinding parameters (NEO): zero offsets, ``delta = pi/4``, equal amplitudes (rad)."""
    return SerpenoidParams(0.0, 0.0, amplitude, amplitude, omega_s, omega_t, math.pi / 4, twist_offset)


def bend_angle(p: SerpenoidParams, n: int, t: float) -> float:
    """NEO Eq. 1: bend angle (rad) of module ``n`` at time ``t`` (s)."""
    phase = p.omega_s * n + p.omega_t * t
    if n % 2 == 0:
        return p.beta_even + p.amplitude_even * math.sin(phase)
    return p.beta_odd + p.amplitude_odd * math.sin(phase + p.delta)


def twist_angle(p: SerpenoidParams, n: int) -> float:
    """Twist set point (rad) of module ``n``: ``+twist_offset`` odd, ``-twist_offset`` even."""
    return p.twist_offset if n % 2 == 1 else -p.twist_offset


class SerpenoidGait:
    """Bend and twist set points by joint name for a chain (Eq. 1 plus the twist offsets).

    The constructor checks that the gait stays inside the URDF joint limits
    (``|beta| + A`` against each bend joint, the twist offset against each
    twist joint) and raises :class:`SnakeModelError` naming the joint otherwise.
    """

    def __init__(self, params: SerpenoidParams, chain: SnakeChain):
        self.params = params
        self.chain = chain
        self.bends = chain.bend_joints()
        self.twists = chain.twist_joints()
        for n, name in enumerate(self.bends, start=1):
            beta, amp = (params.beta_even, params.amplitude_even) if n % 2 == 0 else \
                (params.beta_odd, params.amplitude_odd)
            self._check_range(name, beta - amp, beta + amp)
        for n, name in enumerate(self.twists, start=1):
            a = twist_angle(params, n)
            self._check_range(name, a, a)

    def _check_range(self, name: str, low: float, high: float) -> None:
        j = self.chain.joint(name)
        if low < j.lower or high > j.upper:
            raise SnakeModelError(
                f"serpenoid gait: joint '{name}' would move over [{low:.4g}, {high:.4g}] rad, outside its "
                f"limits [{j.lower:.4g}, {j.upper:.4g}] rad; reduce the amplitude or offset")

    def setpoints(self, t: float) -> dict[str, float]:
        """Joint name -> position set point (rad) at time ``t`` (s)."""
        out: dict[str, float] = {}
        for n, name in enumerate(self.bends, start=1):
            out[name] = bend_angle(self.params, n, t)
        for n, name in enumerate(self.twists, start=1):
            out[name] = twist_angle(self.params, n)
        return out

    def rates(self, t: float) -> Mapping[str, float]:
        """Joint name -> velocity feed-forward (rad/s): d/dt of :meth:`setpoints`."""
        p = self.params
        out: dict[str, float] = {}
        for n, name in enumerate(self.bends, start=1):
            phase = p.omega_s * n + p.omega_t * t
            if n % 2 == 0:
                out[name] = p.amplitude_even * p.omega_t * math.cos(phase)
            else:
                out[name] = p.amplitude_odd * p.omega_t * math.cos(phase + p.delta)
        for name in self.twists:
            out[name] = 0.0
        return out
