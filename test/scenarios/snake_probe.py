"""Test helper: an EELS robot in the embedded host read and placed straight from the engine (DART), for tests
that check the scenario systems' gz-API readings against it. Not part of the package: the scenario systems
read the robot through plugins_py/snake_io.py.

:class:`SnakeHost` ties a :class:`~eels_gz.dart.simulation.Simulation` to the
robot's :class:`~eels_gz.snake.chain.SnakeChain` (read from the loaded
description, so link and joint names are those of the xacro), the
joint-control plugin (set points) and the screw contact plugin (which screws
touch the terrain). Angles in rad, poses 4x4 in the world, SI units.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

import dartpy as dart
import numpy as np

from eels_gz.errors import ConfigError
from eels_gz.dart.dart_build import isometry
from eels_gz.snake.chain import SnakeChain, screw_geometries

log = logging.getLogger(__name__)


def system(sim, module: str):
    """The loaded gz-sim system object of plugin module ``module``, or None."""
    return next((s.system for s in sim.systems if s.module == module), None)


class SnakeHost:
    """Joint angles, base pose, set points and screw contact of the robot in ``sim``."""

    def __init__(self, sim, where: str = "scenario"):
        if sim.robot_skeleton is None or sim.robot_description is None:
            raise ConfigError(f"{where}: the simulation has no robot")
        self.sim = sim
        self.where = where
        desc = sim.robot_description
        self.chain = SnakeChain.from_urdf(desc.urdf, desc.source)
        self.screws = screw_geometries(desc.gazebo, desc.source)
        self.skel = sim.robot_skeleton
        self.joint_control = system(sim, "joint_control")
        if self.joint_control is None:
            raise ConfigError(f"{where}: the robot has no joint_control plugin to command its joints")
        self.screw_contact = system(sim, "screw_contact")
        self.dofs = {}
        for name in self.chain.joints:
            joint = self.skel.getJoint(name)
            if joint is not None and joint.getNumDofs() == 1:
                self.dofs[name] = joint.getIndexInSkeleton(0)
        self.shape_joints = [j for j in self.chain.bend_joints() + self.chain.twist_joints()]
        self.screw_actuators = sorted({self.chain.actuated(self.chain.joint(j).name)[0]
                                       for j in self.chain.screw_joints()})
        self.state = next(s for s in sim.states if s.skel is self.skel)

    # --- state ----------------------------------------------------------------------------
    def angles(self) -> dict[str, float]:
        """Current position (rad) of every 1-DOF chain joint."""
        q = self.skel.getPositions()
        return {n: float(q[i]) for n, i in self.dofs.items()}

    def base_pose(self) -> np.ndarray:
        return self.sim.frame_world_pose(self.chain.root)

    def down_in_base(self) -> np.ndarray:
        """Unit gravity direction in the base frame (straight down the base's -z without gravity)."""
        g = np.asarray(self.sim.world.getGravity(), float)
        n = float(np.linalg.norm(g))
        g = g / n if n > 0 else np.array([0.0, 0.0, -1.0])
        return self.base_pose()[:3, :3].T @ g

    def screws_in_contact(self) -> list[str]:
        """Screw links whose screw-contact load is positive this step ([] without the plugin)."""
        plugin = self.screw_contact
        if plugin is None or plugin.last is None:
            return []
        load = plugin.last.normal_force.sum(axis=1)
        return [n for n, f in zip(plugin.points.names, load) if f > 0.0]

    def command(self, positions: Mapping[str, float] | None = None,
                velocities: Mapping[str, float] | None = None) -> None:
        """Joint set points by name (position rad, velocity rad/s) through the joint-control plugin."""
        positions, velocities = positions or {}, velocities or {}
        names = sorted(positions.keys() | velocities.keys())
        if names:
            self.joint_control.set_targets(names, [float(positions.get(n, np.nan)) for n in names],
                                           [float(velocities.get(n, np.nan)) for n in names])

    def place(self, base_pose: np.ndarray, angles: Mapping[str, float]) -> None:
        """Teleport: base at ``base_pose`` (world), joints at ``angles``, every velocity zero;
        the joint controller then holds those angles."""
        q = self.skel.getPositions()
        for name, value in angles.items():
            if name not in self.dofs:
                raise ConfigError(f"{self.where}: joint '{name}' is not a 1-DOF joint of the robot")
            q[self.dofs[name]] = value
        self.skel.setPositions(q)
        frame = self.sim.robot_frames.get(self.chain.root)
        T = np.asarray(base_pose, float) @ (np.linalg.inv(frame.pose) if frame else np.eye(4))
        root = self.skel.getRootJoint()
        root.setPositions(dart.dynamics.FreeJoint.convertToPositions(isometry(T)))
        self.skel.setVelocities(np.zeros(self.skel.getNumDofs()))
        for c in self.sim.couplings:
            c.project_positions()
        for st in self.sim.states:
            st.refresh()
        self.command(positions={n: angles[n] for n in angles if n in self.shape_joints})
        jc = self.joint_control
        if getattr(jc, "q_hold", None) is not None:
            idx = {n: k for k, n in enumerate(jc.names)}
            for n, v in angles.items():
                if n in idx:
                    jc.q_hold[idx[n]] = v
