"""``hang`` metrics (pure; the system is plugins_py/hang.py, which only watches; the tethers system
carries the robot). How the tether carries the robot once it hangs still, averaged over the steps
after ``settle_time`` (:func:`eels_gz.snake.tethers.tether_load_metrics`): the tether's force
against the robot's weight m g (the model's masses, the world's gravity), its tension, and the
base's final position. Hung still, the force over the weight is 1: the force-torque sensors'
check (test/scenarios/test_hang.py) rests on it.
"""

from __future__ import annotations

from eels_gz.errors import ConfigError
from eels_gz.snake.tethers import TETHER_LOAD_METRICS

METRICS = (*TETHER_LOAD_METRICS, "final_base_position")


def check_params(params: dict) -> None:
    """``settle_time`` (s, >= 0): the tether's force is averaged after it."""
    value = params.get("settle_time")
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value < 0:
        raise ConfigError(f"hang: params.settle_time must be a number of seconds >= 0, got {value!r}")
