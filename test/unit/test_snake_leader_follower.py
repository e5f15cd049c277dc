"""Leader-follower shape control (NEO Fig. 4) and the reference paths: a
straight line gives zero angles, a circle arc the closed-form chord bends, a
helix puts every module point on the helix with the closed-form bend and the
helix's dihedral as twist; chord placement, closest points and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import brentq

from eels_gz.description.assemble import robot_description
from eels_gz.errors import SnakeModelError
from eels_gz.registry import robot
from eels_gz.snake.chain import SnakeChain
from eels_gz.snake.shape_on_path import lay_on_path
from eels_gz.snake.reference_paths import HelixPath, Path3, PolylinePath, chord_points, line_path

# Chord points are found to 1e-13 m (brentq xtol) and the forward kinematics
# multiplies ~20 rotations: 1e-10 m / 1e-10 rad bound the rounding with margin.
TOL = 1e-10


@pytest.fixture(scope="module")
def chain():
    return SnakeChain.from_urdf(robot_description(robot("eels_1_0_front_only"), gazebo=False).urdf)


def test_straight_line_gives_zero_angles(chain):
    d = np.array([1.0, 2.0, 0.5]) / np.linalg.norm([1.0, 2.0, 0.5])
    shape = lay_on_path(chain, line_path([0.3, -0.2, 0.1], d, 6.0), 0.5)
    assert shape.max_error < TOL and shape.within_limits
    assert max(abs(v) for v in shape.angles.values()) < TOL
    np.testing.assert_allclose(shape.base_pose[:3, 0], d, atol=TOL)
    np.testing.assert_allclose(shape.base_pose[:3, 3], [0.3, -0.2, 0.1] + 0.5 * d, atol=TOL)
    assert shape.base_pose[2, 2] > 0.9  # rolled upright


@pytest.mark.parametrize("R", [1.5, 3.0])
def test_circle_arc_gives_chord_bends(chain, R):
    path = HelixPath(R, 0.0, 2 * math.pi * R * 0.9)  # counter-clockwise circle in the xy plane
    shape = lay_on_path(chain, path, 0.0)
    ell = chain.segment_lengths()
    assert shape.max_error < TOL
    # bend i sits between chords i-1 and i; each chord of length l turns the
    # direction by asin(l / 2R) at either end
    half = np.arcsin(ell / (2 * R))
    for i in range(1, chain.n_modules + 1):
        assert shape.angles[f"module_{i}_bend"] == pytest.approx(half[i - 1] + half[i], abs=TOL)
        assert shape.angles[f"module_{i}_twist"] == pytest.approx(0.0, abs=TOL)
    np.testing.assert_allclose(shape.base_pose[:3, 2], [0, 0, 1], atol=TOL)


def test_helix_module_points_bends_and_twists(chain):
    R, pitch = 0.6, 1.0
    path = HelixPath(R, pitch, 12.0, center=(1.0, 2.0, 0.0), axis=(0.0, 0.0, 1.0))
    shape = lay_on_path(chain, path, 0.3)
    assert shape.max_error < TOL and shape.within_limits
    fk = chain.module_points(shape.angles, shape.base_pose)
    rho = np.linalg.norm(fk[:, :2] - [1.0, 2.0], axis=1)
    np.testing.assert_allclose(rho, R, atol=TOL)
    h = pitch / (2 * math.pi)
    phi = np.unwrap(np.arctan2(fk[:, 1] - 2.0, fk[:, 0] - 1.0))
    np.testing.assert_allclose(fk[:, 2], h * phi, atol=TOL)
    # equal chords l subtend an equal angle D: 2 R^2 (1 - cos D) + h^2 D^2 = l^2, and
    # consecutive chords meet at cos b = (R^2 (2 cos D - cos 2D - 1) + h^2 D^2) / l^2
    ell = chain.segment_lengths()[1]
    D = brentq(lambda x: 2 * R * R * (1 - math.cos(x)) + h * h * x * x - ell * ell, 1e-6, math.pi)
    b = math.acos((R * R * (2 * math.cos(D) - math.cos(2 * D) - 1) + h * h * D * D) / ell ** 2)
    for i in range(2, chain.n_modules + 1):
        assert abs(shape.angles[f"module_{i}_bend"]) == pytest.approx(b, abs=TOL)
    # twist i = signed dihedral between the bend planes at points i and i+1
    c = np.diff(fk, axis=0)
    n1, n2 = np.cross(c[1], c[2]), np.cross(c[2], c[3])
    dihedral = math.atan2(np.cross(n1, n2) @ c[2] / np.linalg.norm(c[2]), n1 @ n2)
    assert abs(dihedral) > 0.1  # a real twist, not a planar curve
    for i in range(2, chain.n_modules):
        assert shape.angles[f"module_{i}_twist"] == pytest.approx(dihedral, abs=TOL)


def test_chord_points_and_closest():
    path = PolylinePath([[0, 0, 0], [1, 0, 0], [1, 1, 0]])
    s, pts = chord_points(path, 0.5, [0.5, math.sqrt(0.5)])
    np.testing.assert_allclose(pts[:2], [[0.5, 0, 0], [1, 0, 0]], atol=1e-12)
    # second chord from (1, 0, 0) of length sqrt(0.5) along +y: (1, sqrt(0.5), 0)
    np.testing.assert_allclose(pts[2], [1, math.sqrt(0.5), 0], atol=1e-12)
    assert s[2] == pytest.approx(1.0 + math.sqrt(0.5), abs=1e-12)
    sc, q, d = path.closest(np.array([0.3, -0.4, 0.0]))
    assert (sc, d) == (pytest.approx(0.3), pytest.approx(0.4))
    helix = HelixPath(1.0, 0.0, 5.0)
    ss = np.linspace(0.0, 5.0, 7)
    np.testing.assert_allclose(helix.points(ss), [helix.point(x) for x in ss], atol=1e-15)
    sc, q, d = helix.closest(np.array([0.0, 3.0, 0.0]))  # nearest: phi = pi/2 at distance 2
    assert sc == pytest.approx(math.pi / 2, abs=1e-8) and d == pytest.approx(2.0, abs=1e-12)


class _Marched(Path3):
    """A polyline seen only through point(s): chord_points marches and refines it (the general path)."""

    def __init__(self, polyline: PolylinePath):
        self.polyline, self.length = polyline, polyline.length

    def point(self, s: float) -> np.ndarray:
        return self.polyline.point(s)


@pytest.mark.parametrize("vertices", [
    np.column_stack([np.arange(0, 6.01, 0.02), 0.3 * np.sin(2 * np.pi * np.arange(0, 6.01, 0.02) / 2.0),
                     np.full(301, 0.1)]),  # the leader-follower s-curve (dense vertices)
    [[0, 0, 0], [1, 0, 0], [1, 0.05, 0], [0.2, 0.05, 0.3], [2, 1, 0.5], [5, 1, 0.5]],  # sharp turns, short legs
])
def test_polyline_chords_in_closed_form_match_the_marched_ones(vertices):
    """The polyline's closed-form chords equal the general method's (marching, then Brent's method to
    xtol 1e-13 m and rtol 4 eps on arc lengths below 10 m: 1e-12 m covers both, with room)."""
    path = PolylinePath(vertices)
    lengths = [0.35, 0.2, 0.41, 0.05, 0.3, 0.3, 0.25]
    for s0 in (0.0, 0.37, 1.0, 1.05):
        s, pts = chord_points(path, s0, lengths)
        s_ref, pts_ref = chord_points(_Marched(path), s0, lengths)
        np.testing.assert_allclose(s, s_ref, rtol=0, atol=1e-12)
        np.testing.assert_allclose(pts, pts_ref, rtol=0, atol=1e-12)
        np.testing.assert_allclose(np.linalg.norm(np.diff(pts, axis=0), axis=1), lengths, rtol=0, atol=1e-12)
    with pytest.raises(SnakeModelError, match="path ends"):
        chord_points(path, path.length - 0.1, [0.35])


def test_bad_input(chain):
    with pytest.raises(SnakeModelError, match="path ends"):
        lay_on_path(chain, line_path([0, 0, 0], [1, 0, 0], 2.0), 0.0)
    with pytest.raises(SnakeModelError, match="outside the path"):
        chord_points(line_path([0, 0, 0], [1, 0, 0], 2.0), 3.0, [0.1])
    with pytest.raises(SnakeModelError, match="repeat the next one"):
        PolylinePath([[0, 0, 0], [0, 0, 0]])
    with pytest.raises(SnakeModelError, match="radius > 0"):
        HelixPath(0.0, 1.0, 1.0)
    tight = lay_on_path(chain, HelixPath(0.25, 0.0, 20.0), 0.0)  # bends past the 0.7 rad limit
    assert not tight.within_limits and "module_2_bend" in tight.violations
