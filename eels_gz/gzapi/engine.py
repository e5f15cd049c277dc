"""What the gz-sim API imitation needs from a physics engine (the embedded host's ``eels_gz.dart``
implements it; nothing in ``gzapi/`` knows which engine it is).

Two protocols:

- :class:`Engine`, held by the host's ``EntityComponentManager`` (``ecm.engine``): per-link and
  per-joint reads and writes on the engine's own handles, which the ECM's records carry opaquely
  (``LinkRecord.body``, ``JointRecord.joint``);
- :class:`ModelState`, one per non-static model (``ModelRecord.state``): the model's generalized
  state read once per step, the command buffers the API writes, the link states physics last
  reported (what the Link API reads: gz-sim's ECM holds a link's pose and velocities only as of the
  last step that moved it beyond 1e-6), and the batched link access behind ``link_world_states`` /
  ``add_link_world_wrenches``.

Units are SI; poses are 4x4 homogeneous transforms in the world frame; vectors are (3,) arrays.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np


class Engine(Protocol):
    """Per-entity access to the engine's bodies (links) and joints."""

    def link_pose(self, body: Any) -> np.ndarray:
        """The link frame's world transform (4, 4)."""

    def link_local_com(self, body: Any) -> np.ndarray:
        """The centre of mass in the link frame (3,)."""

    def link_inertia(self, body: Any) -> tuple[float, np.ndarray]:
        """Mass (kg) and moment of inertia about the centre of mass (3, 3) in the link's axes."""

    def link_index(self, body: Any) -> int:
        """The body's index in its model's state (the batched access's indices)."""

    def link_linear_velocity(self, body: Any, offset: np.ndarray | None = None) -> np.ndarray:
        """World velocity of the link origin, or of the point at ``offset`` in the link frame."""

    def link_angular_velocity(self, body: Any) -> np.ndarray:
        """World angular velocity (3,)."""

    def add_link_force(self, body: Any, force: np.ndarray, offset: np.ndarray) -> None:
        """A world force at ``offset`` in the link frame, for the next step."""

    def add_link_torque(self, body: Any, torque: np.ndarray) -> None:
        """A world torque, for the next step."""

    def set_joint_positions(self, joint: Any, positions: np.ndarray) -> None:
        """Set the joint's coordinates now (``Joint.reset_position``)."""

    def set_joint_velocities(self, joint: Any, velocities: np.ndarray) -> None:
        """Set the joint's velocities now (``Joint.reset_velocity``)."""


class ModelState(Protocol):
    """One model's generalized state (refreshed after each physics step) and its command buffers."""

    q: np.ndarray  # generalized positions
    dq: np.ndarray  # generalized velocities
    tau: np.ndarray  # force commands for the next step (NaN: none)
    has_tau: bool
    vel_cmd: dict[int, float]  # DOF -> velocity command for the next step
    applied: np.ndarray | None  # generalized forces the last step applied from joint commands

    def refresh(self) -> None:
        """Read the state again (after it was set directly)."""

    def batchable(self) -> bool:
        """Whether the model's links can be read and pushed in one batch."""

    def reported_link(self, index: int) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """Body ``index``'s world transform (4, 4), the linear velocity of its origin and its angular
        velocity (3,) as physics last reported them to the ECM: gz-sim reports a link only after a step
        that moved it, or its model's canonical link, beyond 1e-6 (``eels_gz/gzapi/reported_links.py``).
        None until the first step after the start, a reset or a placement: the ECM then holds the state
        set, which the engine's per-link reads give. The arrays are the report's own: do not modify them."""

    def link_states(self, idx: np.ndarray, pos: np.ndarray, rot: np.ndarray, lin: np.ndarray,
                    ang: np.ndarray) -> None:
        """World positions (S, 3), rotations (S, 3, 3), linear and angular velocities (S, 3) of the
        bodies ``idx`` as the ECM holds them (``reported_link``'s, else the current state), into the
        given arrays."""

    def add_link_wrenches(self, idx: np.ndarray, forces: np.ndarray, torques: np.ndarray) -> bool:
        """World forces at the origins of bodies ``idx`` and torques (S, 3) for the next step; False
        when they cannot be applied in one batch (the caller applies them one link at a time)."""
