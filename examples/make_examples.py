"""Write the small sample inputs the documentation's commands use (run from the repository root:
``python examples/make_examples.py``). Every file is synthetic and seeded, so running it again
gives the same terrain.

- ``site.tif``: a GeoTIFF DEM in a projected CRS (metres, UTM-like coordinates): 65 x 65 posts at
  0.5 m, a 5 m high hill in the middle of gently tilted ground with a little relief. With the default
  reference (the raster centre and its lowest post) the hilltop stands 5 m above z = 0: what
  ``robot.pose: auto`` must place a robot on, not inside.
- ``crater.png``: a 16-bit grayscale heightmap, 65 x 65 posts: a crater with a raised rim (give
  ``--size 64 64 --height-range 8``).
- ``glacier_channel.obj``: a watertight block of ice 2 m long with a rough half-round channel of
  0.4 m radius along x, in millimetres (give ``--units mm``).
- ``moulin_scan.xyz``: a lidar-like scan of a rough vertical shaft, 0.6 m radius and 1.5 m deep,
  4000 points (x y z in m per line).
- ``eels_heavier_tail.urdf``: EELS 1.0 front-only as ``eels-gz describe`` writes it, with a
  heavier tail cap: a user-corrected URDF for ``--urdf`` (same tree, joint names and types).
- ``run.yaml``: a settings file for ``eels-gz run --config``.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
RNG_SEED = 17


def site_tif(path: Path) -> None:
    import tifffile

    n, h = 65, 0.5
    rng = np.random.default_rng(RNG_SEED)
    x = (np.arange(n) - (n - 1) / 2) * h
    X, Y = np.meshgrid(x, -x)  # row 0 is north (largest y)
    z = 2400.0 + 0.05 * X + 5.0 * np.exp(-(X**2 + Y**2) / (2 * 4.0**2)) + 0.05 * rng.standard_normal((n, n))
    z -= z.min() - 2400.0  # the lowest post at 2400 m
    e0, n0 = 500_000.0, 4_100_000.0  # upper-left corner (UTM-like, m)
    # GeoKeyDirectory: projected model (1024 = 1), PixelIsArea (1025 = 1), metres (3076 = 9001)
    keys = (1, 1, 0, 3, 1024, 0, 1, 1, 1025, 0, 1, 1, 3076, 0, 1, 9001)
    tags = [(34735, "H", len(keys), keys, True), (33550, "d", 3, (h, h, 0.0), True),
            (33922, "d", 6, (0.0, 0.0, 0.0, e0, n0, 0.0), True)]
    tifffile.imwrite(path, z.astype(np.float32), extratags=tags)


def crater_png(path: Path) -> None:
    from PIL import Image

    n = 65
    u = np.linspace(-1.0, 1.0, n)
    X, Y = np.meshgrid(u, u)
    r = np.hypot(X, Y)
    z = 0.5 + 0.35 * np.exp(-((r - 0.55) / 0.12) ** 2) - 0.45 * np.clip(1 - (r / 0.5) ** 2, 0, None)
    z = (z - z.min()) / (z.max() - z.min())
    Image.fromarray(np.round(z * 65535).astype(np.uint16)).save(path)


def glacier_channel_obj(path: Path) -> None:
    """A block y in [-W, W], z in [-D, 0], x in [0, L] minus a half-round channel of radius R along x,
    with seeded radial roughness on the channel; extruded from a closed profile ring (watertight)."""
    import trimesh

    L, W, D, R, nx, na = 2.0, 0.8, 0.6, 0.4, 41, 33
    rng = np.random.default_rng(RNG_SEED)
    a = np.linspace(math.pi, 2 * math.pi, na)  # the arc from (-R, 0) down to (0, -R) and up to (R, 0)
    arc_y = R * np.cos(a)
    # profile ring, counter-clockwise seen from +x: top left, the channel, top right, down, the bottom back
    bottom_y = np.concatenate([[W], arc_y[::-1], [-W]])
    profile = ([(-W, 0.0)] + [(y, z) for y, z in zip(arc_y, R * np.sin(a))] + [(W, 0.0)]
               + [(y, -D) for y in bottom_y])
    ring = np.array(profile)
    m = len(ring)
    arc = slice(1, 1 + na)
    verts = []
    for i, x in enumerate(np.linspace(0.0, L, nx)):
        p = ring.copy()
        bump = np.ones(na)
        if 0 < i < nx - 1:  # the end faces stay flat: their caps are triangulated from the plain profile
            bump[1:-1] += 0.03 * rng.standard_normal(na - 2)  # the channel's edges stay on the top face
        p[arc] *= bump[:, None]
        verts += [(x, y, z) for y, z in p]
    verts = np.array(verts)
    faces = []
    for i in range(nx - 1):
        for k in range(m):
            a0, a1 = i * m + k, i * m + (k + 1) % m
            b0, b1 = a0 + m, a1 + m
            faces += [(a0, b0, b1), (a0, b1, a1)]

    def below(k: int) -> int:  # the bottom vertex under arc vertex k (1..na)
        return 2 * na + 3 - k

    # end caps from convex pieces, all wound the same way: the left block, the right block and
    # the strip of trapezoids under the channel
    cap = [(0, 1, below(1)), (0, below(1), m - 1), (na, na + 1, na + 2), (na, na + 2, na + 3)]
    for k in range(1, na):
        cap += [(k, k + 1, below(k + 1)), (k, below(k + 1), below(k))]
    for i, flip in ((0, True), (nx - 1, False)):
        for tri in cap:
            t = tuple(i * m + v for v in tri)
            faces.append(t[::-1] if flip else t)
    mesh = trimesh.Trimesh(verts * 1000.0, np.array(faces), process=True)  # millimetres
    trimesh.repair.fix_normals(mesh)
    if not mesh.is_watertight or not mesh.is_volume:
        raise RuntimeError("glacier_channel: the generated mesh is not a closed volume")
    path.write_text(trimesh.exchange.obj.export_obj(mesh, include_normals=False, include_texture=False,
                                                     header="glacier_channel: eels_gz examples/make_examples.py"))


def moulin_scan_xyz(path: Path) -> None:
    rng = np.random.default_rng(RNG_SEED)
    n = 4000
    theta = rng.uniform(0, 2 * math.pi, n)
    z = rng.uniform(-1.5, 0.0, n)
    r = 0.6 + 0.02 * np.sin(5 * theta + 3 * z) + 0.005 * rng.standard_normal(n)
    pts = np.column_stack([r * np.cos(theta), r * np.sin(theta), z])
    np.savetxt(path, pts, fmt="%.4f", header="moulin_scan: x y z (m), eels_gz examples/make_examples.py")


def heavier_tail_urdf(path: Path) -> None:
    from lxml import etree

    from eels_gz import registry
    from eels_gz.description.assemble import robot_description

    desc = robot_description(registry.robot("eels_1_0_front_only"), gazebo=False)
    root = etree.fromstring(desc.urdf.encode())
    mass = root.find("link[@name='base_link']/inertial/mass")
    mass.set("value", f"{1.2 * float(mass.get('value')):g}")  # the corrected tail: 20 % heavier
    root.insert(0, etree.Comment(" EELS 1.0 front-only with a 20 % heavier tail cap: an example user-corrected "
                                 "URDF for eels-gz run (option urdf), written by examples/make_examples.py "))
    path.write_text(etree.tostring(root, encoding="unicode", pretty_print=True))


RUN_YAML = """\
# Settings for `eels-gz run --config examples/run.yaml`, in the layout of
# config/run_defaults.yaml (only the keys to change).
robot:
  name: eels_1_0_front_only
world: ice_plane
scenario: crescent_spin
duration: 2.0
log:
  rate: 50.0
"""


def main(folder: Path = HERE) -> None:
    site_tif(folder / "site.tif")
    crater_png(folder / "crater.png")
    glacier_channel_obj(folder / "glacier_channel.obj")
    moulin_scan_xyz(folder / "moulin_scan.xyz")
    heavier_tail_urdf(folder / "eels_heavier_tail.urdf")
    (folder / "run.yaml").write_text(RUN_YAML)


if __name__ == "__main__":
    main()
