"""Every number a user gives has a documented range, checked before work starts (issue 45, class 4).

Out of range is exit 2 naming the key or option and its range, never a traceback, an allocation
of a terabyte or an hour of silent work (eels_gz/ranges.py, docs/running.md); work estimated over
a minute says so, with the estimate, before it starts."""

from __future__ import annotations

import signal
import time

import pytest
import yaml
from faults_cli import SMALL, SignalWhen, cli, started

TOO_BIG = [
    (("run", *SMALL, "--duration", "1e308"), "'--duration'", "<= 1e+06"),
    (("run", *SMALL, "--set", "duration=1e308"), "'duration'", "<= 1e+06 s"),
    (("compare", *SMALL, "--duration", "1e308"), "'--duration'", "<= 1e+06"),
    (("export", "--scenario", "hold", "--set", "duration=1e308"), "'duration'", "<= 1e+06 s"),
    (("run", *SMALL, "--dt", "5"), "'--dt'", "<= 1"),
    (("run", *SMALL, "--set", "physics.max_velocity=1e300"), "physics.max_velocity", "<= 1e+06"),
    (("run", *SMALL, "--scenario", "screw_spin", "--set", "scenario.screw_rate=1e308"), "screw_rate",
     "-100 to 100"),
    (("run", *SMALL, "--scenario", "hold", "--set", "scenario.settle=1e308"), "settle", "1e+06"),
    (("export", "--scenario", "screw_spin", "--set", "scenario.screw_rate=1e308"), "screw_rate", "-100 to 100"),
    (("run", *SMALL, "--set", "robot.pose=[0, 0, 0.2, 0, 0, 1e300]"), "robot.pose yaw", "<= 1000 rad"),
    (("run", *SMALL, "--duration", "1000", "--dt", "1e-7"), "1e+10 steps", "shorten the duration"),
    (("rover", "drive", "--path", "straight", "--speed", "1.2", "--scale", "1e6"), "'--scale'", "<= 10"),
    (("rover", "drive", "--path", "straight", "--speed", "1e6"), "'--speed'", "<= 100"),
    (("world", "primitive", "rock_field", "--density", "1e9"), "density", "rocks/m^2"),
    (("view", ".", "--fps", "1e9"), "'--fps'", "<= 1000"),
]


@pytest.mark.parametrize("args, name, expected", TOO_BIG, ids=[" ".join(a[:1] + a[-2:]) for a, _, _ in TOO_BIG])
def test_a_number_out_of_its_range_is_refused_before_any_work(tmp_path, args, name, expected):
    out = ("--out", tmp_path / "o") if args[0] != "view" else ()
    t0 = time.monotonic()
    res = cli(*args, *out)
    assert res.exit_code == 2, res.output
    assert name in res.output and expected in res.output and "Traceback" not in res.output, res.output
    assert time.monotonic() - t0 < 30.0  # refused, not worked on (a generous bound for a loaded machine)
    assert not (tmp_path / "o").exists() or not any((tmp_path / "o").iterdir())


def test_a_sweep_of_a_billion_samples_is_refused_at_once(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump({"base": {"robot": {"name": "eels_1_0_front_only", "n_modules": 2},
                                             "duration": 0.02},
                                    "samples": 1000000000, "seed": 1,
                                    "dispersions": {"contact.mu": {"uniform": [0.1, 0.2]}},
                                    "metrics": ["real_time_factor"]}))
    t0 = time.monotonic()
    res = cli("sweep", spec, "--out", tmp_path / "s")
    assert res.exit_code == 2 and "samples" in res.output and "<= 100000" in res.output, res.output
    assert time.monotonic() - t0 < 30.0
    assert not (tmp_path / "s").exists()


def test_a_number_written_in_exponent_form_in_a_config_file_is_a_number(tmp_path):
    """YAML 1.1 reads 1e6 as text: a pose of 1e6 m was 'not a list of 6 numbers'."""
    config = tmp_path / "c.yaml"
    config.write_text("robot:\n  pose: [1e6, 0, 0.2, 0, 0, 0]\nduration: 1e-2\n")
    res = cli("run", *SMALL, "--config", config, "--out", tmp_path / "r")
    assert "list of 6 numbers" not in res.output and "expects a float" not in res.output, res.output
    assert res.exit_code == 3 and "left world" in res.output, res.output  # valid, and 1000 km off the ice


def test_long_work_says_so_with_its_estimate_before_it_starts(tmp_path, caplog):
    out = tmp_path / "r"
    with caplog.at_level("WARNING", logger="eels_gz.ranges"), SignalWhen(started(out), signal.SIGINT) as sig:
        res = cli("run", *SMALL, "--duration", "3000", "--out", out)
    assert sig.sent and res.exit_code == 130, res.output
    said = caplog.text
    assert "3e+06 steps" in said and "min" in said and "docs/benchmarks.md" in said, said
