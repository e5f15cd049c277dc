"""The run's trajectory plot drawn with Pillow (eels_gz.plotpng): nice ticks that cover the range,
a readable PNG of the promised size whose curves sit where the data put them, and no failure on a
constant or non-finite series."""

from __future__ import annotations

import math

import numpy as np
import pytest
from PIL import Image

from eels_gz import plotpng


@pytest.mark.parametrize("lo,hi", [(0.0, 1.0), (-0.0031, 0.0207), (0.0899, 0.0901), (-3.2, 3.14), (12.0, 987.0)])
def test_ticks_are_nice_and_cover_the_range(lo, hi):
    ticks, decimals = plotpng.nice_ticks(lo, hi)
    step = ticks[1] - ticks[0]
    mantissa = step / 10 ** math.floor(math.log10(step))
    assert min(abs(mantissa - m) for m in (1, 2, 2.5, 5, 10)) < 1e-6
    assert 3 <= len(ticks) <= 11
    assert lo - 1e-12 <= ticks[0] < lo + step and hi - step < ticks[-1] <= hi + 1e-12
    labels = [f"{t:.{decimals}f}" for t in ticks]
    assert len(set(labels)) == len(labels)  # the printed labels tell the ticks apart
    assert all(abs(float(s) - t) < step * 1e-6 for s, t in zip(labels, ticks))  # and print their values


def test_a_constant_series_gets_a_range_around_its_value():
    lo, hi = plotpng.data_range(np.full(10, 0.09))
    assert lo < 0.09 < hi and hi - lo > 0
    assert plotpng.data_range(np.array([np.nan, np.inf])) == (0.0, 1.0)


def _blue(image: Image.Image) -> np.ndarray:
    a = np.asarray(image.convert("RGB")).astype(int)
    return (abs(a[..., 0] - 31) < 40) & (abs(a[..., 1] - 119) < 40) & (abs(a[..., 2] - 180) < 40)


def test_the_png_is_readable_and_the_path_is_where_the_data_put_it(tmp_path):
    t = np.linspace(0.0, 1.0, 201)
    xyz = np.c_[t, 0.0 * t, 0.09 + 0.0 * t]  # a straight path along x at y = 0
    png = tmp_path / "trajectory.png"
    plotpng.trajectory(png, t, xyz, 0.2 * t, "eels on flat_ground")
    image = Image.open(png)
    image.load()
    assert image.format == "PNG" and image.size == (plotpng.W, plotpng.H)
    blue = _blue(image)
    left = blue[:, 90:585]  # the top view's box (x from 85 to 590 px), less its frame and legend
    rows = np.flatnonzero(left[:, 30:300].sum(axis=1) > 100)  # a long horizontal blue run: the path
    assert rows.size, "no path drawn in the top view"
    # y = 0 is the middle of the top view's y range (equal scales, centred on the data): the box's middle row
    middle = (55 + 490) / 2
    assert abs(rows.mean() - middle) < 4
    for row in range(3):  # each time series panel holds a curve across most of its width
        top = 55 + 150 * row
        columns = blue[top:top + 118, 705:1185].any(axis=0)
        assert columns.mean() > 0.8, f"panel {row}"


def test_non_finite_points_do_not_stop_the_plot(tmp_path):
    t = np.linspace(0.0, 1.0, 50)
    xyz = np.c_[t, t, t]
    xyz[20:25] = np.nan
    xyz[30, 2] = np.inf
    plotpng.trajectory(tmp_path / "p.png", t, xyz, t, "diverged")
    assert Image.open(tmp_path / "p.png").size == (plotpng.W, plotpng.H)
