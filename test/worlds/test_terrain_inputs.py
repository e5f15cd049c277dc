"""Terrain ingest: GeoTIFF georeferencing, PNG/.npy DEMs, nodata, budgets;
mesh repair and orientation; point-cloud loading; primitives'
arguments; the `eels-gz world` CLI; the host's <heightmap> mapping. Every
bad input gets a clear error."""

from __future__ import annotations

import logging
import math
import re

import numpy as np
import pytest
import tifffile
import trimesh
from click.testing import CliRunner
from PIL import Image

from eels_gz.cli import main
from eels_gz.errors import SdfError, TerrainError
from eels_gz.dart.simulation import Simulation
from eels_gz.terrain.dem import read_dem, triangulate
from eels_gz.terrain.meshes import prepare_mesh
from eels_gz.terrain.scan_io import MIN_POINTS, load_points
from eels_gz.terrain.worldgen import make_primitive, primitive_parameters
from eels_gz.terrain.world_terrain import find_terrain_field

# --- GeoTIFF ---------------------------------------------------------------------------------------------
E0, N0 = 500_000.0, 4_100_000.0  # UTM-like projected coordinates of the raster's upper-left corner, m
SX, SY = 2.0, 3.0  # m per pixel
ROWS, COLS = 40, 50
FEATURE = (10, 30)  # (row, col) of a 5 m high spike


def geokeys(raster_type: int, model_type: int = 1) -> tuple:
    # header (version 1, revision 1.0, 3 keys), then (key, location 0, count 1, value)
    return (1, 1, 0, 3, 1024, 0, 1, model_type, 1025, 0, 1, raster_type, 3076, 0, 1, 9001)


def write_geotiff(path, raster_type=1, transformation=False, nodata=None, data=None, model_type=1):
    if data is None:
        data = np.full((ROWS, COLS), 100.0, dtype=np.float32)
        data[FEATURE] = 105.0
    tags = [(34735, "H", 16, geokeys(raster_type, model_type), True)]
    if transformation:
        M = np.array([[SX, 0, 0, E0], [0, -SY, 0, N0], [0, 0, 0, 0], [0, 0, 0, 1]], float)
        tags.append((34264, "d", 16, tuple(M.ravel()), True))
    else:
        tags += [(33550, "d", 3, (SX, SY, 0.0), True), (33922, "d", 6, (0.0, 0.0, 0.0, E0, N0, 0.0), True)]
    if nodata is not None:
        tags.append((42113, "s", 0, str(nodata), True))
    tifffile.imwrite(path, data, extratags=tags)
    return path


def feature_xy(dem) -> tuple[float, float]:
    j, i = np.unravel_index(np.argmax(dem.heights), dem.shape)
    return dem.origin_xy[0] + i * dem.spacing_xy[0], dem.origin_xy[1] + j * dem.spacing_xy[1]


@pytest.mark.parametrize("raster_type, transformation", [(1, False), (2, False), (1, True)])
def test_geotiff_puts_feature_at_its_projected_coordinates(tmp_path, raster_type, transformation):
    """PixelIsArea: pixel (row, col) covers [E0 + col SX, E0 + (col+1) SX] x ..., its post at
    the centre; PixelIsPoint: the post is at E0 + col SX exactly."""
    path = write_geotiff(tmp_path / "dem.tif", raster_type, transformation)
    half = 0.5 if raster_type == 1 else 0.0
    east = E0 + (FEATURE[1] + half) * SX
    north = N0 - (FEATURE[0] + half) * SY
    dem = read_dem(path, reference=(0.0, 0.0, 0.0))
    assert feature_xy(dem) == pytest.approx((east, north), abs=1e-6)  # float64 arithmetic on exact values
    assert dem.spacing_xy == pytest.approx((SX, SY), abs=1e-12)
    assert dem.heights.max() == pytest.approx(105.0, abs=0) and dem.heights.min() == pytest.approx(100.0, abs=0)
    # default reference: raster centre and lowest point
    centred = read_dem(path)
    cx = E0 + (half + (COLS - 1) / 2) * SX
    cy = N0 - (half + (ROWS - 1) / 2) * SY
    assert feature_xy(centred) == pytest.approx((east - cx, north - cy), abs=1e-6)
    assert centred.heights.min() == 0.0 and centred.heights.max() == pytest.approx(5.0, abs=1e-12)


def test_geotiff_nodata_is_filled_with_a_warning(tmp_path, caplog):
    data = np.full((ROWS, COLS), 7.0, dtype=np.float32)
    data[:5, :5] = -9999.0
    data[20, 20] = np.nan
    path = write_geotiff(tmp_path / "holes.tif", nodata=-9999, data=data)
    with caplog.at_level(logging.WARNING):
        dem = read_dem(path, reference=(0, 0, 0))
    assert np.all(dem.heights == 7.0)  # nearest valid height everywhere
    assert re.search(r"26 of 2000 posts .* nodata or NaN; filled", caplog.text)


def test_geographic_geotiff_is_refused(tmp_path):
    path = write_geotiff(tmp_path / "latlon.tif", model_type=2)
    with pytest.raises(TerrainError, match=r"latlon\.tif.*geographic.*projected CRS"):
        read_dem(path)


def test_corrupt_tiff(tmp_path):
    good = write_geotiff(tmp_path / "good.tif").read_bytes()
    bad = tmp_path / "corrupt.tif"
    bad.write_bytes(good[:200])  # header survives, the strips and tags are cut off
    with pytest.raises(TerrainError, match=r"corrupt\.tif: cannot read the TIFF"):
        read_dem(bad)
    junk = tmp_path / "junk.tif"
    junk.write_bytes(b"not a tiff at all")
    with pytest.raises(TerrainError, match=r"junk\.tif: cannot read the TIFF"):
        read_dem(junk)


@pytest.mark.parametrize("fill", [np.nan, -9999.0])
def test_all_nodata_dem_is_refused(tmp_path, fill):
    path = write_geotiff(tmp_path / "empty.tif", nodata=-9999, data=np.full((8, 8), fill, np.float32))
    with pytest.raises(TerrainError, match=r"empty\.tif: every post of the DEM is nodata or NaN"):
        read_dem(path)
    npy = tmp_path / "nan.npy"
    np.save(npy, np.full((4, 4), np.nan))
    with pytest.raises(TerrainError, match=r"nan\.npy: every post"):
        read_dem(npy, spacing_xy=(1, 1))


def test_png_and_npy_scales(tmp_path):
    img = np.zeros((9, 17), np.uint16)
    img[0, 16] = 65535  # top row = north (largest y), last column = east: corner (+x, +y)
    Image.fromarray(img).save(tmp_path / "hm.png")
    dem = read_dem(tmp_path / "hm.png", size_xy=(32.0, 16.0), height_range=3.0, reference=(0, 0, 0))
    assert dem.spacing_xy == (2.0, 2.0)
    assert dem.heights[-1, -1] == pytest.approx(3.0, abs=1e-12) and dem.heights.sum() == pytest.approx(3.0)
    with pytest.raises(TerrainError, match=r"hm\.png: a PNG carries no scale"):
        read_dem(tmp_path / "hm.png")
    np.save(tmp_path / "h.npy", np.arange(12.0).reshape(3, 4))
    dem = read_dem(tmp_path / "h.npy", spacing_xy=(0.5, 0.25), reference=(0, 0, 0))
    assert dem.heights[2, 3] == 11.0 and dem.size_xy == (1.5, 0.5)
    with pytest.raises(TerrainError, match=r"h\.npy: a \.npy DEM carries no spacing"):
        read_dem(tmp_path / "h.npy")


def test_large_dem_is_downsampled_with_a_warning(tmp_path, caplog):
    x = np.linspace(0, 1, 201)
    np.save(tmp_path / "big.npy", np.add.outer(x, x))  # a plane: resampling keeps it exactly
    with caplog.at_level(logging.WARNING):
        dem = read_dem(tmp_path / "big.npy", spacing_xy=(0.1, 0.1), max_cells=51 * 51, reference=(0, 0, 0))
    assert dem.shape == (51, 51) and dem.size_xy == pytest.approx((20.0, 20.0))
    assert re.search(r"201 x 201 posts is over the budget of 2601; downsampled 4\.00 x per axis to 51 x 51",
                     caplog.text)
    # interior posts: a Gaussian pre-filter and bilinear resampling keep a plane exactly
    # (away from the edges, where the filter's "nearest" padding bends it); float64 round-off only
    assert dem.heights[10:-10, 10:-10] == pytest.approx(np.add.outer(x[::4], x[::4])[10:-10, 10:-10], abs=1e-9)


def test_triangulated_dem_is_a_closed_solid_with_the_posts_on_top():
    x = np.linspace(-1, 1, 11)
    from eels_gz.terrain.dem import Dem

    dem = Dem(np.add.outer(x**2, x), (0.0, 0.0), (0.1, 0.1), "t")
    v, f = triangulate(dem)
    mesh = trimesh.Trimesh(v, f)
    assert mesh.is_watertight and mesh.volume > 0
    assert len(f) == 2 * 10 * 10 + 4 * 10 * 2 + 40  # top, skirts, bottom fan
    assert np.allclose(v[: 11 * 11, 2], dem.heights.ravel(), atol=0)


# --- meshes --------------------------------------------------------------------------------------------------
def test_empty_mesh(tmp_path):
    (tmp_path / "empty.stl").write_text("solid empty\nendsolid empty\n")
    with pytest.raises(TerrainError, match=r"empty\.stl: (the mesh is empty|cannot read)"):
        prepare_mesh(tmp_path / "empty.stl")


def test_non_manifold_mesh_is_refused(tmp_path):
    box = trimesh.creation.box()
    # a fin sharing a box edge: that edge has three faces
    edge = box.vertices[[0, 1]]
    fin = trimesh.Trimesh(np.vstack([edge, [[2.0, 0.0, 0.0]]]), [[0, 1, 2]])
    trimesh.util.concatenate([box, fin]).export(tmp_path / "fin.stl")
    with pytest.raises(TerrainError, match=r"fin\.stl: the mesh is non-manifold: 1 edges .* cannot be repaired"):
        prepare_mesh(tmp_path / "fin.stl")


def test_small_hole_is_filled_large_opening_refused(tmp_path):
    box = trimesh.creation.box(extents=(2, 2, 2))
    top = box.face_normals[:, 2] > 0.5
    one_side = trimesh.Trimesh(box.vertices, box.faces[~top])  # the top quad (2 triangles) missing
    one_side.export(tmp_path / "quad_hole.stl")
    full, _ = prepare_mesh(tmp_path / "quad_hole.stl")
    assert full.is_watertight and full.volume == pytest.approx(8.0, rel=1e-12)
    sphere = trimesh.creation.icosphere(3)
    open_cap = trimesh.Trimesh(sphere.vertices, sphere.faces[sphere.triangles_center[:, 2] < 0.7])
    open_cap.export(tmp_path / "open.stl")
    with pytest.raises(TerrainError, match=r"open\.stl: the mesh is open: \d+ boundary edges"):
        prepare_mesh(tmp_path / "open.stl")


def test_tube_from_two_nested_shells_is_an_annulus(tmp_path):
    """A tube given as an outer and an inner closed cylinder, both wound outward:
    the inner one is a cavity wall and is turned inward; the solid is the annulus
    and the bore is free space (positive distance)."""
    outer = trimesh.creation.cylinder(radius=1.0, height=4.0, sections=64)
    inner = trimesh.creation.cylinder(radius=0.6, height=4.0 + 1.0, sections=64)
    inner.apply_scale([1, 1, 0.7])  # a closed cavity well inside (height 3.5)
    trimesh.util.concatenate([outer, inner]).export(tmp_path / "tube.stl")
    full, _ = prepare_mesh(tmp_path / "tube.stl")
    # STL stores float32 coordinates: relative error ~1e-7 per coordinate, 1e-6 on the volume
    assert full.volume == pytest.approx(outer.volume - inner.volume, rel=1e-6)
    assert not full.contains([[0.0, 0.0, 0.0]])[0] and full.contains([[0.8, 0.0, 0.0]])[0]


def test_units_and_decimation(tmp_path):
    trimesh.creation.icosphere(4, radius=1000.0).export(tmp_path / "ball.stl")  # in mm
    full, collision = prepare_mesh(tmp_path / "ball.stl", units="mm", max_faces=500)
    assert full.bounds[1] == pytest.approx([1, 1, 1], abs=1e-9)
    assert len(collision.faces) <= 500 and collision.is_watertight and collision.volume > 0
    with pytest.raises(TerrainError, match=r"unknown units 'furlong'"):
        prepare_mesh(tmp_path / "ball.stl", units="furlong")


# --- point clouds (reconstruction: test_scans.py) --------------------------------------------------------------
def sphere_points(n: int, radius: float = 1.0) -> np.ndarray:
    k = np.arange(n) + 0.5
    z = 1 - 2 * k / n
    phi = k * math.pi * (3 - math.sqrt(5))
    r = np.sqrt(1 - z * z)
    return radius * np.column_stack([r * np.cos(phi), r * np.sin(phi), z])


def test_too_few_points(tmp_path):
    np.savetxt(tmp_path / "few.xyz", sphere_points(MIN_POINTS - 1))
    with pytest.raises(TerrainError, match=rf"few\.xyz: {MIN_POINTS - 1} valid points; .* at least {MIN_POINTS}"):
        load_points(tmp_path / "few.xyz")


# --- primitives ------------------------------------------------------------------------------------------------
def test_unknown_primitive_arguments():
    with pytest.raises(TerrainError, match=r"primitive 'slope' has no parameter\(s\) gap; expected: angle"):
        make_primitive("slope", gap=1.0)
    with pytest.raises(TerrainError, match=r"unknown primitive 'volcano'; expected one of: ice_plane, slope"):
        make_primitive("volcano")
    with pytest.raises(TerrainError, match=r"primitive 'slope': angle = 40.0 is invalid; expected 0 to 35 degrees"):
        make_primitive("slope", angle=40)
    with pytest.raises(TerrainError, match=r"primitive 'tube': seed = 'abc' is not a int"):
        make_primitive("tube", seed="abc")


@pytest.mark.parametrize("kwargs, name, expected", [
    (dict(slot_top=10.0), "slot_top", "0 (no slot) to depth m"),
    (dict(slot_top=4.0, slot_width=1.7), "slot_width", "0 to 2 x radius m"),
    (dict(slot_top=4.0, slot_width=0.0), "slot_width", "0 to 2 x radius m"),
    (dict(slot_top=4.0, slot_transition=0.0), "slot_transition", "> 0 m"),
    (dict(slot_top=4.0, slot_width=0.35, slot_roughness=0.1), "slot_roughness", "0 to 0.2 x slot_width m"),
])
def test_moulin_slot_arguments_are_checked(kwargs, name, expected):
    message = rf"primitive 'moulin': {name} = .* is invalid; expected {re.escape(expected)}"
    with pytest.raises(TerrainError, match=message):
        make_primitive("moulin", **kwargs)


def test_moulin_slot_geometry():
    """Half-width: the radius above slot_top, slot_width / 2 below slot_top + slot_transition, a
    smoothstep between (its midpoint half way). In the mesh, the bore's rings in the slot reach
    slot_width / 2 across (y) and the radius along (x) from their centre, within 4 rms of
    slot_roughness; the slot does not wander across (y)."""
    from eels_gz.terrain.worldgen import MoulinParams

    p = MoulinParams(slot_top=4.0, slot_width=0.4, slot_transition=1.0, voxel=0.2)
    assert p.half_width(np.array([-1.0, -4.0]))[0] == pytest.approx(0.8) == p.half_width(np.array([-4.0]))[0]
    assert p.half_width(np.array([-4.5]))[0] == pytest.approx(0.5 * (0.8 + 0.2))
    assert p.half_width(np.array([-5.0, -9.0])) == pytest.approx([0.2, 0.2])
    assert MoulinParams().half_width(np.array([-9.0]))[0] == 0.8  # no slot by default
    mesh = make_primitive("moulin", slot_top=4.0, slot_width=0.4, slot_transition=1.0, voxel=0.2).collision
    v = mesh.vertices
    tol = 4 * p.slot_roughness + 1e-9
    centres = []
    for z in np.unique(np.round(v[:, 2], 6)):
        if not -p.depth < z < -(p.slot_top + p.slot_transition):
            continue
        at = v[np.isclose(v[:, 2], z)]
        # the bore's ring, not the outer wall's (radius + wall from the same centre line)
        ring = at[np.linalg.norm(at - at.mean(axis=0), axis=1) < p.radius + 0.5 * p.wall]
        c = 0.5 * (ring.max(axis=0) + ring.min(axis=0))
        assert 0.5 * np.ptp(ring[:, 1]) == pytest.approx(0.2, abs=tol)
        assert 0.5 * np.ptp(ring[:, 0]) == pytest.approx(0.8, abs=tol)
        centres.append(c[1])
    assert len(centres) > 10 and np.ptp(centres) < 2 * tol


def test_rock_field_is_deterministic_per_seed():
    a = make_primitive("rock_field", seed=3, size=6.0)
    b = make_primitive("rock_field", seed=3, size=6.0)
    c = make_primitive("rock_field", seed=4, size=6.0)
    assert np.array_equal(a.dem.heights, b.dem.heights) and not np.array_equal(a.dem.heights, c.dem.heights)
    # ROAMS hemispheres: the highest post is at most the largest radius
    assert a.dem.heights.max() <= primitive_parameters("rock_field")["r_max"]


def test_slope_field_matches_the_analytic_slope():
    from eels_gz.terrain.primitives import Slope

    t = make_primitive("slope", angle=20.0)
    pts = np.random.default_rng(0).uniform([-5, -2, -1], [5, 2, 3], (200, 3))
    d, n = t.build_field().query(pts)
    d_ref, n_ref = Slope(math.radians(20.0)).query(pts)
    assert d == pytest.approx(d_ref, abs=1e-9) and n == pytest.approx(n_ref, abs=1e-9)  # a plane is exact


# --- CLI -------------------------------------------------------------------------------------------------------
def test_cli_primitive_writes_a_loadable_world(tmp_path, monkeypatch):
    res = CliRunner().invoke(main, ["world", "primitive", "slope", "--angle", "5", "--name", "s5", "--out",
                                    str(tmp_path)])
    assert res.exit_code == 0, res.output
    monkeypatch.setenv("GZ_SIM_RESOURCE_PATH", str(tmp_path / "models"))
    sim = Simulation(tmp_path / "worlds" / "s5.sdf")
    assert sim.spec.name == "s5"
    d, _ = find_terrain_field(sim.spec).query(np.array([[1.0, 0.0, 1.0]]))
    assert d[0] == pytest.approx((1.0 - math.tan(math.radians(5))) * math.cos(math.radians(5)), abs=1e-9)


def test_cli_dem_geotiff_world(tmp_path, monkeypatch):
    """A 65 x 65 raster (2^6 + 1, Gazebo's heightmap shape) is used as is: the heightfield,
    the host's mesh and the heightmap image hold the same posts."""
    data = np.zeros((65, 65), np.float32)
    data[FEATURE] = 5.0
    path = write_geotiff(tmp_path / "site.tif", data=data)
    res = CliRunner().invoke(main, ["world", "dem", str(path), "--out", str(tmp_path / "out")])
    assert res.exit_code == 0, res.output
    monkeypatch.setenv("GZ_SIM_RESOURCE_PATH", str(tmp_path / "out" / "models"))
    sim = Simulation(tmp_path / "out" / "worlds" / "site.sdf")
    assert sim.detector_name == "bullet"
    field = find_terrain_field(sim.spec)
    dem = read_dem(path)
    x, y = feature_xy(dem)
    assert field.height(np.array([x]), np.array([y]))[0] == pytest.approx(5.0, abs=1e-9)


@pytest.mark.parametrize("args, message", [
    (["primitive", "slope", "--gap", "1"], "eels-gz: error: primitive 'slope' has no parameter(s) gap"),
    (["primitive", "slope", "-p", "angle"], "eels-gz: error: --param 'angle' must be KEY=VALUE"),
    (["dem", "{tmp}/corrupt.tif"], "eels-gz: error: {tmp}/corrupt.tif: cannot read the TIFF"),
    (["mesh", "{tmp}/empty.stl"], "eels-gz: error: {tmp}/empty.stl: the mesh is empty"),
    (["pointcloud", "{tmp}/few.xyz"], "eels-gz: error: {tmp}/few.xyz: 3 valid points"),
])
def test_cli_bad_input_exits_2_with_message(tmp_path, args, message):
    (tmp_path / "corrupt.tif").write_bytes(b"II*\x00garbage")
    (tmp_path / "empty.stl").write_bytes(b"\x00" * 80 + b"\x00\x00\x00\x00")  # binary STL with 0 triangles
    np.savetxt(tmp_path / "few.xyz", np.eye(3))
    args = [a.format(tmp=tmp_path) for a in args]
    res = CliRunner().invoke(main, ["world", *args, "--out", str(tmp_path / "out")])
    assert res.exit_code == 2, res.output
    assert message.format(tmp=tmp_path) in res.output


# --- host: <heightmap> ----------------------------------------------------------------------------------------
def heightmap_world(tmp_path, size="32 32 1", pos="0 0 0", with_mesh=True):
    v, f = triangulate(__import__("eels_gz.terrain.dem", fromlist=["Dem"]).Dem(
        np.array([[0.0, 0.0], [0.0, 1.0]]), (-16.0, -16.0), (32.0, 32.0), "t"))
    Image.fromarray(np.array([[0, 65535], [0, 0]], np.uint16)).save(tmp_path / "hm.png")
    if with_mesh:
        trimesh.Trimesh(v, f).export(tmp_path / "hm.stl")
    text = f"""<?xml version="1.0"?>
<sdf version="1.9"><world name="w"><model name="g"><static>true</static><link name="l">
<collision name="c"><geometry><heightmap><uri>hm.png</uri><size>{size}</size><pos>{pos}</pos></heightmap></geometry>
</collision></link></model></world></sdf>
"""
    (tmp_path / "w.sdf").write_text(text)
    return tmp_path / "w.sdf"


def test_host_heightmap_uses_the_triangulated_sibling(tmp_path):
    sim = Simulation(heightmap_world(tmp_path))
    (model,) = sim.spec.models
    assert model.links[0].collisions[0].geometry.mesh_file.endswith("hm.stl")


def test_host_heightmap_without_mesh_or_with_a_stale_one(tmp_path):
    with pytest.raises(SdfError, match=r"w\.sdf:3: <heightmap> 'hm\.png' has no triangulated sibling 'hm\.stl'"):
        Simulation(heightmap_world(tmp_path, with_mesh=False))
    with pytest.raises(SdfError, match=r"w\.sdf:3: the heightmap's mesh 'hm\.stl' spans .* regenerate it"):
        Simulation(heightmap_world(tmp_path, size="40 32 1"))
