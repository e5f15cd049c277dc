"""A ``<plane>`` collides in the host as gz-physics 7's DART plugin builds it (``dartsim/src/SDFFeatures.cc``,
``ConstructPlane``): a 2100 m cube, turned by ``asin(|z x n| / |n|)`` about ``z x n``, then shifted 1050 m down
its own z, whatever the plane's ``<size>``. The cube's size matters beyond its extent: ODE's box tests work in
the box's frame, so it sets the round-off of every contact depth (surface_traverse under stock contact parted
from gz-sim at its touchdown with a 1 m thick box; docs/gazebo.md)."""

from __future__ import annotations

import numpy as np
import pytest

from eels_gz.dart.dart_build import GZ_PLANE_SIZE, make_shape
from eels_gz.sdf_reader import Geometry


@pytest.mark.parametrize("normal", [(0.0, 0.0, 1.0), (0.0, 0.3, 1.0), (1.0, 0.0, 1.0), (0.0, 0.0, -1.0)])
def test_a_plane_is_gz_physics_cube(normal):
    """ConstructPlane's cube, by its properties: 2100 m, centred 1050 m below the plane along its own z;
    for a normal with a positive z, the rotation about z x n that takes z onto n (unique: it keeps its axis
    and turns z onto n), so the top face holds the origin and faces along n."""
    shape, offset = make_shape(Geometry("plane", size=(200.0, 200.0), normal=normal), "test")
    assert GZ_PLANE_SIZE == 2100.0
    np.testing.assert_array_equal(shape.getSize(), [2100.0] * 3)  # not the plane's 200 x 200
    R, centre = offset[:3, :3], offset[:3, 3]
    np.testing.assert_allclose(R.T @ R, np.eye(3), atol=1e-12)
    np.testing.assert_allclose(centre, R @ [0.0, 0.0, -1050.0], atol=1e-9)
    n = np.asarray(normal) / np.linalg.norm(normal)
    if n[2] > 0:
        np.testing.assert_allclose(R @ [0.0, 0.0, 1.0], n, atol=1e-12)
        axis = np.cross([0.0, 0.0, 1.0], n)
        np.testing.assert_allclose(R @ axis, axis, atol=1e-12)
        assert n @ centre == pytest.approx(-1050.0, abs=1e-9)  # the top face is the plane through the origin
    else:  # as in gz-physics: asin's angle stays below 90 degrees, so a plane facing down faces up
        np.testing.assert_allclose(R, np.eye(3))
