"""A ``<plane>`` collides in the host as gz-physics 7's DART plugin builds it (``dartsim/src/SDFFeatures.cc``,
``ConstructPlane``): a 2100 m cube, turned by ``asin(|z x n| / |n|)`` about ``z x n``, then shifted 1050 m down
its own z, whatever the plane's ``<size>``. The cube's size matters beyond its extent: ODE's box tests work in
the box's frame, so it sets the round-off of every contact depth (surface_traverse under stock contact parted
from gz-sim at its touchdown with a 1 m thick box; docs/gazebo.md)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from eels_gz.dart.dart_build import GZ_PLANE_SIZE, make_shape
from eels_gz.sdf_reader import Geometry


def gz_physics_plane(normal) -> np.ndarray:
    """The cube's transform by ConstructPlane's steps: Eigen's AngleAxis rotation, then a translation along
    the rotated z (Isometry3d::translate applies in the rotated frame)."""
    n = np.asarray(normal, float)
    axis = np.cross([0.0, 0.0, 1.0], n)
    norm = float(np.linalg.norm(axis))
    angle = math.asin(norm / float(np.linalg.norm(n)))
    T = np.eye(4)
    if angle > 1e-12:
        k = axis / norm
        K = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
        T[:3, :3] = np.eye(3) * math.cos(angle) + math.sin(angle) * K + (1.0 - math.cos(angle)) * np.outer(k, k)
    T[:3, 3] = T[:3, :3] @ [0.0, 0.0, -1050.0]
    return T


@pytest.mark.parametrize("normal", [(0.0, 0.0, 1.0), (0.0, 0.3, 1.0), (1.0, 0.0, 1.0), (0.0, 0.0, -1.0)])
def test_a_plane_is_gz_physics_cube(normal):
    shape, offset = make_shape(Geometry("plane", size=(200.0, 200.0), normal=normal), "test")
    assert GZ_PLANE_SIZE == 2100.0
    np.testing.assert_array_equal(shape.getSize(), [2100.0] * 3)  # not the plane's 200 x 200
    np.testing.assert_allclose(offset, gz_physics_plane(normal), rtol=0, atol=1e-12)
    if normal[2] > 0:  # the top face holds the origin and faces along the normal
        top = offset[:3, :3] @ [0.0, 0.0, 1.0]
        np.testing.assert_allclose(top, np.asarray(normal) / np.linalg.norm(normal), atol=1e-12)
        assert offset[:3, :3][:, 2] @ (offset[:3, 3] + offset[:3, :3] @ [0, 0, 1050.0]) == pytest.approx(0, abs=1e-9)
    else:  # as in gz-physics: asin's angle stays below 90 degrees, so a plane facing down faces up
        np.testing.assert_allclose(offset[:3, :3], np.eye(3))
