"""Every shipped world of the registry: valid for libsdformat, every URI it
references exists, it loads in the host, its model is small, and its physics
and friction are those of worlds/ice_plane.sdf. Probe spheres rest at the
closed-form height on the triangulated terrain (native DART contact) and the
terrain's distance field puts their centres one radius from the surface;
probes pushed against the walls of the tube and the moulin stay inside."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from lxml import etree
from world_probes import PROBE_RADIUS, add_free_probe, add_slider_probe, touch_height

from eels_gz import registry
from eels_gz.dart.simulation import Simulation
from eels_gz.paths import asset
from eels_gz.sdf_reader import resolve_uri
from eels_gz.terrain.fields import HeightField
from eels_gz.terrain.world_terrain import FIELD_FILE, find_terrain_field
from eels_gz.terrain.worldgen import MoulinParams, RockFieldParams, rocks

IGN = shutil.which("ign")
WORLDS = sorted(registry.WORLDS)
GENERATED = sorted(n for n, w in registry.WORLDS.items() if w.recipe)
MAX_MODEL_BYTES = 5_000_000  # "a few MB at most"

N_SPOTS = 20
T_REST = 0.3  # s: a probe released 2 cm above its rest height lands after sqrt(2*0.02/g) = 0.064 s
DROP = 0.02  # m above the expected rest height
# Tolerances. The requirement is 1 cm. DART pushes the impact penetration
# (v = sqrt(2 g 0.02) = 0.63 m/s -> ~0.6 mm in one 1 ms step) back out at its
# 1e-3 m/s cap, so ~0.6 mm of residual penetration can remain after 0.3 s;
# the mesh chord error of the curved worlds (u_channel 3 cm segments on
# r = 0.5 m: 0.2 mm; rock hemispheres with 32 x 8 facets: 0.5 % of r, 2 mm
# for the largest rock) and the raster interpolation of the DEM stay below that.
Z_TOL = 0.01  # m
FIELD_TOL = 0.01  # m, |field distance at the probe centre - radius|


def terrain_meta(name: str) -> dict | None:
    path = asset("models", name, "terrain.json")
    return json.loads(path.read_text()) if path.is_file() else None


def references(path: Path) -> list[tuple[str, Path]]:
    """Every <uri> of a world and of the model files it includes, resolved."""
    out = []
    todo = [path]
    while todo:
        file = todo.pop()
        for node in etree.parse(str(file)).getroot().iter("uri"):
            uri = node.text.strip()
            target = resolve_uri(uri, file.parent)
            out.append((uri, target))
            if target is not None and target.is_dir() and (target / "model.sdf").is_file():
                todo.append(target / "model.sdf")
    return out


# --- files ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", WORLDS)
def test_world_passes_libsdformat(name):
    if IGN is None:
        if os.environ.get("CI"):
            pytest.fail("`ign` (libsdformat) is required in CI")
        pytest.skip("`ign` (libsdformat's command line tool) is not on PATH")
    env = dict(os.environ, SDF_PATH=str(asset("models")))  # libsdformat resolves model:// through SDF_PATH
    res = subprocess.run([IGN, "sdf", "-k", str(registry.world_path(name))], capture_output=True, text=True,
                         timeout=60, env=env)
    errors = [line for line in (res.stdout + res.stderr).splitlines() if "Error" in line or "Warning" in line]
    assert res.returncode == 0 and "Valid." in res.stdout, res.stdout + res.stderr
    assert not errors, "\n".join(errors)


@pytest.mark.parametrize("name", WORLDS)
def test_every_uri_exists(name):
    refs = references(registry.world_path(name))
    missing = [uri for uri, target in refs if target is None or not target.exists()]
    assert not missing, f"{name}: unresolved URIs {missing}"


@pytest.mark.parametrize("name", GENERATED)
def test_model_folder_is_complete_and_small(name):
    folder = asset("models", name)
    for f in ("model.config", "model.sdf", FIELD_FILE, "terrain.json"):
        assert (folder / f).is_file(), f"{folder} lacks {f}"
    total = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    assert total <= MAX_MODEL_BYTES, f"{name}: model folder is {total / 1e6:.2f} MB"


@pytest.mark.parametrize("name", GENERATED)
def test_physics_and_friction_follow_ice_plane(name):
    """One source: dt, gravity and friction are those of worlds/ice_plane.sdf."""
    ice = etree.parse(str(registry.world_path("ice_plane"))).getroot()
    world = etree.parse(str(registry.world_path(name))).getroot()
    model = etree.parse(str(asset("models", name, "model.sdf"))).getroot()
    for path in ("world/physics/max_step_size", "world/gravity"):
        assert world.findtext(path).split() == ice.findtext(path).split(), path
    mu = ice.findtext("world/model/link/collision/surface/friction/ode/mu")
    collisions = model.findall("model/link/collision")
    assert collisions and all(float(c.findtext("surface/friction/ode/mu")) == float(mu) for c in collisions)
    heightmap = model.find("model/link/collision/geometry/heightmap") is not None
    detector = world.findtext("world/physics/dart/collision_detector")
    assert detector == ("bullet" if heightmap else ice.findtext("world/physics/dart/collision_detector"))


def _boxes(name: str) -> list[tuple[np.ndarray, np.ndarray, float]]:
    """(centre, size, pitch about y) of each box collision of models/NAME, in the world frame."""
    model = etree.parse(str(asset("models", name, "model.sdf"))).getroot()
    origin = np.array([float(v) for v in (model.findtext("model/pose") or "0 0 0 0 0 0").split()[:3]])
    out = []
    for c in model.findall("model/link/collision"):
        if c.find("geometry/box") is None:
            continue
        pose = [float(v) for v in c.findtext("pose").split()]
        out.append((origin + pose[:3], np.array([float(v) for v in c.findtext("geometry/box/size").split()]), pose[4]))
    return out


BOXED = [n for n in GENERATED if _boxes(n)]


def test_planar_terrains_are_boxes_so_gz_sim_applies_their_friction():
    """gz-sim 8 gives a mesh collision DART's default friction 1 (docs/gazebo.md): the terrains that are
    exactly boxes are written as boxes."""
    kinds = {n: json.loads(asset("models", n, "terrain.json").read_text())["kind"] for n in GENERATED}
    assert {n for n in GENERATED if kinds[n] in ("parallel_walls", "slope", "sandbox", "soil_bin")} == set(BOXED)


@pytest.mark.parametrize("name", BOXED)
def test_a_boxed_terrain_is_its_solid(name):
    """The boxes are the terrain. The parallel walls: their volume is the collision mesh's (a closed
    solid), to 1e-6 (the binary STL holds float32: 6e-8 relative per coordinate), and no box reaches
    outside its bounds. A plane z = x tan(a):
    each box's top corners lie on it (to 1e-12 m) over the whole x range, the rest below."""
    meta = json.loads(asset("models", name, "terrain.json").read_text())
    boxes = _boxes(name)
    if meta["kind"] == "parallel_walls":
        import trimesh

        mesh = trimesh.load(asset("models", name, "meshes", "collision.stl"))
        assert sum(float(np.prod(size)) for _, size, _ in boxes) == pytest.approx(mesh.volume, rel=1e-6)
        for centre, size, pitch in boxes:
            assert pitch == 0.0
            assert np.all(centre - size / 2 >= mesh.bounds[0] - 1e-6)
            assert np.all(centre + size / 2 <= mesh.bounds[1] + 1e-6)
        return
    (centre, size, pitch), = boxes
    angle = math.radians(meta["parameters"].get("angle", 0.0))
    assert pitch == pytest.approx(-angle, abs=1e-15)
    c, s_ = math.cos(pitch), math.sin(pitch)
    R = np.array([[c, 0, s_], [0, 1, 0], [-s_, 0, c]])
    corners = np.array([centre + R @ (size / 2 * np.array(k)) for k in np.ndindex(2, 2, 2)
                        for k in [np.array(k) * 2 - 1]])
    top = corners[np.argsort(corners[:, 2] - corners[:, 0] * math.tan(angle))[-4:]]
    np.testing.assert_allclose(top[:, 2], top[:, 0] * math.tan(angle), atol=1e-12)
    assert sorted(set(np.round(top[:, 0], 9))) == pytest.approx([-meta["parameters"]["length"] / 2,
                                                                  meta["parameters"]["length"] / 2])
    assert np.all(corners[:, 2] <= corners[:, 0] * math.tan(angle) + 1e-12)


@pytest.mark.parametrize("name", WORLDS)
def test_world_loads_in_host_and_has_a_field(name):
    sim = Simulation(registry.world_path(name))
    assert sim.spec.name == name
    sim.step()
    field = find_terrain_field(sim.spec)
    assert field is not None
    # the file path gives the same field as the parsed spec
    assert type(find_terrain_field(registry.world_path(name))) is type(field)


# --- resting heights ----------------------------------------------------------------------------------
def rock_rest(rows: np.ndarray, x: float, y: float, a: float) -> float:
    """Sphere of radius a lowered at (x, y) onto flat ground with hemispherical rocks
    (x_k, y_k, r_k): it touches rock k when its centre is r_k + a from the rock's
    centre, at height sqrt((r_k + a)^2 - rho^2), else the ground at height a."""
    rho2 = (rows[:, 0] - x) ** 2 + (rows[:, 1] - y) ** 2
    z = np.sqrt(np.clip((rows[:, 2] + a) ** 2 - rho2, 0, None))
    return float(max(a, z.max(initial=0.0)))


def surface_cases(name: str, rng) -> list[tuple[float, float, float]]:
    """(x, y, expected rest height of the probe centre) at N_SPOTS random spots."""
    meta = terrain_meta(name)
    kind = meta["kind"] if meta else "plane"
    p = meta["parameters"] if meta else {}
    a = PROBE_RADIUS
    if kind == "plane":
        xy = rng.uniform(-5, 5, (N_SPOTS, 2))
        return [(x, y, a) for x, y in xy]
    if kind == "soil_bin":
        xy = rng.uniform(-1, 1, (N_SPOTS, 2)) * [p["length"] / 2 - 0.5, p["width"] / 2 - 0.2]
        return [(x, y, a) for x, y in xy]
    if kind in ("slope", "sandbox"):
        t = math.radians(p["angle"])
        xy = rng.uniform(-1, 1, (N_SPOTS, 2)) * [p["length"] / 2 - 0.5, p["width"] / 2 - 0.5]
        return [(x, y, x * math.tan(t) + a / math.cos(t)) for x, y in xy]  # plane: h + a / cos(theta)
    if kind == "parallel_walls":
        xy = rng.uniform(-1, 1, (N_SPOTS, 2)) * [p["length"] / 2 - 0.5, p["gap"] / 2 - a - 0.01]
        return [(x, y, a) for x, y in xy]
    if kind == "u_channel":
        R = p["radius"]
        xy = rng.uniform(-1, 1, (N_SPOTS, 2)) * [p["length"] / 2 - 0.5, 0.8 * (R - a)]
        return [(x, y, R - math.sqrt((R - a) ** 2 - y * y)) for x, y in xy]  # centre R - a from the axis
    if kind == "rock_field":
        rows = rocks(RockFieldParams(**p))
        xy = rng.uniform(-1, 1, (N_SPOTS, 2)) * (p["size"] / 2 - 0.5)
        # half the spots on rocks, so both the ground and the hemispheres are probed
        k = rng.choice(len(rows), N_SPOTS // 2, replace=False)
        xy[: N_SPOTS // 2] = rows[k, :2] + rng.uniform(-0.5, 0.5, (N_SPOTS // 2, 2)) * rows[k, 2:3]
        return [(x, y, rock_rest(rows, x, y, a)) for x, y in xy]
    if kind == "mars_dem":
        field = HeightField(**{k: v for k, v in _heightfield_arrays(name).items()})
        xy = rng.uniform(-1, 1, (N_SPOTS, 2)) * (p["size"] / 2 - 1.0)
        return [(x, y, touch_height(field.height, x, y)) for x, y in xy]
    return []


def _heightfield_arrays(name: str) -> dict:
    with np.load(asset("models", name, FIELD_FILE)) as npz:
        return {"heights": npz["heights"], "origin_xy": tuple(npz["origin_xy"]), "spacing_xy": tuple(npz["spacing_xy"])}


SURFACE_WORLDS = [n for n in WORLDS if surface_cases(n, np.random.default_rng(0))]


def test_surface_worlds_are_the_expected_ones():
    """Guard against a world silently dropping out of the resting-height test."""
    assert set(SURFACE_WORLDS) == {"ice_plane", "slope_10", "parallel_walls", "u_channel", "rock_field", "mars_dem",
                                   "soil_bin", "sandbox_0", "sandbox_5", "sandbox_10", "sandbox_15", "sandbox_20"}


@pytest.mark.parametrize("name", SURFACE_WORLDS)
def test_probes_rest_at_expected_height_and_field_distance(name):
    rng = np.random.default_rng(2024)
    cases = surface_cases(name, rng)
    sim = Simulation(registry.world_path(name))
    probes = [add_slider_probe(sim.world, f"probe_{k}", x, y, z + DROP) for k, (x, y, z) in enumerate(cases)]
    for _ in range(int(round(T_REST / sim.dt))):
        sim.world.step()
    z_rest = np.array([s.getPositions()[0] for s in probes])
    v_rest = np.array([s.getVelocities()[0] for s in probes])
    expected = np.array([c[2] for c in cases])
    err = z_rest - expected
    assert np.abs(err).max() <= Z_TOL, f"{name}: rest height errors (m) {np.round(err, 4)}"
    assert np.abs(v_rest).max() < 1e-2, f"{name}: probes still moving at {v_rest} m/s"
    field = find_terrain_field(sim.spec)
    centres = np.array([[x, y, z] for (x, y, _), z in zip(cases, z_rest)])
    d, n = field.query(centres)
    assert np.abs(d - PROBE_RADIUS).max() <= FIELD_TOL, f"{name}: field distances {np.round(d, 4)}"
    assert np.allclose(np.linalg.norm(n, axis=1), 1.0, atol=1e-9)
    assert (n[:, 2] > 0).all(), "the surface normal under a resting probe points up"


# --- inside the tube and the moulin -----------------------------------------------------------------------
PUSH_FORCE = 30.0  # N, about 3 probe weights
T_PUSH = 0.5  # s


def push_to_the_wall(sim, field, starts, dirs, where: str) -> np.ndarray:
    """Free probes at ``starts``, each pushed along its ``dirs`` for T_PUSH; their final centres, once
    checked to touch the wall (within 1 cm) and not to have sunk into it (no deeper than 1 cm;
    contact penetration is sub-mm)."""
    bodies = [add_free_probe(sim.world, f"probe_{k}", s) for k, s in enumerate(starts)]
    for _ in range(int(round(T_PUSH / sim.dt))):
        for body, u in zip(bodies, dirs):
            body.addExtForce(PUSH_FORCE * u)
        sim.world.step()
    centres = np.array([b.getWorldTransform().translation() for b in bodies])
    d, _ = field.query(centres)
    assert (d >= PROBE_RADIUS - 0.01).all(), f"{where}: probe sank into the wall, distances {np.round(d, 4)}"
    assert (d <= PROBE_RADIUS + 0.01).all(), f"{where}: probe not at the wall, distances {np.round(d, 4)}"
    return centres


@pytest.mark.parametrize("name, gravity_on", [("tube", True), ("moulin", False)])
def test_probe_pushed_against_wall_stays_inside(name, gravity_on):
    """Probes start on the bore's axis and are pushed sideways in 8 directions; they
    reach the wall (their centre one radius from the surface, by the distance field)
    and stay inside the bore, within the roughness of its nominal radius. The moulin's
    probes are in its round part, above the slot (test_probes_pushed_across_the_slot)."""
    meta = terrain_meta(name)
    p = meta["parameters"]
    R, rough = p["radius"], p["roughness"]
    sim = Simulation(registry.world_path(name))
    if not gravity_on:
        sim.world.setGravity(np.zeros(3))
    angles = np.linspace(0, 2 * np.pi, 8, endpoint=False)
    if name == "tube":  # axis along x at z = R; push in the (y, z) plane
        starts = [np.array([x, 0.0, R]) for x in np.linspace(-2, 2, 8)]
        plane = (1, 2)
        dirs = [np.array([0.0, math.cos(t), math.sin(t)]) for t in angles]
    else:  # vertical shaft; push horizontally at several depths
        starts = [np.array([0.0, 0.0, -z]) for z in np.linspace(2.0, p["slot_top"] - 0.5, 8)]
        plane = (0, 1)
        dirs = [np.array([math.cos(t), math.sin(t), 0.0]) for t in angles]
    field = find_terrain_field(sim.spec)
    # start each probe on the bore's local centre line: the free point of its cross-section
    # farthest from the wall (the moulin's shaft meanders)
    g = np.linspace(-R, R, 41)
    for k, s in enumerate(starts):
        grid = np.repeat(s[None], g.size**2, axis=0)
        grid[:, plane[0]] += np.repeat(g, g.size)
        grid[:, plane[1]] += np.tile(g, g.size)
        starts[k] = grid[np.argmax(field.query(grid)[0])]
    d0, _ = field.query(np.array(starts))
    assert (d0 > R - 4 * rough - 0.05).all(), f"probes must start in the bore, distances {d0}"
    centres = push_to_the_wall(sim, field, starts, dirs, name)
    # across the bore (the plane of the push: a probe may slide along the slanting wall of the
    # meandering moulin, which is not leaving it)
    moved = np.linalg.norm((centres - np.array(starts))[:, list(plane)], axis=1)
    bound = R + 4 * rough
    assert (moved < bound).all(), f"{name}: probe left the bore (moved {np.round(moved, 3)} m)"


def test_probes_pushed_across_the_slot_stay_inside():
    """The moulin's slot (from slot_top + slot_transition down): probes start on its mid-line, found
    by following the shaft's centre line down from the opening (the air around the ice block is
    farther from ice than the narrow slot's mid-line, so a wide search would leave the shaft), and
    are pushed across it (+-y), where a snake stems. They reach the wall, within 1 cm of touching,
    no deeper than 1 cm in (the nominal 1 cm of the round part; the slot's roughness is
    slot_roughness), and stay within the slot's half-width plus 4 rms of it from the mid-line."""
    p = terrain_meta("moulin")["parameters"]
    mp = MoulinParams(**p)
    sim = Simulation(registry.world_path("moulin"))
    sim.world.setGravity(np.zeros(3))
    field = find_terrain_field(sim.spec)
    depths = np.linspace(mp.slot_top + mp.slot_transition + 0.3, mp.depth - 0.3, 6)
    g = np.linspace(-mp.radius / 2, mp.radius / 2, 41)
    last, starts = np.zeros(3), []
    for z in np.concatenate([np.arange(0.5, depths[0], 0.5), depths]):  # down the centre line
        grid = np.zeros((g.size**2, 3))
        grid[:, 0] = last[0] + np.repeat(g, g.size)
        grid[:, 1] = last[1] + np.tile(g, g.size)
        grid[:, 2] = -z
        last = grid[np.argmax(field.query(grid)[0])]
        if z in depths:
            starts.append(last)
    d0, _ = field.query(np.array(starts))
    half = 0.5 * mp.slot_width
    assert (np.abs(d0 - half) < 4 * mp.slot_roughness + 0.02).all(), f"not on the slot's mid-line: {d0}"
    dirs = [np.array([0.0, 1.0 if k % 2 else -1.0, 0.0]) for k in range(len(starts))]
    centres = push_to_the_wall(sim, field, starts, dirs, "slot")
    moved = np.abs(centres[:, 1] - np.array(starts)[:, 1])
    assert (moved < half + 4 * mp.slot_roughness).all(), f"slot: probe left it (moved {np.round(moved, 3)} m)"
