"""Numeric options (issue 31): every numeric option of every command has a range that click checks
when the command line is parsed (exit 2, a message naming the option and the range), and no budget
can send a loop round forever (``world dem --max-cells 3`` hung; 0 gave a traceback)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import click
import numpy as np
import pytest
from faults_cli import EELS_GZ, cli

from eels_gz.cli import main
from eels_gz.cli.common import Number
from eels_gz.errors import TerrainError

REPO = Path(__file__).resolve().parents[2]
NUMERIC = (click.types.IntParamType, click.types.FloatParamType)


def numeric_options():
    """(command path, option) of every option whose values are numbers, in every command."""
    found = []

    def walk(cmd, path):
        if isinstance(cmd, click.Group):
            for name, sub in cmd.commands.items():
                walk(sub, (*path, name))
            return
        for p in cmd.params:
            if isinstance(p, click.Option) and isinstance(p.type, (*NUMERIC, Number)) and not p.hidden:
                found.append((path, p))

    walk(main, ())
    return found


OPTIONS = numeric_options()


def test_every_numeric_option_has_a_checked_range():
    unchecked = [f"{' '.join(path)} {p.opts[0]}" for path, p in OPTIONS
                 if not isinstance(p.type, (Number, click.IntRange, click.FloatRange))]
    assert len(OPTIONS) > 40 and not unchecked, unchecked


def _bad(t) -> str:
    """A value just outside the range of ``t`` (or not finite, for an unbounded float)."""
    if isinstance(t, Number):
        lo = t._get(t._min)
        if lo is not None:
            return str(lo - (1 if t.kind is int else 0.5) + (0 if not t.min_open else 0.5))
        return "nan"
    return str(t.min - 1)


@pytest.mark.parametrize("path, option", OPTIONS, ids=[f"{' '.join(p)} {o.opts[0]}" for p, o in OPTIONS])
def test_an_out_of_range_value_is_refused_when_parsed(tmp_path, path, option):
    value = _bad(option.type)
    args = [*path, option.opts[0], *([value] * option.nargs)]
    # the arguments a command needs before its options are looked at; nothing may run
    needs = {("world", "dem"): ["x.tif"], ("world", "mesh"): ["x.obj"], ("world", "pointcloud"): ["x.xyz"],
             ("world", "primitive"): ["slope"], ("view",): [str(tmp_path)], ("sweep",): ["s.yaml", "--out", "o"],
             ("calibrate", "friction"): ["x.csv"], ("rover", "drive"): ["--path", "straight", "--speed", "1"],
             ("describe",): ["--robot", "eels_1_5"]}
    extra = needs.get(tuple(path), [])
    if option.opts[0] == "--speed":
        extra = ["--path", "straight"]
    res = cli(*args, *extra)
    assert res.exit_code == 2, res.output
    assert f"Invalid value for '{option.opts[0]}'" in res.output and "must be" in res.output, res.output
    assert "Traceback" not in res.output


@pytest.mark.parametrize("args, message", [
    (["--max-cells", "3"], "'--max-cells': must be a whole number >= 4, got 3"),
    (["--max-cells", "0"], "'--max-cells': must be a whole number >= 4, got 0"),
    (["--max-cells", "-5"], "'--max-cells': must be a whole number >= 4, got -5"),
    (["--max-faces", "0"], "'--max-faces': must be a whole number >= 44, got 0"),
    (["--max-faces", "-1"], "'--max-faces': must be a whole number >= 44, got -1"),
])
def test_dem_budgets_that_hung_or_raised(tmp_path, args, message):
    # a separate process with a timeout: on the code before issue 31, --max-cells 3 never returned
    cmd = [*EELS_GZ, "world", "dem", str(REPO / "examples" / "site.tif"), *args, "--out", str(tmp_path / "w")]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert res.returncode == 2 and message in res.stderr and "Traceback" not in res.stderr, res.stderr
    assert not (tmp_path / "w").exists()


def test_pointcloud_max_points_zero(tmp_path):
    res = cli("world", "pointcloud", REPO / "examples" / "moulin_scan.xyz", "--max-points", "0", "--out", tmp_path)
    assert res.exit_code == 2 and "'--max-points': must be a whole number >= 100, got 0" in res.output, res.output
    assert "ZeroDivisionError" not in res.output


def test_the_budgets_loops_end_in_the_library_too():
    """The library refuses the budgets the CLI refuses, instead of looping (limit_cells) or ignoring them."""
    from eels_gz.terrain.dem import Dem, engine_region, limit_cells

    dem = Dem(np.zeros((50, 50)), (0.0, 0.0), (1.0, 1.0), "test")
    for cells in (3, 0, -1):
        with pytest.raises(TerrainError, match="must be at least 4"):
            limit_cells(dem, cells)
    with pytest.raises(TerrainError, match="must be at least 44"):
        engine_region(dem, 0)
