"""Cost of the screw contact wrench kernels per contact point, and of one full
``screw_wrenches`` call (point placement + terrain query + kernel), for 20
screws (EELS 1.0 alternating) with 8 to 32 points each, under the default
ice (bristle law and rolling resistance; with the implicit step of the friction across the thread,
as the plugin runs it, and without: every force explicit) and the regulated law
(config/contact/ice_regulated.yaml), both through the one loop
``wrench_kernel`` with their packed parameters, timed in the same run.

The screws lie on flat ground (``eels_gz.terrain.Plane``) at 1 mm
penetration, spinning at 2 rad/s and drifting, so that on each screw the bottom
row is in contact and the rest is not, as on ``ice_plane``. Each figure is
the median of several rounds after a warm-up (numba compilation and caches).

Writes JSON to ``--out`` if given, and prints it.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from pathlib import Path

import numpy as np

from eels_gz.contact.implicit import ACROSS_WIDTH, link_mobility
from eels_gz.contact.params import load_contact_params
from eels_gz.contact.screw_points import ScrewGeometry, ScrewPointSet
from eels_gz.contact.screw_wrenches import NO_ACROSS, NO_MOBILITY, new_contact_state, screw_wrenches, wrench_kernel
from eels_gz.terrain import Plane

N_SCREWS = 20
LAYOUTS = [(4, 2), (4, 4), (6, 4), (8, 4)]  # (points_axial, points_ring): 8, 16, 24, 32 points per screw
R, L, ALPHA = 0.09, 0.13, 0.35  # m, m, rad: EELS 1.0 alternating screw (urdf/eels_variants.yaml)


def setup(axial: int, ring: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    geoms = [ScrewGeometry(R, L, ALPHA, 1 if i % 2 == 0 else -1, name=f"screw_{i}") for i in range(N_SCREWS)]
    points = ScrewPointSet.from_geometries(geoms, axial, ring)
    yaw = rng.uniform(-0.3, 0.3, N_SCREWS)
    rot = np.zeros((N_SCREWS, 3, 3))
    rot[:, 0, 0], rot[:, 0, 1], rot[:, 1, 0], rot[:, 1, 1], rot[:, 2, 2] = (
        np.cos(yaw), -np.sin(yaw), np.sin(yaw), np.cos(yaw), 1.0)
    pos = np.column_stack([0.2 * np.arange(N_SCREWS), np.zeros(N_SCREWS), np.full(N_SCREWS, R - 0.001)])
    lin = rng.normal(0.0, 0.02, (N_SCREWS, 3))
    ang = 2.0 * rot[:, :, 0] * np.where(np.arange(N_SCREWS) % 2 == 0, 1.0, -1.0)[:, None]
    return points, pos, rot, lin, ang


def time_call(fn, repeats: int, rounds: int) -> float:
    samples = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(repeats):
            fn()
        samples.append((time.perf_counter() - t0) / repeats)
    return statistics.median(samples)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=2000, help="calls per round")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--out", type=Path, default=None, help="JSON file (default: print only)")
    a = ap.parse_args()

    params = load_contact_params("ice")
    regulated = load_contact_params("ice_regulated")
    ground = Plane()
    rows = []
    for axial, ring in LAYOUTS:
        points, pos, rot, lin, ang = setup(axial, ring)
        n = points.points_per_screw
        _, offsets, ev = points.world_points(pos, rot)
        dist, nrm = ground.query((pos[:, None, :] + offsets).reshape(-1, 3))
        dist, nrm = dist.reshape(N_SCREWS, n), np.ascontiguousarray(nrm.reshape(N_SCREWS, n, 3))
        force, torque = np.empty((N_SCREWS, 3)), np.empty((N_SCREWS, 3))
        fn_out, pf_out = np.empty((N_SCREWS, n)), np.empty((N_SCREWS, n, 3))

        state = new_contact_state(points)

        packed, packed_regulated, no_state = params.packed(), regulated.packed(), np.zeros((0, 0, state.shape[2]))

        # the screw links' inertials as the plugin reads them (a 1.25 kg screw, solid root of 0.065 m)
        mass = np.full(N_SCREWS, 1.25)
        moi = np.array([np.diag([0.5 * 1.25 * 0.065**2, 0.03, 0.03])] * N_SCREWS)
        moi_world = np.einsum("sij,sjk,slk->sil", rot, moi, rot)
        mobility = link_mobility(mass, pos, moi_world, pos, rot)
        across = np.zeros((N_SCREWS, n, ACROSS_WIDTH))

        def kernel():  # the one wrench loop, as the plugin calls it: the packed record built once
            wrench_kernel(lin, ang, offsets, dist, nrm, ev, rot, packed, 1e-3, state, force, torque, fn_out, pf_out,
                          mobility, across)

        def kernel_explicit():  # every force explicit (no link inertia), as before issue 33
            wrench_kernel(lin, ang, offsets, dist, nrm, ev, rot, packed, 1e-3, state, force, torque, fn_out, pf_out,
                          NO_MOBILITY, NO_ACROSS)

        def kernel_regulated():
            wrench_kernel(lin, ang, offsets, dist, nrm, ev, rot, packed_regulated, 0.0, no_state,
                          force, torque, fn_out, pf_out, NO_MOBILITY, NO_ACROSS)

        def full():
            screw_wrenches(points, params, pos, rot, lin, ang, ground.query, stick=state, dt=1e-3)

        def full_regulated():
            screw_wrenches(points, regulated, pos, rot, lin, ang, ground.query)

        for _ in range(200):  # warm-up: compilation, caches
            kernel()
            kernel_explicit()
            kernel_regulated()
            full()
            full_regulated()
        t_kernel = time_call(kernel, a.repeats, a.rounds)
        t_kernel_explicit = time_call(kernel_explicit, a.repeats, a.rounds)
        t_kernel_reg = time_call(kernel_regulated, a.repeats, a.rounds)
        t_full = time_call(full, a.repeats // 4, a.rounds)
        t_full_reg = time_call(full_regulated, a.repeats // 4, a.rounds)
        rows.append({
            "points_per_screw": n,
            "points_axial": axial,
            "points_ring": ring,
            "points_total": N_SCREWS * n,
            "points_in_contact": int(np.count_nonzero(fn_out)),
            "kernel_us_per_call": t_kernel * 1e6,
            "kernel_ns_per_point": t_kernel * 1e9 / (N_SCREWS * n),
            "kernel_explicit_us_per_call": t_kernel_explicit * 1e6,
            "implicit_over_explicit_kernel": t_kernel / t_kernel_explicit,
            "screw_wrenches_us_per_call": t_full * 1e6,
            "screw_wrenches_ns_per_point": t_full * 1e9 / (N_SCREWS * n),
            "regulated": {
                "kernel_us_per_call": t_kernel_reg * 1e6,
                "kernel_ns_per_point": t_kernel_reg * 1e9 / (N_SCREWS * n),
                "screw_wrenches_us_per_call": t_full_reg * 1e6,
            },
            "default_over_regulated_kernel": t_kernel / t_kernel_reg,
        })
    result = {
        "benchmark": "contact_kernel",
        "screws": N_SCREWS,
        "terrain": "Plane (analytic)",
        "machine": {"python": platform.python_version(), "processor": platform.processor() or platform.machine()},
        "results": rows,
    }
    text = json.dumps(result, indent=2)
    if a.out is not None:
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
