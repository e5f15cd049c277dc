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
Until the first physics update after ``configure`` gz-sim reports zero link
velocities; the contact is computed with them (a robot starts at rest).
``reset`` (a world reset) clears the per-point contact state (bristles, rolling seats).
The friction across the thread is integrated implicitly (``eels_gz.contact.implicit``) with each
point's mobility from its screw link's own mass and inertia, read in ``configure`` through
``Link.world_inertial``.
"""

from __future__ import annotations

import numpy as np
from contact_system import ContactSystem
from gz_compat import iter_elements, link_world_inertials, param, register_peer, sim, watched_link

from eels_gz.contact.implicit import link_mobility
from eels_gz.contact.params import DEFAULT, load_contact_params
from eels_gz.contact.screw_points import ScrewGeometry, ScrewPointSet
from eels_gz.contact.screw_wrenches import ScrewContactStep

PLUGIN = "screw_contact"


class ScrewContact(ContactSystem):
    PLUGIN = PLUGIN

    def configure(self, entity, sdf, ecm, event_mgr):
        model = sim.Model(entity)
        self.links, geoms = [], []
        for el in iter_elements(sdf, "screw"):
            name = param(el, "get_string", "link", PLUGIN)
            radius, length, lead_angle, hand = (param(el, "get_double", k, PLUGIN)
                                                for k in ("radius", "length", "lead_angle", "handedness"))
            geoms.append(ScrewGeometry(radius=radius, length=length, lead_angle=lead_angle,
                                       handedness=int(round(hand)), name=name))
            self.links.append(watched_link(model, ecm, name, f"screw link '{name}'", PLUGIN))
        self.links_read("screw")
        self.params = self.param_set(sdf, ecm, "contact_params", load_contact_params, DEFAULT)
        self.points = ScrewPointSet.from_geometries(geoms, self.params.points_axial, self.params.points_ring)
        _, self.terrain = self.terrain_of(sdf, "the ground it touches")
        n = len(self.links)
        self.pos, self.rot = np.zeros((n, 3)), np.zeros((n, 3, 3))
        self.lin, self.ang = np.zeros((n, 3)), np.zeros((n, 3))
        # the screw links' own mass and inertia (in their link frames): the implicit step of the friction
        # across the thread (eels_gz.contact.implicit) needs each contact point's mobility
        mass, com, moi = link_world_inertials(ecm, self.links)
        pos, rot = _link_poses(ecm, self.links)
        self.contact = ScrewContactStep(self.points, self.params, self.terrain, link_mobility(mass, com, moi, pos, rot))
        # per contact point: the stick-slip bristle (m, world) and the rolling seat state (eels_gz.contact.kernel)
        self.stick = self.contact.stick
        register_peer(entity, PLUGIN, self, ecm)  # the scenario systems' peer (gz_compat.peer)

    def wrenches(self, states, dt):
        # each screw's ring of points anchored on the terrain side of its axis, the terrain queried there
        self.pos, self.rot, self.lin, self.ang = states
        return self.contact(self.pos, self.rot, self.lin, self.ang, dt)


def _link_poses(ecm, links):
    """World positions (S, 3) and rotations (S, 3, 3) of the links' frames."""
    from eels_gz.contact.frames import rotation_matrix

    pos, rot = np.zeros((len(links), 3)), np.zeros((len(links), 3, 3))
    for k, link in enumerate(links):
        pose = link.world_pose(ecm)
        p, q = pose.pos(), pose.rot()
        pos[k] = (p.x(), p.y(), p.z())
        rot[k] = rotation_matrix(q.w(), q.x(), q.y(), q.z())
    return pos, rot


def get_system():
    return ScrewContact()
