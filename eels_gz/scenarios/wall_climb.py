"""``wall_climb``: EELS 1.5 between ``parallel_walls`` pushes into both walls,
holds its own weight for ``hold_time``, then climbs with its screws
(EELS-DARTS §4.3.1: make contact, hold a static position for a set time,
track the vertical distance before a mobility failure).

Shape. The robot stands tail down with its bend plane across the gap (the
walls face +-y). Its bend joints are ``shape_1 .. shape_8`` (rad) times one
amplitude fitted so that the collision envelope spans the gap less
``fit_clearance`` on each side, the tail turned by ``tail_tilt`` in the bend
plane. In the narrow stemming gap of ``parallel_walls`` the zigzag crosses from wall
to wall in one inclined module, so five screws touch, on alternating walls
(1 and 6 on one, 3, 4 and 8 on the other), and the bend motors press them
with short levers. Module ``crossbar_roll_module`` and the next are twisted
by +pi/2 and -pi/2, so that the 0.6 m cross bar between them lies along the
walls instead of poking into them (the bend between those two modules, out
of the plane, is held at 0).

Why the model matters here. A locked screw on a wall resists sliding across
its threads with mu |e_v| F_n and along them with mu F_n only; the threads of
an upright screw run nearly horizontal, so its weight share is mostly across
them. Stock contact has mu F_n in every direction, so the same push that
holds under screw contact lets the robot slide (the test checks both).

Hands. EELS 1.5's screws alternate hands module to module (urdf/eels_variants.yaml
``screw_hands``). Same-handed screws failed to climb here (issue 8 notes): a
screw driven along a wall slides along its threads (Coulomb friction mu F_n,
mostly horizontal for a near-upright screw), and same-handed screws facing
opposite walls slide in opposite directions, a couple about the vertical
that nothing resists; the robot yawed along the walls and climbed 8 mm in
4 s. Of the contact screws here, 1 (right) and 6 (left) share one wall, 3
(right), 4 and 8 (left) the other, so most of those sliding forces cancel on
each wall. Rolling on horizontal screw axes also avoids the sliding, but
lying so the weight runs along the threads, where the model is weakest
(tried: the robot slid off within 0.3 s).

Run (the system plugins_py/wall_climb.py; this module is its pure part: the placement
:func:`place`, the climb rates, the record of the run with its metrics and plot):

1. placement (before the run, :func:`place`): the fitted shape is laid centred in the gap with the
   tail at ``tail_z`` (``placement.json``'s report: ``gap_m``, ``bend_amplitude_rad`` and the press
   set points ``press``). The run's first ``engage_time`` s: gravity on, a rope
   (``tether_stiffness``, the law of eels_gz.snake.tethers) from ``rope_length`` straight above the
   tail carrying the weight; the bends go to the fitted angles times ``1 + press_bend``: the bend
   controllers push the screws into the walls. Screws are locked. Then the rope's pull goes down
   linearly to zero over ``release_time`` s; the time after that is the scenario's ``duration``
   (summary.json's ``setup_sim_time`` counts the push and the release as before);
2. hold, ``hold_time`` s: every joint held; the hold drift is the largest
   displacement of the tail from where it was when the hold began;
3. climb: each screw spins at the rate that advances it at ``climb_speed``
   (m/s) straight up with no slip across its blade,
   ``omega = V (a . z) / (h r tan(alpha))`` for a screw whose spin axis ``a``
   lies in a plane containing the vertical and its wall's normal. A negative
   ``climb_speed`` down-climbs.

A run ends with ``slip_failure`` when the tail is more than ``slip_limit`` m
below its height when gravity came on, less the descent commanded so far when
down-climbing (falling behind an upward climb is not a slip), or
``mobility_failure`` (tail axis past ``mobility_threshold`` from the gravity
line).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from eels_gz.errors import ConfigError
from eels_gz.scenarios import Placement, PlacementContext, param
from eels_gz.scenarios.mobility_watch import MobilityWatch
from eels_gz.snake.chain import SnakeChain
from eels_gz.snake.tethers import Tether

UP = np.array([0.0, 0.0, 1.0])
# tail frame in the world: x up, y across the gap (world y), z along the walls (-x)
TAIL_UP = np.column_stack([UP, [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]])
RATE_EVERY = 10  # steps between updates of the climb screw rates (the axes turn slowly)


def wall_span(terrain, z: float, reach: float = 1.5, step: float = 0.01, x: float = 0.0,
              y: float = 0.0, where: str = "wall_climb") -> tuple[float, float]:
    """(y_low, y_high) m: the inner faces of two walls facing each other across
    ``y`` (along the line through ``x`` at height ``z``), from the nearest-surface
    points of the field: below ``y`` the faces whose normal points to +y, above
    it those pointing to -y, each from the point nearest it."""
    ys = y + np.arange(-reach, reach + step / 2, step)
    pts = np.column_stack([np.full_like(ys, x), ys, np.full_like(ys, z)])
    d, n = terrain.query(pts)
    near = pts - d[:, None] * n
    low = (d > 0.0) & (ys <= y) & (n[:, 1] > 0.9)
    high = (d > 0.0) & (ys >= y) & (n[:, 1] < -0.9)
    if not low.any() or not high.any():
        raise ConfigError(f"{where}: no pair of walls facing each other across y = {y:g} at x = {x:g}, z = {z} m "
                          f"in the terrain (the robot stems between two walls about 0.35 m apart there)")
    # from the points nearest each face (a field may be clipped far from the surface)
    i_low = np.flatnonzero(low)[np.argmin(d[low])]
    i_high = np.flatnonzero(high)[np.argmin(d[high])]
    return float(near[i_low, 1]), float(near[i_high, 1])


def envelope_y(chain: SnakeChain, q: dict[str, float], base_pose: np.ndarray) -> tuple[float, float, dict]:
    """(y_min, y_max, per-link (y_min, y_max)) of the robot's collision cylinders (m, world)."""
    poses = chain.link_poses(q, base_pose)
    per: dict[str, tuple[float, float]] = {}
    for cyl in chain.cylinders:
        T = poses[cyl.link] @ cyl.pose
        d, o = T[:3, 2], T[:3, 3]
        half = 0.5 * cyl.length * abs(d[1]) + cyl.radius * math.sqrt(max(0.0, 1.0 - d[1] ** 2))
        lo, hi = per.get(cyl.link, (math.inf, -math.inf))
        per[cyl.link] = (min(lo, o[1] - half), max(hi, o[1] + half))
    return min(v[0] for v in per.values()), max(v[1] for v in per.values()), per


def zigzag(chain: SnakeChain, pattern: list[float], amplitude: float, roll_module: int) -> dict[str, float]:
    """Bend ``amplitude * pattern[i]`` (rad) per bend joint, twists 0 except +-pi/2 at the rolled pair."""
    q = {n: 0.0 for n in chain.bend_joints() + chain.twist_joints()}
    for name, s in zip(chain.bend_joints(), pattern):
        q[name] = amplitude * s
    if roll_module:
        q[f"module_{roll_module}_twist"] = math.pi / 2
        q[f"module_{roll_module + 1}_twist"] = -math.pi / 2
        q[f"module_{roll_module + 1}_bend"] = 0.0
    return q


def tail_pose(tilt: float) -> np.ndarray:
    """Tail frame (4x4, at the origin): tail axis up, turned by ``tilt`` (rad) in the bend plane."""
    c, s = math.cos(tilt), math.sin(tilt)
    T = np.eye(4)
    T[:3, :3] = TAIL_UP @ np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    return T


def fit_amplitude(chain: SnakeChain, pattern: list[float], roll_module: int, width: float,
                  tilt: float = 0.0) -> float:
    """Amplitude (the factor on ``pattern``) whose envelope is ``width`` (m) across y, by
    bisection up to the one that takes the largest bend to the bend limit; ConfigError if the
    pattern cannot reach it there."""
    limit = min(chain.joint(n).upper for n in chain.bend_joints())
    peak = max(abs(p) for p in pattern)
    if not peak > 0.0:
        raise ConfigError(f"wall_climb: the shape pattern {pattern} has no bend")

    def span(a: float) -> float:
        lo, hi, _ = envelope_y(chain, zigzag(chain, pattern, a, roll_module), tail_pose(tilt))
        return hi - lo

    top = limit / peak
    if span(top) < width:
        raise ConfigError(f"wall_climb: the shape pattern {pattern} spans only {span(top):.3f} m at the bend "
                          f"limit {limit:.3f} rad; the walls need {width:.3f} m")
    lo, hi = 0.0, top
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if span(mid) < width else (lo, mid)
    return 0.5 * (lo + hi)


def screw_actuators(chain: SnakeChain) -> list[str]:
    """The joints that drive the screws (one per coupled pair), sorted."""
    return sorted({chain.actuated(chain.joint(j).name)[0] for j in chain.screw_joints()})


def stemming_layout(params: dict, chain: SnakeChain, terrain, center, where: str = "wall_climb") -> dict:
    """The fitted zigzag laid across a gap (module docstring): ``center(terrain, z) -> (x, y)`` a point
    between the walls at height ``z``. Returns ``base`` (the tail's pose, 4x4), ``q_fit`` and ``press``
    (joint angles, rad: the fitted shape and the push set points), ``gap_m`` and ``bend_amplitude_rad``."""
    get = lambda name: param(params, name, where)  # noqa: E731
    pattern = [float(params.get(f"shape_{i}", 0.0)) for i in range(1, chain.n_modules + 1)]
    roll = int(get("crossbar_roll_module"))
    tail_z = get("tail_z")
    x_c, y_c = center(terrain, tail_z + 1.0)
    y_lo, y_hi = wall_span(terrain, tail_z + 1.0, x=x_c, y=y_c, where=where)
    gap = y_hi - y_lo
    tilt = get("tail_tilt")
    amplitude = fit_amplitude(chain, pattern, roll, gap - 2.0 * get("fit_clearance"), tilt)
    q_fit = zigzag(chain, pattern, amplitude, roll)
    base = tail_pose(tilt)
    lo, hi, _ = envelope_y(chain, q_fit, base)
    base[:3, 3] = (x_c, 0.5 * (y_lo + y_hi) - 0.5 * (lo + hi), tail_z)
    press = zigzag(chain, pattern, amplitude * (1.0 + get("press_bend")), roll)
    return {"base": base, "q_fit": q_fit, "press": press, "gap_m": gap, "bend_amplitude_rad": amplitude}


def rope(root: str, tail, mass: float, gravity, params: dict, where: str = "wall_climb") -> Tether:
    """The rope from ``rope_length`` m straight above the tail origin ``tail`` (3,), pre-tensioned to
    carry the robot's weight (``mass`` kg) where it was laid: it holds the weight while the bends push
    but, being long, hardly resists the sideways shift by which the robot balances the push between
    the two walls (lateral stiffness = tension / length, 200 N/m for 3 m). Critically damped for the
    robot on the rope."""
    stiffness, rope_length = param(params, "tether_stiffness", where), param(params, "rope_length", where)
    g = float(np.linalg.norm(gravity))
    damping = 2.0 * math.sqrt(stiffness * mass)
    anchor = tuple(float(v) for v in np.asarray(tail, float) + rope_length * UP)
    stretch = mass * g / stiffness
    if not rope_length > stretch:
        raise ConfigError(f"{where}: rope_length = {rope_length} m must exceed the rope's stretch under the "
                          f"robot's weight ({stretch:.4f} m at tether_stiffness = {stiffness} N/m)")
    return Tether(root, (0.0, 0.0, 0.0), anchor, stiffness, damping, rope_length - stretch)


def stemming_report(layout: dict, tether: Tether) -> dict:
    """``placement.json``'s report of a stemming placement: what the system reads back."""
    return {"gap_m": layout["gap_m"], "bend_amplitude_rad": layout["bend_amplitude_rad"],
            "press": {k: float(v) for k, v in layout["press"].items()},
            "rope": {"link": tether.link, "point": list(tether.point), "anchor": list(tether.anchor),
                     "stiffness": tether.stiffness, "damping": tether.damping, "length": tether.length}}


def lead_in_s(params: dict) -> float:
    """s before the scenario's timed run: the push on the rope (``engage_time``) and its release
    (``release_time``); the system's ``lead_in_s``, stepped as the run's setup by the embedded host."""
    return float(params["engage_time"]) + float(params["release_time"])


def place(ctx: PlacementContext) -> Placement:
    """The fitted zigzag centred between ``parallel_walls`` (about the origin), the tail at ``tail_z``;
    screws at 0 (the description's zero, where they are locked); the rope above the tail."""
    chain = SnakeChain.from_model(ctx.model)
    layout = stemming_layout(ctx.params, chain, ctx.terrain, lambda terrain, z: (0.0, 0.0))
    joints = {**layout["q_fit"], **{j: 0.0 for j in screw_actuators(chain)}}
    tether = rope(chain.root, layout["base"][:3, 3], ctx.model.total_mass, ctx.gravity, ctx.params)
    return Placement(layout["base"], joints, report=stemming_report(layout, tether))


def climb_rates(chain: SnakeChain, angles, base_pose, geometry: dict, climb_speed: float) -> dict[str, float]:
    """Screw joint rates (rad/s) for ``climb_speed`` (m/s) straight up (module docstring); ``geometry``:
    (r, tan(alpha), handedness) per screw link."""
    axes = chain.screw_axes(angles, base_pose)
    rates = {}
    for link, ax in axes.items():
        r, tan_a, h = geometry[link]
        rates[ax.actuated] = climb_speed * float(ax.axis @ UP) / (h * r * tan_a) / ax.multiplier
    return rates


class WallClimb:
    """The record of a stemming run from the start of the hold (when the rope has let go) and its
    figures: ``t`` (s after the hold began), tail positions ``p`` and total screw loads; ``p0`` the
    tail when the hold began, ``climb_start`` when the climb began."""

    NAME = "wall_climb"
    METRICS = ("gap_m", "bend_amplitude_rad", "hold_time_s", "held_s", "hold_drift_m", "rope_force_n",
               "release_drop_m", "hold_drop_m", "climbed_m", "climb_time_s", "climb_ratio", "mean_screw_load_n",
               "hold_statics", "hold_margin", *MobilityWatch.METRICS)

    def __init__(self, params: dict):
        self.params = params
        self.t: list[float] = []
        self.p: list[np.ndarray] = []
        self.loads: list[float] = []
        self.climb_start: np.ndarray | None = None
        self.p0 = self.p_engaged = None
        self.rope_force = 0.0
        self.gap = self.amplitude = 0.0
        self.hold_statics: dict = {}
        self.watch: MobilityWatch | None = None
        if params:
            self.hold_time = param(params, "hold_time", self.NAME)
            self.climb_speed = param(params, "climb_speed", self.NAME)
            self.slip_limit = param(params, "slip_limit", self.NAME)

    def commanded_height(self, t: float) -> float:
        """The tail height (m) that ``slip_limit`` is measured down from, ``t`` s after gravity came on:
        its height then, less the descent commanded so far by a negative ``climb_speed``."""
        return float(self.p0[2]) + min(0.0, self.climb_speed) * max(0.0, t - self.hold_time)

    def record(self, t: float, p: np.ndarray, load: float) -> str | None:
        """One step's tail position ``p`` and total screw load (N) at ``t``; a slip failure's message
        when the tail is more than ``slip_limit`` below its commanded height, else None."""
        self.t.append(t)
        self.p.append(p)
        self.loads.append(load)
        below = self.commanded_height(t) - p[2]
        if below > self.slip_limit:
            return (f"slip failure at t = {t:.3f} s after gravity came on: the tail is {below:.3f} m below "
                    f"its commanded height (limit {self.slip_limit} m)")
        return None

    def hold_drift(self) -> float:
        """Largest tail displacement (m) over the hold from where the tail was when it began, that
        is when the rope had let go and the walls carried the weight (the settling while the load
        moved from the rope to the walls is ``release_drop_m``; a robot that slides off during it
        ends in ``slip_failure``)."""
        t = np.array(self.t)
        if not len(t):
            return 0.0
        pts = np.array(self.p)[t <= self.hold_time + 1e-9]
        return float(np.max(np.linalg.norm(pts - self.p0, axis=1))) if len(pts) else 0.0

    def hold_margin(self) -> float | None:
        """Mean total screw load over the hold (N) over the least that carries the weight on Coulomb
        friction along the threads alone (``holding_normal_force_n`` of :attr:`hold_statics`, from the
        screw contact's mu and the weight's share along the threads of the screws touching the walls as
        the hold begins). Above 1 friction along the threads alone could hold the robot; below 1 it
        needs the across-thread grip too. None without screw contact or contacts."""
        need = self.hold_statics.get("holding_normal_force_n")
        t = np.array(self.t)
        loads = np.array(self.loads)[t <= self.hold_time + 1e-9] if len(t) else np.zeros(0)
        if not need or not loads.size:
            return None
        return float(loads.mean() / need)

    def metrics(self) -> dict:
        if self.p0 is None:  # the run ended before the hold began (e.g. its placement failed)
            return {}
        t = np.array(self.t) if self.t else np.array([0.0])
        end = self.p[-1] if self.p else self.p0
        climbed = float(end[2] - self.climb_start[2]) if self.climb_start is not None else 0.0
        held = float(min(t[-1], self.hold_time))
        climb_time = float(max(0.0, t[-1] - self.hold_time))
        return {
            "gap_m": self.gap,
            "bend_amplitude_rad": self.amplitude,
            "hold_time_s": self.hold_time,
            "held_s": held,
            "hold_drift_m": self.hold_drift(),
            "rope_force_n": self.rope_force,
            "release_drop_m": float(self.p_engaged[2] - self.p0[2]),
            "hold_drop_m": float(self.p0[2] - min(p[2] for p, tk in zip(self.p, self.t) if tk <= self.hold_time + 1e-9))
            if self.t and self.t[0] <= self.hold_time + 1e-9 else 0.0,
            "climbed_m": climbed,
            "climb_time_s": climb_time,
            "climb_ratio": climbed / (self.climb_speed * climb_time) if climb_time > 0 else None,
            "mean_screw_load_n": float(np.mean(self.loads)) if self.loads else 0.0,
            "hold_statics": self.hold_statics,
            "hold_margin": self.hold_margin(),
            **(self.watch.metrics() if self.watch is not None else {}),
        }

    def plot(self, path) -> None:
        from eels_gz.plots import plt

        if self.p0 is None:
            return
        t = np.array(self.t)
        p = np.array(self.p) - self.p0 if self.p else np.zeros((0, 3))
        fig, (a, b) = plt.subplots(2, 1, figsize=(7, 5), sharex=True, constrained_layout=True)
        a.plot(t, p[:, 2] * 1e3, label="height change z - z0")
        # the title's drift: the largest of this curve over the hold (hold_drift)
        a.plot(t, np.linalg.norm(p, axis=1) * 1e3, "--", label="3-D drift |p - p0|")
        a.axvline(self.hold_time, color="k", ls=":", label="climb starts")
        a.set_ylabel("tail displacement [mm]")
        a.legend(loc="best")
        b.plot(t, self.loads)
        b.set_ylabel("screw contact load [N]")
        b.set_xlabel("time after gravity on [s]")
        fig.suptitle(f"{self.NAME}: 3-D drift {self.hold_drift() * 1e3:.2f} mm over the hold (dashed curve)")
        fig.savefig(Path(path), dpi=100)
        plt.close(fig)


METRICS = WallClimb.METRICS
