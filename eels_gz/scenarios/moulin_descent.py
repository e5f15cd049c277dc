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
``placement_failed``.

Helix (``helix`` = 1, :class:`MoulinDescent`), in the round shaft above: the
shaft's centre at ``z_start`` (m) is found from the distance field; the robot
is laid on a helix about the shaft's axis (radius ``helix_radius`` m, 0:
config/snake.yaml), tail on top, and settled with gravity off; gravity then
comes back on with the shape held. Run: every screw at ``screw_rate`` rad/s, the
mobility check on each step. A tail that descends faster than ``fall_speed``
m/s over ``FALL_WINDOW`` s is not climbing down but falling: the run ends with
``slip_failure`` (the distance it fell is still reported).

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
from eels_gz.run.placement import bore_center, settle
from eels_gz.registry import scenario_path
from eels_gz.scenarios import SLIP_FAILURE, RunEnd, ScenarioController, param
from eels_gz.scenarios.mobility_watch import MobilityWatch, threshold_from
from eels_gz.scenarios.snake_host import SnakeHost
from eels_gz.scenarios.wall_climb import WallClimb
from eels_gz.snake.holding import along_thread_share, holding_normal_force, screw_wall_contacts, squeeze_balance
from eels_gz.snake.params import load_snake_params
from eels_gz.snake.placement import helix_shape
from eels_gz.terrain.writers import find_terrain_field

PLACEMENT_FAILED = "placement_failed"
FALL_WINDOW = 0.1  # s, over which the descent speed is compared with fall_speed
CONTACT_REACH = 0.005  # m: a screw within this of the ice after placement counts as touching it


def hold_analysis(sim, snake: SnakeHost, terrain, robot_name: str) -> dict:
    """Can the placed robot hold its weight on its screws (eels_gz.snake.holding)? From its pose now
    (the helix: as placement left it; the slot: pushed and released): the screws touching the ice,
    the weight's share along their threads, the least total normal force that carries it on Coulomb
    friction along the threads (under screw contact, with its ``mu``), the normal force on them at
    the last step, and the squeeze balance of their contacts."""
    geometry = snake.screw_geometry(robot_name)
    contacts = screw_wall_contacts(snake.chain, snake.angles(), snake.base_pose(), terrain, list(geometry),
                                   CONTACT_REACH)
    out: dict = {"screws_in_contact": len(contacts)}
    if not contacts:
        return out
    g = np.asarray(sim.world.getGravity(), float)
    share = along_thread_share(g, contacts, geometry)
    mean_share = float(np.mean(list(share.values())))
    length = float(snake.chain.segment_lengths().sum())
    balance, _ = squeeze_balance([c.point for c in contacts], [c.normal for c in contacts], length)
    out.update({
        "along_thread_share": {k: round(v, 4) for k, v in share.items()},
        "along_thread_share_mean": mean_share,
        "squeeze_balance": balance,
        "normal_force_n": float(sum(snake.screw_loads().values())),
    })
    if snake.screw_contact is not None:
        mu = snake.screw_contact.params.mu
        out["holding_normal_force_n"] = holding_normal_force(sim.robot_skeleton.getMass(), g, mean_share, mu)
    return out


def place_in_bore(sim, snake: SnakeHost, terrain, params: dict, center, axis, ref):
    """Helix placement with the scenario's ``helix_radius`` / ``placement_timeout`` overrides (0: the
    config/snake.yaml values); returns the PlacementReport."""
    base = load_snake_params().placement
    radius = params.get("helix_radius", 0.0) or base.helix_radius
    timeout = params.get("placement_timeout", 0.0) or base.timeout
    pparams = replace(base, helix_radius=radius, timeout=timeout)
    shape = helix_shape(snake.chain, pparams.helix_radius, pparams.helix_pitch, center=center, axis=axis, ref=ref)
    snake.place(shape.base_pose, shape.angles)
    return settle(sim, snake, terrain, pparams)


class MoulinDescent(ScenarioController):
    METRICS = ("placement", "hold_analysis", "descended_m", "descent_rate_m_s", "duration_s",
               *MobilityWatch.METRICS)
    def __init__(self, scenario: dict):
        self.scenario = scenario
        self.t: list[float] = []
        self.z: list[float] = []
        self.report = None
        self.hold: dict = {}
        self.end: RunEnd | None = None

    def setup(self, sim, params):
        self.params = params
        self.snake = SnakeHost(sim, "moulin_descent")
        terrain = find_terrain_field(sim.spec)
        z0 = params["z_start"]
        c = bore_center(terrain, z0)
        self.report = place_in_bore(sim, self.snake, terrain, params, c, (0.0, 0.0, -1.0), (1.0, 0.0, 0.0))
        if not self.report.converged:
            self.end = RunEnd(PLACEMENT_FAILED, self.report.message)
        self.hold = hold_analysis(sim, self.snake, terrain,
                                  str(self.scenario.get("robot", sim.robot_description.name)))
        self.watch = MobilityWatch(sim, threshold_from(params))
        self.rate = params["screw_rate"]
        self.fall_speed = param(params, "fall_speed", "moulin_descent")
        self.z0 = float(self.snake.base_pose()[2, 3])
        self.t0 = sim.time

    def pre_step(self, sim):
        self.snake.command(velocities={j: self.rate for j in self.snake.screw_actuators})

    def post_step(self, sim):
        self.t.append(sim.time - self.t0)
        self.z.append(float(self.snake.base_pose()[2, 3]))
        if self.end is not None:
            return self.end
        t = self.t[-1]
        k = bisect.bisect_left(self.t, t - FALL_WINDOW)  # the list is sorted; no array per step
        if self.t[k] < t and t >= FALL_WINDOW:
            speed = (self.z[k] - self.z[-1]) / (t - self.t[k])
            if speed > self.fall_speed:
                self.end = RunEnd(SLIP_FAILURE, f"the robot fell: its tail descended at {speed:.3f} m/s over the "
                                                f"last {FALL_WINDOW} s (fall_speed {self.fall_speed} m/s), "
                                                f"{self.z0 - self.z[-1]:.3f} m in all, {t:.3f} s after gravity came on")
                return self.end
        return self.watch.check()

    def metrics(self):
        z = np.array(self.z) if self.z else np.array([self.z0])
        t = np.array(self.t) if self.t else np.array([0.0])
        descended = self.z0 - float(z[-1])
        return {
            "placement": {"converged": self.report.converged, "time": self.report.time,
                          "penetration_m": self.report.penetration, "message": self.report.message},
            "hold_analysis": self.hold,
            "descended_m": descended,
            "descent_rate_m_s": descended / t[-1] if t[-1] > 0 else None,
            "duration_s": float(t[-1]),
            **self.watch.metrics(),
        }

    def plot(self, path):
        from eels_gz.plots import plt

        fig, (a, b) = plt.subplots(2, 1, figsize=(7, 5), sharex=True, constrained_layout=True)
        a.plot(self.t, self.z)
        a.set_ylabel("tail z [m]")
        b.plot(np.array(self.watch.times) - self.t0, np.degrees(self.watch.angles))
        b.axhline(math.degrees(self.watch.threshold), color="r", ls="--", label="mobility threshold")
        b.set_ylabel("axis-gravity angle [deg]")
        b.set_xlabel("time after placement [s]")
        b.legend(loc="best")
        fig.suptitle("moulin_descent")
        fig.savefig(Path(path), dpi=100)
        plt.close(fig)


class StemmingDescent(WallClimb):
    """The slot: wall_climb's stemming zigzag laid across the moulin's slot, settled by the placement
    algorithm, pushed into the walls, held, then down-climbing (module docstring)."""

    METRICS = ("placement", "hold_analysis", "descended_m", "descent_rate_m_s", "duration_s", *WallClimb.METRICS)

    NAME = "moulin_descent"

    def setup(self, sim, params):
        self.own = dict(params)
        stemming = dict(load_yaml(scenario_path("wall_climb"))["params"])  # the zigzag: wall_climb's one copy
        stemming.update({k: v for k, v in params.items() if k in stemming})
        stemming["tail_z"] = params["z_start"]
        super().setup(sim, stemming)  # its laid() runs the placement: self.report
        self.hold = hold_analysis(sim, self.snake, self.terrain,
                                  str(self.scenario.get("robot", sim.robot_description.name)))
        if not self.report.converged:
            self.end = RunEnd(PLACEMENT_FAILED, self.report.message)

    def gap_center(self, terrain, z: float) -> tuple[float, float]:
        """The slot's mid-line at height ``z``: along the y line through x = 0, the point farthest from
        the ice within ``slot_search`` m (outside the shaft, wall_span then finds no walls about it)."""
        reach = param(self.own, "slot_search", self.NAME)
        ys = np.arange(-reach, reach + 0.005, 0.01)
        d, _ = terrain.query(np.column_stack([np.zeros_like(ys), ys, np.full_like(ys, z)]))
        return 0.0, float(ys[int(np.argmax(d))])

    def laid(self, sim, terrain) -> None:
        """The placement algorithm (gravity off, springs to the nearest ice) from the fitted zigzag."""
        self.terrain = terrain
        base = load_snake_params().placement
        timeout = self.own.get("placement_timeout", 0.0) or base.timeout
        self.report = settle(sim, self.snake, terrain, replace(base, timeout=timeout))

    def metrics(self):
        out = super().metrics()
        descended = -out["climbed_m"]
        return {
            "placement": {"converged": self.report.converged, "time": self.report.time,
                          "penetration_m": self.report.penetration, "message": self.report.message},
            "hold_analysis": self.hold,
            "descended_m": descended,
            "descent_rate_m_s": descended / out["climb_time_s"] if out["climb_time_s"] > 0 else None,
            "duration_s": float(self.t[-1]) if self.t else 0.0,
            **out,
        }


def make_controller(scenario: dict) -> ScenarioController:
    """The helix (``helix`` = 1: it falls, with the hold analysis of why) or the slot stemming."""
    params = scenario.get("params", {})
    return MoulinDescent(scenario) if params.get("helix", 0.0) else StemmingDescent(scenario)
