"""Rover kinematics: ICR steering under steering limits, drive modes, least-squares
wheel odometry, wheels from the URDF, low-level drive control and placement on terrain.
Pure models: numpy/scipy only."""

from eels_gz.rover.odometry import WheelOdometry
from eels_gz.rover.steering import MODES, IcrSteering, SteeringCommand
from eels_gz.rover.wheels import Wheel

__all__ = ["MODES", "IcrSteering", "SteeringCommand", "Wheel", "WheelOdometry"]
