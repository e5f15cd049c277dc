"""The box, sphere and cylinder shapes of the robot's bodies, read from DART once, at their world poses:
what the host's ray-cast sensors (:mod:`eels_gz.dart.sensors`) and cameras (:mod:`eels_gz.dart.cameras`)
see of the robot."""

from __future__ import annotations

import numpy as np

from eels_gz.sensors.lidar import Shape, ShapeArrays, shape_arrays


class ShapeTable:
    """The box, sphere and cylinder shapes of some bodies, read from DART once: ``world()`` gives
    them at the bodies' current world poses (one batched product instead of a dartpy call per shape).
    A shape that repeats another of the same body exactly (kind, size and pose: a visual drawn as its
    collision) is kept once; a ray meets both at the same point."""

    _DART = {"BoxShape": "box", "SphereShape": "sphere", "CylinderShape": "cylinder"}

    def __init__(self, bodies):
        self.bodies = list(bodies)
        self.kinds, self.sizes, owners, local = [], [], [], []
        seen = set()
        for b in self.bodies:
            for k in range(b.getNumShapeNodes()):
                node = b.getShapeNode(k)
                s = node.getShape()
                kind = self._DART.get(s.getType())
                if kind is None:
                    continue
                size = (tuple(np.asarray(s.getSize(), dtype=float)) if kind == "box" else (float(s.getRadius()),)
                        if kind == "sphere" else (float(s.getRadius()), float(s.getHeight())))
                key = (b.getIndexInSkeleton(), kind, size, node.getRelativeTransform().matrix().tobytes())
                if key in seen:
                    continue
                seen.add(key)
                self.kinds.append(kind)
                self.sizes.append(size)
                owners.append(b)
                local.append(node.getRelativeTransform().matrix())
        self.owners = owners
        self.local = np.array(local).reshape(-1, 4, 4)
        skel = owners[0].getSkeleton() if owners else None
        self.index = np.array([b.getIndexInSkeleton() for b in owners], dtype=np.int64)
        self.skel = skel
        self._arrays: ShapeArrays | None = None

    def _world_T(self, body_T: np.ndarray | None) -> np.ndarray:
        T_b = (np.array([b.getWorldTransform().matrix() for b in self.owners]).reshape(-1, 4, 4) if body_T is None
               else body_T[self.index])
        return T_b @ self.local

    def world(self, body_T: np.ndarray | None = None) -> list[Shape]:
        """The shapes at their world poses; ``body_T`` (B, 4, 4): the skeleton's body poses when known."""
        if not self.kinds:
            return []
        T = self._world_T(body_T)
        return [Shape(k, s, T[i]) for i, (k, s) in enumerate(zip(self.kinds, self.sizes))]

    def arrays(self, body_T: np.ndarray | None = None) -> ShapeArrays:
        """``world()`` as the ray casters' arrays (kinds, sizes and bounding radii computed once)."""
        if self._arrays is None:
            self._arrays = shape_arrays(self.world(body_T))
        return self._arrays.moved(self._world_T(body_T)) if self.kinds else self._arrays


def robot_shapes(bodies) -> list[Shape]:
    """The box, sphere and cylinder shapes of ``bodies`` at their world poses (what ray-cast sensors see)."""
    return ShapeTable(bodies).world()


def _bodies(skel):
    return [skel.getBodyNode(i) for i in range(skel.getNumBodyNodes())]
