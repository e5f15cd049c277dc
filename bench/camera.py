"""The host's camera renderers measured side by side, the cost of cameras in
a run, and of logging the run's 3D scene (eels_gz.dart.scene_log).

Renderers (``renderers``): today's numba sphere tracer
(eels_gz.sensors.camera.render), OpenGL rasterisation through EGL on Mesa
(eels_gz.dart.gl_render, moderngl; llvmpipe here) and Embree ray casting
(embreex, ``pip install embreex``) and Open3D's RaycastingScene (Embree
underneath; ``pip install open3d-cpu``, which needs Debian's libusb-1.0-0),
each skipped when absent, ray casting only (no shading), on the same scenes: ``ice_plane`` (a plane), ``tube`` (its shipped
distance grid; GL and Embree draw its marching-cubes wall), ``mars_dem`` (a
DEM height field) and ``scan_2m`` (the moulin scan's wall subdivided until it
has 2M faces or more: 5.2M; the tracer marches the moulin's distance grid,
the same wall). Each
with the EELS head's stereo camera (640 x 480, config/sensors.yaml), the same
with lens distortion (the sample coefficients below) and its depth camera
(160 x 120), from a pose looking along +x (on the tube's axis, 0.5 m up
elsewhere). Reported: median wall time per frame over the rounds after a
warm-up (GL: what a run asks for, ``gl_s``: a plain camera's 8-bit image or
a depth camera's depth; ``gl_colour_and_depth_s``: float colour and depth,
what a remapped or noisy camera takes), the GL depth's median difference from
the tracer's and the share of pixels where one sees a surface and the other
not, and a 16 x 360 lidar sweep on the same field as a yardstick.

Run cost (``run_cost``): EELS 1.0 alternating in ``tube`` (the issue's case),
with cameras off and on (the head's 4 stereo pairs and depth camera at their
``<update_rate>``), interleaved over the rounds in one process; the
real-time factor of each (summary.json), their ratio, and the cameras' share.

Scene log: the cost of one /tf (+ force arrows) sample of EELS 1.0
alternating against one step of its simulation.

Writes JSON (``--out``) and prints it, with the load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from pathlib import Path

import numba
import numpy as np
import yaml

from eels_gz import config, registry
from eels_gz.paths import asset
from eels_gz.sensors.camera import Distortion, Lighting, PinholeCamera, render
from eels_gz.sensors.lidar import cast, grid_pattern
from eels_gz.sensors.tessellate import terrain_triangles
from eels_gz.terrain.world_terrain import find_terrain_field

SCAN_FACES = 2_000_000
ALBEDO = np.array([[0.8, 0.9, 1.0], [0.9, 0.45, 0.1]])

SAMPLE_DISTORTION = Distortion(k1=-0.28, k2=0.07, k3=-0.008, p1=1.2e-3, p2=-8e-4)


def _median_time(fn, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _pose(world: str) -> np.ndarray:
    """Optical frame looking along +x (z_opt = x, x_opt = -y, y_opt = -z), on the tube's axis or 0.5 m up."""
    T = np.eye(4)
    T[:3, :3] = [[0.0, 0, 1], [-1, 0, 0], [0, -1, 0]]
    T[:3, 3] = (0.0, 0.0, 0.6 if world == "tube" else 0.5)
    return T


def _cameras() -> dict:
    sensors = yaml.safe_load(asset("config", "sensors.yaml").read_text())
    st, de = sensors["stereo"], sensors["depth"]
    return {
        "stereo": PinholeCamera(st["width"], st["height"], st["horizontal_fov"], st["near"], st["far"]),
        "stereo_distorted": PinholeCamera(st["width"], st["height"], st["horizontal_fov"], st["near"], st["far"],
                                          SAMPLE_DISTORTION),
        "depth": PinholeCamera(de["width"], de["height"], de["horizontal_fov"], de["near"], de["far"]),
    }


def _scan_2m():
    """(field, triangles): the moulin's distance grid and its collision wall subdivided to >= SCAN_FACES."""
    import trimesh

    field = find_terrain_field(registry.world_path("moulin"))
    mesh = trimesh.load(asset("models", "moulin", "meshes", "collision.stl"), force="mesh")
    v, f = mesh.vertices, mesh.faces
    while len(f) < SCAN_FACES:
        v, f = trimesh.remesh.subdivide(v, f)
    return field, v[f], _moulin_pose(field)


def _moulin_pose(field) -> np.ndarray:
    """On the moulin's axis, half way down, looking along +x at its wall."""
    lo = np.asarray(field.origin)
    hi = lo + field.spacing * (np.asarray(field.shape) - 1)
    T = _pose("tube")
    T[:3, 3] = 0.5 * (lo + hi)
    return T


class _Embree:
    def __init__(self, tris: np.ndarray):
        from embreex import rtcore_scene
        from embreex.mesh_construction import TriangleMesh

        self.scene = rtcore_scene.EmbreeScene()
        TriangleMesh(self.scene, np.ascontiguousarray(tris, dtype=np.float32))

    def frame(self, rays: np.ndarray, T: np.ndarray):
        """Ranges (inf: nothing) and normals of the camera's rays (the lens's NaN rays are not cast)."""
        d = rays.reshape(-1, 3) @ T[:3, :3].T
        ok = np.isfinite(d).all(axis=1)
        d = np.ascontiguousarray(d[ok], dtype=np.float32)
        o = np.ascontiguousarray(np.broadcast_to(T[:3, 3], d.shape), dtype=np.float32)
        hit = self.scene.run(o, d, output=1)
        t = np.full(len(ok), np.inf)
        t[ok] = np.where(hit["geomID"] >= 0, hit["tfar"], np.inf)
        return t, hit["Ng"]


class _Open3D:
    """Open3D's RaycastingScene (Embree underneath, its own tensor API)."""

    def __init__(self, tris: np.ndarray):
        import open3d as o3d

        self.o3d = o3d
        v = np.ascontiguousarray(tris.reshape(-1, 3), dtype=np.float32)
        f = np.arange(len(v), dtype=np.uint32).reshape(-1, 3)
        self.scene = o3d.t.geometry.RaycastingScene()
        self.scene.add_triangles(o3d.core.Tensor(v), o3d.core.Tensor(f))

    def frame(self, rays: np.ndarray, T: np.ndarray):
        d = rays.reshape(-1, 3) @ T[:3, :3].T
        ok = np.isfinite(d).all(axis=1)
        r = np.empty((int(ok.sum()), 6), dtype=np.float32)
        r[:, :3], r[:, 3:] = T[:3, 3], d[ok]
        hit = self.scene.cast_rays(self.o3d.core.Tensor(r))
        t = np.full(len(ok), np.inf)
        t[ok] = hit["t_hit"].numpy()
        return t, hit["primitive_normals"].numpy()


def renderers(rounds: int, scenes: list[str]) -> dict:
    from eels_gz.dart.gl_render import CameraViews, gl_renderer

    gl, gl_name = gl_renderer()
    try:
        import embreex  # noqa: F401
        embree = True
    except ImportError:
        embree = False
    cams = _cameras()
    lidar = yaml.safe_load(asset("config", "sensors.yaml").read_text())["lidar"]
    pattern = grid_pattern(lidar["rows"], lidar["columns"], -lidar["horizontal_fov"] / 2, lidar["horizontal_fov"] / 2,
                           -lidar["vertical_fov"] / 2, lidar["vertical_fov"] / 2, lidar["range_min"],
                           lidar["range_max"])
    try:
        import open3d
        o3d_name = f"open3d {open3d.__version__}"
    except ImportError:
        o3d_name = None
    out = {"gl": gl_name, "embree": "embreex" if embree else "not installed", "open3d": o3d_name or "not installed"}
    for scene in scenes:
        if scene == "scan_2m":
            field, tris, T = _scan_2m()
        else:
            field = find_terrain_field(registry.world_path(scene))
            tris, T = None, _pose(scene)
        t0 = time.perf_counter()
        tris = terrain_triangles(field) if tris is None else tris
        rows = {"triangles": int(len(tris)), "triangulate_s": time.perf_counter() - t0}
        T_lidar = T @ np.array([[0.0, -1, 0, 0], [0, 0, -1, 0], [1, 0, 0, 0], [0, 0, 0, 1]])
        cast(pattern, T_lidar, field)
        rows["lidar_sweep_s"] = _median_time(lambda: cast(pattern, T_lidar, field), rounds)
        if gl is not None:
            t0 = time.perf_counter()
            gl.upload_terrain(field, tris)
            rows["gl_upload_s"] = time.perf_counter() - t0
        emb = _Embree(tris) if embree else None
        o3d = _Open3D(tris) if o3d_name else None
        for name, cam in cams.items():
            rays = cam.pixel_rays()
            r = {"pixels": cam.width * cam.height}
            render(cam, rays, T, field)  # warm-up: numba compiles on first use
            r["tracer_s"] = _median_time(lambda: render(cam, rays, T, field), rounds)
            if gl is not None:
                views = CameraViews(cam, rays)
                # what a run asks for: a plain camera's 8-bit image, a depth camera's depth (eels_gz.dart.cameras)
                want = "depth" if name == "depth" else "rgb8"
                gl.render(views, T, field, [], ALBEDO, Lighting(), want)
                r["gl_s"] = _median_time(lambda: gl.render(views, T, field, [], ALBEDO, Lighting(), want), rounds)
                r["gl_colour_and_depth_s"] = _median_time(lambda: gl.render(views, T, field, [], ALBEDO, Lighting()),
                                                          rounds)
                r["tracer_over_gl"] = r["tracer_s"] / r["gl_s"]
                a = render(cam, rays, T, field).depth
                b = gl.render(views, T, field, [], ALBEDO, Lighting()).depth
                both = np.isfinite(a) & np.isfinite(b)
                r["gl_vs_tracer_depth_median_abs_m"] = float(np.median(np.abs(a[both] - b[both]))) if both.any() \
                    else None
                r["gl_vs_tracer_silhouette_mismatch"] = float(np.mean(np.isfinite(a) != np.isfinite(b)))
            if emb is not None:
                emb.frame(rays, T)
                r["embree_raycast_s"] = _median_time(lambda: emb.frame(rays, T), rounds)
            if o3d is not None:
                o3d.frame(rays, T)
                r["open3d_raycast_s"] = _median_time(lambda: o3d.frame(rays, T), rounds)
            rows[name] = r
        out[scene] = rows
        print(scene, json.dumps(rows), flush=True)
    return out


def run_cost(rounds: int, duration: float, robot: str = "eels_1_0_alternating", world: str = "tube") -> dict:
    """Real-time factors of one robot's run with its cameras off and on (GL), interleaved."""
    import tempfile

    from eels_gz.run.runner import run

    rtf: dict[str, list] = {"off": [], "on": []}
    share = []
    renderer = None
    for _ in range(rounds):
        for mode in ("off", "on"):
            cfg = config.resolve(overrides={"robot": {"name": robot}, "world": world, "duration": duration,
                                            "sensors": {"cameras": mode == "on"},
                                            "log": {"plot": False}})
            with tempfile.TemporaryDirectory() as tmp:
                summary = run(cfg, Path(tmp) / "run")
            rtf[mode].append(summary["real_time_factor"])
            if mode == "on":
                renderer = summary.get("camera_renderer")
                walls = summary.get("sensor_wall_time", {})
                cam_s = sum(v["seconds"] for v in walls.values() if v["type"] in ("camera", "depth_camera"))
                share.append(cam_s / summary["wall_time"] if summary.get("wall_time") else None)
    off, on = statistics.median(rtf["off"]), statistics.median(rtf["on"])
    pairs = [b / a for a, b in zip(rtf["off"], rtf["on"])]
    # the same ratio from inside the camera-on runs alone (immune to the load changing between two runs):
    # everything but the cameras costs what it costs with them off
    from_share = [1.0 - x for x in share if x is not None]
    return {"robot": robot, "world": world, "duration_s": duration, "rounds": rounds, "renderer": renderer,
            "rtf_off": rtf["off"], "rtf_on": rtf["on"], "rtf_on_over_off": on / off,
            "rtf_on_over_off_per_round": pairs, "rtf_on_over_off_from_share": from_share,
            "target_on_over_off": 0.25, "cameras_share_of_wall": share}


def scene_log(rounds: int, steps: int) -> dict:
    """One /tf + forces sample of EELS 1.0 alternating with screw contact against one simulation step."""
    import tempfile

    from eels_gz.run.resolve import resolve_run
    from eels_gz.run.runner import prepare
    from eels_gz.dart.scene_log import SceneLog
    from eels_gz.ros.mcap_log import McapLog

    cfg = config.resolve(overrides={"robot": {"name": "eels_1_0_alternating"}, "contact": {"model": "screw"}})
    with tempfile.TemporaryDirectory() as tmp:
        sim = prepare(resolve_run(cfg, tmp)).sim
        log = McapLog(Path(tmp) / "log.mcap")
        scene = SceneLog(sim, log, sim.robot_source_model)
        sim.step()
        step_s = _median_time(lambda: [sim.step() for _ in range(steps)], rounds) / steps
        sample_s = _median_time(lambda: [scene.sample(round(sim.time * 1e9)) for _ in range(steps)], rounds) / steps
        log.close()
    return {"robot": "eels_1_0_alternating", "moving_joints": len(scene.moving), "step_s": step_s,
            "sample_s": sample_s, "sample_over_step": sample_s / step_s,
            "share_at_log_rate_100hz_dt_1ms": sample_s / (10 * step_s + sample_s)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--scenes", default="ice_plane,tube,mars_dem,scan_2m")
    ap.add_argument("--run-rounds", type=int, default=2, help="rounds of the cameras off/on runs")
    ap.add_argument("--duration", type=float, default=2.0, help="simulated seconds of each run")
    ap.add_argument("--only", choices=("renderers", "run", "scene_log"), action="append")
    ap.add_argument("--steps", type=int, default=200, help="steps and samples per round (scene log)")
    ap.add_argument("--out", type=Path, default=Path("results/bench_camera.json"))
    a = ap.parse_args()
    only = set(a.only or ("renderers", "run", "scene_log"))
    result = {"machine": {"platform": platform.platform(), "python": platform.python_version(),
                          "numba_threads": numba.get_num_threads(), "load_before": os.getloadavg()}}
    if "renderers" in only:
        result["renderers"] = renderers(a.rounds, a.scenes.split(","))
    if "run" in only:
        result["run_cost"] = run_cost(a.run_rounds, a.duration)
    if "scene_log" in only:
        result["scene_log"] = scene_log(a.rounds, a.steps)
    result["machine"]["load_after"] = os.getloadavg()
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
