"""Gaussian noise with an optional constant bias, as SDF ``<noise type="gaussian">``
describes it (mean, stddev, bias_mean, bias_stddev): the bias is drawn once
per sensor, the noise per sample."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from eels_gz.errors import ConfigError


@dataclass(frozen=True)
class GaussianNoise:
    """Noise of one measured quantity, in its unit (rad/s, m/s^2, N, ...)."""

    mean: float = 0.0
    stddev: float = 0.0
    bias_mean: float = 0.0
    bias_stddev: float = 0.0

    def __post_init__(self) -> None:
        for name in ("mean", "stddev", "bias_mean", "bias_stddev"):
            value = getattr(self, name)
            if not np.isfinite(value):
                raise ConfigError(f"noise {name} must be finite, got {value}")
        if self.stddev < 0 or self.bias_stddev < 0:
            raise ConfigError(f"noise stddev and bias_stddev must be >= 0, got {self.stddev}, {self.bias_stddev}")

    @property
    def is_zero(self) -> bool:
        return self.mean == 0 and self.stddev == 0 and self.bias_mean == 0 and self.bias_stddev == 0


BLOCK = 256  # samples of standard normals drawn from the generator at once (one call instead of 256)


class NoiseModel:
    """Per-axis noise of a vector quantity, with its own generator (seeded for reproducible runs).
    The per-sample normals are drawn ``BLOCK`` samples at a time: the same seed gives the same readings."""

    def __init__(self, axes: tuple[GaussianNoise, ...], rng: np.random.Generator):
        self.axes = tuple(axes)
        self.rng = rng
        self.mean = np.array([a.mean for a in axes])
        self.stddev = np.array([a.stddev for a in axes])
        sign = rng.choice((-1.0, 1.0), size=len(axes))  # SDF: the bias sign is random
        self.bias = np.array([a.bias_mean for a in axes]) * sign + rng.normal(0.0, [a.bias_stddev for a in axes])
        self.enabled = not all(a.is_zero for a in axes)
        self._offset = self.mean + self.bias
        self._z, self._next = np.empty((0, len(self.axes))), 0

    def apply(self, value: np.ndarray) -> np.ndarray:
        if not self.enabled:
            return value
        if self._next == len(self._z):
            self._z, self._next = self.rng.standard_normal((BLOCK, len(self.axes))), 0
        z = self._z[self._next]
        self._next += 1
        return value + self._offset + z * self.stddev
