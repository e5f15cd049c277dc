"""eels_gz.sensors.noise: SDF Gaussian noise with a bias drawn once per sensor."""

from __future__ import annotations

import numpy as np

from eels_gz.sensors.noise import BLOCK, GaussianNoise, NoiseModel

AXES = (GaussianNoise(mean=0.1, stddev=0.5), GaussianNoise(stddev=0.02, bias_mean=0.3),
        GaussianNoise(stddev=2.0, bias_stddev=0.1))


def samples(seed: int, n: int) -> tuple[NoiseModel, np.ndarray]:
    model = NoiseModel(AXES, np.random.default_rng(seed))
    return model, np.array([model.apply(np.zeros(3)) for _ in range(n)])


def test_noise_has_its_mean_bias_and_spread_and_repeats_with_its_seed():
    """Over 10 blocks of draws: each axis centres on mean + the sensor's bias (5 standard errors,
    sigma / sqrt(n)), spreads by its stddev (the sample deviation's standard error is about
    sigma / sqrt(2 n): 5 of those), successive samples differ, and the same seed gives the same readings."""
    n = 10 * BLOCK + 7  # across block boundaries
    model, x = samples(4, n)
    sigma = np.array([a.stddev for a in AXES])
    np.testing.assert_array_less(np.abs(x.mean(axis=0) - (model.mean + model.bias)), 5 * sigma / np.sqrt(n))
    np.testing.assert_array_less(np.abs(x.std(axis=0) - sigma), 5 * sigma / np.sqrt(2 * n))
    assert abs(model.bias[1]) == 0.3  # bias_mean with a random sign
    assert np.all(x[1:] != x[:-1])
    np.testing.assert_array_equal(samples(4, n)[1], x)
    assert not np.array_equal(samples(5, n)[1], x)


def test_zero_noise_leaves_the_value_alone():
    model = NoiseModel((GaussianNoise(),) * 3, np.random.default_rng(0))
    v = np.array([1.0, 2.0, 3.0])
    assert not model.enabled and model.apply(v) is v
