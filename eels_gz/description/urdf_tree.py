"""Helpers on URDF text for the Python systems (``plugins_py/``), which read the robot's URDF file
themselves under Gazebo: each reads the text once into a
:class:`~eels_gz.description.model.RobotModel`; a system that needs more than one value builds the
model itself and asks it."""

from __future__ import annotations

from eels_gz.description.model import RobotModel


def root_link(urdf: str, source: str = "<urdf>") -> str:
    """The root link of a URDF: the one link no joint has as its child."""
    return RobotModel.from_urdf(urdf, source).root


def total_mass(urdf: str, source: str = "<urdf>") -> float:
    """The robot's mass (kg): :attr:`RobotModel.total_mass` of URDF text."""
    return RobotModel.from_urdf(urdf, source).total_mass
