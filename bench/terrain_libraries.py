"""Library choice for scans (issue 22): the candidates measured on one scan, each in its own process
(wall time and that process's peak resident memory by ``os.wait4``), against the analytic truth.

The scan is the issue's test input (test/worlds/scan_truth.py): a 10 m shaft of radius 0.5-1.2 m,
200k points, 1 cm noise, density varying 4:1, 0.2 % outliers, five holes 0.24 m across, open ends.
Every candidate gets the same input: the reconstruction candidates the points and normals of our
steps 1-5 (clustered, outliers dropped, oriented), so they differ only in what they are measured on.

- normals: ours (scipy k-d tree, PCA over 16 neighbours, axis orientation and a neighbour vote),
  Open3D (``estimate_normals`` KNN 16 + ``orient_normals_consistent_tangent_plane``),
  point-cloud-utils (``estimate_point_cloud_normals_knn``): angle to the true normal (median, p95)
  and the share pointing into the ice;
- surface: ours (IMLS/APSS grid + marching cubes), Open3D screened Poisson (depth 9, the 5 % lowest
  density trimmed) and ball pivoting, pymeshlab screened Poisson: the mesh's distance to the true wall on
  the scanned part (p99, max, m), whether each hole is closed, and the share of the area that lies
  beyond the scan's open ends (Poisson closes them with caps);
- inside/outside: ours (the grid's sign) and point-cloud-utils' fast winding number of the oriented
  points (Barill et al. 2018): the share of wrong signs in the bore, in the ice, behind the holes and
  beyond the open ends;
- decimation of our wall mesh to 40k faces: fast-simplification (through trimesh), Open3D, pymeshlab,
  point-cloud-utils: the decimated vertices' distance to the true wall (p99, max).

The candidates are optional: ``pip install open3d-cpu==0.20.0 point-cloud-utils==0.34.0
pymeshlab==2025.7.post1`` (the ``terrain-bench`` extra) and Open3D needs ``libusb-1.0-0``; a candidate
that cannot be imported is reported as such. Writes JSON to ``--out`` if given, and prints it.
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
sys.path.insert(0, str(HERE.parent / "test" / "worlds"))

from scan_truth import ShaftTruth, shaft_radius, shaft_scan  # noqa: E402

sys.path.insert(0, str(HERE))
from terrain_scans import finish  # noqa: E402

HOLES = [(0.5, -1.5), (2.5, -3.0), (4.2, -5.0), (1.3, -7.0), (5.5, -8.5)]
HOLE_R = 0.12
Z = (-10.0, 0.0)
CANDIDATES = ["normals_ours", "normals_open3d", "normals_pcu", "surface_ours", "surface_open3d_poisson",
              "surface_open3d_ball_pivoting", "surface_pymeshlab_poisson", "sign_ours", "sign_pcu_winding",
              "decimate_fast_simplification", "decimate_open3d", "decimate_pymeshlab", "decimate_pcu"]


def true_normals(p: np.ndarray, eps: float = 1e-4) -> np.ndarray:
    """Unit normals of the wall r = R(theta, z) toward the axis (free space), at the points' (theta, z)."""
    th, z = np.arctan2(p[:, 1], p[:, 0]), p[:, 2]
    r = shaft_radius(th, z)
    dr_dth = (shaft_radius(th + eps, z) - shaft_radius(th - eps, z)) / (2 * eps)
    dr_dz = (shaft_radius(th, z + eps) - shaft_radius(th, z - eps)) / (2 * eps)
    # F = rho - R(theta, z): grad = e_rho - (R_theta / rho) e_theta - R_z e_z; free space is F < 0
    e_r = np.column_stack([np.cos(th), np.sin(th), np.zeros_like(th)])
    e_t = np.column_stack([-np.sin(th), np.cos(th), np.zeros_like(th)])
    g = e_r - (dr_dth / r)[:, None] * e_t - dr_dz[:, None] * [0, 0, 1]
    return -g / np.linalg.norm(g, axis=1)[:, None]


def prepared(work: Path):
    """Our steps 1-5 (budget, clustering, outliers, normals, orientation): points and normals."""
    from scipy.spatial import cKDTree

    from eels_gz.terrain import pointcloud as pc

    pts = np.load(work / "scan.npy")
    opts = pc.ScanOptions()
    derived = pc.derive(pts, opts, "scan")
    cl, _, _ = pc.cluster(pts, derived["cluster_cell"])
    tree = cKDTree(cl)
    n, off, md = pc.pca_normals(cl, tree)
    cl = cl[~pc.outliers(off, md, derived["voxel"])]
    tree = cKDTree(cl)
    n, _, _ = pc.pca_normals(cl, tree)
    n, _ = pc.orient(cl, n, tree, opts, derived["voxel"])
    return cl, n, derived


def normal_errors(p, n) -> dict:
    t = true_normals(p)
    cos = np.einsum("ni,ni->n", n, t)
    ang = np.degrees(np.arccos(np.clip(np.abs(cos), 0, 1)))
    keep = (p[:, 2] > Z[0] + 0.2) & (p[:, 2] < Z[1] - 0.2)
    return {"angle_median_deg": float(np.median(ang[keep])), "angle_p95_deg": float(np.percentile(ang[keep], 95)),
            "into_ice_share": float(np.mean(cos[keep] < 0))}


def mesh_errors(v, f) -> dict:
    import trimesh

    truth = ShaftTruth((Z[0] - 0.5, Z[1] + 0.5), step=0.005)
    mesh = trimesh.Trimesh(v, f, process=False)
    inner = (mesh.triangles_center[:, 2] > Z[0]) & (mesh.triangles_center[:, 2] < Z[1])
    vin = v[(v[:, 2] > Z[0]) & (v[:, 2] < Z[1])]
    err = np.abs(truth.distance(vin))
    closed = []
    for t0, z0 in HOLES:
        r = shaft_radius(np.array(t0), np.array(z0))
        c = np.array([[r * np.cos(t0), r * np.sin(t0), z0]])
        closed.append(bool(trimesh.proximity.closest_point(mesh, c)[1][0] < 0.05))
    return {"faces": int(len(f)), "error_p99_m": float(np.percentile(err, 99)), "error_max_m": float(err.max()),
            "holes_closed": int(sum(closed)), "holes": len(HOLES),
            "area_beyond_open_ends_share": float(mesh.area_faces[~inner].sum() / mesh.area)}


def sign_probes():
    truth = ShaftTruth((Z[0] - 0.5, Z[1] + 0.5), step=0.01)
    rng = np.random.default_rng(8)
    th, z = rng.uniform(0, 2 * np.pi, 3000), rng.uniform(*Z, 3000)
    bore = np.column_stack([0.3 * np.cos(th), 0.3 * np.sin(th), z])

    def wall(t, zz, inward):
        r = shaft_radius(np.array(t), np.array(zz)) - inward
        return np.array([[r * np.cos(t), r * np.sin(t), zz]])

    behind = np.concatenate([wall(t, zz, -s) for t, zz in HOLES for s in (0.05, 0.1, 0.3)])
    return {"bore": (bore, 1), "ice": (truth.wall_points(3000, Z, -0.3), -1), "behind_holes": (behind, -1),
            "above_top": (bore + [0, 0, -Z[0] + 0.5], 1), "below_bottom": (bore - [0, 0, 0.5], 1)}


def one(name: str, work: Path) -> dict:
    """Run candidate ``name`` (in the child process); its measurements."""
    out: dict = {}
    if name.startswith("normals"):
        from scipy.spatial import cKDTree

        from eels_gz.terrain import pointcloud as pc

        pts = np.load(work / "scan.npy")
        derived = pc.derive(pts, pc.ScanOptions(), "scan")
        cl, _, _ = pc.cluster(pts, derived["cluster_cell"])
        t0 = time.perf_counter()
        if name == "normals_ours":
            tree = cKDTree(cl)
            n, _, _ = pc.pca_normals(cl, tree)
            n, _ = pc.orient(cl, n, tree, pc.ScanOptions(), derived["voxel"])
        elif name == "normals_open3d":
            import open3d as o3d

            cloud = o3d.geometry.PointCloud(o3d.utility.Vector3dVector(cl))
            cloud.estimate_normals(o3d.geometry.KDTreeSearchParamKNN(16))
            cloud.orient_normals_consistent_tangent_plane(16)
            n = np.asarray(cloud.normals)
            if np.mean(np.einsum("ni,ni->n", n, true_normals(cl)) < 0) > 0.5:  # its global sign is arbitrary
                n = -n
        else:
            import point_cloud_utils as pcu

            _, n = pcu.estimate_point_cloud_normals_knn(cl, 16)
            out["note"] = "unoriented: the into-ice share is that of an arbitrary sign"
        out["step_seconds"] = time.perf_counter() - t0
        out.update(normal_errors(cl, n))
        return out
    if name.startswith("surface") or name.startswith("sign"):
        cl, n, derived = prepared(work)
        t0 = time.perf_counter()
        if name in ("surface_ours", "sign_ours"):
            from eels_gz.terrain.pointcloud import ScanOptions, scan_surface

            surface = scan_surface(np.load(work / "scan.npy"), ScanOptions(), "scan")
            out["step_seconds"] = time.perf_counter() - t0
            if name == "surface_ours":
                out.update(mesh_errors(surface.visual.vertices, surface.visual.faces))
            else:
                out["wrong_sign_share"] = {k: float(np.mean(np.sign(surface.field.query(p)[0]) != s))
                                           for k, (p, s) in sign_probes().items()}
            return out
        if name == "sign_pcu_winding":
            import point_cloud_utils as pcu
            from scipy.spatial import cKDTree

            d8, _ = cKDTree(cl).query(cl, k=9)
            area = (np.pi * d8[:, -1] ** 2 / 8)[:, None]  # each point's share of the wall
            wrong = {}
            for k, (p, s) in sign_probes().items():
                w = np.asarray(pcu.point_cloud_fast_winding_number(cl, n, area, p)).reshape(-1)
                # normals toward free space: the enclosed (winding ~ -1) region is the bore
                wrong[k] = float(np.mean(np.where(w < -0.5, 1, -1) != s))
            out["step_seconds"] = time.perf_counter() - t0
            out["wrong_sign_share"] = wrong
            return out
        if name.startswith("surface_open3d"):
            import open3d as o3d

            cloud = o3d.geometry.PointCloud(o3d.utility.Vector3dVector(cl))
            cloud.normals = o3d.utility.Vector3dVector(n)
            if name == "surface_open3d_poisson":
                mesh, density = o3d.geometry.TriangleMesh.create_from_point_cloud_poisson(cloud, depth=9)
                density = np.asarray(density)
                mesh.remove_vertices_by_mask(density < np.quantile(density, 0.05))
            else:
                s = derived["cluster_cell"]
                radii = o3d.utility.DoubleVector([1.5 * s, 3 * s, 6 * s])
                mesh = o3d.geometry.TriangleMesh.create_from_point_cloud_ball_pivoting(cloud, radii)
            v, f = np.asarray(mesh.vertices), np.asarray(mesh.triangles)
        else:
            import pymeshlab

            ms = pymeshlab.MeshSet()
            ms.add_mesh(pymeshlab.Mesh(vertex_matrix=cl, v_normals_matrix=n))
            ms.generate_surface_reconstruction_screened_poisson(depth=9)
            m = ms.current_mesh()
            v, f = m.vertex_matrix(), m.face_matrix()
        out["step_seconds"] = time.perf_counter() - t0
        out.update(mesh_errors(v, f))
        return out
    # decimation of our wall mesh
    from eels_gz.terrain.pointcloud import ScanOptions, scan_surface

    surface = scan_surface(np.load(work / "scan.npy"), ScanOptions(max_faces=10**9, visual_faces=10**9), "scan")
    v, f = surface.visual.vertices, surface.visual.faces
    target = 40_000
    t0 = time.perf_counter()
    if name == "decimate_fast_simplification":
        m = surface.visual.simplify_quadric_decimation(face_count=target)
        dv, df = m.vertices, m.faces
    elif name == "decimate_open3d":
        import open3d as o3d

        m = o3d.geometry.TriangleMesh(o3d.utility.Vector3dVector(v), o3d.utility.Vector3iVector(f))
        m = m.simplify_quadric_decimation(target)
        dv, df = np.asarray(m.vertices), np.asarray(m.triangles)
    elif name == "decimate_pymeshlab":
        import pymeshlab

        ms = pymeshlab.MeshSet()
        ms.add_mesh(pymeshlab.Mesh(vertex_matrix=v, face_matrix=f))
        ms.meshing_decimation_quadric_edge_collapse(targetfacenum=target)
        dv, df = ms.current_mesh().vertex_matrix(), ms.current_mesh().face_matrix()
    else:
        import point_cloud_utils as pcu

        dv, df, _, _ = pcu.decimate_triangle_mesh(np.asarray(v), np.asarray(f, dtype=np.int32), target)
    out["step_seconds"] = time.perf_counter() - t0
    out["input_faces"] = int(len(f))
    out.update({k: val for k, val in mesh_errors(np.asarray(dv), np.asarray(df)).items()
                if k in ("faces", "error_p99_m", "error_max_m")})
    return out


def run_child(name: str, work: Path) -> dict:
    with tempfile.TemporaryFile("w+") as log:
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, __file__, "--one", name, "--work", str(work)], stdout=log,
                                stderr=subprocess.STDOUT, text=True)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        log.seek(0)
        text = log.read()
    res = {"process_seconds": round(wall, 1), "peak_rss_mib": round(usage.ru_maxrss / 1024, 1)}
    last = text.strip().splitlines()[-1] if text.strip() else ""
    try:
        res.update(json.loads(last))
    except json.JSONDecodeError:
        res["error"] = text[-1500:]
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--work", help=argparse.SUPPRESS)
    ap.add_argument("--points", type=int, default=200_000)
    ap.add_argument("--only", nargs="*", default=CANDIDATES)
    ap.add_argument("--out")
    args = ap.parse_args()
    if args.one:
        try:
            print(json.dumps(one(args.one, Path(args.work)), default=float))
        except ImportError as exc:
            print(json.dumps({"error": f"not installed: {exc}"}))
        return
    result = {"machine": {"cpus": os.cpu_count(), "load_avg_at_start": os.getloadavg()}, "points": args.points,
              "candidates": {}}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        np.save(work / "scan.npy", shaft_scan(args.points, Z, noise=0.01, holes=HOLES, hole_radius=HOLE_R,
                                              outliers=0.002, varying_density=True, seed=11))
        for name in args.only:
            result["candidates"][name] = run_child(name, work)
            print(name, json.dumps(result["candidates"][name], default=float), flush=True)
    finish(result, args.out)


if __name__ == "__main__":
    main()
