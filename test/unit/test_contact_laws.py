"""Contact laws (eels_gz.contact.laws) against closed forms: the isotropic
limit, the matrix form Eq. 3, dissipation, the force bound, the regulator's
continuity and its distance to Eq. 6, the one-sided normal force, and
broadcasting."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eels_gz.contact.laws import EV_NORM_MIN, ev_norm_of_load, friction_force, normal_force, slip_direction
from eels_gz.errors import ContactError

RNG_SEED = 20240605


def unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def random_case(n: int, seed: int = RNG_SEED):
    rng = np.random.default_rng(seed)
    v = rng.normal(size=(n, 3)) * rng.lognormal(0.0, 2.0, size=(n, 1))  # speeds over decades
    e = unit(rng.normal(size=(n, 3)))
    mu = rng.uniform(0.0, 1.0, n)
    ev = rng.uniform(EV_NORM_MIN, 15.0, n)
    fn = rng.uniform(0.0, 500.0, n)
    return v, e, mu, ev, fn


# --- friction -------------------------------------------------------------------------

@pytest.mark.parametrize("v_eps", [0.0, 0.05])
def test_unit_ev_norm_is_isotropic(v_eps):
    v, e, mu, _, fn = random_case(500)
    got = friction_force(v, e, mu, 1.0, fn, v_eps)
    expected = -(fn * mu)[:, None] * v / np.sqrt((v * v).sum(1) + v_eps**2)[:, None]  # Eq. 1
    # the (ev - 1) term is exactly 0, so only rounding of the division differs: 1e-12 of |F|
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12 * max(1.0, np.abs(expected).max()))


def test_matches_matrix_form_eq3():
    # Eq. 3: F = -|F_n| (mu |e_v| t1 e_v + mu t2 e_2), t1 = u.e_v, t2 = |u - t1 e_v|, e_2 = (u - t1 e_v)/t2
    v, e, mu, ev, fn = random_case(300, seed=3)
    u = unit(v)
    t1 = (u * e).sum(1)
    rest = u - t1[:, None] * e
    t2 = np.linalg.norm(rest, axis=1)
    e2 = rest / t2[:, None]
    expected = -fn[:, None] * (mu[:, None] * ev[:, None] * t1[:, None] * e + mu[:, None] * t2[:, None] * e2)
    got = friction_force(v, e, mu, ev, fn)
    # two algebraically equal forms of magnitude <= mu max(1, ev) fn <= 7500 N: rounding ~1e-12 relative
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12 * np.abs(expected).max())


finite = dict(allow_nan=False, allow_infinity=False)
vec = st.tuples(*[st.floats(-1e3, 1e3, **finite)] * 3)


# mu and fn are 0 or at least 1e-6: below ~1e-150 the force's squared norm
# underflows into subnormals and np.linalg.norm itself is off by tens of percent.
@settings(max_examples=300, deadline=None)
@given(v=vec, e=vec.filter(lambda x: np.linalg.norm(x) > 1e-3), mu=st.just(0.0) | st.floats(1e-6, 2.0),
       ev=st.floats(EV_NORM_MIN, 50.0), fn=st.just(0.0) | st.floats(1e-6, 1e4),
       v_eps=st.sampled_from([0.0, 1e-3, 0.05]))
def test_never_positive_work_and_bounded(v, e, mu, ev, fn, v_eps):
    v, e = np.array(v), unit(np.array(e))
    f = friction_force(v, e, mu, ev, fn, v_eps)
    scale = np.linalg.norm(f) * np.linalg.norm(v)
    # exact F.v = -fn mu/s (|v_perp|^2 + ev (v.e)^2) <= 0; rounding is ~1e-15 of |F||v|
    assert f @ v <= 1e-12 * scale
    # |F| = fn mu |M u| with M's eigenvalues 1, 1, ev and |u| <= 1
    assert np.linalg.norm(f) <= mu * max(1.0, ev) * fn * (1.0 + 1e-12)


def test_zero_slip_unregulated_gives_zero_force():
    f = friction_force(np.zeros((2, 3)), unit(np.ones((2, 3))), 0.2, 5.0, 100.0, 0.0)
    np.testing.assert_array_equal(f, 0.0)


def test_regulator_continuous_at_zero_slip():
    # |u_reg| = |v|/sqrt(|v|^2 + eps^2) <= |v|/eps, so |F| <= mu max(1, ev) fn |v| / eps -> 0 with |v|
    v_eps, mu, ev, fn = 0.05, 0.15, 6.0, 80.0
    e = unit(np.array([1.0, 2.0, 0.0]))
    for speed in (1e-3, 1e-6, 1e-9, 0.0):
        v = speed * unit(np.array([0.3, -1.0, 0.0]))
        f = friction_force(v, e, mu, ev, fn, v_eps)
        assert np.linalg.norm(f) <= mu * ev * fn * speed / v_eps * (1.0 + 1e-12)


def test_regulator_tends_to_eq6():
    # u = v/|v|, u_reg = v/sqrt(|v|^2 + eps^2): |u - u_reg| = 1 - 1/sqrt(1 + x^2) <= x^2/2 with x = eps/|v|
    # (1/sqrt(1+y) >= 1 - y/2 by convexity), so |F_reg - F| <= fn mu max(1, ev) x^2 / 2.
    v, e, mu, ev, fn = random_case(400, seed=7)
    exact = friction_force(v, e, mu, ev, fn)
    speed = np.linalg.norm(v, axis=1)
    previous = np.inf
    for v_eps in (1e-1, 1e-2, 1e-3, 1e-4):
        diff = np.linalg.norm(friction_force(v, e, mu, ev, fn, v_eps) - exact, axis=1)
        bound = fn * mu * np.maximum(1.0, ev) * 0.5 * (v_eps / speed) ** 2
        assert np.all(diff <= bound * (1 + 1e-9) + 1e-12)
        assert diff.max() < previous
        previous = diff.max()


def test_zero_ev_dir_is_isotropic():
    v, _, mu, ev, fn = random_case(50, seed=11)
    np.testing.assert_allclose(friction_force(v, np.zeros(3), mu, ev, fn), friction_force(v, np.zeros(3), mu, 1.0, fn),
                               rtol=0, atol=0)


def test_broadcasting_shapes():
    rng = np.random.default_rng(5)
    v = rng.normal(size=(4, 5, 3))
    e = unit(rng.normal(size=(5, 3)))
    mu, ev, fn = 0.2, rng.uniform(1, 8, size=(4, 5)), rng.uniform(1, 100, size=(5,))
    f = friction_force(v, e, mu, ev, fn, 0.01)
    assert f.shape == (4, 5, 3)
    for i in range(4):
        for j in range(5):
            np.testing.assert_allclose(f[i, j], friction_force(v[i, j], e[j], mu, ev[i, j], fn[j], 0.01),
                                       rtol=1e-14, atol=0)
    assert slip_direction(v).shape == (4, 5, 3)


@pytest.mark.parametrize("args, match", [
    ((np.zeros((4, 2)), np.zeros((4, 3)), 0.1, 1.0, 1.0), "last dimension of 3"),
    ((np.zeros((4, 3)), np.zeros((5, 3)), 0.1, 1.0, 1.0), "do not broadcast"),
    ((np.zeros((4, 3)), np.zeros((4, 3)), np.ones(3), 1.0, 1.0), "'mu' has shape"),
    ((np.zeros((4, 3)), np.zeros((4, 3)), 0.1, np.ones(2), 1.0), "'ev_norm' has shape"),
    ((np.zeros((4, 3)), np.zeros((4, 3)), 0.1, 1.0, np.ones(7)), "'f_n' has shape"),
])
def test_friction_shape_errors(args, match):
    with pytest.raises(ContactError, match=match):
        friction_force(*args)


def test_negative_v_eps_rejected():
    with pytest.raises(ContactError, match="v_eps"):
        friction_force(np.ones(3), np.zeros(3), 0.1, 1.0, 1.0, -0.1)


# --- normal force and |e_v| ---------------------------------------------------------------

def test_normal_force_spring_damper_and_one_sided():
    k, c = 25000.0, 400.0
    depth = np.array([-0.01, 0.0, 0.001, 0.001, 0.001, 0.002])
    v_n = np.array([-5.0, -5.0, 0.0, -0.1, 0.1, 1.0])  # approaching (<0) or separating (>0), m/s
    f = normal_force(depth, v_n, k, c)
    # out of contact: zero even while approaching; at d = 1 mm: 25 N, +40 N approaching at 0.1 m/s,
    # 25 - 40 < 0 -> 0 separating; 50 - 400 < 0 -> 0
    np.testing.assert_allclose(f, [0.0, 0.0, 25.0, 65.0, 0.0, 0.0], rtol=1e-12, atol=0)
    rng = np.random.default_rng(2)
    many = normal_force(rng.normal(0, 0.01, (50, 7)), rng.normal(0, 1, (50, 7)), k, c)
    assert many.shape == (50, 7) and np.all(many >= 0.0)
    assert normal_force(0.001, np.zeros((3, 2)), k, c).shape == (3, 2)


def test_ev_norm_of_load_line_and_clamp():
    np.testing.assert_allclose(ev_norm_of_load([0.0, 50.0, 100.0], 3.0, 0.04), [3.0, 5.0, 7.0], rtol=1e-15)
    # a line with negative slope evaluated past its zero crossing stays at the dissipative floor
    np.testing.assert_array_equal(ev_norm_of_load([200.0], 2.0, -0.02), [EV_NORM_MIN])
