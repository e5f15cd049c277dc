"""gz-sim Python system: joint pairs held on a mimic relation by a stiff spring-damper.

Gazebo's default engine (DART through gz-physics 7) drops URDF ``<mimic>``
constraints: gz-sim 8's Physics logs "the chosen physics engine does not
support mimic constraints" and creates none. A rover's differential, whose
follower leg mimics the leader with multiplier -1, would then leave the
body free to pitch between its legs. This system holds each pair on
``q_f = m q_l + offset`` with eels_gz.control.coupling (equal and opposite
generalized forces, so the pair does no net work). The embedded host drops
``<mimic>`` as gz-sim does (``physics.mimic: none``), so this system holds
the pair there too; with ``physics.mimic: exact`` the host enforces it and
the error and the torques stay zero.

Parameters: ``<couple leader= follower= multiplier= offset=/>`` (repeated),
``<stiffness>`` (N m/rad) and ``<damping>`` (N m s/rad), which
urdf/rover.gazebo.xacro writes from config/rover_control.yaml.
"""

from __future__ import annotations

import numpy as np
from gz_compat import iter_elements, joint_states, param, set_joint_forces, sim

from eels_gz.control.coupling import CouplingGains, coupling_torques

PLUGIN = "joint_coupling"


class JointCoupling:
    def configure(self, entity, sdf, ecm, event_mgr):
        model = sim.Model(entity)
        leaders, followers, mult, offset = [], [], [], []
        for el in iter_elements(sdf, "couple"):
            for key, out in (("leader", leaders), ("follower", followers)):
                name = param(el, "get_string", key, PLUGIN)
                joint = model.joint_by_name(ecm, name)
                if not joint:
                    raise ValueError(f"{PLUGIN}: <couple {key}='{name}'> is not a joint of model '{model.name(ecm)}'")
                out.append(sim.Joint(joint))
            mult.append(param(el, "get_double", "multiplier", PLUGIN))
            offset.append(param(el, "get_double", "offset", PLUGIN))
        if not leaders:
            raise ValueError(f"{PLUGIN}: no <couple> entry")
        self.gains = CouplingGains(param(sdf, "get_double", "stiffness", PLUGIN),
                                   param(sdf, "get_double", "damping", PLUGIN))
        self.leaders, self.followers = leaders, followers
        self.mult, self.offset = np.array(mult), np.array(offset)
        for j in leaders + followers:
            j.enable_position_check(ecm)
            j.enable_velocity_check(ecm)

    def pre_update(self, info, ecm):
        if info.paused:
            return
        lead, follow = joint_states(ecm, self.leaders), joint_states(ecm, self.followers)
        if lead is None or follow is None:
            return  # joint states are reported from the first physics update after the checks
        tau_l, tau_f = coupling_torques(lead[0], lead[1], follow[0], follow[1], self.mult, self.offset, self.gains)
        set_joint_forces(ecm, self.leaders, tau_l)
        set_joint_forces(ecm, self.followers, tau_f)


def get_system():
    return JointCoupling()
