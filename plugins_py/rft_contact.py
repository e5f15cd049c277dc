"""gz-sim Python system: screws in granular ground through resistive force theory (issue 34, item 9).

Replaces the engine's contact on each screw by the RFT stresses of
``eels_gz.granular`` (Li, Zhang & Goldman 2013): every ``pre_update`` it reads
the screw links' poses and velocities, places the screws' surface elements
(core and blade, turning with the screw), queries the terrain's distance field
at them (its zero set is the grains' surface) and applies one
``Link.add_world_wrench`` per screw.

Parameters (in its ``<plugin>`` element; urdf/eels.gazebo.xacro writes them
from the same variant record as the screw links):

- ``<screw link= radius= root_radius= length= lead_angle= handedness=/>``,
  repeated: the screw links and their geometry (m, rad, +1 right / -1 left);
- ``<granular_params>``: a medium in config/granular/ or a YAML path
  (required: a medium has no sensible default);
- ``<world_file>``: the SDF world whose terrain is the grains' surface.

While it is active the screws' own collisions are off (``collide_bitmask``
0, written next to this block), so contact is never counted twice; shells
keep the engine's contact with the terrain. Until the first physics update
after ``configure`` gz-sim reports zero link velocities: RFT gives no stress
at rest, so nothing acts then. The wrench is integrated implicitly with each
screw link's own mass and inertia (``Link.world_inertial``, read in
``configure``; ``eels_gz.granular.implicit``); ``reset`` clears that step's
history.
"""

from __future__ import annotations

from contact_system import ContactSystem
from gz_compat import iter_elements, link_world_inertials, param, register_peer, sim, watched_link

from eels_gz.contact.screw_points import ScrewGeometry
from eels_gz.granular.implicit import smallest_inertia
from eels_gz.granular.params import load_granular_params
from eels_gz.granular.screw import GranularScrewStep

PLUGIN = "rft_contact"


class RftContact(ContactSystem):
    PLUGIN = PLUGIN

    def configure(self, entity, sdf, ecm, event_mgr):
        model = sim.Model(entity)
        self.links, geoms, roots = [], [], []
        for el in iter_elements(sdf, "screw"):
            name = param(el, "get_string", "link", PLUGIN)
            radius, root, length, lead_angle, hand = (
                param(el, "get_double", k, PLUGIN) for k in ("radius", "root_radius", "length", "lead_angle",
                                                              "handedness"))
            geoms.append(ScrewGeometry(radius=radius, length=length, lead_angle=lead_angle,
                                       handedness=int(round(hand)), name=name))
            roots.append(root)
            self.links.append(watched_link(model, ecm, name, f"screw link '{name}'", PLUGIN))
        self.links_read("screw")
        _, terrain = self.terrain_of(sdf, "the grains' surface")
        self.params = self.param_set(sdf, ecm, "granular_params", load_granular_params,
                                     what="a medium in config/granular/ or a YAML path")
        # the screw links' own mass and inertia: the implicit step of the rate-independent law needs them
        mass, _, moi = link_world_inertials(ecm, self.links)
        self.contact = GranularScrewStep(geoms, roots, self.params, terrain, mass=mass, inertia=smallest_inertia(moi))
        register_peer(entity, PLUGIN, self, ecm)

    def wrenches(self, states, dt):
        return self.contact(*states, dt)


def get_system():
    return RftContact()
