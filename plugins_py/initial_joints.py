"""gz-sim Python system: the robot's initial joint positions, set once when it is loaded.

``ros_gz_sim create`` spawns a model with every joint at zero; a rover
placed on uneven terrain (``pose: auto``, eels_gz.spawn) rests with its
suspension bent. launch/sim.launch.py adds this system to the description
it spawns, with the angles the placement found, so the robot starts at rest
in Gazebo as in the embedded host.

Parameters: one ``<joint name="..." position="..."/>`` per joint (rad, or m
for a prismatic joint); a name the model lacks is an error naming it.
``configure`` sets them with ``Joint.reset_position`` (gz-sim applies it at
the next physics update, before the first step).
"""

from __future__ import annotations

from gz_compat import iter_elements, param, sim

PLUGIN = "initial_joints"


class InitialJoints:
    def configure(self, entity, sdf, ecm, event_mgr):
        model = sim.Model(entity)
        self.positions = {}
        for el in iter_elements(sdf, "joint"):
            name = param(el, "get_string", "name", PLUGIN)
            joint = model.joint_by_name(ecm, name)
            if not joint:  # kNullEntity (0)
                raise ValueError(f"{PLUGIN}: joint '{name}' is not a joint of model '{model.name(ecm)}'")
            self.positions[name] = param(el, "get_double", "position", PLUGIN)
            sim.Joint(joint).reset_position(ecm, [self.positions[name]])


def get_system():
    return InitialJoints()
