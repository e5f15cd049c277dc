"""Digital elevation models: read GeoTIFF, PNG and ``.npy`` rasters into a
:class:`Dem` (heights on a regular grid of posts, in metres, in the world
frame), fill nodata, downsample to a cell budget and triangulate.

Conventions
-----------
- ``Dem.heights[j, i]`` is the height (m) of the post at world
  ``x = x0 + i*dx``, ``y = y0 + j*dy`` (row 0 at the smallest y), the
  layout of :class:`eels_gz.terrain.fields.HeightField`.
- Each raster pixel is one height post. A GeoTIFF that is *PixelIsArea*
  (GeoTIFF's default, ``GTRasterTypeGeoKey = 1``) places the post at the
  pixel centre, raster coordinate ``(col + 0.5, row + 0.5)``; a
  *PixelIsPoint* raster (``= 2``) places it at ``(col, row)``. Either way
  the geotransform maps raster to projected coordinates.
- World ``(x, y, z) = (easting, northing, elevation) - reference``. The
  reference defaults to the raster's horizontal centre and its lowest
  elevation, so the terrain sits around the origin with its lowest point at
  ``z = 0``; pass ``reference=(0, 0, 0)`` to keep projected coordinates.
- Images (PNG) have row 0 at the top (north, largest y), as GeoTIFFs do;
  ``.npy`` arrays already use the ``heights[j, i]`` layout above.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from scipy import ndimage

from eels_gz.errors import TerrainError

log = logging.getLogger(__name__)

MAX_CELLS = 1 << 25  # default post budget of the heightfield (33.5 M posts, 268 MB in memory): a 4 km HiRISE
# site at 1 m posts is kept whole; larger rasters are downsampled with a warning
MAX_FACES = 200_000  # default face budget of the triangulated collision mesh
MIN_CELLS = 4  # posts: the smallest raster, 2 x 2


def engine_faces(cells: int) -> int:
    """Faces of a square engine region of ``cells`` cells per side: 2 c^2 top faces, 12 (c + 1) skirt and
    floor faces."""
    return 2 * cells ** 2 + 12 * (cells + 1)


MIN_ENGINE_FACES = engine_faces(2)  # the smallest engine region, 2 x 2 cells
SKIRT_DEPTH = 1.0  # m below the lowest post: the triangulated DEM is a closed solid

# GeoTIFF tags and keys (GeoTIFF 1.1, OGC 19-008r4)
TAG_PIXEL_SCALE = 33550
TAG_TIEPOINT = 33922
TAG_TRANSFORMATION = 34264
TAG_GEOKEYS = 34735
TAG_GDAL_NODATA = 42113
KEY_MODEL_TYPE = 1024  # 1 projected, 2 geographic, 3 geocentric
KEY_RASTER_TYPE = 1025  # 1 PixelIsArea, 2 PixelIsPoint
KEY_LINEAR_UNITS = 3076
KEY_VERTICAL_UNITS = 4099
LINEAR_UNITS = {9001: 1.0, 9002: 0.3048, 9003: 1200.0 / 3937.0}  # metre, foot, US survey foot


@dataclass(frozen=True)
class Dem:
    """Heights (m) on a regular grid of posts; see the module docstring."""

    heights: np.ndarray  # (ny, nx), m
    origin_xy: tuple[float, float]  # world (x, y) of heights[0, 0], m
    spacing_xy: tuple[float, float]  # post spacing (dx, dy), m
    source: str = ""

    @property
    def shape(self) -> tuple[int, int]:
        return self.heights.shape

    @property
    def size_xy(self) -> tuple[float, float]:
        """Extent of the posts (m): ``(nx - 1) dx, (ny - 1) dy``."""
        ny, nx = self.heights.shape
        return ((nx - 1) * self.spacing_xy[0], (ny - 1) * self.spacing_xy[1])

    @property
    def center_xy(self) -> tuple[float, float]:
        sx, sy = self.size_xy
        return (self.origin_xy[0] + sx / 2, self.origin_xy[1] + sy / 2)

    def height_at(self, x, y) -> np.ndarray:
        """Bilinear height (m) at world (x, y); points outside are clamped to the edge."""
        fi = np.clip((np.asarray(x, float) - self.origin_xy[0]) / self.spacing_xy[0], 0, self.shape[1] - 1)
        fj = np.clip((np.asarray(y, float) - self.origin_xy[1]) / self.spacing_xy[1], 0, self.shape[0] - 1)
        return ndimage.map_coordinates(self.heights, [np.atleast_1d(fj), np.atleast_1d(fi)], order=1, mode="nearest")

    def to_heightfield(self):
        """The :class:`HeightField` of this raster (screw contact queries it)."""
        from eels_gz.terrain.fields import HeightField

        return HeightField(self.heights, self.origin_xy, self.spacing_xy)


def _validate(heights: np.ndarray, source: str) -> np.ndarray:
    heights = np.asarray(heights, dtype=float)
    if heights.ndim != 2 or min(heights.shape) < 2:
        raise TerrainError(f"{source}: a DEM must be a 2-D raster of at least 2 x 2 posts, got shape {heights.shape}")
    return heights


def fill_nodata(heights: np.ndarray, invalid: np.ndarray, source: str) -> np.ndarray:
    """Replace invalid posts by their nearest valid post; refuse an all-invalid raster."""
    n_bad = int(invalid.sum())
    if n_bad == 0:
        return heights
    if n_bad == invalid.size:
        raise TerrainError(f"{source}: every post of the DEM is nodata or NaN; there is no terrain to build")
    _, (jj, ii) = ndimage.distance_transform_edt(invalid, return_indices=True)
    log.warning("%s: %d of %d posts (%.1f %%) are nodata or NaN; filled with the nearest valid height",
                source, n_bad, invalid.size, 100.0 * n_bad / invalid.size)
    return heights[jj, ii]


def resample(dem: Dem, shape: tuple[int, int]) -> Dem:
    """Resample to ``shape = (ny, nx)`` posts over the same extent (bilinear;
    low-pass filtered first when coarsening, so no aliasing)."""
    ny, nx = dem.shape
    my, mx = shape
    h = dem.heights
    sigma = (max(0.0, 0.5 * ((ny - 1) / max(my - 1, 1) - 1)), max(0.0, 0.5 * ((nx - 1) / max(mx - 1, 1) - 1)))
    if max(sigma) > 0:
        h = ndimage.gaussian_filter(h, sigma, mode="nearest")
    jj, ii = np.meshgrid(np.linspace(0, ny - 1, my), np.linspace(0, nx - 1, mx), indexing="ij")
    out = ndimage.map_coordinates(h, [jj, ii], order=1, mode="nearest")
    sx, sy = dem.size_xy
    return replace(dem, heights=out, spacing_xy=(sx / (mx - 1), sy / (my - 1)))


def limit_cells(dem: Dem, max_cells: int = MAX_CELLS) -> Dem:
    """Downsample a raster with more than ``max_cells`` posts, warning by how much."""
    if max_cells < MIN_CELLS:  # a raster has at least 2 x 2 posts: a smaller budget cannot be met
        raise TerrainError(f"{dem.source}: the post budget (--max-cells) must be at least {MIN_CELLS} "
                           f"(2 x 2 posts), got {max_cells}")
    ny, nx = dem.shape
    if ny * nx <= max_cells:
        return dem
    k = math.sqrt(ny * nx / max_cells)
    shape = (max(2, int((ny - 1) / k) + 1), max(2, int((nx - 1) / k) + 1))
    while shape[0] * shape[1] > max_cells:
        shape = (max(2, shape[0] - 1), max(2, shape[1] - 1))
    out = resample(dem, shape)
    log.warning("%s: DEM of %d x %d posts is over the budget of %d; downsampled %.2f x per axis to %d x %d "
                "(spacing %.4g x %.4g m -> %.4g x %.4g m)", dem.source, nx, ny, max_cells, (nx - 1) / (shape[1] - 1),
                shape[1], shape[0], *dem.spacing_xy, *out.spacing_xy)
    return out


# a post that stands this far from every neighbour (m, or this many post spacings if more) is no terrain:
# Earth's tallest sheer cliff is 1.3 km over kilometres; -9999 or 1e30 in a DEM is an untagged nodata value
CLIFF_M, CLIFF_SPACINGS = 1000.0, 10.0


def check_spikes(heights: np.ndarray, spacing: tuple[float, float], source: str) -> None:
    """TerrainError naming the posts that stand more than max(CLIFF_M, CLIFF_SPACINGS x spacing) from every
    neighbour (above or below): an untagged nodata value (-9999, -32768, 1e30), which would otherwise
    stretch the terrain over kilometres without a word."""
    h = heights
    step = max(CLIFF_M, CLIFF_SPACINGS * max(spacing))
    nearest = np.full(h.shape, np.inf)
    for axis in (0, 1):
        d = np.abs(np.diff(h, axis=axis))
        lead = [slice(None)] * 2
        lead[axis] = slice(1, None)
        trail = [slice(None)] * 2
        trail[axis] = slice(None, -1)
        nearest[tuple(lead)] = np.minimum(nearest[tuple(lead)], d)
        nearest[tuple(trail)] = np.minimum(nearest[tuple(trail)], d)
    spikes = nearest > step
    if not spikes.any():
        return
    rows, cols = np.nonzero(spikes)
    rest = h[~spikes]
    shown = ", ".join(f"{h[r, c]:.6g} m at row {r}, column {c}" for r, c in list(zip(rows, cols))[:3])
    raise TerrainError(f"{source}: {rows.size} post(s) stand more than {step:g} m from every neighbour ({shown}"
                       + (", ..." if rows.size > 3 else "") + f"; the other posts span {rest.min():.6g} to "
                       f"{rest.max():.6g} m): an untagged nodata value? Tag it as nodata (a GeoTIFF's nodata "
                       "tag; NaN in a .npy, filled from its neighbours) or remove it")


def _place(heights: np.ndarray, origin: tuple[float, float], spacing: tuple[float, float], source: str,
           reference: tuple[float, float, float] | None, invalid: np.ndarray | None = None) -> Dem:
    heights = _validate(heights, source)
    bad = ~np.isfinite(heights) if invalid is None else (invalid | ~np.isfinite(heights))
    heights = fill_nodata(heights, bad, source)
    dem = Dem(heights, (float(origin[0]), float(origin[1])), (float(spacing[0]), float(spacing[1])), source)
    if min(dem.spacing_xy) <= 0 or not all(map(math.isfinite, dem.spacing_xy)):
        raise TerrainError(f"{source}: post spacing must be positive and finite, got {dem.spacing_xy} m")
    check_spikes(heights, dem.spacing_xy, source)
    if reference is None:
        reference = (*dem.center_xy, float(heights.min()))
    return Dem(heights - reference[2], (dem.origin_xy[0] - reference[0], dem.origin_xy[1] - reference[1]),
               dem.spacing_xy, source)


def _geokeys(tags, source: str) -> dict[int, int | float]:
    """GeoKeyDirectory as {key: value} (short values only; doubles/ASCII are skipped)."""
    if TAG_GEOKEYS not in tags:
        return {}
    raw = [int(v) for v in tags[TAG_GEOKEYS]]
    if len(raw) < 4 or len(raw) < 4 + 4 * raw[3]:
        raise TerrainError(f"{source}: malformed GeoKeyDirectoryTag")
    keys = {}
    for n in range(raw[3]):
        key, location, _count, value = raw[4 + 4 * n: 8 + 4 * n]
        if location == 0:
            keys[key] = value
    return keys


def _geotransform(tags: dict, source: str, size_xy) -> tuple:
    """(a, e, x0, y0): x = x0 + a col, y = y0 + e row, from the GeoTIFF tags (None, None, 0, 0
    when the size is given instead)."""
    if TAG_TRANSFORMATION in tags:
        M = np.asarray(tags[TAG_TRANSFORMATION], float).reshape(4, 4)
        if abs(M[0, 1]) > 1e-12 * abs(M[0, 0]) or abs(M[1, 0]) > 1e-12 * abs(M[1, 1]):
            raise TerrainError(f"{source}: the ModelTransformation rotates or shears the raster; only north-up "
                               "rasters are supported (warp it north-up first, e.g. gdalwarp)")
        return M[0, 0], M[1, 1], M[0, 3], M[1, 3]
    if TAG_PIXEL_SCALE in tags and TAG_TIEPOINT in tags:
        sx, sy = tags[TAG_PIXEL_SCALE][:2]
        i, j, _k, X, Y = tags[TAG_TIEPOINT][:5]
        return sx, -sy, X - i * sx, Y + j * sy
    if size_xy is None:
        raise TerrainError(f"{source}: the TIFF has no geotransform (ModelPixelScale + ModelTiepoint or "
                           "ModelTransformation); give the terrain size")
    return None, None, 0.0, 0.0


def read_geotiff(path: Path, reference: tuple[float, float, float] | None = None,
                 size_xy: tuple[float, float] | None = None) -> Dem:
    """Read a single-band GeoTIFF; see the module docstring for the conventions."""
    import tifffile

    source = str(path)
    try:
        with tifffile.TiffFile(path) as tif:
            page = tif.pages[0]
            tags = {t.code: t.value for t in page.tags.values()}
            raster = page.asarray()
    except Exception as exc:  # tifffile raises several types on corrupt files
        raise TerrainError(f"{source}: cannot read the TIFF ({type(exc).__name__}: {exc})") from None
    if raster.ndim == 3 and 1 in (raster.shape[0], raster.shape[-1]):
        raster = raster.squeeze()
    if raster.ndim != 2:
        raise TerrainError(f"{source}: expected a single-band elevation raster, got an array of shape {raster.shape}")
    raster = raster.astype(float)
    invalid = ~np.isfinite(raster)
    if TAG_GDAL_NODATA in tags:
        text = str(tags[TAG_GDAL_NODATA]).strip().strip("\x00")
        try:
            nodata = float(text)
        except ValueError:
            raise TerrainError(f"{source}: GDAL_NODATA tag '{text}' is not a number") from None
        if math.isfinite(nodata):
            invalid |= raster == nodata
    keys = _geokeys(tags, source)
    if keys.get(KEY_MODEL_TYPE, 1) != 1:
        kind = {2: "geographic (degrees)", 3: "geocentric"}.get(int(keys[KEY_MODEL_TYPE]), str(keys[KEY_MODEL_TYPE]))
        raise TerrainError(f"{source}: the GeoTIFF is in a {kind} coordinate system; a projected CRS in metres is "
                           "needed (reproject it, e.g. gdalwarp -t_srs EPSG:<utm zone> in.tif out.tif)")
    unit = LINEAR_UNITS.get(int(keys.get(KEY_LINEAR_UNITS, 9001)))
    vunit = LINEAR_UNITS.get(int(keys.get(KEY_VERTICAL_UNITS, keys.get(KEY_LINEAR_UNITS, 9001))))
    if unit is None or vunit is None:
        raise TerrainError(f"{source}: unsupported linear unit code {keys.get(KEY_LINEAR_UNITS)} / vertical "
                           f"{keys.get(KEY_VERTICAL_UNITS)}; expected metre (9001) or foot (9002, 9003)")
    centre = 0.5 if keys.get(KEY_RASTER_TYPE, 1) == 1 else 0.0  # PixelIsArea: post at the pixel centre
    try:
        a, e, x0, y0 = _geotransform(tags, source, size_xy)
    except TerrainError:
        raise
    except (TypeError, ValueError, IndexError) as exc:  # a tag of the wrong length or type
        raise TerrainError(f"{source}: malformed geotransform tag (ModelPixelScale, ModelTiepoint or "
                           f"ModelTransformation: {exc})") from None
    raster = _validate(raster, source)  # >= 2 x 2 before a spacing is derived from the size
    rows, cols = raster.shape
    if size_xy is not None:  # the given extent overrides the geotransform; reference centres it
        a, e, x0, y0, centre = size_xy[0] / (cols - 1), -size_xy[1] / (rows - 1), 0.0, 0.0, 0.0
    a, e, x0, y0 = a * unit, e * unit, x0 * unit, y0 * unit
    # post (col, row) sits at x = x0 + a (col + centre), y = y0 + e (row + centre)
    h = raster * vunit
    ox, oy = x0 + a * centre, y0 + e * centre
    if a < 0:
        h, invalid, ox, a = h[:, ::-1], invalid[:, ::-1], ox + a * (cols - 1), -a
    if e < 0:
        h, invalid, oy, e = h[::-1], invalid[::-1], oy + e * (rows - 1), -e
    origin = (ox, oy)
    return _place(h, origin, (a, e), source, reference, invalid)


def read_png(path: Path, size_xy: tuple[float, float] | None, height_range: float | None,
             reference: tuple[float, float, float] | None = None) -> Dem:
    """Read an 8- or 16-bit grayscale PNG: height = value / max_value * height_range (m),
    over ``size_xy`` (m, the extent of the posts)."""
    from PIL import Image, UnidentifiedImageError

    source = str(path)
    if size_xy is None or height_range is None:
        raise TerrainError(f"{source}: a PNG carries no scale; give the terrain size (x y, m) and the height range "
                           "(m for the full grey scale)")
    try:
        with Image.open(path) as img:
            mode = img.mode
            data = np.asarray(img)
    except (OSError, UnidentifiedImageError) as exc:
        raise TerrainError(f"{source}: cannot read the PNG ({exc})") from None
    full = {"L": 255.0, "I;16": 65535.0, "I;16B": 65535.0, "I": 65535.0}.get(mode)
    if full is None or data.ndim != 2:
        raise TerrainError(f"{source}: a heightmap PNG must be 8- or 16-bit grayscale, got mode '{mode}'")
    heights = _validate(data.astype(float)[::-1] / full * height_range, source)  # >= 2 x 2 before the spacing
    ny, nx = heights.shape
    return _place(heights, (0.0, 0.0), (size_xy[0] / (nx - 1), size_xy[1] / (ny - 1)), source, reference)


def read_npy(path: Path, spacing_xy: tuple[float, float] | None,
             reference: tuple[float, float, float] | None = None) -> Dem:
    """Read ``heights[j, i]`` (m) from a ``.npy`` file; ``spacing_xy`` (m) is required."""
    source = str(path)
    if spacing_xy is None:
        raise TerrainError(f"{source}: a .npy DEM carries no spacing; give the post spacing (dx dy, m)")
    try:
        heights = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise TerrainError(f"{source}: cannot read the .npy array ({exc})") from None
    if not np.issubdtype(heights.dtype, np.number):
        raise TerrainError(f"{source}: expected a numeric array, got dtype {heights.dtype}")
    return _place(heights, (0.0, 0.0), spacing_xy, source, reference)


def read_dem(path: str | Path, *, size_xy: tuple[float, float] | None = None,
             spacing_xy: tuple[float, float] | None = None, height_range: float | None = None,
             reference: tuple[float, float, float] | None = None, max_cells: int = MAX_CELLS) -> Dem:
    """Read a ``.tif``/``.tiff``, ``.png`` or ``.npy`` DEM, fill nodata and keep it within ``max_cells``.

    ``size_xy`` (m) overrides the raster's extent; ``spacing_xy`` (m) is for
    ``.npy``; ``height_range`` (m per full grey scale) is for PNG;
    ``reference`` is subtracted from (x, y, z), default: centre and minimum.
    """
    path = Path(path)
    if not path.is_file():
        raise TerrainError(f"{path}: DEM file does not exist")
    suffix = path.suffix.lower()
    if suffix in (".tif", ".tiff"):
        dem = read_geotiff(path, reference, size_xy)
    elif suffix == ".png":
        dem = read_png(path, size_xy, height_range, reference)
    elif suffix == ".npy":
        if size_xy is not None and spacing_xy is None:
            shape = np.load(path, mmap_mode="r", allow_pickle=False).shape
            spacing_xy = (size_xy[0] / (shape[1] - 1), size_xy[1] / (shape[0] - 1))
        dem = read_npy(path, spacing_xy, reference)
    else:
        raise TerrainError(f"{path}: unsupported DEM format '{suffix}'; expected .tif, .png or .npy")
    return limit_cells(dem, max_cells)


def square_posts(dem: Dem, max_posts: int = 1025) -> Dem:
    """The DEM resampled to a square raster of 2^n + 1 posts per side (at most
    ``max_posts``), the shape Gazebo's heightmap images need; unchanged if it
    already is one. The extent is kept, so cells may become rectangular."""
    ny, nx = dem.shape
    n = min(2 ** max(1, math.ceil(math.log2(max(nx, ny) - 1))) + 1, max_posts)
    if (ny, nx) == (n, n):
        return dem
    log.info("%s: DEM of %d x %d posts resampled to %d x %d for a heightmap", dem.source, nx, ny, n, n)
    return resample(dem, (n, n))


def window(dem: Dem, i0: int, j0: int, n: int) -> Dem:
    """The n x n posts of ``dem`` from column ``i0``, row ``j0`` (at the raster's own spacing)."""
    heights = np.ascontiguousarray(dem.heights[j0:j0 + n, i0:i0 + n])
    origin = (dem.origin_xy[0] + i0 * dem.spacing_xy[0], dem.origin_xy[1] + j0 * dem.spacing_xy[1])
    return Dem(heights, origin, dem.spacing_xy, dem.source)


def engine_region(dem: Dem, max_faces: int = MAX_FACES, center: tuple[float, float] | None = None,
                  radius: float | None = None, crop: tuple[float, float, float, float] | None = None,
                  max_posts: int = 1025) -> Dem:
    """The part of the DEM that the engines collide with: Gazebo's ``<heightmap>`` and the host's mesh.

    A square of 2^n + 1 posts at the raster's own spacing (Gazebo's heightmap shape), centred on
    ``center`` (m, default the raster's centre), covering ``radius`` (m) around it or the ``crop``
    rectangle ``(x0, y0, x1, y1)`` (m); by default the largest such square whose triangulated mesh
    keeps within ``max_faces`` (257 posts for 200k faces). The full raster stays the heightfield
    (screw contact, placement). A DEM smaller than the square is used whole, resampled to 2^n + 1
    posts as before; a region over ``max_posts`` per side is coarsened with a warning."""
    ny, nx = dem.shape
    dx, dy = dem.spacing_xy
    if crop is not None:
        x0, y0, x1, y1 = (float(c) for c in crop)
        if not (x1 > x0 and y1 > y0):
            raise TerrainError(f"{dem.source}: crop {crop} must be x0 y0 x1 y1 with x1 > x0 and y1 > y0 (m)")
        center, half = ((x0 + x1) / 2, (y0 + y1) / 2), max(x1 - x0, y1 - y0) / 2
    elif radius is not None:
        if not (math.isfinite(radius) and radius > 0):
            raise TerrainError(f"{dem.source}: radius must be a positive length in m, got {radius}")
        half = float(radius)
    else:
        half = None
    cx, cy = center if center is not None else dem.center_xy
    x_lo, y_lo = dem.origin_xy
    x_hi, y_hi = x_lo + (nx - 1) * dx, y_lo + (ny - 1) * dy
    if not (x_lo <= cx <= x_hi and y_lo <= cy <= y_hi):
        raise TerrainError(f"{dem.source}: the engine region's centre ({cx:.6g}, {cy:.6g}) m is off the DEM, which "
                           f"spans x {x_lo:.6g} to {x_hi:.6g} and y {y_lo:.6g} to {y_hi:.6g} m")
    if half is None:  # the face budget: the largest 2^n cells per side whose faces fit in it
        if max_faces < MIN_ENGINE_FACES:
            raise TerrainError(f"{dem.source}: the face budget (--max-faces) must be at least {MIN_ENGINE_FACES}, "
                               f"the faces of the smallest engine region (2 x 2 cells), got {max_faces}")
        cells = 2
        while engine_faces(2 * cells) <= max_faces:
            cells *= 2
    else:
        cells = 2 ** max(1, math.ceil(math.log2(max(2 * half / min(dx, dy), 2))))
    n = cells + 1
    if n > min(nx, ny):  # the DEM is smaller than the region: whole, as a square raster
        return square_posts(dem, max_posts)
    i0 = int(np.clip(round((cx - x_lo) / dx) - cells // 2, 0, nx - n))
    j0 = int(np.clip(round((cy - y_lo) / dy) - cells // 2, 0, ny - n))
    out = window(dem, i0, j0, n)
    if n > max_posts:
        coarse = resample(out, (max_posts, max_posts))
        log.warning("%s: the engine region of %d x %d posts is over Gazebo's heightmap limit of %d; coarsened "
                    "%.2f x (spacing %.4g m); the heightfield keeps the full raster", dem.source, n, n, max_posts,
                    (n - 1) / (max_posts - 1), coarse.spacing_xy[0])
        out = coarse
    log.info("%s: engine region %d x %d posts at %.4g x %.4g m from (%.6g, %.6g) m (the heightfield keeps all "
             "%d x %d posts)", dem.source, out.shape[1], out.shape[0], *out.spacing_xy, *out.origin_xy, nx, ny)
    return out


def grid_faces(ny: int, nx: int, offset: int = 0) -> np.ndarray:
    """Two counter-clockwise (seen from +z) triangles per cell of an (ny, nx) post grid,
    vertex index ``j * nx + i``; cells are split along the (i, j)-(i+1, j+1) diagonal."""
    j, i = np.meshgrid(np.arange(ny - 1), np.arange(nx - 1), indexing="ij")
    v00 = (j * nx + i).ravel() + offset
    v10, v01, v11 = v00 + 1, v00 + nx, v00 + nx + 1
    return np.concatenate([np.stack([v00, v10, v11], 1), np.stack([v00, v11, v01], 1)])


def triangulate(dem: Dem, max_faces: int = MAX_FACES, skirt_depth: float = SKIRT_DEPTH):
    """Closed triangle mesh (vertices (N, 3) m, faces (M, 3)) of the DEM: the
    height posts on top, vertical skirts and a flat bottom ``skirt_depth`` below
    the lowest post. Over ``max_faces`` the raster is coarsened first (warning)."""
    ny, nx = dem.shape
    top_budget = max_faces - 4 * (nx + ny)
    if 2 * (nx - 1) * (ny - 1) > top_budget:
        k = math.sqrt(2 * (nx - 1) * (ny - 1) / max(top_budget, 8))
        shape = (max(2, int((ny - 1) / k) + 1), max(2, int((nx - 1) / k) + 1))
        coarse = resample(dem, shape)
        log.warning("%s: %d faces over the face budget of %d; the collision mesh uses a raster coarsened %.2f x "
                    "per axis (%d x %d posts)", dem.source, 2 * (nx - 1) * (ny - 1), max_faces, k, shape[1], shape[0])
        dem, (ny, nx) = coarse, shape
    x = dem.origin_xy[0] + dem.spacing_xy[0] * np.arange(nx)
    y = dem.origin_xy[1] + dem.spacing_xy[1] * np.arange(ny)
    X, Y = np.meshgrid(x, y)
    top = np.column_stack([X.ravel(), Y.ravel(), dem.heights.ravel()])
    # boundary ring, counter-clockwise seen from +z
    ring = np.concatenate([np.arange(nx - 1), (nx - 1) + nx * np.arange(ny - 1),
                           (ny * nx - 1) - np.arange(nx - 1), nx * (ny - 1) - nx * np.arange(ny - 1)])
    z_bottom = float(dem.heights.min()) - skirt_depth
    bottom = top[ring].copy()
    bottom[:, 2] = z_bottom
    n_top, n_ring = len(top), len(ring)
    centre = np.array([[*dem.center_xy, z_bottom]])
    vertices = np.concatenate([top, bottom, centre])
    b = n_top + np.arange(n_ring)
    b_next = n_top + (np.arange(n_ring) + 1) % n_ring
    r, r_next = ring, np.roll(ring, -1)
    skirt = np.concatenate([np.stack([r, b, b_next], 1), np.stack([r, b_next, r_next], 1)])
    c = len(vertices) - 1
    floor = np.stack([np.full(n_ring, c), b_next, b], 1)
    faces = np.concatenate([grid_faces(ny, nx), skirt, floor])
    return vertices, faces
