"""The numba wrench kernel of the regulated law against a plain per-point
reference built on laws.py, the torque sum r x F plus the rolling moments,
and screw_wrenches on a flat plane against closed forms: the resting load,
zero torque, propulsion force of a spinning screw, and no across-blade force
at the no-slip speed (config/contact/ice_regulated.yaml: the default ice
with the regulated law; the bristle law is test_contact_stick.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from eels_gz.contact.laws import ev_norm_of_load, friction_force, normal_force
from eels_gz.contact.params import ContactParams, load_contact_params
from eels_gz.contact.screw_points import ScrewGeometry, ScrewPointSet
from eels_gz.contact.screw_wrenches import contact_wrench_kernel, screw_wrenches
from eels_gz.errors import ContactError

PARAMS = load_contact_params("ice_regulated")
R, L, ALPHA = 0.09, 0.26, 0.35  # m, m, rad


def unit(v):
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def plane(points: np.ndarray):
    """Flat ground z = 0: signed distance and normal."""
    return points[:, 2].copy(), np.tile([0.0, 0.0, 1.0], (len(points), 1))


def rolling_moment(lin, ang, offset, n, axis, fn, p: ContactParams) -> np.ndarray:
    """The regulated rolling moment at one point, plainly (point_terms.py): the point frame's
    velocity (the link's, without its spin about the axis) along e_side = n x axis gives
    rho = b v / sqrt(v^2 + v_eps^2), and the moment rho F_n (e_side x n)."""
    side = np.cross(n, axis)
    if np.linalg.norm(side) < 1e-9:
        return np.zeros(3)
    side /= np.linalg.norm(side)
    w = ang - (ang @ axis) * axis
    v = (lin + np.cross(w, offset)) @ side
    rho = p.roll_arm * (v / math.hypot(v, p.v_eps) if p.v_eps > 0.0 else np.sign(v))
    return rho * fn * np.cross(side, n)


def reference(lin, ang, offsets, dist, nrm, ev_dir, p: ContactParams, rot=None):
    """Per point, plainly: the same model written with laws.py and numpy."""
    s_count, n_count = dist.shape
    force, torque = np.zeros((s_count, 3)), np.zeros((s_count, 3))
    point_force = np.zeros((s_count, n_count, 3))
    for s in range(s_count):
        vel = [lin[s] + np.cross(ang[s], offsets[s, j]) for j in range(n_count)]
        fns = [float(normal_force(-dist[s, j], vel[j] @ nrm[s, j], p.k, p.c)) for j in range(n_count)]
        ev_norm = float(ev_norm_of_load(sum(fns), p.ev_a, p.ev_b))
        for j in range(n_count):
            if fns[j] <= 0.0:
                continue
            n = nrm[s, j]
            slip = vel[j] - (vel[j] @ n) * n
            e = ev_dir[s, j] - (ev_dir[s, j] @ n) * n
            e = e / np.linalg.norm(e) if np.linalg.norm(e) > 1e-12 else np.zeros(3)
            f = fns[j] * n + friction_force(slip, e, p.mu, ev_norm, fns[j], p.v_eps)
            point_force[s, j] = f
            force[s] += f
            torque[s] += np.cross(offsets[s, j], f)
            if rot is not None:
                torque[s] += rolling_moment(lin[s], ang[s], offsets[s, j], n, rot[s][:, 0], fns[j], p)
    return force, torque, point_force


@pytest.mark.parametrize("v_eps, roll_arm", [(0.0, 0.0), (0.05, 0.0), (0.0, 0.002), (0.05, 0.002)])
def test_kernel_matches_reference(v_eps, roll_arm):
    rng = np.random.default_rng(42)
    s_count, n_count = 6, 10
    p = ContactParams(0.15, 3.0, 0.04, 25000.0, 400.0, v_eps, 5, 2, roll_arm=roll_arm)
    lin, ang = rng.normal(0, 0.3, (s_count, 3)), rng.normal(0, 3.0, (s_count, 3))
    offsets = rng.normal(0, 0.1, (s_count, n_count, 3))
    dist = rng.uniform(-0.004, 0.002, (s_count, n_count))  # about a third out of contact
    nrm = unit(rng.normal(size=(s_count, n_count, 3)) + [0, 0, 3])
    ev_dir = unit(rng.normal(size=(s_count, n_count, 3)))  # not in the tangent plane: the kernel projects
    ev_dir[0, 0] = nrm[0, 0]  # degenerate: along the normal -> isotropic at that point
    ang[1] = lin[1] = 0.0  # a screw at rest: exactly zero slip at its points
    rot = np.linalg.qr(rng.normal(size=(s_count, 3, 3)))[0]  # random screw axes (column 0)
    # degenerate: screw 2's axis along its point 0's normal -> no rolling moment at that point
    q = np.linalg.qr(np.column_stack([nrm[2, 0], rng.normal(size=(3, 2))]))[0]
    rot[2] = q * np.sign(q[:, 0] @ nrm[2, 0])
    assert np.allclose(rot[2][:, 0], nrm[2, 0])
    force, torque = np.empty((s_count, 3)), np.empty((s_count, 3))
    fn_out, pf_out = np.empty((s_count, n_count)), np.empty((s_count, n_count, 3))
    contact_wrench_kernel(lin, ang, offsets, dist, nrm, ev_dir, rot, p.roll_arm, p.mu, p.ev_a, p.ev_b, p.k, p.c,
                          p.v_eps, force, torque, fn_out, pf_out)
    f_ref, t_ref, pf_ref = reference(lin, ang, offsets, dist, nrm, ev_dir, p, rot)
    # same formulas in a different order of operations; forces are <= ~100 N, torques <= ~30 N m
    np.testing.assert_allclose(pf_out, pf_ref, rtol=0, atol=1e-12 * max(1.0, np.abs(pf_ref).max()))
    np.testing.assert_allclose(force, f_ref, rtol=0, atol=1e-12 * max(1.0, np.abs(f_ref).max()))
    np.testing.assert_allclose(torque, t_ref, rtol=0, atol=1e-12 * max(1.0, np.abs(t_ref).max()))
    assert 0 < np.count_nonzero(fn_out) < fn_out.size
    # the wrench is the sum of the point forces, and the torque about the link origin is sum r x F
    # (plus the rolling moments, when there is a rolling arm)
    np.testing.assert_allclose(force, pf_out.sum(1), rtol=0, atol=1e-12 * np.abs(force).max())
    if roll_arm == 0.0:
        np.testing.assert_allclose(torque, np.cross(offsets, pf_out).sum(1), rtol=0,
                                   atol=1e-12 * np.abs(torque).max())
    else:
        extra = torque - np.cross(offsets, pf_out).sum(1)
        assert 0.0 < np.abs(extra).max() <= roll_arm * fn_out.sum(1).max() * (1 + 1e-12)


def resting_screw(depth: float, h: int = 1, params: ContactParams = PARAMS):
    geom = ScrewGeometry(R, L, ALPHA, h)
    ps = ScrewPointSet.from_geometries([geom], params.points_axial, params.points_ring)
    pos = np.array([[0.3, -0.2, R - depth]])
    rot = np.eye(3)[None]
    return geom, ps, pos, rot


def test_resting_screw_load_and_zero_torque():
    depth = 0.001  # m
    _, ps, pos, rot = resting_screw(depth)
    w = screw_wrenches(ps, PARAMS, pos, rot, np.zeros((1, 3)), np.zeros((1, 3)), plane)
    # only the bottom row touches: points_axial springs at depth d, no velocity, no friction (zero slip)
    assert w.points_in_contact[0] == PARAMS.points_axial
    np.testing.assert_allclose(w.force[0], [0, 0, PARAMS.points_axial * PARAMS.k * depth], rtol=1e-12, atol=1e-12)
    # contact points at (x_i, 0, -r) from the origin, symmetric in x_i: torques cancel
    np.testing.assert_allclose(w.torque[0], 0.0, atol=1e-12)


@pytest.mark.parametrize("h, omega", [(1, 2.0), (1, -2.0), (-1, 3.0)])
def test_spinning_screw_propulsion_force(h, omega):
    # Screw spinning in place: at each bottom point the slip is omega r e_theta with e_theta = e_y,
    # u = q sgn(omega) e_y, q = |omega| r / sqrt((omega r)^2 + v_eps^2), and u.e_v = -h sin(a) q sgn(omega).
    # Eq. 6 then gives the axial force F_x = mu (|e_v|(Load) - 1) h sgn(omega) q sin(a) cos(a) * Load
    # and the sideways force F_y = -mu q sgn(omega) (1 + (|e_v| - 1) sin(a)^2) * Load.
    depth = 0.001
    _, ps, pos, rot = resting_screw(depth, h)
    w = screw_wrenches(ps, PARAMS, pos, rot, np.zeros((1, 3)), np.array([[omega, 0.0, 0.0]]), plane)
    load = PARAMS.points_axial * PARAMS.k * depth
    ev = PARAMS.ev_a + PARAMS.ev_b * load
    q = abs(omega) * R / math.hypot(omega * R, PARAMS.v_eps)
    sa, ca, sg = math.sin(ALPHA), math.cos(ALPHA), math.copysign(1.0, omega)
    fx = PARAMS.mu * (ev - 1.0) * h * sg * q * sa * ca * load
    fy = -PARAMS.mu * q * sg * (1.0 + (ev - 1.0) * sa**2) * load
    np.testing.assert_allclose(w.force[0], [fx, fy, load], rtol=1e-12)
    assert math.copysign(1.0, w.force[0, 0]) == h * sg  # pushed the way the thread advances


def test_no_across_blade_force_at_no_slip_speed():
    # moving at v = h omega r tan(a): slip is along the thread only, so the friction is -mu F_n u
    # with u along t; its component along e_v vanishes (to rounding of ~1e-16 * F)
    omega = 4.0
    for h in (1, -1):
        geom, ps, pos, rot = resting_screw(0.001, h)
        v = geom.advance_speed(omega)
        w = screw_wrenches(ps, PARAMS, pos, rot, np.array([[v, 0, 0]]), np.array([[omega, 0, 0]]), plane)
        _, _, ev = ps.world_points(pos, rot)
        friction = w.point_force - w.normal_force[..., None] * np.array([0, 0, 1.0])
        np.testing.assert_allclose((friction * ev).sum(-1), 0.0, atol=1e-12 * w.force[0, 2])
        # and the along-thread friction has the magnitude mu F_n q (regulated), q = |v| / sqrt(|v|^2 + eps^2)
        speed = math.hypot(v, omega * R)
        q = speed / math.hypot(speed, PARAMS.v_eps)
        mags = np.linalg.norm(friction[0], axis=1)
        np.testing.assert_allclose(mags, PARAMS.mu * q * w.normal_force[0], rtol=1e-12)


def test_bad_inputs():
    _, ps, pos, rot = resting_screw(0.001)
    with pytest.raises(ContactError, match="'lin_vel' has shape"):
        screw_wrenches(ps, PARAMS, pos, rot, np.zeros((2, 3)), np.zeros((1, 3)), plane)
    with pytest.raises(ContactError, match="'ang_vel' has shape"):
        screw_wrenches(ps, PARAMS, pos, rot, np.zeros((1, 3)), np.zeros(3), plane)
    with pytest.raises(ContactError, match="terrain query returned"):
        screw_wrenches(ps, PARAMS, pos, rot, np.zeros((1, 3)), np.zeros((1, 3)),
                       lambda pts: (pts[:, 2], np.zeros((len(pts), 2))))


@pytest.mark.parametrize("h, omega", [(1, 3.0), (-1, 3.0)])
def test_screw_in_tube_pushes_along_axis(h, omega):
    # In a pipe of radius r - d every ring point penetrates by d with the normal toward the axis:
    # the normal forces cancel, the load is L = N k d, and each point sees the slip of the floor case
    # in its own frame, so F_x = mu (|e_v|(L) - 1) h sgn(omega) q sin(a) cos(a) L as on a plane, the
    # circumferential friction adds up to a drag torque T_x = -mu q sgn(omega) (1 + (|e_v| - 1) sin(a)^2) L r,
    # and the sideways components cancel (the ring is symmetric).
    from eels_gz.terrain import Tube

    depth = 0.0005
    geom = ScrewGeometry(R, L, ALPHA, h)
    ps = ScrewPointSet.from_geometries([geom], PARAMS.points_axial, PARAMS.points_ring)
    tube = Tube(radius=R - depth)
    w = screw_wrenches(ps, PARAMS, np.zeros((1, 3)), np.eye(3)[None], np.zeros((1, 3)),
                       np.array([[omega, 0.0, 0.0]]), tube.query)
    load = ps.points_per_screw * PARAMS.k * depth
    ev = PARAMS.ev_a + PARAMS.ev_b * load
    q = abs(omega) * R / math.hypot(omega * R, PARAMS.v_eps)
    sa, ca, sg = math.sin(ALPHA), math.cos(ALPHA), math.copysign(1.0, omega)
    assert w.points_in_contact[0] == ps.points_per_screw
    fx = PARAMS.mu * (ev - 1.0) * h * sg * q * sa * ca * load
    tx = -PARAMS.mu * q * sg * (1.0 + (ev - 1.0) * sa**2) * load * R
    # the tube's normals are computed independently (by the terrain module): rounding ~1e-15 of L = 200 N
    np.testing.assert_allclose(w.force[0], [fx, 0.0, 0.0], rtol=1e-12, atol=1e-12 * load)
    np.testing.assert_allclose(w.torque[0], [tx, 0.0, 0.0], rtol=1e-12, atol=1e-12 * load * R)


@pytest.mark.parametrize("law", ["ice_regulated", "ice"])  # the regulated and the bristle law
def test_screw_contact_step_on_a_plane_is_screw_wrenches(law):
    """ScrewContactStep's one compiled call on a half-space terrain gives, bit for bit, what
    screw_wrenches gives with the plane's query and the rings anchored on -normal (the plugin's path on
    any other terrain), step after step (the bristle state carries over); and it checks its input."""
    from eels_gz.contact.screw_wrenches import ScrewContactStep, new_contact_state
    from eels_gz.errors import TerrainError
    from eels_gz.terrain.primitives import Plane

    p = load_contact_params(law)
    geoms = [ScrewGeometry(radius=R, length=L, lead_angle=ALPHA, handedness=h, name=f"s{k}")
             for k, h in enumerate((1, -1, 1))]
    ps = ScrewPointSet.from_geometries(geoms, p.points_axial, p.points_ring)
    ground = Plane(point=np.array([0.0, 0.0, 0.02]), normal=np.array([0.1, -0.05, 1.0]))
    step, stick = ScrewContactStep(ps, p, ground), new_contact_state(ps)
    assert step.half_space is not None
    rng = np.random.default_rng(7)
    for _ in range(5):
        rot = np.stack([np.linalg.qr(rng.normal(size=(3, 3)))[0] for _ in range(3)])
        rot *= np.sign(np.linalg.det(rot))[:, None, None]
        pos = np.column_stack([rng.uniform(-1, 1, (3, 2)), rng.uniform(0.0, 0.1, 3)])
        lin, ang = rng.normal(0, 0.2, (3, 3)), rng.normal(0, 2.0, (3, 3))
        got = step(pos, rot, lin, ang, 1e-3)
        _, normal = ground.query(pos)
        want = screw_wrenches(ps, p, pos, rot, lin, ang, ground.query, -normal, stick, 1e-3)
        assert want.normal_force.max() > 0  # some points press on the plane
        for name in ("force", "torque", "normal_force", "point_force", "points"):
            np.testing.assert_array_equal(getattr(got, name), getattr(want, name), err_msg=name)
        np.testing.assert_array_equal(step.stick, stick)
    with pytest.raises(ContactError, match=r"'link_rot' must be a C-ordered float64 array of shape \(3, 3, 3\)"):
        step(pos, rot[:2], lin, ang, 1e-3)
    with pytest.raises(ContactError, match="'dt' must be a finite step"):
        step(pos, rot, lin, ang, float("nan"))
    pos[1, 2] = np.nan
    with pytest.raises(TerrainError, match="not finite"):
        step(pos, rot, lin, ang, 1e-3)
