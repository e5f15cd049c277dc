"""Frame helpers shared by the contact plugin, the models, the sensors and the host: the quaternion
conversions they use, kept importable here; they live in :mod:`eels_gz.rotations`."""

from __future__ import annotations

from eels_gz.rotations import quat_from_matrix, rotation_matrix

__all__ = ["quat_from_matrix", "rotation_matrix"]
