"""The range of every number a user gives a run (a flag, a ``--set`` or ``--config`` key, a scenario
parameter, a campaign's size), checked before any work starts, and the estimate of work that will
take long. docs/running.md lists them (the table there is this one).

A range is physical where physics gives one (a step of at most 1 s, a mass above zero) and otherwise
the bound past which a value can only be a slip (a duration of 1e308 s ends in an OverflowError, a
sweep of a billion samples in a machine out of memory): each is an error naming the key and its range,
never a traceback or a silent hour of work.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass

from eels_gz.errors import ConfigError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Range:
    """A valid range (an error outside it) and an optional plausible one (a warning outside it)."""

    low: float  # the smallest valid value (exclusive when low_open)
    high: float
    unit: str
    low_open: bool = False
    plausible: tuple[float, float] | None = None

    def expected(self) -> str:
        lo = f"> {self.low:g}" if self.low_open else f">= {self.low:g}"
        return f"a finite number {lo} and <= {self.high:g}{' ' + self.unit if self.unit else ''}"


class InvalidValue(ValueError):
    """A value outside its valid range; the reader adds where it was (file, element, line)."""


def check_value(value: float, rng: Range, name: str) -> str | None:
    """InvalidValue unless ``value`` is in ``rng``'s valid range; a warning (text) when it is outside
    the plausible range, else None. ``name`` says what the value is ('radius')."""
    ok = math.isfinite(value) and (value > rng.low if rng.low_open else value >= rng.low) and value <= rng.high
    if not ok:
        raise InvalidValue(f"{name} must be {rng.expected()}, got {value:g}")
    if rng.plausible is not None and not rng.plausible[0] <= value <= rng.plausible[1]:
        return (f"{name} {value:g} {rng.unit} is outside the plausible range {rng.plausible[0]:g} to "
                f"{rng.plausible[1]:g} {rng.unit}; check it (a unit slip?)")
    return None


# key -> its range (the configuration's dotted keys; the flags that set them share them)
CONFIG_RANGES: dict[str, Range] = {
    "duration": Range(0.0, 1e6, "s", low_open=True),  # 11.6 days simulated
    "physics.dt": Range(0.0, 1.0, "s", low_open=True),
    "physics.max_velocity": Range(0.0, 1e6, "m/s or rad/s", low_open=True),
    "sim.reset_at": Range(0.0, 1e6, "s", low_open=True),
    "log.rate": Range(0.0, 1e5, "Hz", low_open=True),
    "ros.state_rate": Range(0.0, 1e5, "Hz", low_open=True),
    "ros.rate": Range(0.0, 1e6, "x wall clock", low_open=True),
    "ros.domain": Range(0.0, 232.0, ""),
    "sensors.seed": Range(0.0, 2.0**32 - 1, ""),
}
COORDINATE_MAX = 1e7  # m: a position (a pose, a terrain's vertex or point) within 10 000 km of the origin
POSE_POSITION = Range(-COORDINATE_MAX, COORDINATE_MAX, "m")  # robot.pose x, y, z
POSE_ANGLE = Range(-1e3, 1e3, "rad")  # roll, pitch, yaw
# a scenario parameter without a range of its own (``ranges:`` in its YAML): at most this in size
SCENARIO_PARAM_MAX = 1e6
MAX_STEPS = 1e9  # duration / dt: a billion steps is days of work at the host's fastest
SAMPLES = Range(1.0, 1e5, "samples")  # a campaign's draws per grid point
MAX_SAMPLES_TOTAL = 1e6  # a campaign's samples in all (grids times draws)
# the host's cost of a step (s), from the fastest to the slowest runs of docs/benchmarks.md
STEP_COST_S = (1e-4, 5e-4)
LONG_WORK_S = 60.0  # work estimated over this says so before it starts


def check_number(key: str, value, rng: Range, source: str) -> None:
    """ConfigError ``source: 'key' must be ...`` unless ``value`` is in ``rng``."""
    try:
        check_value(float(value), rng, f"'{key}'")
    except InvalidValue as exc:
        raise ConfigError(f"{source}: {exc}") from None


def check_config_number(key: str, value, source: str) -> None:
    """The range of configuration key ``key`` (CONFIG_RANGES), if it has one."""
    rng = CONFIG_RANGES.get(key)
    if rng is not None and value is not None:
        check_number(key, value, rng, source)


def check_pose(pose, source: str) -> None:
    """robot.pose [x, y, z, roll, pitch, yaw] within POSE_POSITION and POSE_ANGLE."""
    for i, value in enumerate(pose):
        rng, name = (POSE_POSITION, "xyz"[i]) if i < 3 else (POSE_ANGLE, ("roll", "pitch", "yaw")[i - 3])
        check_number(f"robot.pose {name}", value, rng, source)


def check_steps(duration: float, dt: float) -> float:
    """The number of steps of a run (ConfigError above MAX_STEPS)."""
    steps = duration / dt
    if not steps <= MAX_STEPS:
        raise ConfigError(f"the run would take {steps:.3g} steps (duration {duration:g} s / step {dt:g} s), more "
                          f"than {MAX_STEPS:.0e}: shorten the duration or lengthen the step")
    return steps


def estimate(steps: float, parallel: int = 1) -> tuple[float, float] | None:
    """(low, high) wall seconds of ``steps`` host steps run ``parallel`` at once, at the host's measured
    cost a step (STEP_COST_S); None when even the high estimate is under LONG_WORK_S."""
    low, high = (steps * c / max(1, parallel) for c in STEP_COST_S)
    return (low, high) if high > LONG_WORK_S else None


def say_estimate(what: str, steps: float, parallel: int = 1) -> str | None:
    """A line saying how long ``what`` will take, when it may take over a minute (else None); logged at
    WARNING so that the command line shows it before the work starts."""
    span = estimate(steps, parallel)
    if span is None:
        return None
    line = (f"{what}: {steps:.3g} steps, about {_duration(span[0])} to {_duration(span[1])} of work at the host's "
            f"{STEP_COST_S[0] * 1e3:g} to {STEP_COST_S[1] * 1e3:g} ms a step (docs/benchmarks.md)"
            + (f" on {parallel} workers" if parallel > 1 else ""))
    log.warning("%s", line)
    return line


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    if seconds < 172800:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


def finite(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
