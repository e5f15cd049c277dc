"""Scale benchmark of scans and meshes to worlds (issue 22): time, peak memory and model-folder size
against the point count, and the accuracy of the result.

For each point count N (``--points``, default 200k, 1M and 10M) a synthetic scan of the issue's test
shaft (test/worlds/scan_truth.py: 10 m deep, radius 0.5-1.2 m varying with depth and angle, 1 cm noise,
density varying 4:1, 0.2 % outliers, five occlusion holes 0.24 m across, open top and bottom) is
written as binary PLY and turned into a world by ``eels-gz world pointcloud`` at its defaults, in a
child process: wall time and the child's peak resident memory (``os.wait4``), the model folder's
size, the derived values, and, against the analytic wall:

- the field's error near the wall (|d| < 3 voxels), max and 99th percentile, in voxels;
- the share of wrong signs at probes in the bore, 0.3 m into the ice, behind the holes and beyond
  the open ends;
- the collision mesh's distance to the wall (on the scanned part), max and 99th percentile, in voxels.

``--mesh-faces`` (default 2M) also runs ``eels-gz world mesh`` on a glacier-channel mesh of that many
faces with holes (a meandering half-round channel 60 m long, open at the top and ends), with the
same measurements (the truth: the channel's analytic wall).

Targets (on this shared 2-core machine): 1M points in <= 120 s and <= 4 GiB, 10M points (downsampled,
with a warning) in <= 600 s, model folder <= 20 MB. Writes JSON to ``--out`` if given, and prints it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "test" / "worlds"))  # the analytic surfaces the tests use

from scan_truth import ShaftTruth, shaft_radius, shaft_scan  # noqa: E402

HOLES = [(0.5, -1.5), (2.5, -3.0), (4.2, -5.0), (1.3, -7.0), (5.5, -8.5)]
HOLE_R = 0.12


def write_ply(path: Path, points: np.ndarray) -> None:
    """Binary little-endian PLY of float32 vertices."""
    header = (f"ply\nformat binary_little_endian 1.0\nelement vertex {len(points)}\n"
              "property float x\nproperty float y\nproperty float z\nend_header\n").encode()
    with open(path, "wb") as fh:
        fh.write(header)
        np.ascontiguousarray(points, dtype="<f4").tofile(fh)


def run(cmd: list[str]) -> dict:
    """Run ``cmd``; wall time (s), the child's own peak RSS (MiB, ``os.wait4``), return code, the
    output's tail and its warning lines."""
    with tempfile.TemporaryFile("w+") as log:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, text=True)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        log.seek(0)
        out = log.read()
    return {"seconds": round(wall, 1), "peak_rss_mib": round(usage.ru_maxrss / 1024, 1),
            "returncode": proc.returncode, "output_tail": out[-3000:],
            "warnings": [line for line in out.splitlines() if line.startswith("WARNING")]}


def folder_mb(folder: Path) -> float:
    return round(sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6, 2)


def shaft_accuracy(model: Path, z_range=(-10.0, 0.0)) -> dict:
    import trimesh

    from eels_gz.terrain.fields import load_field

    field = load_field(model / "distance_field.npz")
    h = field.spacing
    truth = ShaftTruth((z_range[0] - 0.5, z_range[1] + 0.5), step=0.005)
    rng = np.random.default_rng(7)
    probes = truth.wall_points(40_000, (z_range[0] + 0.3, z_range[1] - 0.3), rng.uniform(-3 * h, 3 * h, 40_000))
    exact = truth.distance(probes)
    band = np.abs(exact) < 3 * h
    err = np.abs(field.query(probes[band])[0] - exact[band]) / h
    th, z = rng.uniform(0, 2 * np.pi, 5000), rng.uniform(*z_range, 5000)
    bore = np.column_stack([0.3 * np.cos(th), 0.3 * np.sin(th), z])
    ice = truth.wall_points(5000, z_range, -0.3)

    def wall(t, zz, inward):
        r = shaft_radius(np.array(t), np.array(zz)) - inward
        return np.array([[r * np.cos(t), r * np.sin(t), zz]])

    behind = np.concatenate([wall(t, zz, -s) for t, zz in HOLES for s in (0.05, 0.1, 0.3)])
    checks = {"bore": (bore, 1), "ice": (ice, -1), "behind_holes": (behind, -1),
              "above_top": (bore + [0, 0, -z_range[0] + 0.5], 1), "below_bottom": (bore - [0, 0, 0.5], 1)}
    wrong = {k: float(np.mean(np.sign(field.query(p)[0]) != s)) for k, (p, s) in checks.items()}
    mesh = trimesh.load(model / "meshes" / "collision.stl", force="mesh")
    v = mesh.vertices[(mesh.vertices[:, 2] > z_range[0]) & (mesh.vertices[:, 2] < z_range[1])]
    mesh_err = np.abs(truth.distance(v)) / h
    return {"voxel": h, "field_error_max_voxels": float(err.max()), "field_error_p99_voxels":
            float(np.percentile(err, 99)), "wrong_sign_share": wrong, "mesh_error_max_voxels": float(mesh_err.max()),
            "mesh_error_p99_voxels": float(np.percentile(mesh_err, 99))}


def bench_points(n: int, work: Path) -> dict:
    pts = shaft_scan(n, (-10.0, 0.0), noise=0.01, holes=HOLES, hole_radius=HOLE_R, outliers=0.002,
                     varying_density=True, seed=11)
    scan = work / f"shaft_{n}.ply"
    write_ply(scan, pts)
    del pts
    name = f"shaft_{n}"
    res = run([sys.executable, "-m", "eels_gz.cli", "world", "pointcloud", str(scan), "--name", name,
               "--out", str(work / "out")])
    model = work / "out" / "models" / name
    res["points"] = n
    res["file_mb"] = round(scan.stat().st_size / 1e6, 1)
    scan.unlink()
    if res["returncode"] == 0:
        res["model_mb"] = folder_mb(model)
        res["derived"] = json.loads((model / "terrain.json").read_text())["parameters"]
        res["accuracy"] = shaft_accuracy(model)
    return res


# --- the glacier channel ------------------------------------------------------------------------------------
CHANNEL = dict(length=60.0, radius=1.5, meander=2.0, wavelength=25.0)


def channel_centre_y(x):
    return CHANNEL["meander"] * np.sin(2 * np.pi * x / CHANNEL["wavelength"])


def channel_mesh(faces: int, holes: int = 12, seed: int = 0):
    """A meandering half-round channel along x (axis at z = 0, floor at z = -radius), open at the top
    and ends, faces wound toward the axis, ``holes`` square holes 0.3 m across cut in its wall."""
    import trimesh

    L, R = CHANNEL["length"], CHANNEL["radius"]
    n_around = int(np.sqrt(faces / 2 * np.pi * R / L)) + 1
    n_along = int(faces / 2 / (n_around - 1)) + 1
    x = np.linspace(0, L, n_along)
    phi = np.linspace(np.pi, 2 * np.pi, n_around)
    X, P = np.meshgrid(x, phi, indexing="ij")
    v = np.column_stack([X.ravel(), (channel_centre_y(X) + R * np.cos(P)).ravel(), (R * np.sin(P)).ravel()])
    i, j = np.meshgrid(np.arange(n_along - 1), np.arange(n_around - 1), indexing="ij")
    a = (i * n_around + j).ravel()
    b = a + n_around
    f = np.concatenate([np.stack([a, a + 1, b + 1], 1), np.stack([a, b + 1, b], 1)])
    rng = np.random.default_rng(seed)
    hole_x, hole_phi = rng.uniform(5, L - 5, holes), rng.uniform(np.pi + 0.3, 2 * np.pi - 0.3, holes)
    c_i, c_j = f[:, 0] // n_around, f[:, 0] % n_around
    cx, cphi = x[c_i], phi[c_j]
    cut = np.zeros(len(f), bool)
    for hx, hp in zip(hole_x, hole_phi):
        cut |= (np.abs(cx - hx) < 0.15) & (np.abs(cphi - hp) * R < 0.15)
    mesh = trimesh.Trimesh(v, f[~cut], process=False)
    if np.mean(mesh.face_normals[:, 2]) < 0:  # toward the axis: up on the floor
        mesh.invert()
    return mesh, list(zip(hole_x, hole_phi))


def channel_truth(points: np.ndarray, step: float = 0.01) -> np.ndarray:
    """Signed distance to the channel's wall (positive toward the axis), by a dense sampling of it."""
    from scipy.spatial import cKDTree

    L, R = CHANNEL["length"], CHANNEL["radius"]
    lo, hi = points[:, 0].min() - 0.5, points[:, 0].max() + 0.5
    x = np.arange(max(lo, -1.0), min(hi, L + 1.0) + step, step)
    phi = np.arange(np.pi - 0.5, 2 * np.pi + 0.5, step / R)
    X, P = np.meshgrid(x, phi, indexing="ij")
    wall = np.column_stack([X.ravel(), (channel_centre_y(X) + R * np.cos(P)).ravel(), (R * np.sin(P)).ravel()])
    d, _ = cKDTree(wall).query(points, workers=-1)
    rho = np.hypot(points[:, 1] - channel_centre_y(points[:, 0]), points[:, 2])
    return np.where(rho < R, d, -d)


def bench_mesh(faces: int, work: Path) -> dict:
    import trimesh

    from eels_gz.terrain.fields import load_field

    mesh, holes = channel_mesh(faces)
    path = work / "channel.ply"
    mesh.export(path)
    res = run([sys.executable, "-m", "eels_gz.cli", "world", "mesh", str(path), "--name", "channel",
               "--out", str(work / "out")])
    res["faces"] = int(len(mesh.faces))
    if res["returncode"] != 0:
        return res
    model = work / "out" / "models" / "channel"
    res["model_mb"] = folder_mb(model)
    res["derived"] = json.loads((model / "terrain.json").read_text())["parameters"]
    field = load_field(model / "distance_field.npz")
    h = field.spacing
    rng = np.random.default_rng(3)
    R = CHANNEL["radius"]
    x, phi = rng.uniform(2, CHANNEL["length"] - 2, 20_000), rng.uniform(np.pi + 0.2, 2 * np.pi - 0.2, 20_000)
    off = rng.uniform(-3 * h, 3 * h, 20_000)
    probes = np.column_stack([x, channel_centre_y(x) + (R - off) * np.cos(phi), (R - off) * np.sin(phi)])
    across = np.concatenate([[[hx, channel_centre_y(hx) + (R - o) * np.cos(hp), (R - o) * np.sin(hp)]
                              for o in np.linspace(-2 * h, 2 * h, 9)] for hx, hp in holes])
    out = {}
    for key, p in (("wall", probes), ("across_holes", across)):
        exact = channel_truth(p)
        band = np.abs(exact) < 3 * h
        err = np.abs(field.query(p[band])[0] - exact[band]) / h
        out[key] = {"max_voxels": float(err.max()), "p99_voxels": float(np.percentile(err, 99))}
    inside = probes.copy()
    inside[:, 1:] = np.column_stack([channel_centre_y(x) + 0.5 * R * np.cos(phi), 0.5 * R * np.sin(phi)])
    below = np.column_stack([x, channel_centre_y(x) + (R + 0.3) * np.cos(phi), (R + 0.3) * np.sin(phi)])
    out["wrong_sign_inside"] = float(np.mean(field.query(inside)[0] <= 0))
    out["wrong_sign_ice"] = float(np.mean(field.query(below)[0] >= 0))
    col = trimesh.load(model / "meshes" / "collision.stl", force="mesh")
    v = col.vertices[(col.vertices[:, 0] > 0) & (col.vertices[:, 0] < CHANNEL["length"])]
    v = v[v[:, 2] < 0]  # the open top edge is extended upward by up to the fill radius: not the wall
    mesh_err = np.abs(channel_truth(v)) / h
    out["mesh_error_max_voxels"], out["mesh_error_p99_voxels"] = float(mesh_err.max()), float(
        np.percentile(mesh_err, 99))
    res["accuracy"] = dict(voxel=h, **out)
    return res


def finish(result: dict, out: str | None) -> None:
    """Note the load average at the end, write the JSON to ``out`` (if given) and print it."""
    result["machine"]["load_avg_at_end"] = os.getloadavg()
    text = json.dumps(result, indent=2, default=float)
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(text + "\n")
    print(text)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--points", type=int, nargs="*", default=[200_000, 1_000_000, 10_000_000])
    ap.add_argument("--mesh-faces", type=int, default=2_000_000, help="0 skips the mesh run")
    ap.add_argument("--out", help="write the JSON here")
    args = ap.parse_args()
    result = {"machine": {"cpus": os.cpu_count(), "load_avg_at_start": os.getloadavg()}, "scans": [], "mesh": None}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for n in args.points:
            result["scans"].append(bench_points(n, work))
            print(json.dumps({k: v for k, v in result["scans"][-1].items() if k != "output_tail"}, default=float),
                  flush=True)
        if args.mesh_faces:
            result["mesh"] = bench_mesh(args.mesh_faces, work)
    finish(result, args.out)


if __name__ == "__main__":
    main()
