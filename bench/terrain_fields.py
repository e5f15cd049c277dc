"""Distance-field benchmark: query throughput, grid build time and grid accuracy.

One run measures, on one core (``NUMBA_NUM_THREADS=1``, set before numba loads):

- ``queries``: points per second of ``HeightField.query`` on a 1024 x 1024
  raster and ``SdfGrid.query`` on a 256^3 grid, random points in the field's
  box, after JIT warm-up (best and median of several rounds);
- ``build``: ``sdf_grid_from_mesh`` on a ~100k-face annular tube solid at
  256^3 nodes;
- ``accuracy``: grids of a sphere, a box and the tube, against their exact
  distance, in voxels: node values (the build) and random queries (build plus
  trilinear interpolation), near the surface (``|d| < 3`` voxels, the band the
  screw contact uses) and over the whole grid;
- ``candidates`` (with ``--candidates-python``, an interpreter that has
  point-cloud-utils and trimesh): the same signed distances from those
  libraries on a sample of the tube grid's nodes, their time extrapolated to
  the whole grid, and their agreement with ours.

Writes JSON to ``--out`` if given, and prints it.
"""

from __future__ import annotations

import os

os.environ.setdefault("NUMBA_NUM_THREADS", "1")  # before numba is imported

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import textwrap  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numba  # noqa: E402
import numpy as np  # noqa: E402
import scipy  # noqa: E402
import trimesh  # noqa: E402

from eels_gz.terrain import Box, HeightField, SdfGrid, Sphere, sdf_grid_from_mesh  # noqa: E402
from eels_gz.terrain._mesh_sdf import BAND_VOXELS  # noqa: E402
from eels_gz.terrain._reference_meshes import tube_solid_distance, tube_solid_mesh  # noqa: E402

TUBE = dict(r_in=0.4, r_out=0.6, length=1.2)  # length = outer diameter: a cubic grid
TUBE_SEGMENTS = (256, 96)  # around, along: 4 * 256 * 97 = 99,328 faces
CONTACT_BAND_VOXELS = 3.0


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def throughput(field, points: np.ndarray, rounds: int) -> dict:
    field.query(points[:1000])  # JIT warm-up (and cache load)
    rates = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        field.query(points)
        rates.append(len(points) / (time.perf_counter() - t0))
    return {"points": len(points), "rounds": rounds, "best_points_per_s": max(rates),
            "median_points_per_s": statistics.median(rates)}


def smooth_heights(n: int, rng: np.random.Generator) -> np.ndarray:
    x = np.linspace(0, 2 * np.pi, n)
    h = sum(a * np.sin(k * x[None, :] + p) * np.cos(k * x[:, None] + q)
            for a, k, p, q in zip(rng.uniform(0.05, 0.5, 8), rng.integers(1, 20, 8), *rng.uniform(0, 6, (2, 8))))
    return h + 0.01 * rng.standard_normal((n, n))


def tube_mesh():
    return tube_solid_mesh(TUBE["r_in"], TUBE["r_out"], TUBE["length"], *TUBE_SEGMENTS)


def tube_exact(p: np.ndarray) -> np.ndarray:
    return tube_solid_distance(p, TUBE["r_in"], TUBE["r_out"], TUBE["length"])


def errors(grid: SdfGrid, exact, rng: np.random.Generator, samples: int) -> dict:
    """Errors [voxels] at random nodes (the build) and random points (the queries)."""
    h = grid.spacing
    idx = np.stack([rng.integers(0, s, samples) for s in grid.shape], axis=1)
    nodes = np.array(grid.origin) + h * idx
    node_err = np.abs(grid.values[idx[:, 0], idx[:, 1], idx[:, 2]] - exact(nodes)) / h
    node_near = np.abs(exact(nodes)) < CONTACT_BAND_VOXELS * h
    lo, hi = grid.bounds
    p = rng.uniform(lo, hi, (samples, 3))
    d_exact = exact(p)
    d, n = grid.query(p)
    q_err = np.abs(d - d_exact) / h
    q_near = np.abs(d_exact) < CONTACT_BAND_VOXELS * h

    def stats(e):
        return {"max": float(e.max()), "rms": float(np.sqrt(np.mean(e**2))), "samples": int(e.size)}

    return {"nodes_near_surface": stats(node_err[node_near]), "nodes_whole_grid": stats(node_err),
            "queries_near_surface": stats(q_err[q_near]), "queries_whole_grid": stats(q_err),
            "normal_unit_error_max": float(np.abs(np.linalg.norm(n, axis=1) - 1).max())}


def timed_build(vertices, faces, resolution: int) -> tuple[SdfGrid, float]:
    t0 = time.perf_counter()
    grid = sdf_grid_from_mesh(vertices, faces, resolution=resolution)
    return grid, time.perf_counter() - t0


CANDIDATE_SCRIPT = textwrap.dedent("""
    import json, sys, time, importlib.metadata as md
    import numpy as np
    data = np.load(sys.argv[1])
    v, f, nodes, ours, h = data["v"], data["f"], data["nodes"], data["ours"], float(data["h"])
    n_total = int(data["n_total"])
    out = {}
    try:
        import point_cloud_utils as pcu
        t0 = time.perf_counter()
        sd, _, _ = pcu.signed_distance_to_mesh(nodes, v.astype(np.float64), f.astype(np.int32))
        dt = time.perf_counter() - t0
        out["point-cloud-utils"] = {"version": md.version("point-cloud-utils"), "nodes": len(nodes),
            "seconds": dt, "extrapolated_full_grid_s": dt * n_total / len(nodes),
            "max_abs_diff_vs_ours_voxels": float(np.abs(sd - ours).max() / h)}
    except Exception as exc:
        out["point-cloud-utils"] = {"error": f"{type(exc).__name__}: {exc}"}
    try:
        import trimesh
        mesh = trimesh.Trimesh(v, f, process=False)
        k = min(20000, len(nodes))
        t0 = time.perf_counter()
        sd = -trimesh.proximity.signed_distance(mesh, nodes[:k])  # trimesh: positive inside
        dt = time.perf_counter() - t0
        out["trimesh+rtree"] = {"version": trimesh.__version__, "nodes": k, "seconds": dt,
            "extrapolated_full_grid_s": dt * n_total / k,
            "max_abs_diff_vs_ours_voxels": float(np.abs(sd - ours[:k]).max() / h)}
    except Exception as exc:
        out["trimesh+rtree"] = {"error": f"{type(exc).__name__}: {exc}"}
    try:
        import pysdf  # noqa: F401
        out["pysdf"] = {"version": md.version("pysdf"), "note": "importable; not measured"}
    except Exception as exc:
        out["pysdf"] = {"error": f"{type(exc).__name__}: {exc}"}
    print(json.dumps(out))
""")


def candidates(python: str, grid: SdfGrid, v, f, rng: np.random.Generator, samples: int) -> dict:
    idx = np.stack([rng.integers(0, s, samples) for s in grid.shape], axis=1)
    nodes = np.array(grid.origin) + grid.spacing * idx
    ours = grid.values[idx[:, 0], idx[:, 1], idx[:, 2]].astype(np.float64)
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "case.npz"
        np.savez(data, v=v, f=f, nodes=nodes, ours=ours, h=grid.spacing, n_total=int(np.prod(grid.shape)))
        script = Path(tmp) / "candidates.py"
        script.write_text(CANDIDATE_SCRIPT)
        env = dict(os.environ, OMP_NUM_THREADS="1")
        run = subprocess.run([python, str(script), str(data)], capture_output=True, text=True, env=env, timeout=3600)
    if run.returncode != 0:
        return {"error": run.stderr[-2000:]}
    return json.loads(run.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--raster", type=int, default=1024, help="heightfield raster size (square)")
    ap.add_argument("--resolution", type=int, default=256, help="SDF grid nodes along the longest side")
    ap.add_argument("--points", type=int, default=4_000_000, help="query points per round")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--samples", type=int, default=2_000_000, help="accuracy samples per shape")
    ap.add_argument("--candidates-python", default=None,
                    help="interpreter with point-cloud-utils / trimesh / pysdf to measure as build candidates")
    ap.add_argument("--candidate-nodes", type=int, default=200_000)
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args()
    rng = np.random.default_rng(7)

    result: dict = {
        "machine": {"cpu": cpu_model(), "logical_cpus": os.cpu_count(), "platform": platform.platform(),
                    "python": platform.python_version(), "numba_threads": numba.config.NUMBA_NUM_THREADS},
        "versions": {"numpy": np.__version__, "numba": numba.__version__, "scipy": scipy.__version__,
                     "trimesh": trimesh.__version__},
        "method": {"band_voxels": BAND_VOXELS, "contact_band_voxels": CONTACT_BAND_VOXELS,
                   "grid_dtype": "float32"},
        "targets": {"queries_points_per_s": 5e6, "accuracy_near_surface_voxels": 0.5, "build_256_s": 60.0},
    }

    # build (warm the JIT on a small mesh first, so the time is the build's)
    v_small, f_small = tube_solid_mesh(0.4, 0.6, 1.2, 16, 4)
    sdf_grid_from_mesh(v_small, f_small, resolution=16)
    v, f = tube_mesh()
    tube_grid, tube_s = timed_build(v, f, a.resolution)
    result["build"] = {"mesh": "annular tube solid", "faces": int(len(f)), "grid": list(tube_grid.shape),
                       "spacing_m": tube_grid.spacing, "seconds": tube_s}

    # queries
    hf = HeightField(smooth_heights(a.raster, rng), (0.0, 0.0), (0.01, 0.01))
    lo, hi = hf.bounds
    p_hf = rng.uniform([lo[0], lo[1], -3.0], [hi[0], hi[1], 3.0], (a.points, 3))
    lo, hi = tube_grid.bounds
    p_grid = rng.uniform(lo, hi, (a.points, 3))
    result["queries"] = {
        "heightfield": dict(raster=list(hf.shape), **throughput(hf, p_hf, a.rounds)),
        "sdf_grid": dict(grid=list(tube_grid.shape), dtype=str(tube_grid.values.dtype),
                         **throughput(tube_grid, p_grid, a.rounds)),
    }
    del p_hf, p_grid

    # accuracy
    accuracy = {"tube": dict(faces=int(len(f)), grid=list(tube_grid.shape), **errors(tube_grid, tube_exact, rng,
                                                                                     a.samples))}
    if a.candidates_python:
        result["candidates"] = candidates(a.candidates_python, tube_grid, v, f, rng, a.candidate_nodes)
        result["candidates"]["pysdf_install_note"] = (
            "pysdf 0.1.9 ships no wheel for CPython 3.11; its sdist needs Eigen headers (not on this machine)")
    del tube_grid
    sphere = trimesh.creation.icosphere(subdivisions=6, radius=1.0)
    grid, seconds = timed_build(sphere.vertices, sphere.faces, a.resolution)
    accuracy["sphere"] = dict(faces=int(len(sphere.faces)), grid=list(grid.shape), build_s=seconds,
                              **errors(grid, lambda p: Sphere(np.zeros(3), 1.0).query(p)[0], rng, a.samples))
    del grid
    box = trimesh.creation.box(extents=(1.6, 1.0, 0.7))
    grid, seconds = timed_build(box.vertices, box.faces, a.resolution)
    ref = Box(np.zeros(3), np.array([0.8, 0.5, 0.35]))
    accuracy["box"] = dict(faces=int(len(box.faces)), grid=list(grid.shape), build_s=seconds,
                           **errors(grid, lambda p: ref.query(p)[0], rng, a.samples))
    result["accuracy_voxels"] = accuracy

    text = json.dumps(result, indent=2)
    if a.out:
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text(text + "\n")
    sys.stdout.write(text + "\n")


if __name__ == "__main__":
    main()
