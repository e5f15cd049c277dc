"""``eels-gz world``: terrain model folders and worlds from DEMs, meshes,
point clouds and primitives.

Output: ``--out DIR`` writes ``DIR/models/NAME/`` and ``DIR/worlds/NAME.sdf``
(default ``results/worlds``); ``--shipped`` writes into the package's own
``models/`` and ``worlds/`` (how the shipped worlds are made, ``make worlds``).
Gazebo and the embedded host find the model through ``GZ_SIM_RESOURCE_PATH``
(the package's ``models/`` is searched too).

A terrain of that name already there is refused unless ``--overwrite``, which
replaces only a terrain model's own files (:data:`MODEL_FILES`): the new model
and world are written beside them, then the old ones are moved aside and
removed once the new ones are in place.
"""

from __future__ import annotations

import logging
import shlex
import sys
from pathlib import Path

import click

from eels_gz.cli.common import FINITE, NON_NEGATIVE, POSITIVE, SEED, Number
from eels_gz.errors import EelsError

log = logging.getLogger(__name__)

# what eels_gz.terrain.writers.write_model writes into a model folder: --overwrite removes nothing else
MODEL_FILES = ("model.sdf", "model.config", "terrain.json", "distance_field.npz", "heightmap.png", "heightmap.stl",
               "meshes/", "meshes/collision.stl", "meshes/visual.stl")


def _dem():
    from eels_gz.terrain import dem

    return dem


def _worldgen():
    from eels_gz.terrain import worldgen

    return worldgen


def _scan_budget(name: str) -> Number:
    """A budget of the scan reconstruction, at least what it needs (eels_gz.terrain.pointcloud.MIN_BUDGETS)."""
    def least() -> int:
        from eels_gz.terrain.pointcloud import MIN_BUDGETS

        return MIN_BUDGETS[name]

    return Number(int, least)


def _fail(exc: Exception, code: int = 2) -> None:
    from eels_gz.errors import RunInterrupted

    _remove_made_folders()
    if isinstance(exc, RunInterrupted):
        click.echo(f"eels-gz: interrupted by {exc.signal_name}: no terrain was written (its temporary files are "
                   "removed; a terrain of that name already there is as it was)", err=True)
        sys.exit(exc.exit_code)
    click.echo(f"eels-gz: error: {exc}", err=True)
    sys.exit(code)


def _remove_made_folders() -> None:
    """Remove the output folders this command created (``_writable``) while they are still empty: a
    refused or failed command leaves nothing behind, not even an empty ``OUT/models``."""
    ctx = click.get_current_context(silent=True)
    for folder in reversed((ctx.meta.get("eels_gz.world.made") or []) if ctx is not None else []):
        try:
            folder.rmdir()  # only an empty folder: never what someone put there meanwhile
        except OSError:
            pass


def _dirs(out: str | None, shipped: bool) -> tuple[Path, Path]:
    from eels_gz.paths import asset

    if shipped:
        if out is not None:
            raise click.UsageError("give either --out or --shipped, not both")
        return asset("models"), asset("worlds")
    root = Path(out or "results/worlds")
    return root / "models", root / "worlds"


def _writable(out: str | None, shipped: bool, name: str | None = None, overwrite: bool = False) -> None:
    """Check the output folders, and that a terrain ``name`` may be written there, before reading and
    meshing the input (OutputError: exit 2)."""
    from eels_gz.outputs import check_writable_dir

    ctx = click.get_current_context(silent=True)
    made = ctx.meta.setdefault("eels_gz.world.made", []) if ctx is not None else []
    for folder in _dirs(out, shipped):
        missing = [p for p in [*reversed(folder.absolute().parents), folder.absolute()] if not p.exists()]
        made += missing  # outermost first; _fail removes them again, innermost first
        check_writable_dir(folder)
    if name is not None:
        _check_existing(name, out, shipped, overwrite)


def _check_existing(name: str, out: str | None, shipped: bool, overwrite: bool) -> None:
    """OutputError if a terrain ``name`` is there and may not be replaced (module docstring)."""
    from eels_gz.errors import OutputError, TerrainError
    from eels_gz.terrain.writers import _check_name

    try:
        _check_name(name)
    except TerrainError:
        return  # write_terrain says what is wrong with the name
    models, worlds = _dirs(out, shipped)
    folder, world_file = models / name, worlds / f"{name}.sdf"
    there = [str(p) for p in (folder, world_file) if p.exists() or p.is_symlink()]
    if not there:
        return
    if not overwrite:
        raise OutputError(f"a terrain named '{name}' is already there ({', '.join(there)}); pass --overwrite to "
                          "replace it, or choose another --name")
    if world_file.is_dir() or world_file.is_symlink():
        raise OutputError(f"'{world_file}' is not a world file that eels-gz world wrote; --overwrite will not "
                          "replace it: move it away, or choose another --name")
    if folder.exists() or folder.is_symlink():
        if folder.is_symlink() or not folder.is_dir():
            raise OutputError(f"'{folder}' is not a terrain model folder; --overwrite will not replace it: move it "
                              "away, or choose another --name")
        extra = sorted(rel for rel in (p.relative_to(folder).as_posix() + ("/" if p.is_dir() else "")
                                       for p in folder.rglob("*")) if rel not in MODEL_FILES)
        if extra:
            raise OutputError(f"the model folder '{folder}' holds files that eels-gz world did not write "
                              f"({', '.join(extra[:8])}); --overwrite replaces only a terrain model's own files: "
                              "move them away, or choose another --name")


def _write(terrain, name: str | None, out: str | None, shipped: bool, source: str = "",
           overwrite: bool = False) -> None:
    import os
    import shutil

    from eels_gz.errors import OutputError
    from eels_gz.outputs import aside, reason
    from eels_gz.terrain.writers import write_terrain

    name = name or terrain.kind
    models, worlds = _dirs(out, shipped)
    obj = click.get_current_context().find_root().obj
    command = obj["command"] if obj else "eels-gz " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    _check_existing(name, out, shipped, overwrite)
    # written beside the old terrain, which is moved aside only once the new one is complete
    staging = [models / f".{name}.partial-{os.getpid()}", worlds / f".{name}.partial-{os.getpid()}"]
    folder, world = models / name, worlds / f"{name}.sdf"
    try:
        try:
            soil = click.get_current_context().meta.get("eels_gz.world.soil")
            new_folder, new_world = write_terrain(terrain, name, staging[0], staging[1], source=source,
                                                  command=command, soil=soil or "")
            old = []
            for new, final in ((new_folder, folder), (new_world, world)):
                if final.exists():
                    old.append(aside(final))  # a name nobody holds: never over a file of someone's
                os.rename(new, final)
        except OSError as exc:
            raise OutputError(f"cannot write the terrain '{name}' into {models} and {worlds}: "
                              f"{reason(exc)}") from None
        for path in old:
            if path.is_dir():
                shutil.rmtree(path)
            else:
                path.unlink()
    finally:
        for path in staging:
            shutil.rmtree(path, ignore_errors=True)
    size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    click.echo(f"model: {folder} ({size / 1e6:.2f} MB)")
    click.echo(f"world: {world}")
    if not shipped:
        click.echo(f"use it with: GZ_SIM_RESOURCE_PATH={models.resolve()} eels-gz run --world {world}")


def _soil(ctx, param, value):
    """``--soil NAME``: checked as a soil set of config/soil/ at once (before any terrain is made)."""
    if value is None:
        return None
    from eels_gz.errors import ConfigError
    from eels_gz.soil.params import load_soil_params

    try:
        load_soil_params(value)
    except ConfigError as exc:
        raise click.BadParameter(str(exc)) from None
    ctx.meta["eels_gz.world.soil"] = value
    return value


def _common(f):
    f = click.option("--soil", metavar="NAME", callback=_soil, expose_value=False,
                     help="The world's soil: a soil set of config/soil/ (eac1a, lava_gravel, dry_sand, ...) that a "
                     "wheeled robot's soil contact takes on this terrain unless the run sets soil.params "
                     "(recorded in the model's terrain.json).")(f)
    f = click.option("--overwrite", is_flag=True, help="Replace a terrain of that name already there (refused "
                     "if its model folder holds files eels-gz world did not write).")(f)
    f = click.option("--shipped", is_flag=True, help="Write into the package's models/ and worlds/.")(f)
    f = click.option("--out", help="Output folder: writes OUT/models/NAME and OUT/worlds/NAME.sdf "
                     "(default results/worlds).")(f)
    f = click.option("--name", help="Model and world name (default: the file's stem or the primitive kind).")(f)
    return f


class _WorldGroup(click.Group):
    """The ``world`` commands, each run with SIGINT and SIGTERM stopping it at once (there is no step to
    finish): the terrain's temporary files are removed, nothing is left half-written, and the command
    says so and exits 130 or 143 (``_fail``), as ``run`` does."""

    def invoke(self, ctx: click.Context):
        from eels_gz.interrupt import interrupts

        with interrupts() as stop, stop.immediately():
            return super().invoke(ctx)


@click.group(cls=_WorldGroup)
def world() -> None:
    """Terrain model folders and worlds from DEMs, meshes, point clouds and primitives."""
    # the long steps' progress lines (eels_gz.terrain.progress) reach stderr through the root handler
    terrain_log = logging.getLogger("eels_gz.terrain")
    if terrain_log.getEffectiveLevel() > logging.INFO:
        terrain_log.setLevel(logging.INFO)


@world.command()
@click.argument("file", type=click.Path(dir_okay=False))
@_common
@click.option("--size", nargs=2, type=POSITIVE, metavar="X Y", help="Extent of the posts in m (required for PNG; "
              "overrides a GeoTIFF's geotransform).")
@click.option("--spacing", nargs=2, type=POSITIVE, metavar="DX DY", help="Post spacing in m (required for .npy).")
@click.option("--height-range", type=POSITIVE, help="PNG: metres for the full grey scale.")
@click.option("--reference", nargs=3, type=FINITE, metavar="E N Z",
              help="Subtracted from (easting, northing, elevation); default: the raster centre and lowest point.")
@click.option("--keep-georef", is_flag=True, help="World x, y, z = projected coordinates (reference 0 0 0).")
@click.option("--max-cells", type=Number(int, lambda: _dem().MIN_CELLS), default=1 << 25, show_default=True,
              help="Post budget of the heightfield "
              "(screw contact, placement); larger DEMs are downsampled with a warning.")
@click.option("--max-faces", type=Number(int, lambda: _dem().MIN_ENGINE_FACES), default=200_000, show_default=True,
              help="Face budget of the engine mesh: "
              "by default the engine region is the largest full-resolution square within it.")
@click.option("--center", nargs=2, type=FINITE, metavar="X Y", help="Centre of the engine region (Gazebo's heightmap, "
              "the host's mesh) in world m; default the DEM's centre.")
@click.option("--radius", type=POSITIVE, help="Half-width of the engine region in m (rounded up to 2^n posts).")
@click.option("--crop", nargs=4, type=FINITE, metavar="X0 Y0 X1 Y1", help="Engine region covering this rectangle "
              "(world m).")
def dem(file, name, out, shipped, overwrite, size, spacing, height_range, reference, keep_georef, max_cells,
        max_faces, center, radius, crop):
    """A DEM (.tif GeoTIFF, .png, .npy) as a <heightmap> world (the host gets the triangulated DEM)."""
    from eels_gz.terrain.dem import read_dem
    from eels_gz.terrain.worldgen import dem_terrain

    try:
        _writable(out, shipped, name or Path(file).stem, overwrite)
        if keep_georef and reference:
            raise click.UsageError("give either --reference or --keep-georef")
        ref = (0.0, 0.0, 0.0) if keep_georef else (tuple(reference) if reference else None)
        raster = read_dem(file, size_xy=size or None, spacing_xy=spacing or None, height_range=height_range,
                          reference=ref, max_cells=max_cells)
        if radius is not None and crop:
            raise click.UsageError("give either --radius or --crop")
        terrain = dem_terrain(raster, max_faces, tuple(center) if center else None, radius,
                              tuple(crop) if crop else None)
        p = terrain.parameters
        click.echo(f"heightfield: {p['shape'][1]} x {p['shape'][0]} posts at {p['spacing_xy'][0]:.4g} m (full raster); "
                   f"engine region: {p['engine_shape'][1]} x {p['engine_shape'][0]} posts at "
                   f"{p['engine_spacing_xy'][0]:.4g} m from ({p['engine_origin_xy'][0]:.6g}, "
                   f"{p['engine_origin_xy'][1]:.6g}) m, {p['engine_faces']} faces")
        _write(terrain, name or Path(file).stem, out, shipped, source=str(file), overwrite=overwrite)
    except EelsError as exc:
        _fail(exc)


def _scan_options(f):
    """Options of the one-sided reconstruction (scans and open meshes); unset values are derived."""
    f = click.option("--seed", type=SEED, default=0, show_default=True, help="Seed of the subsampling over "
                     "--max-points.")(f)
    f = click.option("--visual-faces", type=_scan_budget("visual_faces"), default=120_000, show_default=True,
                     help="Visual mesh face budget.")(f)
    f = click.option("--max-nodes", type=_scan_budget("max_nodes"), default=4_000_000, show_default=True,
                     help="Distance grid node budget (the default voxel is at least what keeps within it).")(f)
    f = click.option("--max-points", type=_scan_budget("max_points"), default=2_000_000, show_default=True,
                     help="Point budget; larger scans are downsampled with a warning.")(f)
    f = click.option("--viewpoint", nargs=3, type=FINITE, metavar="X Y Z",
                     help="Scanner position (m) for --orient viewpoint.")(f)
    f = click.option("--fill-radius", type=POSITIVE, help="Holes narrower than twice this (m) are closed "
                     "(default: max(8 voxels, 0.25 m)).")(f)
    return f


def _options(voxel, fill_radius, orient, viewpoint, max_points, max_nodes, max_faces, visual_faces, seed):
    from eels_gz.terrain.pointcloud import ScanOptions

    return ScanOptions(voxel=voxel, fill_radius=fill_radius, orient=orient or ("viewpoint" if viewpoint else "auto"),
                       viewpoint=tuple(viewpoint) if viewpoint else None, max_points=max_points,
                       max_nodes=max_nodes, max_faces=max_faces, visual_faces=visual_faces, seed=seed)


def _echo_derived(derived: dict) -> None:
    """Print every derived value (they are in terrain.json too)."""
    click.echo("derived (also in terrain.json):")
    for key, value in derived.items():
        if isinstance(value, float):
            value = f"{value:.6g}"
        elif isinstance(value, list):
            value = [round(v, 6) if isinstance(v, float) else v for v in value]
        click.echo(f"  {key}: {value}")


@world.command()
@click.argument("file", type=click.Path(dir_okay=False))
@_common
@click.option("--scale", type=POSITIVE, default=1.0, show_default=True, help="Scale factor applied with --units.")
@click.option("--units", type=click.Choice(["m", "cm", "mm", "km", "in", "ft"]), default="m", show_default=True,
              help="Units of the file's coordinates.")
@click.option("--max-faces", type=_scan_budget("max_faces"), default=40_000, show_default=True,
              help="Collision mesh face budget "
              "(quadric decimation).")
@click.option("--voxel", type=POSITIVE, help="Distance grid spacing in m (closed mesh: default 128 nodes along the "
              "longest side; open mesh: derived like a scan's).")
@click.option("--orient", type=click.Choice(["auto", "axis", "up", "viewpoint", "winding"]),
              help="Open mesh: which side is free space (default auto; winding: the file's face normals).")
@_scan_options
def mesh(file, name, out, shipped, overwrite, scale, units, max_faces, voxel, orient, fill_radius, viewpoint,
         max_points, max_nodes, visual_faces, seed):
    """A terrain mesh (.stl, .obj, .ply). A closed mesh is checked, repaired where sound and decimated, with the
    exact distance grid of its solid; an open one (holes, open edges) becomes a one-sided wall like a scan."""
    from eels_gz.terrain.meshes import is_open, load_mesh, prepare_mesh, prepare_open_mesh
    from eels_gz.terrain.worldgen import mesh_terrain, scan_terrain

    try:
        _writable(out, shipped, name or Path(file).stem, overwrite)
        loaded = load_mesh(file, scale, units)
        if is_open(loaded):
            click.echo(f"{file}: the mesh is open (boundary edges remain): built as a one-sided wall")
            opts = _options(voxel, fill_radius, orient, viewpoint, max_points, max_nodes, max_faces, visual_faces,
                            seed)
            surface = prepare_open_mesh(loaded, str(file), opts)
            _echo_derived(surface.derived)
            terrain = scan_terrain(surface, "mesh", f"one-sided terrain mesh from {Path(file).name}")
        else:
            full, collision = prepare_mesh(file, scale, units, max_faces)
            terrain = mesh_terrain(full, collision, voxel, f"terrain mesh from {Path(file).name}")
        _write(terrain, name or Path(file).stem, out, shipped, source=str(file), overwrite=overwrite)
    except EelsError as exc:
        _fail(exc)


def _gone(ctx, param, value):
    if value is not None:
        raise click.BadParameter("the scan is now reconstructed as a one-sided wall (no thickened shell): "
                                 "use --voxel for the grid and --fill-radius for the holes", ctx, param)


@world.command()
@click.argument("file", type=click.Path(dir_okay=False))
@_common
@click.option("--scale", type=POSITIVE, default=1.0, show_default=True, help="Scale factor to metres.")
@click.option("--voxel", type=POSITIVE, help="Distance grid spacing in m (default: 2 x the point spacing, or coarser "
              "to keep within --max-nodes).")
@click.option("--orient", type=click.Choice(["auto", "axis", "up", "viewpoint"]),
              help="Which side of the wall is free space: axis (a shaft seen from inside), up (a surface seen from "
              "above), viewpoint (toward --viewpoint); default auto (axis if the cross-sections are hollow).")
@click.option("--max-faces", type=_scan_budget("max_faces"), default=40_000, show_default=True,
              help="Collision mesh face budget.")
@_scan_options
@click.option("--recon-voxel", type=float, hidden=True, callback=_gone, expose_value=False)
@click.option("--thickness", type=float, hidden=True, callback=_gone, expose_value=False)
def pointcloud(file, name, out, shipped, overwrite, scale, voxel, orient, max_faces, fill_radius, viewpoint, max_points,
               max_nodes, visual_faces, seed):
    """A point cloud scan (.ply, .xyz/.txt/.csv, .las/.laz, .pcd, .e57) as a one-sided wall: the signed distance
    grid of its oriented points, and collision and visual meshes of its zero level. Every value not given is
    derived from the scan, printed and written to terrain.json."""
    from eels_gz.terrain.pointcloud import prepare_pointcloud
    from eels_gz.terrain.worldgen import scan_terrain

    try:
        _writable(out, shipped, name or Path(file).stem, overwrite)
        opts = _options(voxel, fill_radius, orient, viewpoint, max_points, max_nodes, max_faces, visual_faces, seed)
        surface = prepare_pointcloud(file, scale, opts)
        _echo_derived(surface.derived)
        _write(scan_terrain(surface, "pointcloud", f"terrain reconstructed from the scan {Path(file).name}"),
               name or Path(file).stem, out, shipped, source=str(file), overwrite=overwrite)
    except EelsError as exc:
        _fail(exc)


def _kinds_help() -> str:
    from eels_gz.terrain.worldgen import PRIMITIVES, primitive_parameters

    lines = ["\b", "Kinds and their parameters (defaults):"]
    for kind in PRIMITIVES:
        params = ", ".join(f"{k}={v}" for k, v in primitive_parameters(kind).items())
        lines.append(f"  {kind}: {params}")
    return "\n".join(lines)


class _KindsEpilog(click.Command):
    """The kinds' parameters listed under the help, read when the help is shown (worldgen imports trimesh:
    most of a second that ``eels-gz --help`` and every other command would pay)."""

    def format_epilog(self, ctx, formatter) -> None:
        self.epilog = _kinds_help()
        super().format_epilog(ctx, formatter)


@world.command(cls=_KindsEpilog)
@click.argument("kind")
@_common
@click.option("--angle", type=Number(float, 0, lambda: _worldgen().MAX_SLOPE_DEG),
              help="slope: angle in degrees (0-35).")
@click.option("--radius", type=POSITIVE, help="tube, u_channel, moulin: radius in m.")
@click.option("--length", type=POSITIVE, help="slope, tube, parallel_walls, u_channel: length in m.")
@click.option("--roughness", type=NON_NEGATIVE, help="tube, moulin: rms wall roughness in m.")
@click.option("--gap", type=POSITIVE, help="parallel_walls: gap between the walls in m.")
@click.option("--density", type=NON_NEGATIVE, help="rock_field: rocks per m^2.")
@click.option("--seed", type=SEED, help="tube, rock_field, moulin, mars_dem: random seed.")
@click.option("-p", "--param", "params", multiple=True, metavar="KEY=VALUE",
              help="Any other parameter of the kind (repeatable), e.g. -p r_mean=0.2.")
def primitive(kind, name, out, shipped, overwrite, angle, radius, length, roughness, gap, density, seed, params):
    """A primitive terrain: ice_plane, slope, tube, parallel_walls, u_channel, rock_field, moulin, mars_dem."""
    from eels_gz.errors import TerrainError
    from eels_gz.terrain.worldgen import make_primitive

    arguments = {k: v for k, v in dict(angle=angle, radius=radius, length=length, roughness=roughness, gap=gap,
                                       density=density, seed=seed).items() if v is not None}
    try:
        _writable(out, shipped, name or kind, overwrite)
        for item in params:
            key, sep, value = item.partition("=")
            if not sep or not key:
                raise TerrainError(f"--param '{item}' must be KEY=VALUE")
            arguments[key.strip()] = value.strip()
        _write(make_primitive(kind, **arguments), name, out, shipped, overwrite=overwrite)
    except EelsError as exc:
        _fail(exc)


@world.command()
def shipped() -> None:
    """Regenerate every shipped world of the registry that has a recipe (make worlds)."""
    from eels_gz.registry import WORLDS

    for entry in WORLDS.values():
        if not entry.recipe:
            continue
        what = [*entry.recipe, "--name", entry.name, "--shipped"]
        args = [*what, "--overwrite"]
        # terrain.json records what the terrain is made of, not how it was written over the last one: the
        # same command every time, so `make worlds` reproduces the tracked files byte for byte
        command = "eels-gz world " + " ".join(shlex.quote(a) for a in what)
        click.echo(command)
        try:
            world.main(args=args, prog_name="eels-gz world", standalone_mode=False, obj={"command": command})
        except SystemExit as exc:
            if exc.code:
                raise
