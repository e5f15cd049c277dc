"""Identification of mu and |e_v| = a + b F_n from screw drag tests (EELS-DARTS
§2.2.2, Fig. 6/7; REFERENCE.md §1).

A screw is dragged at constant velocity along its threads ("parallel") and
across them ("perpendicular") under several normal loads. Along the threads,
``mu`` is the mean of drag / normal force. Across them, each sample gives
``|e_v| = (drag / normal) / mu``, and a least-squares line ``a + b F_n`` is
fitted to those samples.

CSV columns: ``direction`` (parallel | perpendicular), ``normal_force_N``,
``drag_force_N``; other columns are ignored.

Reproducing the drags in simulation (``calibrate simulate``): for a screw
along the world x axis lying on flat ground, the contact line's thread
tangent is ``t = (h sin a, cos a, 0)`` and the across-thread direction is
``e_v = (cos a, -h sin a, 0)`` (``screw_points.py``); drag along ``t`` for
"parallel" and along ``e_v`` for "perpendicular" (a purely axial drag would
measure ``mu (1 + (|e_v| - 1) cos^2 a)`` instead), record the drag component
along the motion, hold the screw's spin, and drag at several times
``v_eps`` so that the regulator factor ``v / sqrt(v^2 + v_eps^2)`` is ~1
(0.995 at 10 v_eps); the load is the screw's total normal force.
"""

from __future__ import annotations

import csv
import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from eels_gz.contact.params import ContactParams
from eels_gz.errors import CalibrationError
from eels_gz.own_files import PNG_KEYWORD

log = logging.getLogger(__name__)

DIRECTIONS = ("parallel", "perpendicular")
COLUMNS = ("direction", "normal_force_N", "drag_force_N")


@dataclass(frozen=True, eq=False)
class DragSamples:
    """Drag-test samples: ``direction`` (n,) str, ``normal_force`` and ``drag_force`` (n,) N."""

    direction: np.ndarray
    normal_force: np.ndarray
    drag_force: np.ndarray
    source: str = "<samples>"

    def select(self, direction: str) -> tuple[np.ndarray, np.ndarray]:
        """Normal and drag forces (N) of one direction."""
        mask = self.direction == direction
        return self.normal_force[mask], self.drag_force[mask]


@dataclass(frozen=True, eq=False)
class FrictionFit:
    """Identified parameters and the quality of the across-thread line.

    mu: mean drag/normal along the threads; mu_stderr its standard error.
    ev_a, ev_b (1/N): the line |e_v| = a + b F_n; their standard errors from
    the least-squares residuals. r2: coefficient of determination of the line.
    residuals: |e_v| sample minus line, one per perpendicular sample, in the
    order of the input. n_parallel, n_perpendicular, n_loads: counts.
    load_min, load_max (N): the perpendicular loads the line was fitted over.
    """

    mu: float
    ev_a: float
    ev_b: float
    r2: float
    residuals: np.ndarray
    mu_stderr: float
    ev_a_stderr: float
    ev_b_stderr: float
    n_parallel: int
    n_perpendicular: int
    n_loads: int
    load_min: float = math.nan
    load_max: float = math.nan

    @property
    def warnings(self) -> list[str]:
        """What in the fit contradicts the screw model, one sentence each (empty: nothing).

        |e_v| < 1 anywhere over the fitted loads: the screw slid more easily
        across its threads than along them. The model exists because blades
        grip across the thread (EELS-DARTS §2.2.2, Fig. 6: |e_v| > 1, growing
        with load); Eq. 6 still runs with such a line, but the data do not
        describe a screw on ice as the model sees it (directions swapped in
        the CSV, a blunt or clogged screw, or a surface it does not cut).
        """
        ev_lo, ev_hi = self.ev_norm(self.load_min), self.ev_norm(self.load_max)
        low = min(float(ev_lo), float(ev_hi))
        if not low < 1.0:
            return []
        where = self.load_min if ev_lo <= ev_hi else self.load_max
        return [f"|e_v| = {self.ev_a:.4g} + {self.ev_b:.4g} F_n is {low:.3g} < 1 at F_n = {where:.4g} N "
                f"(fitted over {self.load_min:.4g}-{self.load_max:.4g} N): the screw slid more easily across its "
                "threads than along them, which contradicts the screw model (blades grip across the thread, "
                "EELS-DARTS Fig. 6: |e_v| > 1); check that the 'parallel' and 'perpendicular' drags are not "
                "swapped and that the screw cuts the surface"]

    def to_dict(self) -> dict:
        """JSON-ready dictionary (for ``eels-gz calibrate friction --json``)."""
        return {
            "mu": self.mu,
            "ev_a": self.ev_a,
            "ev_b": self.ev_b,
            "r2": self.r2,
            "residuals": [float(r) for r in self.residuals],
            "stderr": {"mu": self.mu_stderr, "ev_a": self.ev_a_stderr, "ev_b": self.ev_b_stderr},
            "counts": {"parallel": self.n_parallel, "perpendicular": self.n_perpendicular,
                       "perpendicular_loads": self.n_loads},
            "warnings": self.warnings,
        }

    def ev_norm(self, f_n: np.ndarray | float) -> np.ndarray:
        return self.ev_a + self.ev_b * np.asarray(f_n, dtype=float)


def _number(text: str, path: Path, line: int, column: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise CalibrationError(f"{path}: row {line}, column '{column}': expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise CalibrationError(f"{path}: row {line}, column '{column}': expected a finite number, got {text!r}")
    return value


def read_drag_csv(path: str | Path) -> DragSamples:
    """Read and check a drag-test CSV (rows are counted from 1, the header being row 1)."""
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise CalibrationError(f"cannot read drag CSV '{path}': {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise CalibrationError(f"{path}: not a CSV text file (byte {exc.start} is not UTF-8 text); expected "
                               f"columns {', '.join(COLUMNS)}") from None
    if "\0" in text:
        raise CalibrationError(f"{path}: not a CSV text file (it holds NUL bytes); expected columns "
                               f"{', '.join(COLUMNS)}")
    reader = csv.reader(text.splitlines())
    header = [h.strip() for h in next(reader, [])]
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        raise CalibrationError(
            f"{path}: missing column(s) {', '.join(missing)}; expected columns {', '.join(COLUMNS)} "
            f"(found {', '.join(header) or 'none'})"
        )
    index = {c: header.index(c) for c in COLUMNS}
    directions, normals, drags, perpendicular_rows = [], [], [], []
    for line, row in enumerate(reader, start=2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) < len(header):
            raise CalibrationError(f"{path}: row {line}: {len(row)} cells, expected {len(header)}")
        direction = row[index["direction"]].strip().lower()
        if direction not in DIRECTIONS:
            raise CalibrationError(
                f"{path}: row {line}, column 'direction': expected one of {', '.join(DIRECTIONS)}, "
                f"got {row[index['direction']]!r}"
            )
        normal = _number(row[index["normal_force_N"]], path, line, "normal_force_N")
        if normal <= 0.0:
            raise CalibrationError(
                f"{path}: row {line}, column 'normal_force_N': a load must be > 0 N, got {normal!r}"
            )
        drag = _number(row[index["drag_force_N"]], path, line, "drag_force_N")
        if drag < 0.0:
            raise CalibrationError(
                f"{path}: row {line}, column 'drag_force_N': a drag magnitude must be >= 0 N, got {drag!r}"
            )
        directions.append(direction)
        normals.append(normal)
        drags.append(drag)
        if direction == "perpendicular":
            perpendicular_rows.append(line)
    samples = DragSamples(np.array(directions, dtype=object), np.array(normals), np.array(drags), str(path))
    _check_identifiable(samples, perpendicular_rows)
    return samples


def _check_identifiable(samples: DragSamples, perpendicular_rows: Sequence[int] = ()) -> None:
    n_par = int(np.count_nonzero(samples.direction == "parallel"))
    loads, _ = samples.select("perpendicular")
    if n_par == 0:
        raise CalibrationError(
            f"{samples.source}: no 'parallel' samples in column 'direction'; mu is the mean drag/normal "
            "along the threads and needs at least one"
        )
    levels = np.unique(loads)
    if levels.size < 2:
        got = "no 'perpendicular' samples" if loads.size == 0 else f"a single load level ({levels[0]:g} N)"
        rows = f" (rows {', '.join(map(str, perpendicular_rows))})" if perpendicular_rows else ""
        raise CalibrationError(
            f"{samples.source}: column 'normal_force_N' of the 'perpendicular' set{rows} has {got}; "
            "fitting |e_v| = a + b F_n needs at least two distinct loads"
        )


def fit_friction(samples: DragSamples) -> FrictionFit:
    """Fit mu (mean along-thread drag/normal) and the line |e_v| = a + b F_n."""
    _check_identifiable(samples)
    n_par, d_par = samples.select("parallel")
    ratio_par = d_par / n_par
    mu = float(ratio_par.mean())
    if mu <= 0.0:
        raise CalibrationError(f"{samples.source}: all 'parallel' drags are zero; mu must be > 0 to scale |e_v|")
    mu_stderr = float(ratio_par.std(ddof=1) / math.sqrt(ratio_par.size)) if ratio_par.size > 1 else math.nan
    loads, d_perp = samples.select("perpendicular")
    ev = d_perp / loads / mu
    design = np.column_stack([np.ones_like(loads), loads])
    (a, b), *_ = np.linalg.lstsq(design, ev, rcond=None)
    residuals = ev - (a + b * loads)
    ss_res = float(residuals @ residuals)
    ss_tot = float(((ev - ev.mean()) ** 2).sum())
    r2 = 1.0 - ss_res / ss_tot if ss_tot > 0.0 else 1.0
    dof = loads.size - 2
    if dof > 0:
        cov = ss_res / dof * np.linalg.inv(design.T @ design)
        a_se, b_se = float(math.sqrt(cov[0, 0])), float(math.sqrt(cov[1, 1]))
    else:
        a_se = b_se = math.nan
    fit = FrictionFit(mu=mu, ev_a=float(a), ev_b=float(b), r2=r2, residuals=residuals, mu_stderr=mu_stderr,
                      ev_a_stderr=a_se, ev_b_stderr=b_se, n_parallel=int(n_par.size),
                      n_perpendicular=int(loads.size), n_loads=int(np.unique(loads).size),
                      load_min=float(loads.min()), load_max=float(loads.max()))
    for warning in fit.warnings:
        log.warning("%s: %s", samples.source, warning)
    return fit


def synthetic_drags(params: ContactParams, loads: Sequence[float], n: int, noise: float,
                    seed: int) -> DragSamples:
    """Drag samples from the model: per load (N) and direction, ``n`` drags
    ``mu F_n`` (parallel) and ``mu |e_v|(F_n) F_n`` (perpendicular), each times
    ``1 + noise * N(0, 1)`` (``noise``: relative standard deviation)."""
    loads_arr = np.asarray(loads, dtype=float)
    if loads_arr.ndim != 1 or loads_arr.size == 0 or np.any(loads_arr <= 0.0):
        raise CalibrationError(f"synthetic_drags: 'loads' must be a non-empty list of loads > 0 N, got {loads!r}")
    if n < 1 or noise < 0.0:
        raise CalibrationError(f"synthetic_drags: expected n >= 1 and noise >= 0, got n={n!r}, noise={noise!r}")
    rng = np.random.default_rng(seed)
    normal = np.repeat(loads_arr, n)
    par = params.mu * normal * (1.0 + noise * rng.standard_normal(normal.size))
    perp = params.mu * params.ev_norm(normal) * normal * (1.0 + noise * rng.standard_normal(normal.size))
    direction = np.array(["parallel"] * normal.size + ["perpendicular"] * normal.size, dtype=object)
    return DragSamples(direction, np.concatenate([normal, normal]), np.abs(np.concatenate([par, perp])),
                       f"<synthetic seed={seed}>")


def write_drag_csv(samples: DragSamples, path: str | Path, source: str | None = None) -> Path:
    """Write samples in the CSV format ``read_drag_csv`` reads; ``source``, when given, fills a last
    column ``source`` on every row (what wrote them: ``calibrate simulate`` marks its CSV so)."""
    path = Path(path)
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(COLUMNS + (("source",) if source is not None else ()))
        for d, fn, fd in zip(samples.direction, samples.normal_force, samples.drag_force):
            writer.writerow([d, repr(float(fn)), repr(float(fd))] + ([source] if source is not None else []))
    return path


def plot_fit(fit: FrictionFit, samples: DragSamples, png: str | Path) -> Path:
    """Fig. 6-style figure: mu along and across the threads vs load, and |e_v| with its line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n_par, d_par = samples.select("parallel")
    n_perp, d_perp = samples.select("perpendicular")
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.6), constrained_layout=True)
    axes[0].plot(n_par, d_par / n_par, "o", ms=3)
    axes[0].axhline(fit.mu, color="k", label=f"mu = {fit.mu:.4f}")
    axes[0].set(xlabel="normal force (N)", ylabel="friction coefficient", title="along the threads")
    axes[1].plot(n_perp, d_perp / n_perp, "o", ms=3, color="C1")
    axes[1].set(xlabel="normal force (N)", ylabel="friction coefficient", title="across the threads")
    xs = np.linspace(0.0, float(n_perp.max()) * 1.05, 50)
    axes[2].plot(n_perp, d_perp / n_perp / fit.mu, "o", ms=3, color="C1")
    axes[2].plot(xs, fit.ev_norm(xs), "k-", label=f"|e_v| = {fit.ev_a:.3f} + {fit.ev_b:.4f} F_n, R² = {fit.r2:.3f}")
    axes[2].set(xlabel="normal force (N)", ylabel="|e_v|", title="across / along")
    for ax in (axes[0], axes[2]):
        ax.legend(loc="best", fontsize=8)
    png = Path(png)
    # a PNG is marked as eels-gz's (eels_gz.own_files), so that --overwrite knows it may replace it
    marked = {"metadata": {PNG_KEYWORD.decode(): "calibrate friction --plot"}} \
        if Path(png).suffix.lower() == ".png" else {}
    fig.savefig(png, dpi=110, **marked)
    plt.close(fig)
    return png
