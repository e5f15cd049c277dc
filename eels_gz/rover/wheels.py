"""A rover's wheels as the steering and odometry models see them.

A wheel is its steering axis position in the body frame (x forward, y left,
metres), its radius (m) and its steering range (rad). The steer angle is
measured about +z from the body x axis: at zero the wheel rolls along +x and
a positive wheel rate drives it forward. A fixed wheel (``steerable=False``)
is one whose range is the single angle ``steer_min == steer_max``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

from eels_gz.errors import RoverError


@dataclass(frozen=True)
class Wheel:
    """One wheel: steering axis at (x, y) in the body frame (m), radius (m),
    steering range [steer_min, steer_max] (rad)."""

    name: str
    x: float
    y: float
    radius: float
    steer_min: float
    steer_max: float
    steerable: bool = True

    def __post_init__(self) -> None:
        for field in ("x", "y", "radius", "steer_min", "steer_max"):
            value = getattr(self, field)
            try:
                ok = math.isfinite(float(value))
            except (TypeError, ValueError):
                ok = False
            if not ok:
                raise RoverError(f"wheel '{self.name}': {field} must be a finite number, got {value!r}")
        if not self.radius > 0:
            raise RoverError(f"wheel '{self.name}': radius must be positive (m), got {self.radius}")
        if self.steer_min > self.steer_max:
            raise RoverError(f"wheel '{self.name}': steer_min {self.steer_min} rad is greater than "
                             f"steer_max {self.steer_max} rad")
        if not self.steerable and self.steer_min != self.steer_max:
            raise RoverError(f"wheel '{self.name}' is fixed (steerable=False): its steering range must be the "
                             f"single angle it is fixed at (steer_min == steer_max), got "
                             f"[{self.steer_min}, {self.steer_max}] rad")

    @property
    def position(self) -> np.ndarray:
        return np.array([self.x, self.y], dtype=float)

    @classmethod
    def fixed(cls, name: str, x: float, y: float, radius: float, angle: float = 0.0) -> "Wheel":
        """A non-steerable wheel fixed at ``angle`` (rad)."""
        return cls(name, x, y, radius, angle, angle, steerable=False)


def check_wheels(wheels: Iterable[Wheel], who: str) -> tuple[Wheel, ...]:
    """The wheels as a tuple, or a RoverError: empty set, non-Wheel items, duplicate names."""
    out = tuple(wheels)
    if not out:
        raise RoverError(f"{who}: the wheel list is empty; a rover needs at least one wheel")
    for w in out:
        if not isinstance(w, Wheel):
            raise RoverError(f"{who}: expected Wheel objects, got {type(w).__name__}")
    names = [w.name for w in out]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise RoverError(f"{who}: wheel names must be unique, repeated: {', '.join(dup)}")
    return out


def positions(wheels: Sequence[Wheel]) -> np.ndarray:
    """(N, 2) steering-axis positions (m)."""
    return np.array([[w.x, w.y] for w in wheels], dtype=float)
