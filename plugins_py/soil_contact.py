"""gz-sim Python system: rigid wheels on soft soil (issue 34; eels_gz.soil).

Replaces the engine's contact on each wheel it names by the terramechanics
model of ``eels_gz.soil`` (Bekker pressure-sinkage with Ding's slip-sinkage,
the Wong-Reece stresses, Janosi-Hanamoto shear, Ishigami's lateral force and
bulldozing, the lugs' passive thrust and the shear at the lug tips or the
wheel-grain interface, issue 44): every
``pre_update`` it reads the wheel links' poses and velocities, queries the
terrain's distance field at the wheel centres, and applies one
``Link.add_world_wrench`` per wheel.

Parameters (in its ``<plugin>`` element):

- ``<wheel link= radius= width= lug_height= lug_count=/>``, repeated: the
  wheel links, each a cylinder about its link's y axis centred on the link
  origin; radius (m) to the grouser tips, width (m), and optionally its lugs'
  height above the rim (m) and count (a smooth rim without them);
- ``<grousers>`` (optional, true): false takes every wheel as the cylinder
  through its lug tips with the soil's own strength and no lug thrust (the
  model before issue 44; the campaign's grouser-off measurement);
- ``<soil_params>``: a name in config/soil/ or a YAML path (required: a soil
  has no sensible default);
- ``<world_file>``: the SDF world whose terrain is the soil surface (its
  distance fields or planes, and its ``<gravity>``).

While it is active the wheels' own collisions must be off (``collide_bitmask``
0 on each wheel link, written next to this block), so contact is never
counted twice. Until the first physics update after ``configure`` gz-sim
reports zero link velocities; the soil force is computed with them.
``reset`` (a world reset) clears the wheels' shear displacements.
"""

from __future__ import annotations

from contact_system import ContactSystem
from gz_compat import iter_elements, param, sim, watched_link

from eels_gz.soil.contact import SoilContactStep, world_gravity
from eels_gz.soil.params import load_soil_params

PLUGIN = "soil_contact"


class SoilContact(ContactSystem):
    PLUGIN = PLUGIN

    def configure(self, entity, sdf, ecm, event_mgr):
        model = sim.Model(entity)
        self.links, radius, width, lug_height, lug_count = [], [], [], [], []
        for el in iter_elements(sdf, "wheel"):
            name = param(el, "get_string", "link", PLUGIN)
            radius.append(param(el, "get_double", "radius", PLUGIN))
            width.append(param(el, "get_double", "width", PLUGIN))
            lug_height.append(el.get_double("lug_height", 0.0)[0])
            lug_count.append(el.get_int("lug_count", 0)[0])
            self.links.append(watched_link(model, ecm, name, f"wheel link '{name}'", PLUGIN))
        self.links_read("wheel")
        world_file, self.terrain = self.terrain_of(sdf, "the soil")
        self.params = self.param_set(sdf, ecm, "soil_params", load_soil_params,
                                     what="a soil set in config/soil/ or a YAML path")
        grousers, _ = sdf.get_bool("grousers", True)
        try:
            self.contact = SoilContactStep(radius, width, self.params, world_gravity(world_file), lug_height,
                                           lug_count, bool(grousers))
        except ValueError as exc:
            raise ValueError(f"{PLUGIN}: {exc}") from None

    def wrenches(self, states, dt):
        pos, rot, lin, ang = states
        return self.contact(self.terrain, pos, rot, lin, ang, dt)


def get_system():
    return SoilContact()
