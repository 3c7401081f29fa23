"""``python -m ovearth_core.export geojson``: every GT object and predicted box, with its
outcome, as GeoJSON for a GIS (QGIS, geopandas).

One feature per GT box and per predicted box of every query of the task, as the matching at
``--iou-threshold`` gives (axis-aligned boxes, or ``--boxes oriented_bbox``): a GT box is
``TP`` when matched, else ``FN``; a predicted box ``TP`` when matched, else ``FP`` (every box
of a negative query is an ``FP``). Properties: ``query_id``, ``image_path``, ``kind``
(``gt`` / ``prediction``), ``index`` (the box's position in the query's list), ``outcome``,
``category``, ``phrase``, ``negative``, ``score`` (``null`` for GT and unscored boxes),
``difficult`` (a GT box's DOTA difficult flag, ``false`` when the annotation has none;
``null`` for a predicted box), ``iou`` (the matched pair's IoU, ``null`` when unmatched)
and ``error_type``: the box's object-level outcome when it is not matched
(:mod:`ovearth_core.analysis.objects`, TIDE's kinds at the run's IoU threshold: a predicted
box ``localisation``, ``class confusion``, ``duplicate``, ``both`` or ``background``; a GT
box ``mislocalised``, ``found as other class`` or ``missed``), ``null`` for a matched box.

Coordinates (``--boxes`` decides which boxes, the annotation's pixels are the frame):

* by default, WGS84 longitude / latitude as RFC 7946 requires, whatever mix of CRSs the
  scenes are in (two UTM zones, Web Mercator...): each corner mapped by its image's
  transform (:mod:`ovearth_core.georef`) and transformed by GDAL; polygons' rings are
  counterclockwise; the file has no ``crs`` member and no other non-standard top-level
  member (``type`` and ``features`` only);
* ``--crs CRS`` (an EPSG code, e.g. ``EPSG:32633``): every box in that one CRS, which the
  file names in GeoJSON 2008's ``crs`` member (GDAL and QGIS read it; RFC 7946 leaves other
  CRSs to "prior arrangement");
* ``--pixel``: pixel coordinates of every image (y down), named as a local CRS
  (``PIXEL_CRS``; without one a GIS would read them as longitude / latitude).

Images without a CRS are left out (their boxes have no place on the map), with a notice
naming them; when no image has one the export is refused (``--pixel`` writes pixels).
``--image PATH`` (repeatable) keeps the boxes of those images only. A scene whose size
differs from its annotation's is stretched to it, as the app draws it (annotation pixel
``(x, y)`` is scene pixel ``(x W / w, y H / h)``), with a notice. Geometry that cannot be
right is refused, naming the image, and nothing is written: a geotransform that is not
finite, corners that overflow or fall outside the projection's domain (GDAL gives no
finite position for them, or its inverse does not give them back), latitudes beyond ±90°
(a geographic scene over a pole), a box across the antimeridian (RFC 7946 asks for it cut
in two), a CRS with no transformation to the target. Longitudes beyond ±180° are
normalised box by box (:func:`ovearth_core.georef.place_in_crs`).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from ..cli import (
    EXIT_BAD_INPUT,
    add_concave_obb_option,
    add_input_options,
    add_matching_options,
    emit,
    output_refused,
)
from ..errors import OVEarthInputError, Problem
from ..evaluate import evaluate_run
from ..georef import WGS84, Georef, NoLonLat, place_in_crs, read_georef
from ..image_paths import ImagePathError, resolve_image_path
from ..io import load_samples
from ..reads import Reads, images_of
from ..run import Run
from ..types import TASK_KEYS
from .objects import MATCHED, query_objects

PROG = "python -m ovearth_core.export"
BOX_MODALITIES = ("bbox", "oriented_bbox")
# Pixel coordinates are named as a local (engineering) CRS: a file with no CRS member is
# read as WGS84 longitude / latitude (RFC 7946, GDAL), which would put pixels on the globe.
PIXEL_CRS = ('LOCAL_CS["image pixels (x right, y down)",LOCAL_DATUM["image",0],'
             'UNIT["pixel",1],AXIS["x",EAST],AXIS["y",SOUTH]]')
PIXEL = "pixel"
SHOWN = 5  # image names a notice lists before "and N more"
# A projected scene's corners must come back from the inverse projection within this
# share of a pixel (far outside its zone a projection's inverse lands elsewhere).
PLACE_TOLERANCE = 0.01


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("geojson", help="GT and predicted boxes with their outcomes as GeoJSON")
    add_input_options(p)
    p.add_argument("--task", required=True, choices=tuple(TASK_KEYS))
    p.add_argument("--out", required=True, help="GeoJSON path (written atomically)")
    p.add_argument("--images", default=None,
                   help="folder that image_path values are relative to (default: the ground "
                   "truth's folder)")
    p.add_argument("--boxes", choices=BOX_MODALITIES, default="bbox",
                   help="which boxes to match and write (default bbox)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--crs", default=None,
                       help="write every box in this CRS (an EPSG code, e.g. EPSG:32633; "
                       "default: WGS84 longitude / latitude, RFC 7946)")
    where.add_argument("--pixel", action="store_true",
                       help="pixel coordinates of every image, georeferenced or not")
    p.add_argument("--image", action="append", default=None, metavar="PATH",
                   help="only the boxes of this image (an image_path of the ground truth; "
                   "repeatable)")
    add_matching_options(p)
    add_concave_obb_option(p)
    return parser


def target_crs(text: str | None) -> tuple[str, int]:
    """``--crs`` as ``("EPSG:n", n)`` (default WGS84); ``OVEarthInputError`` naming the
    option for a CRS GDAL does not know or one without an EPSG code."""
    if text is None:
        return WGS84, 4326
    from rasterio.crs import CRS
    from rasterio.errors import CRSError

    try:
        code = CRS.from_user_input(text.strip()).to_epsg()
    except (CRSError, ValueError) as err:
        raise OVEarthInputError([Problem("(options)", "--crs", "a CRS such as EPSG:32633",
                                         f"{text!r} ({err})")]) from None
    if code is None:
        raise OVEarthInputError([Problem("(options)", "--crs", "a CRS with an EPSG code "
                                         "(GeoJSON names its CRS by code)", text)])
    return f"EPSG:{code}", code


def image_frames(run: Run, images_root: Path) -> dict[str, Georef | None]:
    """The :class:`Georef` (or ``None``) of every image of the run's queries.

    Raises :class:`OVEarthInputError` naming each image that cannot be read."""
    frames: dict[str, Georef | None] = {}
    problems = []
    for path in sorted({s.image_path for s in run.samples}):
        try:
            frames[path] = read_georef(resolve_image_path(images_root, path))
        except (ImagePathError, OSError, ValueError) as err:
            problems.append(Problem(path, "image_path", "a readable image (its CRS decides the "
                                    "coordinates; --pixel writes pixel coordinates)",
                                    f"<{getattr(err, 'strerror', None) or err}>"))
    if problems:
        raise OVEarthInputError(problems)
    return frames


def _names(paths: list[str]) -> str:
    more = len(paths) - SHOWN
    return ", ".join(paths[:SHOWN]) + (f" and {more} more" if more > 0 else "")


def _rings(boxes: np.ndarray, oriented: bool) -> np.ndarray:
    """``(N, 5, 2)`` closed rings of xyxy boxes ``(N, 4)`` or oriented boxes ``(N, 4, 2)``."""
    if oriented:
        corners = boxes.reshape(-1, 4, 2)
    else:
        x0, y0, x1, y1 = boxes.reshape(-1, 4).T
        corners = np.stack([np.stack([x0, y0], 1), np.stack([x1, y0], 1),
                            np.stack([x1, y1], 1), np.stack([x0, y1], 1)], axis=1)
    return np.concatenate([corners, corners[:, :1]], axis=1)


def _counterclockwise(rings: np.ndarray) -> np.ndarray:
    """``rings`` ``(N, 5, 2)`` with each ring's vertices reversed where its signed area (x
    right, y up) is negative: RFC 7946's exteriors are counterclockwise."""
    x, y = rings[..., 0], rings[..., 1]
    area = (x[:, :-1] * y[:, 1:] - x[:, 1:] * y[:, :-1]).sum(axis=1)
    out = rings.copy()
    out[area < 0] = out[area < 0, ::-1]
    return out


def _number(value: float) -> float | None:
    return None if np.isnan(value) else float(value)


class _Placer:
    """Box rings from annotation pixels to the output's coordinates, image by image; the
    notices and the problems (images whose geometry cannot be right) it met."""

    def __init__(self, frames: dict[str, Georef | None], target: str | None):
        self.frames, self.target = frames, target  # target None: pixel coordinates
        self.notes: dict[str, str] = {}
        self.problems: dict[str, Problem] = {}

    def place(self, image: str, width: int, height: int, rings: np.ndarray) -> np.ndarray:
        ref = self.frames.get(image)
        if self.target is None or ref is None or not len(rings):
            return rings
        if (width, height) != (ref.width, ref.height):
            self.notes.setdefault(image, f"{image} is {ref.width} x {ref.height} pixels, its "
                                  f"annotation {width} x {height}: the annotation's boxes "
                                  "are stretched to the scene (as the app draws it)")
        frame = ref.in_frame(width, height)
        mx, my = frame.to_map(rings[..., 0], rings[..., 1])
        a, b, _, d, e, _ = frame.transform
        try:
            x, y = place_in_crs(ref.crs if ref.crs.startswith("EPSG:") else ref.wkt,
                                self.target, mx, my,
                                PLACE_TOLERANCE * max(math.hypot(a, d), math.hypot(b, e)))
        except NoLonLat as err:
            self.problems.setdefault(image, Problem(
                image, "geotransform", "boxes with a position in "
                f"{self.target} (a finite geotransform, corners inside the domain of the "
                "scene's CRS and of the target's: latitudes within ±90°, no box across the "
                "antimeridian)", f"<{err}; transform {ref.transform}>"))
            return rings
        return np.stack([x, y], axis=-1)


def features(run: Run, modality: str, placer: _Placer,
             images: set[str] | None = None) -> list[dict[str, Any]]:
    """The GeoJSON features of every box of the run (see the module docstring); only
    those of ``images`` when given."""
    oriented = modality == "oriented_bbox"
    entries = [run.row(s.sample_id).get(modality) for s in run.samples]
    objects = query_objects(run.samples, modality, run.config.iou_threshold, entries=entries)
    out = []
    for sample, qo in zip(run.samples, objects, strict=True):
        if images is not None and sample.image_path not in images:
            continue
        kinds = {"gt": qo.gt_outcome, "prediction": qo.pred_outcome}
        entry = run.row(sample.sample_id).get(modality) or {}
        gt_match = {g: v for g, _, v in entry.get("matches", [])}
        pred_match = {p: v for _, p, v in entry.get("matches", [])}
        gt = sample.gt_obbs if oriented else sample.gt_boxes
        pred = sample.pred_obbs if oriented else sample.pred_boxes
        scores = sample.pred_obb_scores if oriented else sample.pred_box_scores
        hard = sample.gt_difficult.tolist() if sample.gt_difficult.size else [False] * len(gt)
        for kind, boxes, matched in (("gt", gt, gt_match), ("prediction", pred, pred_match)):
            rings = placer.place(sample.image_path, sample.width, sample.height,
                                 _rings(np.asarray(boxes, dtype=np.float64), oriented))
            for k, ring in enumerate(_counterclockwise(rings).tolist()):
                hit = k in matched
                outcome = ("TP" if hit else "FN") if kind == "gt" else (
                    "TP" if hit else "FP")
                out.append({"type": "Feature", "geometry": {"type": "Polygon",
                                                            "coordinates": [ring]},
                            "properties": {
                                "query_id": sample.sample_id, "image_path": sample.image_path,
                                "kind": kind, "index": k, "outcome": outcome,
                                "category": sample.category, "phrase": sample.phrase,
                                "negative": sample.negative,
                                "score": None if kind == "gt" else _number(scores[k]),
                                "difficult": bool(hard[k]) if kind == "gt" else None,
                                "iou": matched[k] if hit else None,
                                "error_type": (None if kinds[kind][k] == MATCHED
                                               else kinds[kind][k])}})
    return out


def geojson(run: Run, modality: str, frames: dict[str, Georef | None],
            crs: str | None = WGS84, images: set[str] | None = None
            ) -> tuple[dict[str, Any], list[str]]:
    """The FeatureCollection of the boxes of ``images`` (default every image) in ``crs``
    (``"EPSG:n"``; ``None``: pixels), and the notices for the user. Images without a CRS
    are left out unless ``crs`` is ``None``. Raises :class:`OVEarthInputError` for
    geometry that cannot be right, or when no image is left."""
    kept = set(frames) if images is None else set(images)
    notes = []
    if crs is not None:
        plain = sorted(p for p in kept if frames.get(p) is None)
        if plain and len(plain) == len(kept):
            raise OVEarthInputError([Problem("(images)", "image_path", "at least one "
                                             "georeferenced image (a GeoTIFF with a CRS; "
                                             "--pixel writes pixel coordinates)",
                                             f"{len(plain)} without a CRS: {_names(plain)}")])
        if plain:
            notes.append(f"{len(plain)} image(s) without a CRS left out (their boxes have no "
                         f"place on a map; --pixel writes pixel coordinates): {_names(plain)}")
        kept -= set(plain)
    placer = _Placer(frames, crs)
    doc: dict[str, Any] = {"type": "FeatureCollection"}
    if crs is None:
        doc["crs"] = {"type": "name", "properties": {"name": PIXEL_CRS}}
    elif crs != WGS84:
        doc["crs"] = {"type": "name", "properties": {
            "name": f"urn:ogc:def:crs:EPSG::{crs.split(':', 1)[1]}"}}
    doc["features"] = features(run, modality, placer, kept)
    if placer.problems:
        raise OVEarthInputError(list(placer.problems.values()))
    return doc, [*notes, *placer.notes.values()]


def _where(crs: str | None) -> str:
    return ("pixel coordinates" if crs is None else "WGS84 longitude / latitude (RFC 7946)"
            if crs == WGS84 else f"{crs} coordinates")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    prog = f"{PROG} {args.command}"
    images_root = images_of(args.gt, args.images)
    reads = Reads([args.gt, args.predictions], images_root)
    if output_refused(prog, args.out, reads):
        return EXIT_BAD_INPUT
    try:
        crs = None if args.pixel else target_crs(args.crs)[0]
        samples = load_samples(args.gt, args.predictions, args.task, args.score_threshold,
                               args.bbox_format, modalities=args.boxes,
                               concave_obb=args.concave_obb)
        named = sorted({s.image_path for s in samples})
        reads.add_images(named)
        if output_refused(prog, args.out, reads):  # a scene: refused before any work
            return EXIT_BAD_INPUT
        wanted = None if args.image is None else set(args.image)
        unknown = sorted(wanted - set(named)) if wanted else []
        if unknown:
            raise OVEarthInputError([Problem("(options)", "--image", "an image_path of the "
                                             f"task's queries ({_names(named)})",
                                             _names(unknown))])
        run = evaluate_run(samples, args.iou_threshold)
        frames = ({s.image_path: None for s in run.samples} if args.pixel
                  else image_frames(run, images_root))
        doc, notes = geojson(run, args.boxes, frames, crs, wanted)
    except OVEarthInputError as err:
        print(f"{prog}: invalid input\n{err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    for note in notes:
        print(f"{prog}: note: {note}", file=sys.stderr)
    if emit(prog, orjson.dumps(doc), args.out, reads):
        return EXIT_BAD_INPUT
    print(f"{prog}: wrote {args.out}: {len(doc['features']):,} boxes of {len(run.samples):,} "
          f"queries in {_where(crs)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
