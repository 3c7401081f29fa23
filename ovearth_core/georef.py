"""Georeferenced images: a TIFF's CRS and pixel-to-map transform, read safely with rasterio.

Pixel coordinates are the evaluator's: continuous, ``(0, 0)`` the top-left corner of the
top-left pixel, x to the right, y down. A GeoTIFF's affine transform maps them to its CRS
(``X = a x + b y + c``, ``Y = d x + e y + f``, GDAL's geotransform reordered as rasterio's
``Affine``); WGS84 longitude / latitude come from GDAL's own transformation, ground
distances from the WGS84 ellipsoid's geodesics (pyproj's ``Geod``).
An image is georeferenced when it is a TIFF with a CRS and a finite transform other than
the identity; ground control points and RPCs alone are not used.

A CRS that GDAL cannot map to WGS84 (a ``LOCAL_CS``: a site grid with no datum) or a point
outside its projection's domain has map coordinates but no longitude / latitude:
:meth:`Georef.to_lonlat` raises :class:`NoLonLat`, whose message says why, and captions
(:func:`coordinate_texts`) say so beside the map coordinates.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import numpy.typing as npt
import rasterio
from rasterio.errors import NotGeoreferencedWarning, RasterioError
from rasterio.warp import transform as warp_transform

from .files import check_input_stat, open_input

# A TIFF is read by window: its size on disk bounds no memory (a 40,000 x 40,000 RGB scene
# is 4.8 GB uncompressed), so it has no byte cap.
NO_BYTE_CAP = 1 << 62
# GDAL's block cache (MB): what a windowed read may keep besides its result.
GDAL_CACHE_MB = 64
_TIFF_MAGIC = (b"II*\0", b"MM\0*", b"II+\0", b"MM\0+")
WGS84 = "EPSG:4326"


class NoLonLat(ValueError):
    """Points of an image whose WGS84 longitude / latitude cannot be computed: its CRS has
    no transformation to WGS84, or a point lies outside the projection's domain."""


def is_tiff(path: str | os.PathLike[str]) -> bool:
    """Whether the file starts as a TIFF (or BigTIFF) does. Raises as :func:`open_input`
    for a special file (a pipe is refused without blocking)."""
    with open_input(path, NO_BYTE_CAP) as handle:
        return handle.read(4) in _TIFF_MAGIC


@contextmanager
def open_raster(path: str | os.PathLike[str]) -> Iterator[rasterio.io.DatasetReader]:
    """The TIFF opened by rasterio with GDAL's TIFF driver alone (a virtual raster named
    ``.tif`` could point at any file), GDAL writing nothing beside it (no ``.aux.xml``) and
    looking for no sidecar. GDAL's errors become ``OSError``."""
    check_input_stat(path, Path(path).stat(), NO_BYTE_CAP)
    try:
        with warnings.catch_warnings(), rasterio.Env(
                GDAL_PAM_ENABLED="NO", GDAL_DISABLE_READDIR_ON_OPEN="EMPTY_DIR",
                GDAL_CACHEMAX=GDAL_CACHE_MB):
            warnings.simplefilter("ignore", NotGeoreferencedWarning)
            with rasterio.open(path, driver="GTiff") as dataset:
                yield dataset
    except RasterioError as err:
        raise OSError(str(err)) from err


@dataclass(frozen=True)
class Georef:
    """An image's CRS and pixel-to-map transform.

    ``crs``: ``"EPSG:<code>"`` when the CRS has one, else its WKT; ``wkt``: the WKT;
    ``epsg``: the code or ``None``; ``transform``: ``(a, b, c, d, e, f)``; ``width`` x
    ``height``: the size of the pixel grid ``transform`` applies to (the image's; 0 when
    unknown).
    """

    crs: str
    wkt: str
    epsg: int | None
    transform: tuple[float, float, float, float, float, float]
    width: int = 0
    height: int = 0

    def in_frame(self, width: int, height: int) -> Georef:
        """This georeference for the pixels of a ``width`` x ``height`` annotation of the
        image: an image of another size is stretched to the annotation's (as the app draws
        it), so annotation pixel ``(x, y)`` is image pixel ``(x * W / width, y * H /
        height)``. Itself when the sizes agree or the image's is unknown."""
        if (width, height) == (self.width, self.height) or not (self.width and self.height):
            return self
        sx, sy = self.width / width, self.height / height
        a, b, c, d, e, f = self.transform
        return replace(self, transform=(a * sx, b * sy, c, d * sx, e * sy, f), width=width,
                       height=height)

    def to_map(self, x: npt.ArrayLike, y: npt.ArrayLike
               ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """Map coordinates of pixel coordinates ``(x, y)`` (arrays of one shape)."""
        a, b, c, d, e, f = self.transform
        px, py = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
        with np.errstate(over="ignore", invalid="ignore"):  # callers check finiteness
            return a * px + b * py + c, d * px + e * py + f

    def to_lonlat(self, x: npt.ArrayLike, y: npt.ArrayLike
                  ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """WGS84 ``(longitude, latitude)`` in degrees of pixel coordinates ``(x, y)``.

        Raises :class:`NoLonLat` (saying why) when any point has none."""
        mx, my = self.to_map(x, y)
        return map_to_crs(self.wkt, WGS84, mx, my)


def map_to_crs(src: str, dst: str, mx: npt.NDArray[np.float64], my: npt.NDArray[np.float64]
               ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Map coordinates ``(mx, my)`` (arrays of one shape) in the CRS ``src`` (WKT or
    ``"EPSG:n"``) transformed by GDAL into ``dst`` (x = longitude, y = latitude for a
    geographic CRS). Raises :class:`NoLonLat` when GDAL finds no transformation or a
    result is not finite (a point outside the projection's domain)."""
    if not (np.isfinite(mx).all() and np.isfinite(my).all()):
        raise NoLonLat(f"map coordinates that are not finite numbers, in {_short(src)}")
    if not mx.size:
        return mx.copy(), my.copy()
    try:
        x, y = warp_transform(rasterio.crs.CRS.from_user_input(src),
                              rasterio.crs.CRS.from_user_input(dst),
                              mx.ravel().tolist(), my.ravel().tolist())
    except Exception as err:  # noqa: BLE001  GDAL's CPLE_* errors (classes of a private module)
        raise NoLonLat(f"{_short(src)} cannot be transformed to {_short(dst)}: "
                       f"{_first_line(err)}") from None
    x, y = np.reshape(x, mx.shape).astype(np.float64), np.reshape(y, my.shape).astype(np.float64)
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise NoLonLat(f"points outside the domain of {_short(src)} (no position in "
                       f"{_short(dst)})")
    return x, y


def place_in_crs(src: str, dst: str, mx: npt.NDArray[np.float64],
                 my: npt.NDArray[np.float64], tolerance: float
                 ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Map coordinates ``(mx, my)`` ``(N, K)`` (N rings of K points) in ``src`` placed in
    ``dst``, every position checked to lie in the domain of both (issue 48):

    * a geographic ``src`` or ``dst``: latitudes within ±90° (a scene "over the pole" is
      refused, not written with a latitude of 95°);
    * a projected ``src``: the inverse projection must give the points back (within
      ``tolerance`` map units, e.g. a hundredth of a pixel): far outside its zone a
      transverse Mercator's inverse returns finite positions that are elsewhere;
    * a geographic ``dst``: longitudes beyond ±180° are normalised by whole turns, each
      ring as a whole (a scene in the 0-360° convention lands at the same place); a ring
      that crosses the antimeridian is refused: RFC 7946 (3.1.9) asks for such a polygon
      cut in two, which this export does not do.

    Raises :class:`NoLonLat` saying which rule failed."""
    src_crs = rasterio.crs.CRS.from_user_input(src)
    dst_crs = rasterio.crs.CRS.from_user_input(dst)
    if src_crs.is_geographic:
        _latitudes(my, src)
    same = src_crs == dst_crs
    x, y = (mx, my) if same else map_to_crs(src, dst, mx, my)
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise NoLonLat(f"map coordinates that are not finite numbers, in {_short(src)}")
    if src_crs.is_projected and not same:
        bx, by = map_to_crs(dst, src, x, y)
        off = float(np.max(np.hypot(bx - mx, by - my))) if mx.size else 0.0
        if not off <= tolerance:
            raise NoLonLat(f"points outside the domain of {_short(src)}: its inverse "
                           f"projection does not give them back (off by {off:.6g} map "
                           "units)")
    if dst_crs.is_geographic:
        _latitudes(y, dst)
        x = _one_turn(x, dst)
    return x, y


def _latitudes(lat: npt.NDArray[np.float64], crs: str) -> None:
    worst = float(np.max(np.abs(lat))) if lat.size else 0.0
    if worst > 90:
        raise NoLonLat(f"latitudes beyond ±90° in {_short(crs)} (up to {worst:.6g}°)")


def _one_turn(lon: npt.NDArray[np.float64], crs: str) -> npt.NDArray[np.float64]:
    """Longitudes ``(N, K)`` with each ring shifted by whole turns into [-180, 180]."""
    lo, hi = lon.min(axis=-1), lon.max(axis=-1)
    shift = np.where((lo < -180) | (hi > 180), -360.0 * np.floor((lo + 180) / 360), 0.0)
    crossing = (hi - lo > 180) | (hi + shift > 180)
    if crossing.any():
        k = int(np.argmax(crossing))
        raise NoLonLat(f"a box crossing the antimeridian in {_short(crs)} (longitudes "
                       f"{lo[k]:.6g}° to {hi[k]:.6g}°; RFC 7946 asks for such a polygon "
                       "cut in two, which this export does not do)")
    return lon + shift[..., None]


def _short(crs: str) -> str:
    """A CRS for a message: its code, or the name of its WKT."""
    if crs.startswith("EPSG:"):
        return crs
    name = crs.split('"')[1] if crs.count('"') >= 2 else crs[:60]
    return f"the CRS {name!r} ({crs.split('[')[0]})"


def _first_line(err: Exception) -> str:
    """GDAL's message, without the CRS it quotes as PROJJSON (the caller names it)."""
    text = str(err).splitlines()[0] if str(err) else type(err).__name__
    if "'{" in text:
        text = text.split(" from '")[0].split("'{")[0].strip()
    return text if len(text) <= 160 else text[:157] + "..."


def read_georef(path: str | os.PathLike[str]) -> Georef | None:
    """The image's :class:`Georef`; ``None`` when it is no TIFF or has no CRS or only the
    identity transform. Raises ``OSError`` / ``ValueError`` for an unreadable file."""
    if not is_tiff(path):
        return None
    with open_raster(path) as dataset:
        crs, affine = dataset.crs, dataset.transform
        if crs is None or affine.is_identity:
            return None
        if not all(np.isfinite(affine[:6])):
            raise ValueError("a geotransform that is not finite (expected finite numbers): "
                             f"{tuple(affine[:6])}")
        epsg = crs.to_epsg()
        wkt = crs.to_wkt()
        return Georef(f"EPSG:{epsg}" if epsg is not None else wkt, wkt, epsg,
                      (affine.a, affine.b, affine.c, affine.d, affine.e, affine.f),
                      dataset.width, dataset.height)


def coordinate_text(ref: Georef, x: float, y: float) -> str:
    """Pixel ``(x, y)`` in the CRS and in WGS84, for a caption:
    ``"EPSG:32633 X 500,025.00, Y 3,999,990.00 · lon 15.000278°, lat 36.144628°"``."""
    return coordinate_texts(ref, [x], [y])[0]


def coordinate_texts(ref: Georef, x: npt.ArrayLike, y: npt.ArrayLike) -> list[str]:
    """:func:`coordinate_text` of every point of ``(x, y)`` (1-D arrays), in one
    transformation (a dense scene's hundreds of object centres)."""
    mx, my = ref.to_map(x, y)
    name = ref.crs if ref.epsg is not None else "map"
    try:
        lon, lat = ref.to_lonlat(x, y)
    except NoLonLat as err:
        return [f"{name} X {float(a):,.2f}, Y {float(b):,.2f} · no WGS84 position ({err})"
                for a, b in zip(mx.ravel(), my.ravel(), strict=True)]
    return [f"{name} X {float(a):,.2f}, Y {float(b):,.2f} · "
            f"lon {float(c):.6f}°, lat {float(d):.6f}°"
            for a, b, c, d in zip(mx.ravel(), my.ravel(), lon.ravel(), lat.ravel(),
                                  strict=True)]


def pixel_size_m(path: str | os.PathLike[str], width: int | None = None,
                 height: int | None = None) -> float | None:
    """The image's ground sample distance in metres (:func:`ground_sample_distance`),
    of the pixels of a ``width`` x ``height`` annotation when given (an image of another
    size is stretched to it); ``None`` when it is not georeferenced or has no position on
    the ellipsoid (a ``LOCAL_CS``, corners outside the projection's domain)."""
    ref = read_georef(path)
    if ref is None:
        return None
    if width and height:
        ref = ref.in_frame(width, height)
    try:
        return ground_sample_distance(ref)
    except NoLonLat:
        return None


def ground_sample_distance(ref: Georef) -> float:
    """The ground distance of one pixel at the image's centre, in metres: the mean of the
    geodesic lengths (WGS84 ellipsoid, pyproj's ``Geod``) of the centre pixel's width and
    height, their ends placed by GDAL. For any CRS: a projected one in any unit (its
    scale factor included: Web Mercator's ``1 / cos(latitude)``, UTM's 0.9996 on the
    central meridian), a geographic one in degrees. Raises :class:`NoLonLat` when the
    centre has no WGS84 position."""
    from pyproj import Geod  # only here: the app's pages never need it

    cx, cy = ref.width / 2, ref.height / 2
    lon, lat = ref.to_lonlat(np.array([cx - 0.5, cx + 0.5, cx, cx]),
                             np.array([cy, cy, cy - 0.5, cy + 0.5]))
    _, _, dist = Geod(ellps="WGS84").inv(lon[[0, 2]], lat[[0, 2]], lon[[1, 3]], lat[[1, 3]])
    return float(np.mean(dist))
