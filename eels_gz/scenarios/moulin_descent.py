"""``moulin_descent``: EELS 1.5 placed in ``moulin`` by the placement
algorithm (EELS-DARTS §2.2.6), then down-climbing with its screws.

Slot (the default, ``helix`` = 0, :class:`StemmingDescent`). The moulin narrows
lower down into a slot (``MoulinParams.slot_top``); its mid-line at the tail's
height ``z_start`` is found from the distance field, and the stemming zigzag of
``wall_climb`` (config/scenarios/wall_climb.yaml: bend pattern, tail tilt,
cross bar roll, push; one copy of them) is fitted across it and laid there.
The placement algorithm settles it against the ice (gravity off, springs to
the nearest ice); then, as in wall_climb, a rope from above carries the
weight while the bends push the screws into the walls, lets go, the robot
holds for ``hold_time`` and down-climbs at ``climb_speed`` (negative) on its
screws of alternating hands. Metrics: the placement report, hold_analysis,
``descended_m`` and its rate, and wall_climb's hold drift, climb ratio and
screw loads. Measured: docs/scenarios.md. A placement that times out ends the run with
``placement_failed`` before its first step.

The settling is the placement before the run (:func:`place`, through ``ctx.settle``:
eels_gz.run.placing.settle); ``placement.json`` records the settled pose and joints and, in its report,
the settling (``settle``), the slot's fit and its rope. The system is plugins_py/moulin_descent.py
(the slot: plugins_py/wall_climb.py's, with this scenario's figures added).

Helix (``helix`` = 1, :class:`MoulinDescent`), in the round shaft above: the
shaft's centre at ``z_start`` (m) is found from the distance field; the robot
is laid on a helix about the shaft's axis (radius ``helix_radius`` m, 0:
config/snake.yaml), tail on top, and settled with gravity off; gravity then
comes back on with the shape held. Run: every screw at ``screw_rate`` rad/s, the
mobility check on each step (:class:`HelixRecord`). A tail that descends faster than ``fall_speed``
m/s over ``FALL_WINDOW`` s is not climbing down but falling: the run ends with
``slip_failure`` (the distance it fell is still reported; :class:`FallWatch`).

Measured on the helix (issue 8 notes): the robot falls. Placement leaves it touching the
wall with no push into it, and once gravity is on nothing holds it: under
stock contact and under screw contact alike it drops in free fall (5 cm in
the first 0.1 s). Metric ``hold_analysis`` (:mod:`eels_gz.snake.holding`,
from the settled pose) says why pressing the helix does not cure it:

- the default helix (radius 0.45 m, pitch 1.5 m: 28 deg) puts 0.6-0.8 of the
  weight along the threads of its right-handed screws and 0.96-0.99 along
  those of its left-handed ones (EELS 1.5's hands alternate), where only
  ``mu`` = 0.15 holds: friction along the threads would need about 3.4 kN of
  total normal force, several times what the bend and twist motors (400 /
  200 N m) can squeeze. With both hands there is no motion that slides along
  every thread at once, so the across-thread grip could carry some of the
  weight, but only under a normal force, and without the settling springs
  there is none: the robot drops in free fall with either hand pattern;
- its settled contacts span about one turn and are not self-balanced
  (``squeeze_balance`` 0.13): a push of the joints moves the robot off the
  wall instead of squeezing it (tried: bends straightened, a larger-radius
  helix, a least-squares "pressed" shape, joint torques from the contacts'
  statics; each left the wall within 1 s with gravity still off).
  Steeper helices, whose weight runs across the threads, span half a turn
  or lean on one side of the shaft (balance 0.85-0.96).
"""

from __future__ import annotations

import bisect
import math
from dataclasses import replace
from pathlib import Path

import numpy as np

from eels_gz.config import load_yaml
from eels_gz.errors import ConfigError
from eels_gz.registry import scenario_path
from eels_gz.scenarios import Placement, PlacementContext, param
from eels_gz.scenarios.mobility_watch import MobilityWatch
from eels_gz.scenarios.wall_climb import WallClimb, rope, screw_actuators, stemming_layout, stemming_report
from eels_gz.snake.chain import SnakeChain
from eels_gz.snake.params import load_snake_params
from eels_gz.snake.settling import helix_shape

NAME = "moulin_descent"
FALL_WINDOW = 0.1  # s, over which the descent speed is compared with fall_speed
METRICS = ("placement", "hold_analysis", "descended_m", "descent_rate_m_s", "duration_s", *WallClimb.METRICS)


def bore_center(terrain, z: float, around=(0.0, 0.0), reach: float = 1.0, step: float = 0.02) -> np.ndarray:
    """Centre (3,) of a vertical shaft's cross-section at height ``z`` (m): the
    point of the horizontal square of half-side ``reach`` about ``around``
    farthest from the terrain (grid of ``step``, m)."""
    g = np.arange(-reach, reach + step / 2, step)
    X, Y = np.meshgrid(g + around[0], g + around[1])
    pts = np.column_stack([X.ravel(), Y.ravel(), np.full(X.size, float(z))])
    d, _ = terrain.query(pts)
    return pts[int(np.argmax(d))]


def stemming_params(params: dict) -> dict:
    """The slot's stemming parameters: wall_climb's (config/scenarios/wall_climb.yaml, their one copy)
    with this scenario's values for the keys both have, the tail at ``z_start``."""
    stemming = dict(load_yaml(scenario_path("wall_climb"))["params"])
    stemming.update({k: v for k, v in params.items() if k in stemming})
    stemming["tail_z"] = params["z_start"]
    return stemming


def lead_in_s(params: dict) -> float:
    """The slot's lead-in (wall_climb's push and release, :func:`eels_gz.scenarios.wall_climb.lead_in_s`);
    none for the helix, which starts falling at once."""
    from eels_gz.scenarios.wall_climb import lead_in_s as stemming_lead_in

    return 0.0 if params.get("helix", 0.0) else stemming_lead_in(stemming_params(params))


def slot_center(params: dict):
    """``center(terrain, z)``: the slot's mid-line at height ``z``: along the y line through x = 0, the
    point farthest from the ice within ``slot_search`` m (outside the shaft, wall_span then finds no
    walls about it)."""
    reach = param(params, "slot_search", NAME)

    def center(terrain, z: float) -> tuple[float, float]:
        ys = np.arange(-reach, reach + 0.005, 0.01)
        d, _ = terrain.query(np.column_stack([np.zeros_like(ys), ys, np.full_like(ys, z)]))
        return 0.0, float(ys[int(np.argmax(d))])

    return center


def place(ctx: PlacementContext) -> Placement:
    """The helix in the round shaft (``helix`` = 1) or the stemming zigzag across the slot, laid out
    and settled against the ice by ``ctx.settle`` (module docstring)."""
    if ctx.settle is None:
        raise ConfigError(f"{NAME}: placement needs the engine's settling step (ctx.settle)")
    params = ctx.params
    base = load_snake_params().placement
    chain = SnakeChain.from_model(ctx.model)
    timeout = params.get("placement_timeout", 0.0) or base.timeout
    if params.get("helix", 0.0):
        radius = params.get("helix_radius", 0.0) or base.helix_radius
        pparams = replace(base, helix_radius=radius, timeout=timeout)
        c = bore_center(ctx.terrain, params["z_start"])
        shape = helix_shape(chain, pparams.helix_radius, pparams.helix_pitch, center=c, axis=(0.0, 0.0, -1.0),
                            ref=(1.0, 0.0, 0.0))
        settled = ctx.settle(shape.base_pose, shape.angles, pparams)
        settled.report = {"settle": settled.report}
        return settled
    stemming = stemming_params(params)
    layout = stemming_layout(stemming, chain, ctx.terrain, slot_center(params), NAME)
    settled = ctx.settle(layout["base"], layout["q_fit"], replace(base, timeout=timeout))
    if settled.status != "ok":
        settled.report = {"settle": settled.report}
        return settled
    tether = rope(chain.root, np.asarray(settled.base_pose)[:3, 3], ctx.model.total_mass, ctx.gravity,
                  stemming, NAME)
    settled.report = {"settle": settled.report, **stemming_report(layout, tether)}
    missing = [j for j in screw_actuators(chain) if j not in settled.joints]
    if missing:
        raise ConfigError(f"{NAME}: the settled placement has no angle for screws {missing}")
    return settled


def placement_metrics(settle: dict) -> dict:
    """metrics.json's ``placement``: the settling's report."""
    return {k: settle[k] for k in ("converged", "time", "penetration_m", "message")}


class FallWatch:
    """Tells a fall from a climb: the tail's descent speed over the last ``FALL_WINDOW`` s against
    ``fall_speed`` (m/s); ``update(t, z)`` with the time (s) and the tail's height (m) after each step
    gives the fall's message once it is past it, else None."""

    def __init__(self, fall_speed: float):
        self.fall_speed = float(fall_speed)
        self.t: list[float] = []
        self.z: list[float] = []

    def update(self, t: float, z: float) -> str | None:
        self.t.append(t)
        self.z.append(z)
        k = bisect.bisect_left(self.t, t - FALL_WINDOW)  # the list is sorted; no array per step
        if self.t[k] < t and t >= FALL_WINDOW:
            speed = (self.z[k] - self.z[-1]) / (t - self.t[k])
            if speed > self.fall_speed:
                return (f"the robot fell: its tail descended at {speed:.3f} m/s over the last {FALL_WINDOW} s "
                        f"(fall_speed {self.fall_speed} m/s), {self.z[0] - self.z[-1]:.3f} m in all, {t:.3f} s "
                        "after gravity came on")
        return None


def helix_metrics(placement: dict, hold: dict, t: list[float], z: list[float], z0: float, watch: MobilityWatch) -> dict:
    """The helix run's metrics from its tail heights ``z`` (m) at ``t`` (s after placement), the tail's
    height ``z0`` when the run began."""
    z = np.array(z) if z else np.array([z0])
    t = np.array(t) if t else np.array([0.0])
    descended = z0 - float(z[-1])
    return {
        "placement": placement,
        "hold_analysis": hold,
        "descended_m": descended,
        "descent_rate_m_s": descended / t[-1] if t[-1] > 0 else None,
        "duration_s": float(t[-1]),
        **watch.metrics(),
    }


def stemming_metrics(placement: dict, hold: dict, record: WallClimb) -> dict:
    """The slot run's metrics: wall_climb's, with the descent."""
    out = record.metrics()
    descended = -out["climbed_m"] if "climbed_m" in out else 0.0
    return {
        "placement": placement,
        "hold_analysis": hold,
        "descended_m": descended,
        "descent_rate_m_s": descended / out["climb_time_s"] if out.get("climb_time_s") else None,
        "duration_s": float(record.t[-1]) if record.t else 0.0,
        **out,
    }


def plot_helix(path, t, z, watch: MobilityWatch, t0: float) -> None:
    """Tail height and the axis-gravity angle over time, to ``path`` (PNG)."""
    from eels_gz.plots import plt

    fig, (a, b) = plt.subplots(2, 1, figsize=(7, 5), sharex=True, constrained_layout=True)
    a.plot(t, z)
    a.set_ylabel("tail z [m]")
    b.plot(np.array(watch.times) - t0, np.degrees(watch.angles))
    b.axhline(math.degrees(watch.threshold), color="r", ls="--", label="mobility threshold")
    b.set_ylabel("axis-gravity angle [deg]")
    b.set_xlabel("time after placement [s]")
    b.legend(loc="best")
    fig.suptitle(NAME)
    fig.savefig(Path(path), dpi=100)
    plt.close(fig)
