"""Holding statics (eels_gz.snake.holding) against closed forms.

Thread share: a screw of lead ``a`` whose axis makes the angle ``beta`` with
the horizontal, lying on a vertical wall, has its thread tangent at the
contact at ``|cos(beta + h a)|`` from the vertical (derived in the module
docstring; beta = 0: a horizontal screw, share cos a; beta = 90 deg: an
upright one, share sin a). Squeeze balance: contacts all round a shaft or on
two facing walls balance (0); two facing contacts offset by ``h`` along the
wall leave the couple ``h / 2`` (residual ``h / (2 L)``); all facing one way
leave the whole force (1). Tolerances: 1e-12 for the trigonometry (a few
rounding steps), 1e-6 for the balance (the NNLS simplex row is weighted
1e3, which leaves |sum l - 1| ~ 1e-7 before the renormalisation).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from eels_gz.contact.screw_points import ScrewGeometry
from eels_gz.description.assemble import robot_description
from eels_gz.errors import SnakeModelError
from eels_gz.registry import robot
from eels_gz.snake.chain import SnakeChain, screw_geometries
from eels_gz.snake.holding import (ScrewWallContact, along_thread_share, holding_normal_force, screw_wall_contacts,
                                   squeeze_balance, thread_tangent)
from eels_gz.terrain.primitives import Plane

ALPHA = 0.35
WALL_NORMAL = np.array([-1.0, 0.0, 0.0])  # a wall at +x facing the robot


def screw(h: int = 1) -> ScrewGeometry:
    return ScrewGeometry(0.085, 0.24, ALPHA, h)


@pytest.mark.parametrize("h", [1, -1])
@pytest.mark.parametrize("beta_deg", [0.0, 15.0, 28.0, 45.0, 70.0, 90.0, -30.0])
def test_thread_share_on_a_wall_is_cos_beta_plus_h_alpha(beta_deg, h):
    beta = math.radians(beta_deg)
    axis = np.array([0.0, math.cos(beta), math.sin(beta)])
    contact = ScrewWallContact("s", np.zeros(3), WALL_NORMAL, 0.0, axis)
    share = along_thread_share((0.0, 0.0, -9.81), [contact], {"s": screw(h)})["s"]
    assert share == pytest.approx(abs(math.cos(beta + h * ALPHA)), abs=1e-12)
    t = thread_tangent(axis, WALL_NORMAL, screw(h))
    assert np.linalg.norm(t) == pytest.approx(1.0, abs=1e-12)
    assert t @ WALL_NORMAL == pytest.approx(0.0, abs=1e-12)  # in the wall's tangent plane


def test_thread_share_is_zero_on_a_floor_and_the_axis_sign_does_not_matter():
    up = np.array([0.0, 0.0, 1.0])
    for axis in ([1.0, 0.0, 0.0], [-1.0, 0.0, 0.0], [0.6, 0.8, 0.0]):
        contact = ScrewWallContact("s", np.zeros(3), up, 0.0, np.array(axis))
        assert along_thread_share((0, 0, -9.81), [contact], {"s": screw()})["s"] == pytest.approx(0.0, abs=1e-12)
    a = np.array([0.0, 0.6, 0.8])
    assert np.allclose(thread_tangent(a, WALL_NORMAL, screw()), -thread_tangent(-a, WALL_NORMAL, screw()))


def test_a_screw_standing_on_its_end_is_an_error():
    with pytest.raises(SnakeModelError, match="stands on its end"):
        thread_tangent([1.0, 0.0, 0.0], WALL_NORMAL, screw())


def test_holding_normal_force():
    # 65 kg, half the weight along the threads, mu 0.15: 65 * 9.81 * 0.5 / 0.15 = 2125.5 N
    assert holding_normal_force(65.0, (0, 0, -9.81), 0.5, 0.15) == pytest.approx(2125.5, rel=1e-12)
    with pytest.raises(SnakeModelError, match="mu = 0.0"):
        holding_normal_force(65.0, (0, 0, -9.81), 0.5, 0.0)


def ring(n: int, radius: float = 0.4, z: float = 0.0):
    phi = 2 * np.pi * np.arange(n) / n
    p = np.column_stack([radius * np.cos(phi), radius * np.sin(phi), np.full(n, z)])
    return p, -p / np.linalg.norm(p, axis=1)[:, None]  # inward: the shaft wall's outward normal


def test_contacts_round_a_shaft_or_on_facing_walls_balance():
    p, n = ring(3)
    r, lam = squeeze_balance(p, n, 3.0)
    assert r == pytest.approx(0.0, abs=1e-6) and np.allclose(lam, 1 / 3, atol=1e-6)
    # three-point stemming: the ends on one wall, the middle on the other, twice as hard
    p = np.array([[-0.4, 0, 0.0], [-0.4, 0, 1.0], [0.4, 0, 0.5]])
    n = np.array([[1.0, 0, 0], [1.0, 0, 0], [-1.0, 0, 0]])
    r, lam = squeeze_balance(p, n, 3.0)
    assert r == pytest.approx(0.0, abs=1e-6) and np.allclose(lam, [0.25, 0.25, 0.5], atol=1e-6)


@pytest.mark.parametrize("h", [0.2, 1.0])
def test_facing_contacts_offset_along_the_wall_leave_a_couple(h):
    length = 3.0
    p = np.array([[-0.4, 0, 0.0], [0.4, 0, h]])
    n = np.array([[1.0, 0, 0], [-1.0, 0, 0]])
    r, lam = squeeze_balance(p, n, length)
    assert r == pytest.approx(h / (2 * length), abs=1e-6) and np.allclose(lam, 0.5, atol=1e-6)


def test_contacts_facing_one_way_cannot_be_squeezed():
    p = np.array([[0.4, 0, 0.0], [0.4, 0, 0.7], [0.4, 0, 1.5]])
    r, _ = squeeze_balance(p, np.tile(WALL_NORMAL, (3, 1)), 3.0)
    assert r == pytest.approx(1.0, abs=1e-6)


@pytest.mark.parametrize("points, normals, length, match", [
    (np.zeros((0, 3)), np.zeros((0, 3)), 1.0, "as many normals"),
    (np.zeros((2, 3)), np.ones((1, 3)), 1.0, "as many normals"),
    (np.zeros((1, 3)), np.ones((1, 3)), 0.0, "length = 0.0"),
])
def test_bad_balance_input(points, normals, length, match):
    with pytest.raises(SnakeModelError, match=match):
        squeeze_balance(points, normals, length)


@pytest.fixture(scope="module")
def eels_1_5():
    desc = robot_description(robot("eels_1_5"), xacro_args={"contact": "screw"})
    return SnakeChain.from_urdf(desc.urdf), screw_geometries(desc.gazebo)


@pytest.mark.parametrize("lift, expected", [(0.0, 8), (0.01, 0)])
def test_screw_wall_contacts_on_a_floor(eels_1_5, lift, expected):
    """EELS 1.5 straight and level, its screw axes one blade radius (+ lift) above a floor:
    every screw touches at distance lift (to 1e-9 m) with the floor's normal, or none within 5 mm."""
    chain, geometry = eels_1_5
    r = next(iter(geometry.values())).radius
    base = np.eye(4)
    base[2, 3] = r + lift  # the screw axes lie on the tail axis in the straight pose
    q = {n: 0.0 for n in chain.bend_joints() + chain.twist_joints()}
    contacts = screw_wall_contacts(chain, q, base, Plane(), list(geometry), 0.005)
    assert len(contacts) == expected
    for c in contacts:
        assert c.distance == pytest.approx(lift, abs=1e-9) and np.allclose(c.normal, [0, 0, 1])
        assert abs(c.axis @ [0, 0, 1]) < 1e-12
