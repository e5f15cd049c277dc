"""Points fixed in the robot's bodies, for host-side work before the run (the placement's settling
springs, eels_gz.dart.terrain_start.settle): their world positions and velocities, forces at them for a step,
the robot's body origins and joint positions, read from and applied to the engine here, the DART
adapter, so that run orchestration never touches the engine."""

from __future__ import annotations

import numpy as np


class BodyPoints:
    """Points fixed in the robot's bodies: link names and link-frame offsets (N, 3), mapped once to
    their DART bodies (links merged by the optimizer followed to their bodies)."""

    def __init__(self, sim, links: tuple[str, ...], offsets: np.ndarray):
        skel = sim.robot_skeleton
        names: list[str] = []
        index = np.empty(len(links), dtype=int)
        p_body = np.empty((len(links), 3))
        for k, (link, p) in enumerate(zip(links, np.asarray(offsets, float))):
            frame = sim.robot_frames.get(link)
            name = frame.body if frame else link
            if name not in names:
                names.append(name)
            index[k] = names.index(name)
            p_body[k] = (frame.pose @ np.r_[p, 1.0])[:3] if frame else p
        self.bodies = [skel.getBodyNode(n) for n in names]
        self.index, self.p_body = index, p_body

    def transforms(self) -> np.ndarray:
        return np.array([b.getWorldTransform().matrix() for b in self.bodies])

    def world(self, T: np.ndarray | None = None) -> np.ndarray:
        """World positions (N, 3) at the current state."""
        T = self.transforms() if T is None else T
        Ti = T[self.index]
        return np.einsum("nij,nj->ni", Ti[:, :3, :3], self.p_body) + Ti[:, :3, 3]

    def velocities(self, T: np.ndarray | None = None) -> np.ndarray:
        """World velocities (N, 3) of the points at the current state."""
        T = self.transforms() if T is None else T
        v = np.array([b.getLinearVelocity() for b in self.bodies])
        w = np.array([b.getAngularVelocity() for b in self.bodies])
        lever = self.world(T) - T[self.index, :3, 3]
        return v[self.index] + np.cross(w[self.index], lever)

    def apply(self, forces: np.ndarray) -> None:
        """World ``forces`` (N, 3) at the points for one step: one force at each
        body origin plus the world moment about it."""
        T = self.transforms()
        lever = self.world(T) - T[self.index, :3, 3]
        f_sum = np.zeros((len(self.bodies), 3))
        m_sum = np.zeros((len(self.bodies), 3))
        np.add.at(f_sum, self.index, forces)
        np.add.at(m_sum, self.index, np.cross(lever, forces))
        zero = np.zeros(3)
        for body, f, m in zip(self.bodies, f_sum, m_sum):
            body.addExtForce(f, zero, False, True)
            body.addExtTorque(m, False)


def body_origins(sim) -> np.ndarray:
    """World positions (B, 3) of every robot body origin: they move only when
    the robot does (a spinning screw's surface points move, its origin not)."""
    skel = sim.robot_skeleton
    return np.array([skel.getBodyNode(i).getWorldTransform().translation() for i in range(skel.getNumBodyNodes())])


def joint_positions(sim, names) -> dict[str, float]:
    """Position (rad or m) of each 1-DOF robot joint of ``names`` that the model has."""
    skel = sim.robot_skeleton
    q = skel.getPositions()
    out = {}
    for name in names:
        joint = skel.getJoint(name)
        if joint is not None and joint.getNumDofs() == 1:
            out[name] = float(q[joint.getIndexInSkeleton(0)])
    return out
