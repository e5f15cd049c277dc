"""SnakeHost's readings of the screw contact: the total normal load a vertical scenario logs each step is
the sum of the per-screw loads, and both are empty without the plugin."""

from __future__ import annotations

import pytest

from eels_gz import config
from eels_gz.run.runner import prepare
from eels_gz.scenarios.snake_host import SnakeHost


@pytest.mark.parametrize("contact", ["screw", "stock"])
def test_total_screw_load_is_the_sum_of_the_screw_loads(contact):
    cfg = config.resolve(overrides={"robot": {"name": "eels_1_0_front_only"}, "contact": {"model": contact},
                                    "sensors": {"enabled": False}})
    sim = prepare(cfg).sim
    snake = SnakeHost(sim)
    for _ in range(50):  # resting on the ice: every screw carries part of the weight
        sim.step()
    loads = snake.screw_loads()
    if contact == "stock":
        assert loads == {} and snake.total_screw_load() == 0.0
        return
    assert len(loads) > 1 and all(v > 0.0 for v in loads.values())
    # the same numbers summed in another order: round-off of a sum of a few hundred newtons
    assert snake.total_screw_load() == pytest.approx(sum(loads.values()), rel=1e-12)
