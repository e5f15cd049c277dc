"""Issue 31 §2: a scan or mesh in georeferenced coordinates keeps its precision and its place.

The same scan is written twice, at its own coordinates (near the origin) and moved to a UTM position
(easting 500 km, northing 4100 km). Read back as the hosts read them (the collision mesh through the
SDF loader with the model's pose; the field through find_terrain_field, which the screw contact,
placement and sensors use), the UTM terrain must match the origin terrain moved by the offset. Before
this, the float32 STL held the UTM mesh in 0.25-0.5 m steps (6 distinct y values across the shaft)."""

from __future__ import annotations

import numpy as np
import trimesh
from faults_cli import cli

from eels_gz.sdf_reader import load_world
from eels_gz.terrain.world_terrain import find_terrain_field

REPO_SCAN = "examples/moulin_scan.xyz"
UTM = np.array([500_000.0, 4_100_000.0, 1_500.0])
# m: the two terrains may differ by the float32 rounding of their STL coordinates (1e-7 m at the scan's
# few metres) and by the double round-off of the reconstruction at 4.1e6 m (1e-9 m, amplified by the
# voxel interpolation); 10 um is far below a scan's noise, and 25 000 times below the 0.25 m steps
PRECISION = 1e-5


def mesh_in_world(world) -> np.ndarray:
    """World vertices (N, 3) of the world's static collision mesh as the host loads it (model pose in)."""
    model = next(m for m in load_world(world).models if m.static)
    link = model.links[0]
    col = link.collisions[0]
    T = np.asarray(model.pose) @ np.asarray(link.pose) @ np.asarray(col.pose)
    v = np.asarray(trimesh.load(col.geometry.mesh_file, force="mesh").vertices, dtype=float)
    return v @ T[:3, :3].T + T[:3, 3]


def build(tmp_path, monkeypatch, command: str, source, shifted):
    """(origin world, UTM world) written by ``eels-gz world COMMAND`` from ``source`` and ``shifted``."""
    worlds = []
    for name, file in (("here", source), ("utm", shifted)):
        res = cli("world", command, file, "--name", name, "--out", tmp_path / name)
        assert res.exit_code == 0, res.output
        worlds.append(tmp_path / name / "worlds" / f"{name}.sdf")
    monkeypatch.setenv("GZ_SIM_RESOURCE_PATH", f"{tmp_path / 'here' / 'models'}:{tmp_path / 'utm' / 'models'}")
    return worlds


def check_same_terrain(here, utm) -> None:
    a, b = mesh_in_world(here), mesh_in_world(utm)
    assert a.shape == b.shape
    assert np.abs(b - UTM - a).max() < PRECISION, "the UTM collision mesh lost precision"
    fa, fb = find_terrain_field(here), find_terrain_field(utm)
    # the mesh lies on its field's zero level as well at UTM as at the origin: stock and screw contact
    # see one wall
    da, _ = fa.query(a)
    db, _ = fb.query(b)
    assert np.abs(db).max() < np.abs(da).max() + PRECISION
    # and the field is the same field, moved
    p = a + np.random.default_rng(0).normal(0.0, 0.05, a.shape)
    assert np.abs(fb.query(p + UTM)[0] - fa.query(p)[0]).max() < PRECISION


def test_a_utm_point_cloud_keeps_its_precision_and_place(tmp_path, monkeypatch):
    from eels_gz.paths import asset

    source = asset(REPO_SCAN)
    shifted = tmp_path / "utm_scan.xyz"
    np.savetxt(shifted, np.loadtxt(source) + UTM, fmt="%.4f")
    check_same_terrain(*build(tmp_path, monkeypatch, "pointcloud", source, shifted))


def test_a_utm_mesh_keeps_its_precision_and_place(tmp_path, monkeypatch):
    shaft = trimesh.creation.annulus(r_min=0.625, r_max=1.0, height=2.0, sections=48)
    source, shifted = tmp_path / "shaft.obj", tmp_path / "shaft_utm.obj"
    shaft.export(source)
    moved = shaft.copy()
    moved.apply_translation(UTM)
    moved.export(shifted)  # OBJ: decimal text, double precision, as a survey tool writes it
    check_same_terrain(*build(tmp_path, monkeypatch, "mesh", source, shifted))


def test_a_terrain_at_the_origin_has_no_local_origin(tmp_path):
    """The shipped terrains near the world origin are written as before: no pose, world = model frame."""
    res = cli("world", "primitive", "tube", "--out", tmp_path)
    assert res.exit_code == 0, res.output
    assert "<pose>" not in (tmp_path / "models" / "tube" / "model.sdf").read_text()


def test_the_replay_of_a_utm_run_keeps_its_precision():
    """The replay page holds float32 (WebGL): relative to its scene origin (the start rounded to 100 m),
    a run at UTM coordinates keeps the precision of one at the origin, and the page names that origin."""
    import base64
    import json

    from eels_gz.viewer.html import replay_html
    from eels_gz.viewer.replay import Run

    rng = np.random.default_rng(1)
    trail = UTM + np.cumsum(rng.normal(0.0, 0.01, (20, 3)), axis=0)  # a wandering base, cm steps
    tri = UTM + rng.uniform(-2.0, 2.0, (4, 3, 3))
    run = Run("utm", "utm", [], ["base_link"], np.linspace(0.0, 1.0, 20), trail[:, None, :].copy(),
              np.tile([0.0, 0.0, 0.0, 1.0], (20, 1, 1)).astype(np.float32), trail, [], [(tri, (1, 1, 1, 1))])
    page = replay_html([run])
    data = json.loads(page.split('<script type="application/json" id="replay-data">', 1)[1].split("</script>", 1)[0]
                      .replace("<\\/", "</"))
    origin = np.array(data.get("origin", [0.0, 0.0, 0.0]))  # the page's scene origin (none: the world's)

    def floats(text):
        return np.frombuffer(base64.b64decode(text), "<f4").astype(float)

    got = data["runs"][0]
    assert np.abs(floats(got["trail"]).reshape(-1, 3) + origin - trail).max() < PRECISION
    assert np.abs(floats(got["pos"]).reshape(-1, 3) + origin - trail).max() < PRECISION
    assert np.abs(floats(got["terrain"][0]["triangles"]).reshape(-1, 3, 3) + origin - tri).max() < PRECISION
    assert np.array_equal(origin, np.round(trail[0] / 100.0) * 100.0)


def test_a_robot_on_a_utm_terrain_moves_as_on_the_same_terrain_at_the_origin(tmp_path, monkeypatch):
    """The host (DART's mesh, with the model's pose) and the screw contact (its field query) agree at UTM
    as at the origin: a robot set on a slab with screw contact ends where it ends on the slab at the origin."""
    import json

    from faults_cli import SMALL

    slab = trimesh.creation.box([10.0, 10.0, 1.0])
    slab.apply_translation([0.0, 0.0, -0.5])
    # tilted by 0.1 rad about x and moved off the float32 grid: at UTM a float32 STL would shift its
    # surface by up to 0.25 m x 0.1 = 2.5 cm
    slab.apply_transform(trimesh.transformations.rotation_matrix(0.1, [1.0, 0.0, 0.0]))
    slab.apply_translation([0.137, 0.371, 0.0])
    source, shifted = tmp_path / "slab.obj", tmp_path / "slab_utm.obj"
    slab.export(source)
    slab.apply_translation(UTM)
    slab.export(shifted)
    worlds = build(tmp_path, monkeypatch, "mesh", source, shifted)
    ends = []
    for world, at in zip(worlds, (np.zeros(3), UTM)):
        pose = [at[0], at[1], at[2] + 0.2, 0.0, 0.0, 0.0]  # above the tilted slab: it falls onto it
        out = tmp_path / f"run_{world.stem}"
        res = cli("run", *SMALL, "--contact", "screw", "--duration", "0.3", "--world", world,
                  "--set", f"robot.pose={json.dumps(pose)}", "--set", "log.mcap=false", "--out", out)
        assert res.exit_code == 0, res.output
        ends.append(np.array(json.loads((out / "summary.json").read_text())["final_base_pose"]["position"]) - at)
    assert np.abs(ends[1] - ends[0]).max() < PRECISION, ends


def test_pose_auto_on_a_utm_terrain_starts_on_it(tmp_path, monkeypatch):
    """A terrain that does not cover the world origin (a slab at UTM): `pose: auto` used to leave the robot
    at (0, 0), 4100 km from the ground, with a warning. It now starts above the centre of the terrain's
    extent and is brought down onto it: the host's start and Gazebo's spawn pose (eels_gz.spawn, which
    launch/sim.launch.py passes to ros_gz_sim create) put the base at the slab's centre with the lowest
    collision AUTO_CLEARANCE above its top, as on the same slab at the origin (within PRECISION)."""
    import json

    from faults_cli import SMALL

    from eels_gz import registry
    from eels_gz.description.xacro_loader import load_description
    from eels_gz.spawn import spawn_pose

    slab = trimesh.creation.box([6.0, 6.0, 1.0])
    slab.apply_translation([0.0, 0.0, -0.5])  # top at z = 0, centred on the origin
    source, shifted = tmp_path / "slab.obj", tmp_path / "slab_utm.obj"
    slab.export(source)
    slab.apply_translation(UTM)
    slab.export(shifted)
    here, utm = build(tmp_path, monkeypatch, "mesh", source, shifted)
    entry = registry.robot(SMALL[1])
    description = load_description(entry.path, entry.args(int(SMALL[3])))
    spawned = {w.stem: np.array(spawn_pose(description, find_terrain_field(w)).pose) for w in (here, utm)}
    assert np.abs(spawned["utm"][:3] - UTM - spawned["here"][:3]).max() < PRECISION
    assert np.abs(spawned["utm"][3:] - spawned["here"][3:]).max() < PRECISION
    out = tmp_path / "run"
    res = cli("run", *SMALL, "--duration", "0.01", "--world", utm, "--set", "log.mcap=false", "--set",
              "log.plot=false", "--out", out)
    assert res.exit_code == 0, res.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "ok", summary.get("message")
    assert "terrain's centre" in summary["settings"]["resolved"]["auto_pose"]
    assert np.abs(np.array(summary["final_base_pose"]["position"]) - spawned["utm"][:3]).max() < 0.01  # 10 ms of settling
