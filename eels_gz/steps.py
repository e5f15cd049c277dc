"""Step arithmetic that the host, the run and the plugins share: a rate as a period in steps, and the
time a step starts from. Engine-free (the plugins import it under real gz-sim too)."""

from __future__ import annotations


def period(rate: float, dt: float) -> int:
    """The steps between two updates at ``rate`` Hz on a ``dt`` s step: ``1 / (rate dt)`` rounded, at least
    1; a rate of 0 updates every step (gz-sim's ``<update_rate>`` 0)."""
    return 1 if rate == 0 else max(1, int(round(1.0 / (rate * dt))))


def step_start(info) -> float:
    """The simulated time (s) the step of ``info`` (gz-sim's UpdateInfo) starts from: its ``sim_time`` is
    the time the step reaches, already advanced by its ``dt`` in pre_update."""
    return info.sim_time.total_seconds() - info.dt.total_seconds()
