"""The ``rover_drive`` scenario (Archimede test campaign, seed 004 §3.1): what is not the gz-sim
system ``plugins_py/rover_drive.py``.

A path is a list of segments, each a body-twist shape (vx, vy, wz) held for a distance
(translations, m) or an angle (turns, rad). The commanded twist is the shape scaled so that the mean
wheel ground speed is ``rate x R`` (the paper's "mean speed of the wheels"); the segment clock runs
only while the steering controller is not stopping or re-steering, so every segment is driven for its
full length (:class:`DrivePlan`). After the last segment the rover is stopped for ``rate / a + settle``
(a: the wheels' acceleration limit).

Slip, per 10 Hz sample while driving (:func:`slip_sample`): s = 1 - v_true / v_wheels, where
v_wheels is the body speed the encoders give (odometry twist) and v_true the ground-truth velocity of
the body along that direction.

Here: the path table (:data:`PATHS`; the scenario's ``path`` parameter is an index into it), the plan,
the recorder of truth, odometry and slip (:class:`DriveRecord`), the metrics (:data:`METRICS`) and the
plot. No engine: the system reads state and commands through the gz-sim API.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from eels_gz.errors import ConfigError
from eels_gz.rover.odometry import se2_step

# the paths, in the order of the scenario's `path` index: the flat test paths of §3.1.1, then the slope
# "parallel" drive of §3.1.2 (the campaign's plan: config/sweeps/rover_campaign.yaml)
PATHS = ("straight", "lateral", "diagonal_20", "quarter_circle", "s_path", "square", "parallel")
FLAT_PATHS = PATHS[:6]  # the flat test paths of §3.1.1
SAMPLE_PERIOD = 0.1  # s, recorded samples (10 Hz)
# Paper sizes (Fig. 9): 2 m lines, arcs of radius 1.5 m, a square of 1 m sides
LINE = 2.0
RADIUS = 1.5
SIDE = 1.0
SETTLE = 1.0  # s at rest after the stop, before the drive ends

# the top-level keys of the scenario's metrics.json (eels_gz.sweep checks a campaign's metrics
# against them before any sample runs)
METRICS = ("drive_status", "path", "wheel_rate", "speed", "scale", "slope_deg", "distance", "end_error",
           "end_error_relative", "saturated", "max_wheel_rate", "slip", "slip_q1", "slip_q3", "slip_count",
           "slip_samples", "t", "ground_truth", "odometry", "nominal")


@dataclass(frozen=True)
class Segment:
    """Hold the body-twist shape for ``amount`` (m along a translation, rad of a turn)."""

    shape: tuple[float, float, float]
    amount: float


def path_segments(name: str, scale: float = 1.0) -> list[Segment]:
    """Segments of a named path; ``scale`` shortens lengths and turn angles (not radii)."""
    quarter = math.pi / 2 * scale
    diag = math.radians(20.0)
    par = math.radians(30.0)  # slope "parallel" drive: all wheels at 30 deg, within Archimede's 33.7
    table = {
        "straight": [Segment((1.0, 0.0, 0.0), LINE * scale)],
        "lateral": [Segment((0.0, 1.0, 0.0), LINE * scale)],
        "diagonal_20": [Segment((math.cos(diag), math.sin(diag), 0.0), LINE * scale)],
        "parallel": [Segment((math.cos(par), math.sin(par), 0.0), LINE * scale)],
        "quarter_circle": [Segment((RADIUS, 0.0, 1.0), quarter)],
        "s_path": [Segment((RADIUS, 0.0, 1.0), quarter), Segment((RADIUS, 0.0, -1.0), quarter)],
        "square": [Segment(s, SIDE * scale) for s in ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0),
                                                        (-1.0, 0.0, 0.0), (0.0, -1.0, 0.0))],
    }
    if name not in table:
        raise ConfigError(f"unknown rover path '{name}'; expected one of: {', '.join(sorted(table))}")
    if not (math.isfinite(scale) and scale > 0):
        raise ConfigError(f"path scale must be a positive number, got {scale}")
    return table[name]


def path_name(index: float, source: str = "scenario rover_drive") -> str:
    """The path the scenario parameter ``path`` (an index into :data:`PATHS`) names."""
    k = int(index) if float(index).is_integer() else -1
    if not 0 <= k < len(PATHS):
        raise ConfigError(f"{source}: parameter 'path' = {index!r} is not a path index; expected one of "
                          + ", ".join(f"{i} ({p})" for i, p in enumerate(PATHS)))
    return PATHS[k]


def path_index(name: str) -> int:
    """The scenario parameter ``path`` of a path name."""
    if name not in PATHS:
        raise ConfigError(f"unknown rover path '{name}'; expected one of: {', '.join(sorted(PATHS))}")
    return PATHS.index(name)


def nominal_path(segments: list[Segment], step: float = 0.01) -> np.ndarray:
    """(N, 3) poses (x, y, yaw) of the ideal path from the origin, every ``step`` m or rad."""
    pose = (0.0, 0.0, 0.0)
    out = [pose]
    for seg in segments:
        vx, vy, wz = seg.shape
        n = max(1, int(math.ceil(seg.amount / step)))
        rate = seg.amount / n
        speed = abs(wz) if wz else math.hypot(vx, vy)
        for _ in range(n):
            pose = se2_step(*pose, vx / speed, vy / speed, wz / speed, rate)
            out.append(pose)
    return np.array(out)


def slip_stats(s: np.ndarray) -> dict:
    """Count, median and quartiles of slip samples (None without samples)."""
    s = np.asarray(s, dtype=float)
    if s.size == 0:
        return {"samples": 0, "median": None, "q1": None, "q3": None}
    q1, med, q3 = np.percentile(s, [25, 50, 75])
    return {"samples": int(s.size), "median": float(med), "q1": float(q1), "q3": float(q3)}


def check_path(steering, robot: str, path: str, segments: list[Segment]) -> None:
    """Refuse a path whose segments the rover's steering (an :class:`eels_gz.rover.steering.IcrSteering`)
    cannot drive as given (it would project them onto other motions and drive another path)."""
    for i, seg in enumerate(segments, start=1):
        reason = steering.why_not(*seg.shape)
        if reason is not None:
            where = f" (segment {i} of {len(segments)})" if len(segments) > 1 else ""
            raise ConfigError(f"robot '{robot}' cannot drive path '{path}'{where}: {reason}")


def check_rate(rate: float, max_rate: float) -> None:
    """Refuse a mean wheel rate (rad/s) the drive motors cannot reach."""
    if not (math.isfinite(rate) and rate > 0):
        raise ConfigError(f"--speed must be a positive wheel rate in rad/s, got {rate}")
    if rate > max_rate:
        raise ConfigError(f"--speed {rate:g} rad/s is beyond the drive motors' limit of {max_rate:.3g} rad/s "
                          "(the wheel joints' <limit velocity> in the xacro, from config/rover_control.yaml "
                          "motors); give a mean wheel rate up to that")


def segment_command(steering, drive_speed: np.ndarray, seg: Segment,
                    speed: float) -> tuple[tuple[float, float, float], float]:
    """The body twist that drives ``seg`` at mean wheel ground speed ``speed`` (m/s), and the saturation
    factor (< 1 when the fastest wheel would pass its motor limit ``drive_speed`` (rad/s): the twist is
    scaled down so that it does not, keeping the ICR)."""
    k = speed / steering.mean_wheel_speed(*seg.shape)
    cmd = tuple(k * c for c in seg.shape)
    rates = np.abs(np.asarray(steering.command(*cmd).wheel_rates, dtype=float))
    peak = float(np.max(rates / drive_speed)) if rates.size else 0.0
    if peak > 1.0:
        return tuple(c / peak for c in cmd), 1.0 / peak
    return cmd, 1.0


class DrivePlan:
    """The commands of a drive: each segment's twist held until it has been driven for its duration
    (clock stopped while re-steering), then a stop held for ``rate / acceleration + settle`` s."""

    def __init__(self, segments: list[Segment], rate: float, radius: float, steering, drive_speed,
                 acceleration: float, settle: float = SETTLE):
        self.speed = rate * radius  # m/s, mean wheel ground speed
        self.saturated: list[dict] = []
        self.steps: list[tuple[tuple[float, float, float], float, bool]] = []  # (twist, duration, driving)
        for i, seg in enumerate(segments, start=1):
            cmd, factor = segment_command(steering, np.asarray(drive_speed, float), seg, self.speed)
            if factor < 1.0:
                self.saturated.append({"segment": i, "factor": factor})
            self.steps.append((cmd, seg.amount / (abs(cmd[2]) if cmd[2] else math.hypot(cmd[0], cmd[1])), True))
        self.steps.append(((0.0, 0.0, 0.0), rate / acceleration + settle, False))
        self.index, self.clock = 0, 0.0

    @property
    def done(self) -> bool:
        return self.index >= len(self.steps)

    @property
    def command(self) -> tuple[float, float, float]:
        """The twist (vx, vy, wz) to hold now (m/s, m/s, rad/s)."""
        return self.steps[self.index][0] if not self.done else (0.0, 0.0, 0.0)

    def advance(self, dt: float, resteering: bool) -> None:
        """A step of ``dt`` s was taken under :attr:`command`; the segment clock runs unless the
        steering was stopping to re-steer during a segment."""
        if self.done:
            return
        cmd, duration, driving = self.steps[self.index]
        if not (driving and resteering):
            self.clock += dt
        if self.clock >= duration:
            self.index, self.clock = self.index + 1, 0.0


def slip_sample(rot0: np.ndarray, rot: np.ndarray, odom_twist: tuple[float, float], v_world: np.ndarray,
                nominal_speed: float) -> float | None:
    """One slip sample: 1 - (ground-truth velocity along the encoders' direction) / (encoder speed).

    ``rot0``, ``rot``: the base's world rotation at the start and now; ``odom_twist``: the odometry's
    body velocity (vx, vy) m/s; ``v_world``: the base's true world velocity, m/s. None below half the
    nominal speed (starting, stopping: no meaningful ratio)."""
    vx, vy = odom_twist
    v_wheels = math.hypot(vx, vy)
    if v_wheels < 0.5 * nominal_speed:
        return None
    R = rot0.T @ rot
    v_body = R[:2, :2] @ np.array([vx, vy]) / v_wheels  # encoder direction in the start frame
    v_true = (rot0.T @ np.asarray(v_world, float))[:2]
    return 1.0 - float(v_true @ v_body) / v_wheels


def planar_pose(T0: np.ndarray, T: np.ndarray) -> tuple[float, float, float]:
    """(x, y, yaw) of the pose ``T`` (4x4) in the frame of ``T0``, on that frame's x-y plane."""
    rel = np.linalg.inv(T0) @ T
    return float(rel[0, 3]), float(rel[1, 3]), math.atan2(rel[1, 0], rel[0, 0])


@dataclass
class DriveRecord:
    """What a drive records every sample: time, ground truth and odometry (x, y, yaw) in the start
    frame, slip samples while driving."""

    t: list = field(default_factory=list)
    ground_truth: list = field(default_factory=list)
    odometry: list = field(default_factory=list)
    slip: list = field(default_factory=list)

    def add(self, t: float, truth: tuple[float, float, float], odom: tuple[float, float, float],
            slip: float | None = None) -> None:
        self.t.append(float(t))
        self.ground_truth.append(tuple(float(v) for v in truth))
        self.odometry.append(tuple(float(v) for v in odom))
        if slip is not None:
            self.slip.append(float(slip))

    def metrics(self, drive_status: str, plan: DrivePlan | None, max_wheel_rate: float | None,
                path: str, rate: float, scale: float, slope_deg: float | None) -> dict:
        """The scenario's metrics.json content (:data:`METRICS`)."""
        gt = np.array(self.ground_truth, dtype=float).reshape(-1, 3)
        od = np.array(self.odometry, dtype=float).reshape(-1, 3)
        distance = float(np.sum(np.hypot(*np.diff(gt[:, :2], axis=0).T))) if len(gt) > 1 else 0.0
        err = float(np.hypot(*(od[-1, :2] - gt[-1, :2]))) if len(gt) else None
        stats = slip_stats(np.array(self.slip))
        return {"drive_status": drive_status, "path": path, "wheel_rate": rate,
                "speed": plan.speed if plan is not None else None, "scale": scale, "slope_deg": slope_deg,
                "distance": distance, "end_error": err,
                "end_error_relative": err / distance if err is not None and distance > 0 else None,
                "saturated": plan.saturated if plan is not None else [], "max_wheel_rate": max_wheel_rate,
                "slip": stats["median"], "slip_q1": stats["q1"], "slip_q3": stats["q3"],
                "slip_count": stats["samples"], "slip_samples": list(self.slip), "t": list(self.t),
                "ground_truth": gt.tolist(), "odometry": od.tolist(),
                "nominal": nominal_path(path_segments(path, scale)).tolist()}


def slope_of(normal: np.ndarray) -> float:
    """The incline (deg) of a terrain whose outward unit normal is ``normal``."""
    n = np.asarray(normal, float)
    return math.degrees(math.acos(max(-1.0, min(1.0, float(n[2]) / float(np.linalg.norm(n))))))


def plot(metrics: dict, path: str | Path) -> None:
    """The drive's figure: nominal path, ground truth and odometry (Fig. 9), and slip over time."""
    from eels_gz.plots import agg_figure  # matplotlib only where a figure is drawn (the host's run)

    fig = agg_figure((9, 4))
    ax, bx = fig.subplots(1, 2)
    for key, style in (("nominal", "k--"), ("ground_truth", "C0-"), ("odometry", "C1-")):
        xy = np.array(metrics.get(key) or [], dtype=float).reshape(-1, 3)
        ax.plot(xy[:, 0], xy[:, 1], style, label=key.replace("_", " "))
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.set_aspect("equal", adjustable="datalim")
    ax.legend(fontsize=8)
    ax.set_title(f"{metrics['path']} at {metrics['wheel_rate']:g} rad/s")
    s = np.array(metrics.get("slip_samples") or [], dtype=float)
    bx.plot(100 * s, ".", ms=3)
    bx.set_xlabel("sample while driving (10 Hz)")
    bx.set_ylabel("slip [%]")
    bx.set_title("median " + ("n/a" if metrics.get("slip") is None else f"{100 * metrics['slip']:.1f} %"))
    fig.tight_layout()
    fig.savefig(str(path), dpi=90)
