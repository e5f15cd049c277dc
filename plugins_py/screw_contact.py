"""gz-sim Python system: the EELS screw-ice contact (EELS-DARTS §2.2.2).

Replaces the engine's isotropic contact on each screw by the anisotropic
penalty model of ``eels_gz.contact``: every ``pre_update`` it reads the screw
links' poses and velocities, queries the terrain's distance field at the
contact points, and applies one ``Link.add_world_wrench`` per screw.

Parameters (in its ``<plugin>`` element; urdf/eels.gazebo.xacro writes them
from the same variant record as the screw links):

- ``<screw link= radius= length= lead_angle= handedness=/>``, repeated: the
  screw links and their geometry (m, rad, +1 right / -1 left);
- ``<contact_params>``: a name in config/contact/ (default ``ice``) or a YAML
  path;
- ``<world_file>``: the SDF world whose terrain models carry the distance
  fields (see models/README.md).

While it is active the screws' own collisions are off (``collide_bitmask``
0), so contact is never counted twice; shells keep their native contact.
"""

from __future__ import annotations

import numpy as np
from gz_compat import add_link_world_wrenches, iter_elements, link_world_states, sim

from eels_gz.contact.kernel import new_contact_state, screw_wrenches
from eels_gz.contact.params import DEFAULT, load_contact_params
from eels_gz.contact.screw_points import ScrewGeometry, ScrewPointSet
from eels_gz.terrain.writers import find_terrain_field



class ScrewContact:
    def configure(self, entity, sdf, ecm, event_mgr):
        model = sim.Model(entity)
        self.links, geoms = [], []
        for el in iter_elements(sdf, "screw"):
            name = el.get_string("link")
            link_entity = model.link_by_name(ecm, name)
            if not link_entity:
                raise ValueError(f"screw_contact: screw link '{name}' is not a link of model "
                                 f"'{model.name(ecm)}'")
            geoms.append(ScrewGeometry(radius=el.get_double("radius"), length=el.get_double("length"),
                                       lead_angle=el.get_double("lead_angle"),
                                       handedness=int(round(el.get_double("handedness"))), name=name))
            link = sim.Link(link_entity)
            link.enable_velocity_checks(ecm, True)
            self.links.append(link)
        if not self.links:
            raise ValueError("screw_contact needs at least one <screw link=... /> element")
        params_name, _ = sdf.get_string("contact_params", DEFAULT)
        self.params = load_contact_params(params_name or DEFAULT)
        self.points = ScrewPointSet.from_geometries(geoms, self.params.points_axial, self.params.points_ring)
        world_file, found = sdf.get_string("world_file", "")
        if not found or not world_file:
            raise ValueError("screw_contact needs <world_file>: the SDF world whose terrain it touches")
        self.terrain = find_terrain_field(world_file)
        if self.terrain is None:
            raise ValueError(f"screw_contact: world '{world_file}' has no terrain distance field or plane")
        n = len(self.links)
        self.pos, self.rot = np.zeros((n, 3)), np.zeros((n, 3, 3))
        self.lin, self.ang = np.zeros((n, 3)), np.zeros((n, 3))
        self.last = None  # the last ScrewWrenches, for logging and tests
        # bristle displacements of the stick-slip law (used when stick_length > 0), m, world
        self.stick = new_contact_state(self.points)

    def pre_update(self, info, ecm):
        if info.paused:
            return
        states = link_world_states(ecm, self.links)
        if states is None:
            return  # velocities are reported from the step after the checks were enabled
        self.pos, self.rot, self.lin, self.ang = states
        # anchor each screw's ring of points on the terrain side of its axis
        _, normal = self.terrain.query(self.pos)
        out = screw_wrenches(self.points, self.params, self.pos, self.rot, self.lin, self.ang,
                             self.terrain.query, -normal, self.stick, info.dt.total_seconds())
        self.last = out
        add_link_world_wrenches(ecm, self.links, out.force, out.torque)


def get_system():
    return ScrewContact()
