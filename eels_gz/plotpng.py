"""A run's trajectory plot drawn straight with Pillow: the same four panels as before (the base's
path from above, and x, y, z and yaw against time) without matplotlib, whose import and drawing
took about half a second of every short run's wrap-up (docs/benchmarks.md).

The figure is drawn at twice its size and scaled down (anti-aliased lines and text), 1210 x 550
pixels, Pillow's own scalable font (no font search). Ticks are "nice" numbers (1, 2, 2.5 or 5
times a power of ten); a series that does not change gets a small range around its value; points
that are not finite are left out.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

W, H, S = 1210, 550, 2  # final size (px), supersampling factor
BLUE, ORANGE, GREEN, RED = (31, 119, 180), (255, 127, 14), (0, 128, 0), (214, 39, 40)
GRID, INK = (225, 225, 225), (0, 0, 0)


def nice_ticks(lo: float, hi: float, target: int = 5) -> tuple[np.ndarray, int]:
    """Tick values in [lo, hi] on a step of 1, 2, 2.5 or 5 x 10^k, and the decimals to print."""
    raw = (hi - lo) / max(target, 1)
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1.0, 2.0, 2.5, 5.0, 10.0) if m * power >= raw * (1 - 1e-9))
    first = math.ceil(lo / step - 1e-9) * step
    ticks = np.arange(first, hi + 1e-9 * step, step)
    decimals = max(0, -math.floor(math.log10(step) + 1e-9) + (1 if round(step / power, 3) == 2.5 else 0))
    return ticks, decimals


def data_range(values: np.ndarray) -> tuple[float, float]:
    """The finite values' range with a 5 % margin; a small range around a constant."""
    v = values[np.isfinite(values)]
    if v.size == 0:
        return 0.0, 1.0
    lo, hi = float(v.min()), float(v.max())
    if hi - lo < 1e-9 * max(1.0, abs(hi)):
        pad = max(abs(hi) * 0.05, 1e-3)
        return lo - pad, hi + pad
    pad = 0.05 * (hi - lo)
    return lo - pad, hi + pad


class _Panel:
    """One axes box: data (x, y) -> pixel, in the supersampled image."""

    def __init__(self, draw, font, box: tuple[int, int, int, int], xr, yr) -> None:
        self.draw, self.font, self.box = draw, font, [c * S for c in box]
        self.xr, self.yr = xr, yr

    def px(self, x: np.ndarray, y: np.ndarray) -> list[tuple[float, float]]:
        x0, y0, x1, y1 = self.box
        u = x0 + (x - self.xr[0]) / (self.xr[1] - self.xr[0]) * (x1 - x0)
        v = y1 - (y - self.yr[0]) / (self.yr[1] - self.yr[0]) * (y1 - y0)
        return list(zip(u.tolist(), v.tolist()))

    def axes(self, xlabel: str | None, ylabel: str, title: str | None = None, xticks: bool = True) -> None:
        d, f = self.draw, self.font
        x0, y0, x1, y1 = self.box
        ticks, dec = nice_ticks(*self.xr)
        for t in ticks:
            (u, _), = self.px(np.array([t]), np.array([self.yr[0]]))
            d.line([(u, y0), (u, y1)], fill=GRID, width=S)
            if xticks:
                d.text((u, y1 + 4 * S), f"{t:.{dec}f}", font=f, fill=INK, anchor="mt")
        ticks, dec = nice_ticks(*self.yr)
        for t in ticks:
            (_, v), = self.px(np.array([self.xr[0]]), np.array([t]))
            d.line([(x0, v), (x1, v)], fill=GRID, width=S)
            d.text((x0 - 5 * S, v), f"{t:.{dec}f}", font=f, fill=INK, anchor="rm")
        d.rectangle([x0, y0, x1, y1], outline=INK, width=S)
        if xlabel:
            d.text(((x0 + x1) / 2, y1 + 22 * S), xlabel, font=f, fill=INK, anchor="mt")
        if title:
            d.text(((x0 + x1) / 2, y0 - 6 * S), title, font=f, fill=INK, anchor="md")
        self.ylabel = ylabel

    def line(self, x: np.ndarray, y: np.ndarray, color, width: float = 2.2) -> None:
        ok = np.isfinite(x) & np.isfinite(y)
        start = 0
        for stop in list(np.flatnonzero(~ok)) + [len(x)]:  # a gap where a value is not finite
            if stop - start >= 2:
                self.draw.line(self.px(x[start:stop], y[start:stop]), fill=color, width=round(width * S), joint="curve")
            start = stop + 1

    def marker(self, x: float, y: float, color, square: bool) -> None:
        if not (math.isfinite(x) and math.isfinite(y)):
            return
        (u, v), = self.px(np.array([x]), np.array([y]))
        r = 4 * S
        (self.draw.rectangle if square else self.draw.ellipse)([u - r, v - r, u + r, v + r], fill=color)

    def legend(self, entries: list[tuple[str, tuple, str]]) -> None:
        """Entries (label, color, 'line' | 'o' | 's') in a box at the top right."""
        x0, y0, x1, _ = self.box
        wide = max(self.draw.textlength(label, font=self.font) for label, _, _ in entries)
        bx0, by0 = x1 - wide - 44 * S, y0 + 6 * S
        self.draw.rectangle([bx0, by0, x1 - 6 * S, by0 + (len(entries) * 16 + 6) * S], fill=(255, 255, 255),
                            outline=(200, 200, 200), width=S)
        for k, (label, color, kind) in enumerate(entries):
            v = by0 + (11 + 16 * k) * S
            u = bx0 + 8 * S
            if kind == "line":
                self.draw.line([(u, v), (u + 20 * S, v)], fill=color, width=2 * S)
            else:
                r = 4 * S
                (self.draw.rectangle if kind == "s" else self.draw.ellipse)(
                    [u + 10 * S - r, v - r, u + 10 * S + r, v + r], fill=color)
            self.draw.text((u + 26 * S, v), label, font=self.font, fill=INK, anchor="lm")


def _ylabel(image, font, panel: _Panel, x: int) -> None:
    from PIL import Image, ImageDraw

    label = panel.ylabel
    width = int(ImageDraw.Draw(image).textlength(label, font=font)) + 4 * S
    tile = Image.new("L", (width, 18 * S), 0)
    ImageDraw.Draw(tile).text((2 * S, 9 * S), label, font=font, fill=255, anchor="lm")
    tile = tile.rotate(90, expand=True)
    y0, y1 = panel.box[1], panel.box[3]
    image.paste((0, 0, 0), (x * S, int((y0 + y1 - tile.height) / 2)), tile)


def trajectory(path: str | Path, t: np.ndarray, xyz: np.ndarray, yaw: np.ndarray, title: str) -> None:
    """Top view of the base path plus x, y, z and yaw against time, as a PNG at ``path``."""
    from PIL import Image, ImageDraw, ImageFont

    t, xyz, yaw = (np.asarray(a, dtype=np.float64) for a in (t, xyz, yaw))
    image = Image.new("RGB", (W * S, H * S), (255, 255, 255))
    draw = ImageDraw.Draw(image)
    font, big = ImageFont.load_default(size=12 * S), ImageFont.load_default(size=15 * S)
    draw.text((W * S / 2, 10 * S), title, font=big, fill=INK, anchor="mt")

    # the path, equal scales on x and y (the smaller range widened about its middle)
    box = (85, 55, 590, 490)
    (xa, xb), (ya, yb) = data_range(xyz[:, 0]), data_range(xyz[:, 1])
    per_px = max((xb - xa) / (box[2] - box[0]), (yb - ya) / (box[3] - box[1]))
    xm, ym = (xa + xb) / 2, (ya + yb) / 2
    xr = (xm - per_px * (box[2] - box[0]) / 2, xm + per_px * (box[2] - box[0]) / 2)
    yr = (ym - per_px * (box[3] - box[1]) / 2, ym + per_px * (box[3] - box[1]) / 2)
    top = _Panel(draw, font, box, xr, yr)
    top.axes("x [m]", "y [m]", "base_link path (top view)")
    top.line(xyz[:, 0], xyz[:, 1], BLUE)
    top.marker(xyz[0, 0], xyz[0, 1], GREEN, square=False)
    top.marker(xyz[-1, 0], xyz[-1, 1], RED, square=True)
    top.legend([("base_link", BLUE, "line"), ("start", GREEN, "o"), ("end", RED, "s")])
    panels = [(top, 20)]

    tr = data_range(t)
    rows = (((xyz[:, 0], xyz[:, 1]), "x, y [m]"), ((xyz[:, 2],), "z [m]"), ((yaw,), "yaw [rad]"))
    for row, (series, label) in enumerate(rows):
        box = (700, 55 + 150 * row, 1190, 55 + 150 * row + 118)
        p = _Panel(draw, font, box, tr, data_range(np.concatenate(series)))
        p.axes("simulated time [s]" if row == 2 else None, label, xticks=True)
        for k, s in enumerate(series):
            p.line(t, s, (BLUE, ORANGE)[k])
        if row == 0:
            p.legend([("x", BLUE, "line"), ("y", ORANGE, "line")])
        panels.append((p, 618))
    for p, x in panels:
        _ylabel(image, font, p, x)
    image.resize((W, H), Image.LANCZOS).save(path, format="PNG", dpi=(110, 110))
