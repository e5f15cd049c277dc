"""Distance fields (eels_gz.terrain): heightfield, mesh SDF grid, analytic
primitives and the .npz format, against closed-form distances."""

from __future__ import annotations

import logging
import math

import numpy as np
import pytest
import trimesh
from numba import njit

from eels_gz.errors import EelsError, TerrainError
from eels_gz.terrain import (
    Box,
    DistanceField,
    HeightField,
    Hemisphere,
    ParallelWalls,
    Plane,
    SdfGrid,
    Slope,
    Sphere,
    Tube,
    UChannel,
    Union,
    load_field,
    save_field,
    sdf_grid_from_mesh,
)
from eels_gz.terrain import _kernels
from eels_gz.terrain._reference_meshes import tube_solid_distance, tube_solid_mesh

RNG_SEED = 20240604
# float64 rounding on coordinates of magnitude <= 10 m: ~1e-15 relative, a
# few dozen operations -> well under 1e-12 m.
EXACT = 1e-12
# the accuracy target of the sampled grid near the surface [voxels]
HALF_VOXEL = 0.5
CONTACT_BAND = 3.0  # voxels: the band the screw contact queries


def rng() -> np.random.Generator:
    return np.random.default_rng(RNG_SEED)


# ---------------------------------------------------------------- HeightField


def planar_raster(a=0.3, b=0.2, c=-0.15):
    x0, y0, dx, dy, nx, ny = -1.0, 2.0, 0.5, 0.25, 7, 9
    x = x0 + dx * np.arange(nx)
    y = y0 + dy * np.arange(ny)
    heights = a + b * x[None, :] + c * y[:, None]
    return HeightField(heights, (x0, y0), (dx, dy)), Plane(np.array([0.0, 0.0, a]), np.array([-b, -c, 1.0]))


def test_heightfield_on_planar_raster_equals_plane():
    hf, plane = planar_raster()
    lo, hi = hf.bounds
    p = rng().uniform([lo[0], lo[1], -3.0], [hi[0], hi[1], 3.0], (2000, 3))
    d, n = hf.query(p)
    d_ref, n_ref = plane.query(p)
    np.testing.assert_allclose(d, d_ref, rtol=0, atol=EXACT)
    np.testing.assert_allclose(n, n_ref, rtol=0, atol=EXACT)
    np.testing.assert_allclose(hf.height(p[:, 0], p[:, 1]), 0.3 + 0.2 * p[:, 0] - 0.15 * p[:, 1], atol=EXACT)


def test_heightfield_on_smooth_raster_matches_exact_distance():
    # h = A sin(k x) cos(k y); points placed at gap g along the true normal
    # from a surface point have exact distance g (g < 1/max curvature).
    amp, k, dx = 0.2, 1.0, 0.05
    h2 = amp * k * k  # bound of every second derivative of h [1/m]
    x = np.arange(-3.0, 3.0 + dx / 2, dx)
    heights = amp * np.sin(k * x[None, :]) * np.cos(k * x[:, None])
    hf = HeightField(heights, (x[0], x[0]), (dx, dx))
    r = rng()
    fx, fy = r.uniform(-2.5, 2.5, (2, 3000))
    gap = r.uniform(-0.02, 0.02, 3000)
    hx = amp * k * np.cos(k * fx) * np.cos(k * fy)
    hy = -amp * k * np.sin(k * fx) * np.sin(k * fy)
    norm = np.sqrt(1 + hx**2 + hy**2)
    n_true = np.stack([-hx, -hy, np.ones_like(hx)], axis=1) / norm[:, None]
    foot = np.stack([fx, fy, amp * np.sin(k * fx) * np.cos(k * fy)], axis=1)
    d, n = hf.query(foot + gap[:, None] * n_true)
    # error budget [m]: bilinear interpolation (dx^2 + dy^2)/8 * h''; the
    # vertical-gap formula evaluated off the foot point, second order in the
    # gap, <= g^2 * h''; the bilinear slope error (dx/2 + dy/2) * h'' times the gap.
    slope_err = dx * h2
    tol_d = 2 * (2 * dx**2 / 8 * h2 + 0.02**2 * h2 + 0.02 * slope_err)
    np.testing.assert_allclose(d, gap, rtol=0, atol=tol_d)
    # normal: the bilinear slope error plus the slope change over the lateral
    # offset of the query (g * |grad h| * h''), doubled for margin
    tol_n = 2 * (slope_err + 0.02 * amp * k * h2)
    assert np.abs(n - n_true).max() < tol_n
    np.testing.assert_allclose(np.linalg.norm(n, axis=1), 1.0, atol=1e-9)


def test_heightfield_edges_extend_at_constant_height():
    hf, _ = planar_raster()
    lo, hi = hf.bounds
    # beyond the +x edge at y inside: the height of the edge column, no x slope
    p = np.array([[hi[0] + 5.0, 2.5, 4.0]])
    edge = np.array([[hi[0], 2.5, 4.0]])
    h_edge = hf.height(edge[:, 0], edge[:, 1])
    d, n = hf.query(p)
    c = -0.15  # y slope of the planar raster
    assert n[0, 0] == 0.0
    np.testing.assert_allclose(n[0], np.array([0.0, -c, 1.0]) / math.hypot(1, c), atol=EXACT)
    np.testing.assert_allclose(d[0], (4.0 - h_edge[0]) / math.hypot(1, c), atol=EXACT)


def test_heightfield_refuses_nan_heights_with_count_and_position():
    heights = np.zeros((4, 5))
    heights[2, 3] = np.nan
    heights[3, 0] = np.nan
    with pytest.raises(TerrainError, match=r"2 non-finite .*row j=2, column i=3"):
        HeightField(heights, (0.0, 0.0), (1.0, 1.0))


@pytest.mark.parametrize("heights, origin, spacing, message", [
    (np.zeros(5), (0, 0), (1, 1), "heights must be"),
    (np.zeros((1, 5)), (0, 0), (1, 1), "nx, ny >= 2"),
    (np.zeros((3, 3)), (0, 0), (1, -1), r"spacing_xy\[1\]"),
    (np.zeros((3, 3)), (0,), (1, 1), "origin_xy"),
])
def test_heightfield_refuses_bad_arguments(heights, origin, spacing, message):
    with pytest.raises(TerrainError, match=message):
        HeightField(heights, origin, spacing)


# ----------------------------------------------------------------- SdfGrid


def test_sdf_grid_reproduces_a_linear_field_exactly():
    # trilinear interpolation is exact on affine fields, value and gradient
    normal = np.array([0.3, -0.4, 0.866])
    normal /= np.linalg.norm(normal)
    plane = Plane(np.array([0.1, 0.2, 0.3]), normal)
    origin, h, shape = np.array([-1.0, -0.5, 0.0]), 0.1, (21, 12, 9)
    nodes = origin + h * np.indices(shape).reshape(3, -1).T
    grid = SdfGrid(plane.query(nodes)[0].reshape(shape), tuple(origin), h)
    lo, hi = grid.bounds
    p = rng().uniform(lo, hi, (2000, 3))
    d, n = grid.query(p)
    d_ref, n_ref = plane.query(p)
    np.testing.assert_allclose(d, d_ref, atol=EXACT)
    np.testing.assert_allclose(n, n_ref, atol=EXACT)


def test_sdf_grid_outside_box_adds_distance_to_box():
    # field z - 0.5 on the unit box; p lies 1 m beyond the +x face
    shape, h = (11, 11, 11), 0.1
    z = h * np.arange(11)
    values = np.broadcast_to(z - 0.5, shape).copy()
    grid = SdfGrid(values, (0.0, 0.0, 0.0), h)
    d, n = grid.query(np.array([[2.0, 0.5, 0.7], [0.5, 0.5, -50.0]]))
    np.testing.assert_allclose(d[0], 0.2 + 1.0, atol=EXACT)
    np.testing.assert_allclose(n[0], np.array([1.0, 0.0, 1.0]) / math.sqrt(2), atol=EXACT)
    # far below the box the field is the bottom value (-0.5) plus 50 m: never negative far outside
    np.testing.assert_allclose(d[1], 49.5, atol=EXACT)
    np.testing.assert_allclose(n[1], [0.0, 0.0, -1.0], atol=EXACT)


def test_sdf_grid_flat_spot_falls_back_to_central_differences():
    # values constant on the cell around the query but rising one voxel away
    values = np.zeros((5, 5, 5))
    values[:, :, 4] = 1.0
    grid = SdfGrid(values, (0.0, 0.0, 0.0), 1.0)
    d, n = grid.query(np.array([[2.0, 2.0, 2.5]]))
    assert d[0] == 0.0
    np.testing.assert_allclose(n[0], [0.0, 0.0, 1.0], atol=EXACT)


def mesh_cases():
    sphere = trimesh.creation.icosphere(subdivisions=3, radius=1.0)
    box = trimesh.creation.box(extents=(1.6, 1.0, 0.7))
    tube_v, tube_f = tube_solid_mesh(0.4, 0.6, 1.6, 64, 8)
    return {
        "sphere": (sphere.vertices, sphere.faces, Sphere(np.zeros(3), 1.0).query),
        "box": (box.vertices, box.faces, Box(np.zeros(3), np.array([0.8, 0.5, 0.35])).query),
        "tube": (tube_v, tube_f, None),
    }


@pytest.fixture(scope="module")
def grids():
    return {name: (sdf_grid_from_mesh(v, f, resolution=40), ref) for name, (v, f, ref) in mesh_cases().items()}


def near_surface_points(grid: SdfGrid, exact, n: int = 40000):
    lo, hi = grid.bounds
    p = rng().uniform(lo, hi, (n, 3))
    d_exact = exact(p)
    return p, d_exact, np.abs(d_exact) < CONTACT_BAND * grid.spacing


def smooth_cells(grid: SdfGrid, p, n_exact, exact_normal):
    """Points whose grid cell has exact normals within 8 degrees of theirs at all 8 corners."""
    cell = np.clip(np.floor((p - np.array(grid.origin)) / grid.spacing), 0, np.array(grid.shape) - 2)
    ok = np.ones(len(p), dtype=bool)
    for offset in np.indices((2, 2, 2)).reshape(3, -1).T:
        corner = np.array(grid.origin) + grid.spacing * (cell + offset)
        ok &= np.einsum("ij,ij->i", exact_normal(corner), n_exact) > math.cos(math.radians(8.0))
    assert ok.mean() > 0.5
    return ok


@pytest.mark.parametrize("name", ["sphere", "box", "tube"])
def test_sdf_grid_from_mesh_matches_analytic_solid_near_surface(grids, name):
    grid, ref = grids[name]
    if ref is None:  # the annular tube solid: exact distance in the (rho, x) half-plane
        def exact(p):
            return tube_solid_distance(p, 0.4, 0.6, 1.6)

        def exact_normal(p):  # numerical gradient of the exact distance; step << voxel
            eps = 1e-6
            return np.stack([(exact(p + eps * e) - exact(p - eps * e)) / (2 * eps) for e in np.eye(3)], axis=1)
    else:
        def exact(p):
            return ref(p)[0]

        def exact_normal(p):
            return ref(p)[1]
    p, d_exact, near = near_surface_points(grid, exact)
    assert near.sum() > 1000
    d, n = grid.query(p)
    # faceting of the meshes is < 0.03 voxel; the rest is trilinear error
    err_vox = np.abs(d - d_exact)[near] / grid.spacing
    assert err_vox.max() <= HALF_VOXEL, f"{name}: max error {err_vox.max():.3f} voxel near the surface"
    np.testing.assert_allclose(np.linalg.norm(n, axis=1), 1.0, atol=1e-9)
    n_exact = exact_normal(p[near])
    dots = np.einsum("ij,ij->i", n[near], n_exact)
    # In a cell that the medial surface crosses (a kink of the exact field:
    # inside convex edges, mid-wall in the thin tube wall) the interpolated
    # gradient blends the normals of both sides, and the exact normal itself
    # jumps. In every other cell the exact normal hardly turns across the 8
    # corners and the interpolated one must be close (dot > 0.9).
    assert dots[smooth_cells(grid, p[near], n_exact, exact_normal)].min() > 0.9
    outside = d_exact > 0
    assert np.all(d[outside & near & (d_exact > HALF_VOXEL * grid.spacing)] > 0)


def test_sdf_grid_tube_bore_is_positive_and_matches_tube_primitive(grids):
    grid, _ = grids["tube"]
    r = rng()
    # the 64-gon inscribed in the bore sits up to 0.4 (1 - cos(pi/64)) = 0.5 mm
    # inside the circle: stay half a voxel (24 mm) off the wall
    rho = r.uniform(0.0, 0.4 - HALF_VOXEL * grid.spacing, 3000)
    phi = r.uniform(0, 2 * np.pi, 3000)
    p = np.stack([r.uniform(-0.7, 0.7, 3000), rho * np.cos(phi), rho * np.sin(phi)], axis=1)
    d, n = grid.query(p)
    assert np.all(d > 0), "the bore of a tube seen from inside is free space"
    d_ref, n_ref = Tube(0.4, 1.6).query(p)
    near = d_ref < CONTACT_BAND * grid.spacing
    assert np.abs(d - d_ref)[near].max() <= HALF_VOXEL * grid.spacing
    assert np.einsum("ij,ij->i", n[near], n_ref[near]).min() > 0.9


def test_sdf_grid_from_inward_mesh_is_flipped_with_warning(caplog):
    sphere = trimesh.creation.icosphere(subdivisions=2, radius=1.0)
    good = sdf_grid_from_mesh(sphere.vertices, sphere.faces, resolution=16)
    with caplog.at_level(logging.WARNING, logger="eels_gz.terrain._mesh_sdf"):
        flipped = sdf_grid_from_mesh(sphere.vertices, sphere.faces[:, ::-1], resolution=16)
    assert "inward" in caplog.text
    # nodes near the surface are exact either way; farther ones take the
    # distance to a propagated triangle, whose choice among near-ties depends
    # on the face order, so they agree to a small fraction of a voxel
    np.testing.assert_array_equal(np.sign(flipped.values), np.sign(good.values))
    near = np.abs(good.values) < CONTACT_BAND * good.spacing
    np.testing.assert_array_equal(flipped.values[near], good.values[near])
    np.testing.assert_allclose(flipped.values, good.values, rtol=0, atol=0.1 * good.spacing)


def test_sdf_grid_from_mesh_honours_spacing_and_padding():
    box = trimesh.creation.box(extents=(1.0, 1.0, 1.0))
    grid = sdf_grid_from_mesh(box.vertices, box.faces, spacing=0.1, padding=0.2)
    lo, hi = grid.bounds
    assert grid.spacing == 0.1
    assert np.all(lo <= -0.5 - 0.2 + 1e-9) and np.all(hi >= 0.5 + 0.2 - 1e-9)
    assert np.all(hi - lo < 1.4 + 0.1 + 1e-9)  # no more than one extra voxel of slack


def test_sdf_grid_from_mesh_refuses_bad_meshes():
    sphere = trimesh.creation.icosphere(subdivisions=2, radius=1.0)
    v, f = sphere.vertices, sphere.faces
    with pytest.raises(TerrainError, match="not watertight: 3 boundary edge"):
        sdf_grid_from_mesh(v, f[1:], resolution=16)
    flipped_one = f.copy()
    flipped_one[0] = flipped_one[0, ::-1]
    with pytest.raises(TerrainError, match="inconsistently oriented"):
        sdf_grid_from_mesh(v, flipped_one, resolution=16)
    with pytest.raises(TerrainError, match="empty"):
        sdf_grid_from_mesh(np.zeros((0, 3)), np.zeros((0, 3), dtype=int), resolution=16)
    with pytest.raises(TerrainError, match="face indices"):
        sdf_grid_from_mesh(v, f + len(v), resolution=16)
    with pytest.raises(TerrainError, match="faces must be an integer"):
        sdf_grid_from_mesh(v, f.astype(float), resolution=16)
    with pytest.raises(TerrainError, match="not both"):
        sdf_grid_from_mesh(v, f, spacing=0.1, resolution=16)
    with pytest.raises(TerrainError, match="too large"):
        sdf_grid_from_mesh(v, f, spacing=1e-4)


# ---------------------------------------------------------------- queries


@pytest.mark.parametrize("field", [
    planar_raster()[0],
    SdfGrid(np.zeros((3, 3, 3)), (0, 0, 0), 1.0),
    Plane(),
    Sphere(np.zeros(3), 1.0),
    Union((Plane(), Sphere(np.zeros(3), 1.0))),
])
def test_query_refuses_bad_points(field):
    kind = type(field).__name__
    with pytest.raises(TerrainError, match=rf"{kind}.query: points must have shape \(N, 3\), got \(3,\)"):
        field.query(np.zeros(3))
    with pytest.raises(TerrainError, match=r"got \(4, 2\)"):
        field.query(np.zeros((4, 2)))
    with pytest.raises(TerrainError, match="dtype complex128"):
        field.query(np.zeros((4, 3), dtype=complex))
    bad = np.zeros((5, 3))
    bad[3, 1] = np.nan
    with pytest.raises(TerrainError, match="1 query point.* row 3"):
        field.query(bad)
    assert issubclass(TerrainError, EelsError) and issubclass(TerrainError, ValueError)


def test_query_returns_empty_arrays_for_no_points():
    d, n = planar_raster()[0].query(np.zeros((0, 3)))
    assert d.shape == (0,) and n.shape == (0, 3)


def test_kernels_are_callable_from_other_numba_kernels():
    hf, _ = planar_raster()
    grid = SdfGrid(np.arange(27.0).reshape(3, 3, 3), (0.0, 0.0, 0.0), 0.5)

    @njit
    def both(heights, values, p):
        a = _kernels.heightfield_point(heights, -1.0, 2.0, 0.5, 0.25, p[0], p[1], p[2])
        b = _kernels.sdf_grid_point(values, 0.0, 0.0, 0.0, 0.5, p[0], p[1], p[2])
        return a[0], b[0], b[3]

    p = np.array([0.3, 0.4, 0.2])
    hd, gd, gnz = both(hf.heights, grid.values, p)
    assert hd == hf.query(p[None])[0][0]
    assert gd == grid.query(p[None])[0][0] and gnz == grid.query(p[None])[1][0, 2]


# ---------------------------------------------------------------- files


def test_save_load_round_trip_is_exact(tmp_path):
    hf, _ = planar_raster()
    values = rng().standard_normal((4, 5, 6)).astype(np.float32)
    grid = SdfGrid(values, (0.1, -0.2, 0.3), 0.05)
    for field, name in [(hf, "hf.npz"), (grid, "grid.npz")]:
        loaded = load_field(save_field(tmp_path / name, field))
        assert type(loaded) is type(field) and loaded.kind == field.kind
        for attr in ("heights", "origin_xy", "spacing_xy") if field.kind == "heightfield" else \
                ("values", "origin", "spacing"):
            a, b = getattr(field, attr), getattr(loaded, attr)
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
            assert np.asarray(a).dtype == np.asarray(b).dtype


def test_save_refuses_analytic_fields(tmp_path):
    with pytest.raises(TerrainError, match="only heightfield, sdf_grid"):
        save_field(tmp_path / "plane.npz", Plane())


def test_load_refuses_malformed_files(tmp_path):
    good = save_field(tmp_path / "good.npz", planar_raster()[0])
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    garbage = tmp_path / "garbage.npz"
    garbage.write_bytes(b"not a zip file at all")
    wrong_kind = tmp_path / "kind.npz"
    np.savez(wrong_kind, kind=np.array("voxels"), format_version=np.array(1), values=np.zeros((2, 2, 2)))
    wrong_version = tmp_path / "version.npz"
    np.savez(wrong_version, kind=np.array("sdf_grid"), format_version=np.array(99), values=np.zeros((2, 2, 2)),
             origin=np.zeros(3), spacing=np.array(1.0))
    missing = tmp_path / "missing.npz"
    np.savez(missing, kind=np.array("sdf_grid"), format_version=np.array(1), values=np.zeros((2, 2, 2)))
    no_kind = tmp_path / "nokind.npz"
    np.savez(no_kind, values=np.zeros((2, 2, 2)))
    bad_shape = tmp_path / "shape.npz"
    np.savez(bad_shape, kind=np.array("sdf_grid"), format_version=np.array(1), values=np.zeros((2, 2)),
             origin=np.zeros(3), spacing=np.array(1.0))
    cases = [(truncated, "not a readable"), (garbage, "not a readable"), (wrong_kind, "unknown field kind 'voxels'"),
             (wrong_version, "format_version"), (missing, "lacks key.*origin"), (no_kind, "missing 'kind'"),
             (bad_shape, "malformed sdf_grid"), (tmp_path / "absent.npz", "not found")]
    for path, message in cases:
        with pytest.raises(TerrainError, match=message) as info:
            load_field(path)
        assert str(path) in str(info.value)


# ---------------------------------------------------------------- primitives


def primitive_cases():
    return [
        Plane(np.array([0.0, 0.0, 0.2]), np.array([0.1, 0.0, 1.0])),
        Slope(math.radians(20.0), height=0.1),
        Tube(0.5, 2.0, np.array([0.0, 0.1, 0.0]), np.array([1.0, 1.0, 0.0])),
        Tube(0.5),
        ParallelWalls(0.6, y_center=0.1),
        UChannel(0.8, floor_z=-0.1),
        Sphere(np.array([0.1, 0.0, 0.0]), 0.7),
        Hemisphere(np.array([0.0, 0.0, -0.2]), 0.6),
        Box(np.zeros(3), np.array([0.5, 0.3, 0.2])),
    ]


@pytest.mark.parametrize("field", primitive_cases(), ids=lambda f: f.kind)
def test_primitives_are_exact_signed_distances(field):
    """For an exact SDF the normal is unit, the gradient of d, and stepping
    back by d along it lands on the surface (d = 0 there); |d| is 1-Lipschitz."""
    assert isinstance(field, DistanceField)
    p = rng().uniform(-1.5, 1.5, (4000, 3))
    d, n = field.query(p)
    np.testing.assert_allclose(np.linalg.norm(n, axis=1), 1.0, atol=1e-12)
    foot = p - d[:, None] * n
    np.testing.assert_allclose(field.query(foot)[0], 0.0, atol=1e-9)
    # gradient: central differences with step 1e-6 m; O(step) error except
    # within a step of a tie (medial surface), which these random points avoid
    # with probability ~1 - 1e-5 each, so allow a tiny fraction
    eps = 1e-6
    grad = np.stack([(field.query(p + eps * e)[0] - field.query(p - eps * e)[0]) / (2 * eps) for e in np.eye(3)],
                    axis=1)
    mismatch = np.linalg.norm(grad - n, axis=1) > 1e-5
    assert mismatch.mean() < 2e-3
    q = p + rng().normal(0, 0.1, p.shape)
    assert np.all(np.abs(field.query(q)[0] - d) <= np.linalg.norm(q - p, axis=1) + 1e-12)


def test_primitives_closed_form_values():
    # plane tilted by the slope: a point 1 m straight above the origin is cos(angle) from it
    a = math.radians(15.0)
    d, n = Slope(a).query(np.array([[0.0, 0.0, 1.0]]))
    np.testing.assert_allclose(d, [math.cos(a)], atol=EXACT)
    np.testing.assert_allclose(n[0], [-math.sin(a), 0.0, math.cos(a)], atol=EXACT)
    # tube bore: radius - rho, normal toward the axis; beyond the ends: rim distance
    tube = Tube(0.5, 2.0)
    d, n = tube.query(np.array([[0.3, 0.2, 0.0], [1.3, 0.2, 0.0], [1.3, 0.9, 0.0], [0.5, 0.0, 0.7]]))
    np.testing.assert_allclose(d, [0.3, math.hypot(0.3, 0.3), 0.3, -0.2], atol=EXACT)
    np.testing.assert_allclose(n[0], [0.0, -1.0, 0.0], atol=EXACT)
    np.testing.assert_allclose(n[2], [1.0, 0.0, 0.0], atol=EXACT)
    np.testing.assert_allclose(n[3], [0.0, 0.0, -1.0], atol=EXACT)
    # walls: half gap minus offset; U channel: nearest of floor and walls, and the corner inside the solid
    d, n = ParallelWalls(1.0).query(np.array([[0.0, 0.2, 5.0], [0.0, -0.7, 0.0]]))
    np.testing.assert_allclose(d, [0.3, -0.2], atol=EXACT)
    np.testing.assert_allclose(n, [[0, -1, 0], [0, 1, 0]], atol=EXACT)
    d, n = UChannel(1.0).query(np.array([[0.0, 0.1, 0.2], [0.0, 0.45, 0.2], [0.0, 0.8, -0.4]]))
    np.testing.assert_allclose(d, [0.2, 0.05, -0.5], atol=EXACT)
    np.testing.assert_allclose(n, [[0, 0, 1], [0, -1, 0], [0, -0.6, 0.8]], atol=EXACT)
    # hemispherical rock: above the top, beside the base rim, below the base
    d, _ = Hemisphere(np.zeros(3), 0.5).query(np.array([[0.0, 0.0, 0.8], [0.8, 0.0, -0.4], [0.1, 0.0, -0.3]]))
    np.testing.assert_allclose(d, [0.3, 0.5, 0.3], atol=EXACT)
    d, _ = Box(np.zeros(3), np.array([1.0, 1.0, 1.0])).query(np.array([[2.0, 2.0, 0.0], [0.0, 0.0, 0.5]]))
    np.testing.assert_allclose(d, [math.sqrt(2), -0.5], atol=EXACT)


def test_union_takes_the_nearest_member():
    ground = Plane()
    rock = Hemisphere(np.array([1.0, 0.0, 0.0]), 0.5)
    terrain = Union((ground, rock))
    p = np.array([[1.0, 0.0, 0.7], [-2.0, 0.0, 0.3]])
    d, n = terrain.query(p)
    np.testing.assert_allclose(d, [0.2, 0.3], atol=EXACT)
    np.testing.assert_allclose(n, [[0, 0, 1], [0, 0, 1]], atol=EXACT)
    # beside the rock, nearer its cap (0.689 - 0.5) than the ground (0.3): the rock's normal
    d_side, n_side = terrain.query(np.array([[1.0, 0.62, 0.3]]))
    np.testing.assert_allclose(d_side, [math.hypot(0.62, 0.3) - 0.5], atol=EXACT)
    np.testing.assert_allclose(n_side[0], np.array([0.0, 0.62, 0.3]) / math.hypot(0.62, 0.3), atol=EXACT)
    lo, hi = Union((Sphere(np.zeros(3), 1.0), Box(np.array([2.0, 0, 0]), np.ones(3)))).bounds
    np.testing.assert_array_equal(lo, [-1, -1, -1])
    np.testing.assert_array_equal(hi, [3, 1, 1])
    with pytest.raises(TerrainError, match="at least one"):
        Union(())
    with pytest.raises(TerrainError, match=r"fields\[1\]"):
        Union((ground, "rock"))


@pytest.mark.parametrize("make, message", [
    (lambda: Plane(normal=np.zeros(3)), "normal must be a non-zero"),
    (lambda: Slope(math.pi / 2), "angle_rad"),
    (lambda: Tube(-1.0), "radius"),
    (lambda: Tube(1.0, length=float("nan")), "length"),
    (lambda: ParallelWalls(0.0), "gap"),
    (lambda: UChannel(1.0, floor_z=float("inf")), "floor_z"),
    (lambda: Sphere(np.zeros(2), 1.0), "center"),
    (lambda: Box(np.zeros(3), np.array([1.0, 0.0, 1.0])), "half_extents"),
])
def test_primitives_refuse_bad_parameters(make, message):
    with pytest.raises(TerrainError, match=message):
        make()
