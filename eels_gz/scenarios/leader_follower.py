"""``leader_follower``: EELS 1.0 front-only follows a planned path on ice,
head first (NEO §III-B/C, Fig. 3-4). Pure: the system is plugins_py/leader_follower.py.

Path. A planar S-curve at the height of the resting tail, ``y = amplitude
sin(2 pi x / wavelength)`` sampled every ``PATH_STEP`` m as a polyline, long
enough for the robot plus ``travel`` m. A curve, not a line: a straight
robot is the "pencil" the motion controller cannot drive sideways or turn
(NEO §V), while an S over the robot's length keeps every shape well
conditioned. Curvature peaks at ``amplitude (2 pi / wavelength)^2`` (1/m),
about that times the 0.35 m module length per bend joint.

Placement (``placement: leader_follower``, :func:`place`): the robot laid on
the path from arc length 0 (:func:`~eels_gz.snake.shape_on_path.lay_on_path`).

Loop (:class:`LeaderFollowerLoop`), every ``control_period`` s:

1. path tracker (:class:`~eels_gz.snake.path_tracker.PathTracker`, gains of
   config/snake.yaml, feed-forward ``speed`` m/s): the tail's closest arc
   length ``s``, the rigid fit of the module points onto their places at
   ``s``, and the body twist that corrects it plus the laid tail frame's own
   twist along the path (the shape rates of step 2 move the rest);
2. shape (leader-follower, :func:`~eels_gz.snake.shape_on_path.lay_on_path`):
   bend and twist set points that lay the robot on the path from ``s``, with
   their rates (``d/ds`` times ``speed``) as the shape term of Eq. 3;
3. screws (:class:`~eels_gz.scenarios.screw_drive.ScrewDrive`, NEO Eq. 5):
   rates for the tracker's twist projected on the planar subspace (vx, vy,
   wz; on flat ice the other three belong to the ground).

Contact. The scenario runs the screw contact on the default ice (its
``contact:``). NEO's kinematic model assumes screws that cannot slip across
their threads; the default ice's across-thread line (|e_v| = 300 + 0.1 F_n,
identified from the papers' hardware behaviours, issue 33) lets them slip
across by ~0.3 % of the blade speed, and it keeps static friction. With
|e_v| of 3-12 (the default before issue 33) the S-shape's conditioning
(scaled condition number ~25) turned that slip into twist errors of tens of
per cent and the robot fell behind the path (figures in docs/scenarios.md).

The run ends (status ``ok``, ``gz_compat.request_run_end``) when the tail has
travelled ``travel`` m of arc length. Metrics: each module point's distance to the path (tail end,
bend joints, head end; NEO Table II form: mean, std, max per point and
over all), the distance travelled, the average speed, the motion
controller's singular count. Plot: the path and the traces of the module
points (top view), and the errors against time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from eels_gz.errors import ConfigError
from eels_gz.scenarios import Placement, PlacementContext, param
from eels_gz.scenarios.screw_drive import ScrewDrive
from eels_gz.snake.chain import SnakeChain
from eels_gz.snake.params import load_snake_params
from eels_gz.snake.path_tracker import PathTracker, tracking_stats
from eels_gz.snake.reference_paths import PolylinePath
from eels_gz.snake.shape_on_path import LaidShape, lay_on_path

PATH_STEP = 0.01  # m, polyline sampling of the S-curve (chord error amplitude * (2 pi step / wavelength)^2 / 8 < 0.1 mm)
SHAPE_DS = 1e-3  # m, arc-length step of the shape-rate finite difference
PLANAR = (0, 1, 5)  # vx, vy, wz
METRICS = ("speed_command_m_s", "travelled_m", "duration_s", "average_speed_m_s", "tracking_error",
           "tracking_error_per_point", "motion_control")


def s_curve(amplitude: float, wavelength: float, length_x: float, z: float, x0: float = 0.0) -> PolylinePath:
    """``y = amplitude sin(2 pi (x - x0) / wavelength)`` for x in [x0, x0 + length_x], at height z (m)."""
    x = np.arange(x0, x0 + length_x + PATH_STEP, PATH_STEP)
    y = amplitude * np.sin(2.0 * math.pi * (x - x0) / wavelength)
    return PolylinePath(np.column_stack([x, y, np.full_like(x, z)]))


@dataclass(frozen=True)
class Settings:
    """The scenario's checked params: speed (m/s), travel (m), control period (s), S-curve (m)."""

    speed: float
    travel: float
    period: float
    amplitude: float
    wavelength: float


def check_params(params: dict[str, float], where: str = "leader_follower") -> Settings:
    """The scenario's params, checked (ConfigError naming what is wrong)."""
    out = Settings(param(params, "speed", where), param(params, "travel", where),
                   param(params, "control_period", where), param(params, "path_amplitude", where),
                   param(params, "path_wavelength", where))
    if not (out.speed > 0 and out.travel > 0 and out.period > 0 and out.wavelength > 0 and out.amplitude >= 0):
        raise ConfigError(f"{where}: speed, travel, control_period and path_wavelength must be > 0 and "
                          f"path_amplitude >= 0; got {params}")
    return out


def check_chain(chain: SnakeChain, robot: str, where: str = "leader_follower") -> None:
    if not chain.twist_joints():
        raise ConfigError(f"{where}: robot '{robot}' has no twist joints; leader-follower lays EELS 1.0 / 1.5 "
                          "on a 3D path")


def planned_path(chain: SnakeChain, cfg: Settings, z: float) -> PolylinePath:
    """The S-curve at height ``z`` (m, the resting tail's), long enough for the robot, the travel and
    the chord placement's reach past the head."""
    robot_length = float(chain.segment_lengths().sum())
    return s_curve(cfg.amplitude, cfg.wavelength, cfg.travel + robot_length + 1.0, z)


def start_shape(chain: SnakeChain, path: PolylinePath, cfg: Settings, where: str = "leader_follower") -> LaidShape:
    """The robot laid on ``path`` from arc length 0; ConfigError past a joint limit."""
    start = lay_on_path(chain, path, 0.0)
    if start.violations:
        raise ConfigError(f"{where}: the path (amplitude {cfg.amplitude} m, wavelength {cfg.wavelength} m) needs "
                          f"joint angles past the limits of {', '.join(start.violations)}")
    return start


def place(ctx: PlacementContext) -> Placement:
    """The robot laid on the path (at the height of its spawned tail) from arc length 0."""
    cfg = check_params(ctx.params)
    chain = SnakeChain.from_model(ctx.model)
    check_chain(chain, ctx.robot)
    if ctx.base_pose is None:
        raise ConfigError("leader_follower: the placement needs the robot's spawn pose")
    start = start_shape(chain, planned_path(chain, cfg, float(np.asarray(ctx.base_pose)[2, 3])), cfg)
    return Placement(start.base_pose, dict(start.angles), report={"s_tail_m": 0.0})


class LeaderFollowerLoop:
    """The tracker, the shape and the screws of the module docstring, over ``snake`` (``chain``,
    ``screws``, ``angles()``, ``base_pose()``, ``module_points()``, ``screws_in_contact()``,
    ``down_in_base()``, ``command()``: plugins_py/snake_io.py's SnakeIO), and the samples of the run."""

    def __init__(self, snake, cfg: Settings, path: PolylinePath):
        self.snake, self.cfg, self.path = snake, cfg, path
        self.tracker = PathTracker(snake.chain, path, replace(load_snake_params().path_tracker, speed=cfg.speed))
        self.drive = ScrewDrive(snake, period=cfg.period)
        self.t: list[float] = []
        self.s: list[float] = []
        self.errors: list[np.ndarray] = []
        self.traces: list[np.ndarray] = []
        self.s0 = 0.0

    def _shape(self, s: float):
        laid = lay_on_path(self.snake.chain, self.path, s)
        ahead = lay_on_path(self.snake.chain, self.path, s + SHAPE_DS)
        rates = {k: (ahead.angles[k] - laid.angles[k]) / SHAPE_DS * self.cfg.speed for k in laid.angles}
        return laid, rates

    def control(self, now: float, angles: dict[str, float], base_pose: np.ndarray) -> None:
        """One control update at simulated time ``now`` (s) from the robot's ``angles`` and ``base_pose``:
        shape and screw set points commanded."""
        cmd = self.tracker.command(angles, base_pose)
        laid, rates = self._shape(cmd.s)
        self.snake.command(positions=laid.angles, velocities=rates)
        twist = np.zeros(6)
        twist[list(PLANAR)] = cmd.twist[list(PLANAR)]
        self.drive.update(now, twist, rates, angles)
        self.s.append(cmd.s)

    def sample(self, t: float, points: np.ndarray) -> str | None:
        """Record the module points (world) at ``t`` s from the start; a message when the travel is done."""
        self.t.append(t)
        self.traces.append(points)
        self.errors.append(np.array([self.path.closest(p)[2] for p in points]))
        if self.s and self.s[-1] - self.s0 >= self.cfg.travel:
            return f"the tail travelled {self.s[-1] - self.s0:.3f} m along the path"
        return None

    def metrics(self) -> dict:
        if not self.errors:
            return {"travelled_m": 0.0}
        stats = tracking_stats(np.array(self.errors))
        names = ["tail"] + self.snake.chain.bend_joints() + ["head"]
        per_point = {n: {"mean_m": float(stats["mean"][k]), "std_m": float(stats["std"][k]),
                         "max_m": float(stats["max"][k])} for k, n in enumerate(names)}
        e = np.array(self.errors)
        travelled = (self.s[-1] - self.s0) if self.s else 0.0
        duration = self.t[-1]
        return {
            "speed_command_m_s": self.cfg.speed,
            "travelled_m": travelled,
            "duration_s": duration,
            "average_speed_m_s": travelled / duration if duration > 0 else None,
            "tracking_error": {"mean_m": float(e.mean()), "std_m": float(e.std()), "max_m": float(e.max())},
            "tracking_error_per_point": per_point,
            "motion_control": self.drive.report(),
        }

    def plot(self, path) -> None:
        from eels_gz.plots import plt

        fig, (a, b) = plt.subplots(2, 1, figsize=(9, 7), constrained_layout=True,
                                   gridspec_kw={"height_ratios": (2, 1)})
        v = self.path.vertices
        a.plot(v[:, 0], v[:, 1], "k--", lw=1, label="planned path")
        if self.traces:
            tr = np.array(self.traces)
            for k in range(tr.shape[1]):
                a.plot(tr[:, k, 0], tr[:, k, 1], lw=0.8, label="tail" if k == 0 else
                       ("head" if k == tr.shape[1] - 1 else None))
            a.plot(tr[-1, :, 0], tr[-1, :, 1], "o-", color="tab:red", ms=3, label="final shape")
            e = np.array(self.errors)
            b.plot(self.t, e * 100.0, lw=0.6)
            b.plot(self.t, e.mean(axis=1) * 100.0, "k", lw=1.5, label="mean over module points")
            b.legend(loc="best")
        a.set_aspect("equal", adjustable="datalim")
        a.set_xlabel("x [m]")
        a.set_ylabel("y [m]")
        a.legend(loc="best", fontsize=8)
        b.set_xlabel("time [s]")
        b.set_ylabel("distance to path [cm]")
        fig.suptitle("leader_follower: module points on the planned path")
        fig.savefig(Path(path), dpi=100)
        plt.close(fig)
