"""Writes test/unit/data/contact_wrench_reference.npz: the screw contact's wrenches as the code of the
commit it runs on computes them, frozen for test_contact_wrench_frozen.py.

It was run once on the commit before the two wrench loops (regulated and bristle) became one
(6e01780), so that the merged kernel is compared with what the two copies gave:

    PYTHONPATH=<checkout of 6e01780> python test/unit/contact_wrench_reference.py

Cases: four screws (two handednesses, two radii) under five parameter sets (the default ice: bristle
and rolling seat; the regulated ice with its regulated rolling resistance; each law without rolling
resistance; the unregulated law, v_eps = 0), on three paths: ``ScrewContactStep`` on a tilted plane
(the compiled half-space path), ``ScrewContactStep`` in a tube (``screw_wrenches`` with the terrain's
query) and ``screw_wrenches`` on the plane's query without a workspace. Twelve steps of 1 ms each,
with poses and twists drawn once (stored in the file), so the bristle and seat states carry over.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

OUT = Path(__file__).parent / "data" / "contact_wrench_reference.npz"
STEPS = 12
DT = 1e-3  # s
# name -> ContactParams fields (mu, ev_a, ev_b, k, c, v_eps, points_axial, points_ring, stick_length, roll_arm)
PARAMS = {
    "ice": (0.15, 3.0, 0.04, 25000.0, 400.0, 0.05, 4, 4, 0.001, 0.0005),
    "ice_regulated": (0.15, 3.0, 0.04, 25000.0, 400.0, 0.05, 4, 4, 0.0, 0.0005),
    "bristle_no_roll": (0.2, 5.0, 0.02, 30000.0, 300.0, 0.05, 4, 4, 0.002, 0.0),
    "regulated_no_roll": (0.2, 5.0, 0.02, 30000.0, 300.0, 0.03, 4, 4, 0.0, 0.0),
    "unregulated": (0.15, 1.0, 0.0, 25000.0, 400.0, 0.0, 4, 4, 0.0, 0.0),
}
PATHS = ("plane_step", "tube_step", "plane_query")
GEOMETRY = ((0.09, 0.26, 0.35, 1), (0.09, 0.26, 0.35, -1), (0.065, 0.2, 0.3, 1), (0.065, 0.2, 0.3, -1))
PLANE_NORMAL = (0.1, -0.2, 1.0)
TUBE_RADIUS = 0.5  # m, along x through the origin


def _rot_z(yaw: float, tilt: float) -> np.ndarray:
    cy, sy, ct, st = np.cos(yaw), np.sin(yaw), np.cos(tilt), np.sin(tilt)
    rz = np.array([[cy, -sy, 0.0], [sy, cy, 0.0], [0.0, 0.0, 1.0]])
    rx = np.array([[1.0, 0.0, 0.0], [0.0, ct, -st], [0.0, st, ct]])
    ry = np.array([[ct, 0.0, st], [0.0, 1.0, 0.0], [-st, 0.0, ct]])
    return rz @ ry @ rx


def inputs(floor: str) -> dict[str, np.ndarray]:
    """Poses and twists of the four screws over the steps, (STEPS, 4, ...): each screw's lowest
    line between 1 mm out of and 3 mm into the terrain below it (``floor``: plane or tube)."""
    rng = np.random.default_rng(32 if floor == "plane" else 33)
    radii = np.array([g[0] for g in GEOMETRY])
    n = np.array(PLANE_NORMAL) / np.linalg.norm(PLANE_NORMAL)
    pos = np.empty((STEPS, 4, 3))
    rot = np.empty((STEPS, 4, 3, 3))
    base_xy = np.array([[0.0, 0.0], [0.4, 0.1], [0.8, -0.1], [1.2, 0.05]])
    yaw = rng.uniform(-np.pi, np.pi, 4)
    for t in range(STEPS):
        depth = rng.uniform(-0.001, 0.003, 4)
        for s in range(4):
            r = _rot_z(yaw[s] + 0.01 * t, rng.uniform(-0.05, 0.05))
            rot[t, s] = r
            if floor == "plane":
                # on the tilted plane p . n = 0: the screw centre at (R - depth) along n
                xy = np.array([base_xy[s, 0], base_xy[s, 1], 0.0])
                xy[2] = -(n[0] * xy[0] + n[1] * xy[1]) / n[2]
                pos[t, s] = xy + (radii[s] - depth[s]) * n
            else:
                pos[t, s] = [base_xy[s, 0], 0.02 * s, -TUBE_RADIUS + radii[s] - depth[s]]
    lin = rng.normal(0.0, 0.03, (STEPS, 4, 3))
    ang = rng.normal(0.0, 0.3, (STEPS, 4, 3)) + 2.0 * rot[:, :, :, 0]  # spinning at ~2 rad/s
    lin[:, 1] *= 1e-3  # one screw nearly at rest: the stick regime
    ang[:, 1] *= 1e-3
    return {"pos": pos, "rot": rot, "lin": lin, "ang": ang}


def compute(floor_inputs: dict[str, dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """The wrenches of every case with the code on PYTHONPATH, keyed ``<params>/<path>/<output>``."""
    from eels_gz.contact.params import ContactParams
    from eels_gz.contact.screw_points import ScrewGeometry, ScrewPointSet
    from eels_gz.contact.screw_wrenches import ScrewContactStep, new_contact_state, screw_wrenches
    from eels_gz.terrain.primitives import Plane, Tube

    plane = Plane(normal=np.array(PLANE_NORMAL))
    tube = Tube(TUBE_RADIUS)
    out: dict[str, np.ndarray] = {}
    for name, values in PARAMS.items():
        params = ContactParams(*values)
        ps = ScrewPointSet.from_geometries([ScrewGeometry(*g) for g in GEOMETRY], params.points_axial,
                                           params.points_ring)
        for path in PATHS:
            x = floor_inputs["tube" if path == "tube_step" else "plane"]
            step = ScrewContactStep(ps, params, tube if path == "tube_step" else plane)
            state = new_contact_state(ps)
            rows = {"force": [], "torque": [], "normal_force": [], "point_force": []}
            for t in range(STEPS):
                args = [np.ascontiguousarray(x[k][t]) for k in ("pos", "rot", "lin", "ang")]
                if path == "plane_query":
                    w = screw_wrenches(ps, params, *args, plane.query, stick=state, dt=DT)
                else:
                    w = step(*args, DT)
                for key in rows:
                    rows[key].append(np.array(getattr(w, key)))
            for key, value in rows.items():  # the point forces of the last step only (their sums are above)
                out[f"{name}/{path}/{key}"] = np.array(value[-1] if key == "point_force" else value)
            out[f"{name}/{path}/state"] = (state if path == "plane_query" else step.stick).copy()
    return out


def main() -> None:
    floors = {floor: inputs(floor) for floor in ("plane", "tube")}
    data = {f"input/{floor}/{k}": v for floor, x in floors.items() for k, v in x.items()}
    data.update(compute(floors))
    OUT.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(OUT, **data)
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes, {len(data)} arrays)", file=sys.stderr)


if __name__ == "__main__":
    main()
