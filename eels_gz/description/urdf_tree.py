"""Helpers on URDF text for the Python systems (``plugins_py/``), which read the robot's URDF file
themselves under Gazebo: each reads the text once into a
:class:`~eels_gz.description.model.RobotModel`; code that holds a model uses it directly."""

from __future__ import annotations

from eels_gz.description.model import RobotModel


def root_link(urdf: str, source: str = "<urdf>") -> str:
    """The root link of a URDF: the one link no joint has as its child."""
    return RobotModel.from_urdf(urdf, source).root


def fixed_carrier(urdf: str, link: str, present, source: str = "<urdf>"):
    """The link that carries ``link`` in a model whose fixed joints may have been merged (gz-sim's
    URDF import lumps a link into its parent across a fixed joint; so does the embedded host's
    optimizer): ``(carrier, T_carrier_link)``, the first of ``link`` and its ancestors across fixed
    joints for which ``present(name)`` is true, and the pose (4x4) of ``link`` in it. A link that is not
    in the URDF, or one reached only across a moving joint, is a DescriptionError naming it."""
    import numpy as np

    from eels_gz.description.optimizer import read_origin
    from eels_gz.errors import DescriptionError

    model = RobotModel.from_urdf(urdf, source)
    if link not in model.link_elements:
        raise DescriptionError(f"{source}: '{link}' is not a link of the robot")
    T = np.eye(4)
    name = link
    while not present(name):
        joint = model.parent_joint.get(name)
        if joint is None or model.joints[joint].type != "fixed":
            raise DescriptionError(f"{source}: link '{link}' is not a link of the simulated model, nor fixed to one")
        T = read_origin(model.joint_elements[joint], f"joint '{joint}'", source) @ T
        name = model.joints[joint].parent
    return name, T


def total_mass(urdf: str, source: str = "<urdf>") -> float:
    """The robot's mass (kg): :attr:`RobotModel.total_mass` of URDF text."""
    return RobotModel.from_urdf(urdf, source).total_mass
