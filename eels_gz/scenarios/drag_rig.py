"""The ``drag_rig`` scenario (EELS-DARTS Fig. 6/7 drag tests, ``eels-gz calibrate simulate``): what is
not the gz-sim system ``plugins_py/drag_rig.py``.

One screw of urdf/drag_rig.urdf.xacro rests under a load on a free vertical slide, its spin held at
zero; after ``settle`` s the x-y carriages drag it at ``speed`` (m/s) along the world direction
(``dir_x``, ``dir_y``) for ``drag`` s. Over the last half of the drag the system averages the screw
contact's total normal force and the friction force against the motion (:class:`DragAverages`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from eels_gz.errors import ConfigError

# the top-level keys of the scenario's metrics.json
METRICS = ("normal_force_N", "drag_force_N", "samples", "min_normal_force_N", "direction")


def drag_direction(params: dict[str, float], source: str = "drag_rig") -> np.ndarray:
    """The unit drag direction (world x, y, 0) from the parameters ``dir_x``, ``dir_y``."""
    d = np.array([params.get("dir_x", 1.0), params.get("dir_y", 0.0), 0.0], dtype=float)
    n = float(np.linalg.norm(d))
    if not (math.isfinite(n) and n > 0):
        raise ConfigError(f"{source}: parameters dir_x, dir_y must give a direction, got {d[:2].tolist()}")
    return d / n


def in_window(t: float, settle: float, drag: float) -> bool:
    """Whether time ``t`` (s) is in the measuring window: the last half of the drag."""
    return settle + 0.5 * drag <= t < settle + drag


@dataclass
class DragAverages:
    """Running sums of the normal force (N) and of the drag force against the motion (N)."""

    direction: np.ndarray
    normal: list = field(default_factory=list)
    drag: list = field(default_factory=list)

    def add(self, normal_forces: np.ndarray, forces: np.ndarray) -> None:
        """One step: the contact's per-screw normal forces and world forces (S, 3) on the screws."""
        self.normal.append(float(np.sum(normal_forces)))
        self.drag.append(float(-np.asarray(forces)[0] @ self.direction))

    def metrics(self, direction_name: str) -> dict:
        return {"normal_force_N": float(np.mean(self.normal)) if self.normal else None,
                "drag_force_N": float(np.mean(self.drag)) if self.drag else None,
                "samples": len(self.normal), "min_normal_force_N": float(np.min(self.normal)) if self.normal else None,
                "direction": direction_name}
