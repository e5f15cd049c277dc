"""``sidewind`` on the ice (issue 8): the serpenoid sidewinding gait moves the
robot, and roughly perpendicular to its body axis.

What to assert, derived. In sidewinding the body lies in contact along
lines oblique to the direction of travel and is lifted between them; the
net motion is across the body, not along it (a lateral undulation would
move along its axis; NEO §III-B.1 and the snake-robot work it cites). The
measured direction from the body's principal axis (tail to head) at the
window's start is about -2.14 rad on ice (33 deg off perpendicular, the
body axis itself being oblique to the contact lines). The test asserts
that the motion makes more than 45 deg with the axis either way, |sin| >
sin(45 deg): nearer to across than along. Speed: over one gait period
(2 pi / omega_t = 6.3 s) after a one-period warm-up, a moving robot covers
many centimetres (measured 3.2 cm/s); a gait that did not propel would
leave only the shape's oscillation, which averages out over whole periods:
the bound is 1 cm/s.
"""

from __future__ import annotations

import json
import math

import pytest

from eels_gz import config
from eels_gz.errors import ConfigError
from eels_gz.run.runner import run
from eels_gz.snake.params import load_snake_params

PERIOD = 2.0 * math.pi / load_snake_params().serpenoid.omega_t


def sidewind(tmp_path, **params) -> dict:
    cfg = config.resolve(overrides={"scenario": {"name": "sidewind", **params}, "duration": 2.0 * PERIOD + 0.05,
                                    "contact": {"model": "screw"}, "sensors": {"enabled": False},
                                    "log": {"mcap": False, "plot": True}})
    run(cfg, tmp_path)
    return json.loads((tmp_path / "metrics.json").read_text())


def test_sidewinding_moves_across_the_body_axis(tmp_path):
    m = sidewind(tmp_path)
    assert m["status"] == "ok" and m["world"] == "ice_plane"
    assert m["window_s"][1] - m["window_s"][0] == pytest.approx(PERIOD, abs=0.06)  # samples every 0.05 s
    assert m["average_speed_m_s"] > 0.01
    assert abs(math.sin(m["direction_from_body_axis_rad"])) > math.sin(math.pi / 4)
    assert (tmp_path / "sidewind.png").exists()


def test_bad_parameters_are_named(tmp_path):
    with pytest.raises(ConfigError, match="sample_period"):
        sidewind(tmp_path, sample_period=0.0)
