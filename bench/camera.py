"""Cost per frame of the host's ray-cast cameras (eels_gz.sensors.camera),
and of logging the run's 3D scene (eels_gz.host.scene_log).

Cameras: the EELS head's stereo camera (640 x 480, config/sensors.yaml) and
its depth camera (160 x 120), each in ice_plane (the plane's closed-form ray
cast) and in tube (numba sphere tracing of the bore's distance grid),
looking along the tube from its axis, with the robot's shapes in view; the
lens distortion of the stereo camera is also timed with the sample
coefficients below. Reported: median wall time per frame over the rounds
(after a warm-up that compiles the kernels), rays per second, and the ratio
to a lidar sweep of the head's 16 x 360 beams against the same field (the
host's other ray-cast sensor), so the figures read on a loaded machine too.

Scene log: the cost of one /tf (+ force arrows) sample of EELS 1.0
alternating against one step of its simulation.

Writes JSON (``--out``) and prints it.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from pathlib import Path

import numba
import numpy as np
import yaml

from eels_gz import config, registry
from eels_gz.paths import asset
from eels_gz.sensors.camera import Distortion, PinholeCamera, render
from eels_gz.sensors.lidar import cast, grid_pattern
from eels_gz.terrain.writers import find_terrain_field

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


def cameras(rounds: int) -> dict:
    sensors = yaml.safe_load(asset("config", "sensors.yaml").read_text())
    cams = {
        "stereo": PinholeCamera(sensors["stereo"]["width"], sensors["stereo"]["height"],
                                sensors["stereo"]["horizontal_fov"], sensors["stereo"]["near"],
                                sensors["stereo"]["far"]),
        "stereo_distorted": PinholeCamera(sensors["stereo"]["width"], sensors["stereo"]["height"],
                                          sensors["stereo"]["horizontal_fov"], sensors["stereo"]["near"],
                                          sensors["stereo"]["far"], SAMPLE_DISTORTION),
        "depth": PinholeCamera(sensors["depth"]["width"], sensors["depth"]["height"],
                               sensors["depth"]["horizontal_fov"], sensors["depth"]["near"], sensors["depth"]["far"]),
    }
    lidar = sensors["lidar"]
    pattern = grid_pattern(lidar["rows"], lidar["columns"], -lidar["horizontal_fov"] / 2, lidar["horizontal_fov"] / 2,
                           -lidar["vertical_fov"] / 2, lidar["vertical_fov"] / 2, lidar["range_min"],
                           lidar["range_max"])
    out = {}
    for world in ("ice_plane", "tube"):
        field = find_terrain_field(registry.world_path(world))
        T = _pose(world)
        T_lidar = T @ np.array([[0.0, -1, 0, 0], [0, 0, -1, 0], [1, 0, 0, 0], [0, 0, 0, 1]])  # x forward again
        cast(pattern, T_lidar, field)  # warm-up
        lidar_s = _median_time(lambda: cast(pattern, T_lidar, field), rounds)
        rows = {"lidar_sweep_s": lidar_s, "lidar_beams": pattern.size}
        for name, cam in cams.items():
            t0 = time.perf_counter()
            rays = cam.pixel_rays()
            rays_s = time.perf_counter() - t0
            render(cam, rays, T, field)  # warm-up: numba compiles on first use
            frame_s = _median_time(lambda cam=cam, rays=rays: render(cam, rays, T, field), rounds)
            n = cam.width * cam.height
            rows[name] = {"pixels": n, "frame_s": frame_s, "rays_per_s": n / frame_s,
                          "pixel_rays_once_s": rays_s, "frame_over_lidar_sweep": frame_s / lidar_s}
        out[world] = rows
    return out


def scene_log(rounds: int, steps: int) -> dict:
    """One /tf + forces sample of EELS 1.0 alternating with screw contact against one simulation step."""
    import tempfile

    from eels_gz.host.runner import prepare
    from eels_gz.host.scene_log import SceneLog
    from eels_gz.ros.mcap_log import McapLog

    cfg = config.resolve(overrides={"robot": {"name": "eels_1_0_alternating"}, "contact": {"model": "screw"}})
    with tempfile.TemporaryDirectory() as tmp:
        sim = prepare(cfg, tmp).sim
        log = McapLog(Path(tmp) / "log.mcap")
        scene = SceneLog(sim, log, sim.robot_source_urdf)
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
    ap.add_argument("--steps", type=int, default=200, help="steps and samples per round (scene log)")
    ap.add_argument("--out", type=Path, default=Path("results/bench_camera.json"))
    a = ap.parse_args()
    result = {
        "machine": {"platform": platform.platform(), "python": platform.python_version(),
                    "numba_threads": numba.get_num_threads()},
        "cameras": cameras(a.rounds),
        "scene_log": scene_log(a.rounds, a.steps),
    }
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
