"""Probe spheres for world tests: many probes in one DART world, so a test
steps the physics once for all spots."""

from __future__ import annotations

import dartpy as dart
import numpy as np

from eels_gz.dart.dart_build import isometry

PROBE_RADIUS = 0.05  # m
PROBE_MASS = 1.0  # kg


def _inertia(mass: float, radius: float):
    return dart.dynamics.Inertia(mass, np.zeros(3), np.eye(3) * 0.4 * mass * radius**2)


def add_slider_probe(world, name: str, x: float, y: float, z0: float, radius: float = PROBE_RADIUS):
    """A sphere on a vertical prismatic joint at (x, y): it can only fall straight
    down, so it rests at the height where it first touches the terrain (no rolling
    down a slope). Returns the skeleton; its only position is the centre's z (m)."""
    skel = dart.dynamics.Skeleton(name)
    joint, body = skel.createPrismaticJointAndBodyNodePair()
    joint.setAxis(np.array([0.0, 0.0, 1.0]))
    T = np.eye(4)
    T[:2, 3] = (x, y)
    joint.setTransformFromParentBodyNode(isometry(T))
    body.setInertia(_inertia(PROBE_MASS, radius))
    node = body.createShapeNode(dart.dynamics.SphereShape(radius))
    node.createCollisionAspect()
    node.createDynamicsAspect()
    skel.setPositions(np.array([z0]))
    world.addSkeleton(skel)
    return skel


def add_free_probe(world, name: str, p0, radius: float = PROBE_RADIUS):
    """A free sphere at ``p0`` (m); returns its body node."""
    skel = dart.dynamics.Skeleton(name)
    joint, body = skel.createFreeJointAndBodyNodePair()
    body.setInertia(_inertia(PROBE_MASS, radius))
    node = body.createShapeNode(dart.dynamics.SphereShape(radius))
    node.createCollisionAspect()
    node.createDynamicsAspect()
    T = np.eye(4)
    T[:3, 3] = p0
    joint.setPositions(dart.dynamics.FreeJoint.convertToPositions(isometry(T)))
    world.addSkeleton(skel)
    return body


def touch_height(height, x: float, y: float, radius: float = PROBE_RADIUS, n: int = 4000) -> float:
    """Height (m) of the centre of a sphere lowered straight down at (x, y) until it
    touches the surface z = height(x, y): max over the disk of
    ``height(q) + sqrt(radius^2 - |q - (x, y)|^2)``. On a plane of slope theta this is
    ``h + radius / cos(theta)``, on flat ground ``h + radius``. Sampled on a
    sunflower pattern of ``n`` points (spacing ~ radius * 1.8 / sqrt(n) = 1.4 mm for
    the defaults; the error of the max is second order in that spacing)."""
    k = np.arange(n) + 0.5
    rho = radius * np.sqrt(k / n)
    phi = k * np.pi * (3 - np.sqrt(5))
    qx, qy = x + rho * np.cos(phi), y + rho * np.sin(phi)
    z = np.asarray(height(qx, qy)) + np.sqrt(radius**2 - rho**2)
    return float(max(z.max(), height(np.array([x]), np.array([y]))[0] + radius))
