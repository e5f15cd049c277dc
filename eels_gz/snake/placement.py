"""Old path of :mod:`eels_gz.snake.settling` (the placement's pure parts: initial shapes, the settling
force law, the convergence report), kept importable for plugins installed from earlier releases."""

from eels_gz.snake.settling import (  # noqa: F401
    PlacementReport,
    SamplePoints,
    SettlingMonitor,
    crescent_shape,
    distance_gradient,
    helix_shape,
    sample_points,
    settling_forces,
    straight_shape,
)
