"""gz-sim Python system: tethers, spring-dampers from points of robot links to anchors in the world.

Configured from its ``<plugin>`` element: one ``<tether link= point= anchor= stiffness= damping=
length=/>`` per tether (eels_gz.scenarios.plugin_elements writes them from the scenario's ``tethers:``; the
law, units and checks are eels_gz.snake.tethers'), and ``<description_file>``, the robot's URDF, to
follow a link merged into its parent across a fixed joint to the link that carries it. Each step it
reads the attached links' world poses and twists (``link_world_states``) and adds each tether's force
at its point, as a force at the link origin and its moment (``Link.add_world_wrench``), for that
step. An ``anchor="auto"`` is the attachment point when the run starts (the first ``pre_update``,
after any placement).

Other systems of the model find it as peer ``"tethers"``: ``wrenches_at(link_world_states(ecm,
peer.links))`` gives the forces at the state now, and ``scale`` (1 by default) scales the pull it
applies (a schedule that lets a rope go).
"""

from __future__ import annotations

import numpy as np
from gz_compat import add_link_world_wrenches_each, iter_elements, link_world_states, param, peer, register_peer, sim

from eels_gz.description.model import RobotModel
from eels_gz.snake.tethers import Tether, attachment_points, tether_from_attributes, tether_wrenches
from eels_gz.steps import step_start

PLUGIN = "tethers"


class Tethers:
    def configure(self, entity, sdf, ecm, event_mgr):
        tethers = []
        for k, el in enumerate(iter_elements(sdf, "tether")):
            def get(key, el=el):
                value, found = el.get_string(key, "")
                return value if found else None

            tethers.append(tether_from_attributes(get, f"{PLUGIN}: <tether> {k + 1}"))
        if not tethers:
            raise ValueError(f"{PLUGIN}: the <plugin> has no <tether> element (a scenario's 'tethers:' writes them)")
        urdf_file = param(sdf, "get_string", "description_file", PLUGIN)
        with open(urdf_file) as f:
            urdf = f.read()
        self.model = sim.Model(entity)
        self.setup(ecm, tethers, urdf, urdf_file)
        register_peer(entity, PLUGIN, self, ecm)

    def setup(self, ecm, tethers: list[Tether], urdf: str, source: str) -> None:
        """Attach ``tethers`` to the model's links (``urdf``: its description, for merged links)."""
        model = self.model
        robot = RobotModel.from_urdf(urdf, source)
        self.tethers = tethers
        self.links, points = [], []
        for t in tethers:
            carrier, T = robot.fixed_carrier(t.link, lambda n: bool(model.link_by_name(ecm, n)))
            link = sim.Link(model.link_by_name(ecm, carrier))
            link.enable_velocity_checks(ecm, True)
            self.links.append(link)
            points.append((T @ np.r_[t.point, 1.0])[:3])
        n = len(tethers)
        self.point = np.array(points, float).reshape(n, 3)
        self.anchor = np.array([t.anchor if t.anchor is not None else (np.nan,) * 3 for t in tethers], float)
        self.auto = np.array([t.anchor is None for t in tethers])
        self._anchoring = bool(self.auto.any())  # auto anchors still to take (a bool: checked every step)
        self.kcl = np.array([[t.stiffness, t.damping, t.length] for t in tethers], float)
        self.force, self.moment = np.zeros((n, 3)), np.zeros((n, 3))
        self.scale = 1.0

    @property
    def anchored(self) -> bool:
        """Whether every anchor is set (an ``auto`` one on this system's first step): a system that
        watches the tethers reads their forces from then on, so as not to take the anchors itself."""
        return not self._anchoring

    def wrenches(self, ecm):
        """``(force, moment)`` (n, 3) arrays, N and N m, world: each tether's force at the state now
        and its moment about its link's origin (unscaled), or None while the links' state is not
        reported. The arrays are this system's, overwritten by the next call."""
        return self.wrenches_at(link_world_states(ecm, self.links))

    def wrenches_at(self, states):
        """:meth:`wrenches` from ``link_world_states(ecm, self.links)`` (None gives None)."""
        if states is None:
            return None
        pos, rot, lin, ang = states
        if self._anchoring:  # anchored where the points are when the run starts
            self.anchor[self.auto] = attachment_points(pos, rot, self.point)[self.auto]
            self.auto[:] = False
            self._anchoring = False
        tether_wrenches(pos, rot, lin, ang, self.point, self.anchor, self.kcl, self.force, self.moment)
        return self.force, self.moment

    def pre_update(self, info, ecm):
        if info.paused:
            return
        out = self.wrenches(ecm)
        if out is None or self.scale == 0.0:
            return
        force, moment = out
        if self.scale != 1.0:
            force, moment = self.scale * force, self.scale * moment
        # Link.add_world_wrench per tether, not the host's batch: the batch applies wrenches as generalized
        # forces, which the force-torque sensors (a weld joint's body force) do not see; a few links only
        add_link_world_wrenches_each(ecm, self.links, force, moment)


class TetherWatch:
    """What a scenario's watching system (hang, tube_dangle) records of its model's tethers system
    (peer ``"tethers"``): after every step, once the tethers are anchored, the step's time (``t``, s
    after the run's first step) and the tethers' forces at the new state (``forces``, (n, 3) N on the
    robot each). Call :meth:`start` in ``pre_update`` and :meth:`record` in ``post_update``."""

    def __init__(self, entity, where: str):
        self.entity, self.where = entity, where
        self.tethers: Tethers | None = None
        self.t0: float | None = None
        self.t: list[float] = []
        self.forces: list[np.ndarray] = []

    def start(self, info, ecm) -> None:
        if self.t0 is None:  # the run's first step (after any placement)
            self.t0 = step_start(info)
            self.tethers = peer(self.entity, PLUGIN, ecm)
            if self.tethers is None:
                raise ValueError(f"{self.where}: the robot has no tethers system (the scenario's systems: must "
                                 "name 'tethers')")

    def record(self, info, ecm) -> float | None:
        """Record this step; its time, or None when nothing was recorded (paused, not started, the
        tethers not yet anchored: a watcher never takes an anchor itself, or their links unreported)."""
        if info.paused or self.t0 is None or not self.tethers.anchored:
            return None
        out = self.tethers.wrenches_at(link_world_states(ecm, self.tethers.links))
        if out is None:
            return None
        t = info.sim_time.total_seconds() - self.t0
        self.t.append(t)
        self.forces.append(out[0].copy())
        return t

    @property
    def count(self) -> int:
        """How many tethers there are (0 before the first step)."""
        return len(self.tethers.tethers) if self.tethers is not None else 0


def get_system():
    return Tethers()
