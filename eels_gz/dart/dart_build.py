"""Turn WorldSpec models and URDF robots into DART skeletons.

Conventions kept from gz-physics' DART plugin: SDF cylinders lie along z;
a ``<plane>`` collides as gz-physics' 2100 m cube whose top face is the
plane, whatever its ``<size>`` (DART's plane collisions are not supported by
every detector); friction is isotropic ``mu`` per shape, and DART takes the
smaller coefficient of the two shapes in contact.
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import dartpy as dart
import numpy as np

from eels_gz.errors import DescriptionError, SdfError
from eels_gz.sdf_reader import CollisionSpec, Geometry, ModelSpec

GZ_PLANE_SIZE = 2100.0  # m: the cube gz-physics 7 dartsim collides a <plane> as (SDFFeatures.cc, ConstructPlane)

DETECTORS = {
    "ode": dart.collision.OdeCollisionDetector,
    "bullet": dart.collision.BulletCollisionDetector,
    "fcl": dart.collision.FCLCollisionDetector,
    "dart": dart.collision.DARTCollisionDetector,
}


def isometry(T: np.ndarray) -> dart.math.Isometry3:
    iso = dart.math.Isometry3()
    iso.set_matrix(np.asarray(T, dtype=float))
    return iso


def make_detector(name: str):
    try:
        return DETECTORS[name]()
    except KeyError:
        raise SdfError(f"unknown collision detector '{name}'; expected one of {', '.join(DETECTORS)}") from None


def _mesh_shape(geometry: Geometry, where: str):
    """dartpy cannot build a MeshShape directly: load it through a one-link URDF."""
    sx, sy, sz = geometry.scale
    urdf = (
        '<robot name="mesh_loader"><link name="m"><collision><geometry>'
        f'<mesh filename="file://{Path(geometry.mesh_file).resolve()}" scale="{sx} {sy} {sz}"/>'
        "</geometry></collision></link></robot>"
    )
    skel = dart.utils.DartLoader().parseSkeletonString(urdf, "file:///")
    if skel is None or skel.getNumBodyNodes() == 0 or skel.getBodyNode(0).getNumShapeNodes() == 0:
        raise SdfError(f"cannot load mesh '{geometry.mesh_file}' (is it a readable STL, OBJ, DAE or PLY?)", where)
    return skel.getBodyNode(0).getShapeNode(0).getShape()


def make_shape(geometry: Geometry, where: str):
    """DART shape and its offset (4x4) in the collision frame."""
    offset = np.eye(4)
    if geometry.kind == "box":
        return dart.dynamics.BoxShape(np.array(geometry.size)), offset
    if geometry.kind == "sphere":
        return dart.dynamics.SphereShape(geometry.radius), offset
    if geometry.kind == "cylinder":
        return dart.dynamics.CylinderShape(geometry.radius, geometry.length), offset
    if geometry.kind == "plane":
        # As gz-physics 7's DART plugin builds it (dartsim/src/SDFFeatures.cc, ConstructPlane): a
        # 2100 m cube (the number osrf/gazebo used), turned by asin(|z x n| / |n|) about z x n and
        # shifted 1050 m down its own z, so that its top face is the plane. Not the plane's <size>:
        # ODE's box tests work in the box's frame, so the cube's size sets the round-off of every
        # contact depth and point (ulp(1050 m) = 2.3e-13 m), and a sliding robot amplifies that
        # (surface_traverse under stock contact parted from gz-sim at its touchdown: 1e-8 rad/s a
        # step later with a 1 m thick box, 1e-12 with this one). Like gz-physics, a normal with a
        # negative z is turned by the asin's angle below 90 degrees: a plane facing down faces up.
        n = np.asarray(geometry.normal, dtype=float)
        axis = np.cross(np.array([0.0, 0.0, 1.0]), n)
        norm = float(np.linalg.norm(axis))
        angle = math.asin(norm / float(np.linalg.norm(n)))
        R = np.eye(3)
        if angle > 1e-12:
            k = axis / norm
            K = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
            R = np.eye(3) + math.sin(angle) * K + (1.0 - math.cos(angle)) * (K @ K)
        offset[:3, :3] = R
        offset[:3, 3] = R @ np.array([0.0, 0.0, -0.5 * GZ_PLANE_SIZE])
        return dart.dynamics.BoxShape(np.full(3, GZ_PLANE_SIZE)), offset
    if geometry.kind == "mesh":
        return _mesh_shape(geometry, where), offset
    raise SdfError(f"unsupported geometry '{geometry.kind}'", where)


def add_collision(body, collision: CollisionSpec, where: str) -> None:
    if collision.surface.collide_bitmask != 0xFF:
        raise SdfError(
            f"collision '{collision.name}': <collide_bitmask> other than the default 0xff is not "
            "supported by the embedded host yet", where,
        )
    shape, offset = make_shape(collision.geometry, where)
    node = body.createShapeNode(shape)
    node.setName(collision.name)
    node.createCollisionAspect()
    node.createDynamicsAspect().setFrictionCoeff(collision.surface.mu)
    node.setRelativeTransform(isometry(collision.pose @ offset))


def build_model(model: ModelSpec):
    """A static model becomes welded bodies; a dynamic one a free body."""
    skel = dart.dynamics.Skeleton(model.name)
    for link in model.links:
        T = model.pose @ link.pose
        if model.static:
            joint, body = skel.createWeldJointAndBodyNodePair()
            joint.setTransformFromParentBodyNode(isometry(T))
        else:
            joint, body = skel.createFreeJointAndBodyNodePair()
            joint.setPositions(dart.dynamics.FreeJoint.convertToPositions(isometry(T)))
            inertial = link.inertial
            body.setInertia(dart.dynamics.Inertia(inertial.mass, inertial.pose[:3, 3],
                                                  inertial.pose[:3, :3] @ inertial.inertia @ inertial.pose[:3, :3].T))
        joint.setName(f"{link.name}_root")
        body.setName(link.name)
        for c in link.collisions:
            add_collision(body, c, model.file)
    if model.static:
        skel.setMobile(False)
    return skel


def load_urdf(urdf: str, name: str, source: str, package_dirs: dict[str, Path]):
    """Parse a URDF string into a skeleton; package:// URIs resolve through ``package_dirs``."""
    loader = dart.utils.DartLoader()
    for pkg, folder in package_dirs.items():
        loader.addPackageDirectory(pkg, str(folder))
    # the URDF parser reports errors on stdout/stderr and returns None
    with tempfile.NamedTemporaryFile("w", suffix=".urdf", delete=True) as f:
        f.write(urdf)
        f.flush()
        skel = loader.parseSkeleton("file://" + f.name)
    if skel is None:
        raise DescriptionError(f"{source}: DART could not parse the URDF (check links, joints and mesh paths)")
    skel.setName(name)
    for i in range(skel.getNumJoints()):
        skel.getJoint(i).setLimitEnforcement(True)
    return skel


def collision_box_corners(skel) -> np.ndarray:
    """World corners (N, 3) of the bounding boxes of the skeleton's collision shapes, in m: those of
    its description, including shapes taken out of collision (``collide_bitmask`` 0), which keep the
    DynamicsAspect that DART's loaders give collision shapes and never visuals."""
    out = []
    for b in range(skel.getNumBodyNodes()):
        body = skel.getBodyNode(b)
        for s in range(body.getNumShapeNodes()):
            node = body.getShapeNode(s)
            if not (node.hasCollisionAspect() or node.hasDynamicsAspect()):
                continue
            box = node.getShape().getBoundingBox()
            lo, hi = box.getMin(), box.getMax()
            corners = np.array([[x, y, z, 1.0] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])])
            out.append((node.getWorldTransform().matrix() @ corners.T)[:3].T)
    return np.vstack(out) if out else np.zeros((0, 3))


def lowest_collision_z(skel) -> float:
    """Lowest world z of the skeleton's collision shapes (bounding boxes), in m."""
    corners = collision_box_corners(skel)
    return float(corners[:, 2].min()) if len(corners) else np.inf
