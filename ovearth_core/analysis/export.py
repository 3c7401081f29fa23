"""``python -m ovearth_core.export geojson``: every GT object and predicted box, with its
outcome, as GeoJSON for a GIS (QGIS, geopandas).

One feature per GT box and per predicted box of every query of the task, as the matching at
``--iou-threshold`` gives (axis-aligned boxes, or ``--boxes oriented_bbox``): a GT box is
``TP`` when matched, else ``FN``; a predicted box ``TP`` when matched, else ``FP`` (every box
of a negative query is an ``FP``). Properties: ``query_id``, ``image_path``, ``kind``
(``gt`` / ``prediction``), ``index`` (the box's position in the query's list), ``outcome``,
``category``, ``phrase``, ``negative``, ``score`` (``null`` for GT and unscored boxes),
``iou`` (the matched pair's IoU, ``null`` when unmatched) and ``error_type``: the box's
object-level outcome when it is not matched (:mod:`ovearth_core.analysis.objects`, TIDE's
kinds at the run's IoU threshold: a predicted box ``localisation``, ``class confusion``,
``duplicate``, ``both`` or ``background``; a GT box ``mislocalised``, ``found as other
class`` or ``missed``), ``null`` for a matched box.

Coordinates: when the images are georeferenced (:mod:`ovearth_core.georef`), each box's
corners are mapped by its image's transform into the CRS, which the file names (the
``crs`` member GDAL reads; every image must share one CRS); when none is, pixel coordinates
(y down), named as a local CRS (``PIXEL_CRS``; without one a GIS would read them as
longitude / latitude), and the file says ``"coordinates": "pixel"``. A mix of both, or of
several CRSs, is refused (``--pixel`` writes pixel coordinates whatever the images).
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from ..cli import EXIT_BAD_INPUT, add_input_options, add_matching_options, emit, output_refused
from ..errors import OVEarthInputError, Problem
from ..evaluate import evaluate_run
from ..georef import Georef, read_georef
from ..image_paths import ImagePathError, resolve_image_path
from ..io import load_samples
from ..run import Run
from ..types import TASK_KEYS
from .objects import MATCHED, query_objects

PROG = "python -m ovearth_core.export"
BOX_MODALITIES = ("bbox", "oriented_bbox")
# Pixel coordinates are named as a local (engineering) CRS: a file with no CRS member is
# read as WGS84 longitude / latitude (RFC 7946, GDAL), which would put pixels on the globe.
PIXEL_CRS = ('LOCAL_CS["image pixels (x right, y down)",LOCAL_DATUM["image",0],'
             'UNIT["pixel",1],AXIS["x",EAST],AXIS["y",SOUTH]]')


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
    p.add_argument("--pixel", action="store_true",
                   help="pixel coordinates even for georeferenced images")
    add_matching_options(p)
    return parser


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


def _one_crs(frames: dict[str, Georef | None]) -> str | None:
    """The CRS all images share, ``None`` when none is georeferenced; refused otherwise."""
    by_crs: dict[str | None, list[str]] = defaultdict(list)
    for path, ref in frames.items():
        by_crs[None if ref is None else ref.crs].append(path)
    if len(by_crs) > 1:
        found = "; ".join(f"{crs or 'no CRS (pixels)'}: {', '.join(paths[:3])}"
                          + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
                          for crs, paths in sorted(by_crs.items(), key=lambda kv: kv[0] or ""))
        raise OVEarthInputError([Problem("(images)", "image_path", "images in one CRS (or "
                                         "none georeferenced; --pixel writes pixel "
                                         "coordinates)", found)])
    crs = next(iter(by_crs), None)
    ref = next((r for r in frames.values() if r is not None), None)
    if ref is not None and ref.epsg is None:
        raise OVEarthInputError([Problem(next(iter(frames)), "CRS", "a CRS with an EPSG code "
                                         "(GeoJSON names its CRS by code; or --pixel)",
                                         ref.wkt[:80])])
    return crs


def _crs_member(ref: Georef) -> dict[str, Any]:
    # GeoJSON's (2008) named CRS; EPSG:4326 as CRS84, so that readers take lon, lat order.
    name = ("urn:ogc:def:crs:OGC:1.3:CRS84" if ref.epsg == 4326
            else f"urn:ogc:def:crs:EPSG::{ref.epsg}")
    return {"type": "name", "properties": {"name": name}}


def _rings(boxes: np.ndarray, oriented: bool) -> np.ndarray:
    """``(N, 5, 2)`` closed rings of xyxy boxes ``(N, 4)`` or oriented boxes ``(N, 4, 2)``."""
    if oriented:
        corners = boxes.reshape(-1, 4, 2)
    else:
        x0, y0, x1, y1 = boxes.reshape(-1, 4).T
        corners = np.stack([np.stack([x0, y0], 1), np.stack([x1, y0], 1),
                            np.stack([x1, y1], 1), np.stack([x0, y1], 1)], axis=1)
    return np.concatenate([corners, corners[:, :1]], axis=1)


def _number(value: float) -> float | None:
    return None if np.isnan(value) else float(value)


def features(run: Run, modality: str, frames: dict[str, Georef | None]) -> list[dict[str, Any]]:
    """The GeoJSON features of every box of the run (see the module docstring)."""
    oriented = modality == "oriented_bbox"
    entries = [run.row(s.sample_id).get(modality) for s in run.samples]
    objects = query_objects(run.samples, modality, run.config.iou_threshold, entries=entries)
    out = []
    for sample, qo in zip(run.samples, objects, strict=True):
        kinds = {"gt": qo.gt_outcome, "prediction": qo.pred_outcome}
        entry = run.row(sample.sample_id).get(modality) or {}
        gt_match = {g: v for g, _, v in entry.get("matches", [])}
        pred_match = {p: v for _, p, v in entry.get("matches", [])}
        ref = frames.get(sample.image_path)
        gt = sample.gt_obbs if oriented else sample.gt_boxes
        pred = sample.pred_obbs if oriented else sample.pred_boxes
        scores = sample.pred_obb_scores if oriented else sample.pred_box_scores
        for kind, boxes, matched in (("gt", gt, gt_match), ("prediction", pred, pred_match)):
            rings = _rings(np.asarray(boxes, dtype=np.float64), oriented)
            if ref is not None and len(rings):
                mx, my = ref.to_map(rings[..., 0], rings[..., 1])
                rings = np.stack([mx, my], axis=-1)
            for k, ring in enumerate(rings.tolist()):
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
                                "iou": matched[k] if hit else None,
                                "error_type": (None if kinds[kind][k] == MATCHED
                                               else kinds[kind][k])}})
    return out


def geojson(run: Run, modality: str, frames: dict[str, Georef | None]) -> dict[str, Any]:
    """The FeatureCollection: :func:`features` in the images' one CRS, or in pixels."""
    crs = _one_crs(frames)
    doc: dict[str, Any] = {"type": "FeatureCollection", "name": "ovearth_outcomes",
                           "coordinates": crs or "pixel"}
    doc["crs"] = ({"type": "name", "properties": {"name": PIXEL_CRS}} if crs is None
                  else _crs_member(next(r for r in frames.values() if r is not None)))
    doc["features"] = features(run, modality, frames)
    return doc


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    prog = f"{PROG} {args.command}"
    if output_refused(prog, args.out, [args.gt, args.predictions]):
        return EXIT_BAD_INPUT
    try:
        samples = load_samples(args.gt, args.predictions, args.task, args.score_threshold,
                               args.bbox_format, modalities=args.boxes)
        run = evaluate_run(samples, args.iou_threshold)
        images = Path(args.images) if args.images else Path(args.gt).resolve().parent
        frames = ({s.image_path: None for s in run.samples} if args.pixel
                  else image_frames(run, images))
        doc = geojson(run, args.boxes, frames)
    except OVEarthInputError as err:
        print(f"{prog}: invalid input\n{err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if emit(prog, orjson.dumps(doc), args.out, [args.gt, args.predictions]):
        return EXIT_BAD_INPUT
    print(f"{prog}: wrote {args.out}: {len(doc['features']):,} boxes of {len(run.samples):,} "
          f"queries in {doc['coordinates']} coordinates", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
