"""eels_gz.steps: a rate's period in steps, the time a step starts from, and no copy of either formula."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace

import pytest

from eels_gz.steps import period, step_start

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("rate, dt, steps", [
    (0.0, 0.001, 1),  # gz-sim's <update_rate> 0: every step
    (100.0, 0.001, 10),
    (30.0, 0.001, 33),  # 33.3 steps rounded
    (1000.0, 0.001, 1),
    (5000.0, 0.001, 1),  # faster than the step: every step, never 0
    (20.0, 0.0005, 100),
])
def test_period_is_the_rounded_steps_between_updates(rate, dt, steps):
    assert period(rate, dt) == steps


def test_step_start_is_the_time_before_the_step():
    info = SimpleNamespace(sim_time=timedelta(seconds=1.25), dt=timedelta(milliseconds=1))
    assert step_start(info) == pytest.approx(1.249, abs=1e-12)


def test_no_copy_of_the_period_or_step_start_formula():
    """The rate-to-period formula and ``sim_time - dt`` live in eels_gz/steps.py only."""
    copies = []
    formulas = (re.compile(r"1\.0\s*/\s*\([^()]*rate[^()]*\*[^()]*dt\)"),
                re.compile(r"sim_time\.total_seconds\(\)\s*-\s*info\.dt\.total_seconds\(\)"))
    for folder in ("eels_gz", "plugins_py"):
        for path in (ROOT / folder).rglob("*.py"):
            if path == ROOT / "eels_gz" / "steps.py":
                continue
            text = path.read_text()
            copies += [f"{path.relative_to(ROOT)}: {m.group(0)}" for f in formulas for m in f.finditer(text)]
    assert not copies, "use eels_gz.steps.period / step_start:\n" + "\n".join(copies)
