"""The shell the contact systems share (``screw_contact``, ``soil_contact``, ``rft_contact``): not a
system itself, a module they import (gz-sim loads plugins_py/ modules by name).

A contact system replaces the engine's contact on some links of its model (screws or wheels) by a
model of ``eels_gz``: every ``pre_update`` it reads those links' world poses and velocities in one
batch, computes one wrench per link (``wrenches``, the model's own step) and applies them with
``Link.add_world_wrench`` for that step. Until the first physics update after ``configure`` gz-sim
reports zero link velocities, and the model is stepped with them; ``reset`` (a world reset) clears
the model's history. A system subclasses :class:`ContactSystem`, reads its parameters in its own
``configure`` with the helpers here, and gives ``wrenches``.
"""

from __future__ import annotations

from gz_compat import add_link_world_wrenches, link_world_states, resolved_set

from eels_gz.terrain.world_terrain import find_terrain_field


class ContactSystem:
    """``reset`` and ``pre_update`` of a contact system. Its ``configure`` sets ``self.links`` (the
    contact links, velocity checks on: gz_compat's ``watched_link``), checks them with
    :meth:`links_read`, and sets ``self.contact`` (the model, with ``reset()``)."""

    PLUGIN = ""  # the system's name in messages

    def links_read(self, element: str) -> None:
        """ValueError when ``configure`` found no ``<element link=... />`` entry; no states or wrenches yet."""
        if not self.links:
            raise ValueError(f"{self.PLUGIN} needs at least one <{element} link=... /> element")
        self.states = None  # the links' last states (pos, rot, lin, ang), for tests and benchmarks
        self.last = None  # the last wrenches, for logging and tests (overwritten every step)

    def terrain_of(self, sdf, what: str):
        """The world file ``<world_file>`` names and its terrain (distance fields or planes); ValueError
        naming the element when it is missing or the world has no terrain."""
        world_file, found = sdf.get_string("world_file", "")
        if not found or not world_file:
            raise ValueError(f"{self.PLUGIN} needs <world_file>: the SDF world whose terrain is {what}")
        terrain = find_terrain_field(world_file)
        if terrain is None:
            raise ValueError(f"{self.PLUGIN}: world '{world_file}' has no terrain distance field or plane")
        return world_file, terrain

    def param_set(self, sdf, ecm, element: str, load, default: str | None = None, what: str = ""):
        """The parameter set ``<element>`` names (``default`` when absent; without one the element is
        required, ValueError saying ``what`` it takes). In the embedded host a run hands its systems the
        sets it resolved (``ecm.param_sets``, the host context): the one resolved for this element and
        name is taken as it is; otherwise, and under Gazebo, ``load(name)`` reads the file."""
        name, _ = sdf.get_string(element, default or "")
        name = name or default
        if not name:
            raise ValueError(f"{self.PLUGIN} needs <{element}>: {what}")
        given = resolved_set(ecm, element, name)
        return given if given is not None else load(name)

    def reset(self, info, ecm):
        self.contact.reset()
        self.last = None

    def pre_update(self, info, ecm):
        if info.paused:
            return
        states = link_world_states(ecm, self.links)
        if states is None:
            return  # the velocity checks are off
        self.states = states  # (pos, rot, lin, ang): the batch's own arrays, overwritten next step
        out = self.last = self.wrenches(states, info.dt.total_seconds())
        add_link_world_wrenches(ecm, self.links, out.force, out.torque)

    def wrenches(self, states, dt: float):
        """The contact wrenches (``force``, ``torque``: (S, 3), world, at the link origins) for the links'
        ``states`` (pos, rot, lin, ang) over a step of ``dt`` s."""
        raise NotImplementedError
