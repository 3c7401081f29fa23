"""Cached loading and evaluation (all of the app's caching lives here).

Files are keyed by ``(resolved path, mtime_ns, size, inode, ctime_ns)``: a rewrite of the
same size with its modification time put back still changes the key (the change time
cannot be set back). Each file is read once per key, and the SHA-256 shown and used for the
on-disk result cache is of the very bytes evaluated. Uploads are written once to a
temporary folder under their SHA-256, so their key is their content.
Evaluation is cached per (ground truth, submission, task, options): selecting
another query or filter never re-evaluates.
"""

from __future__ import annotations

import atexit
import hashlib
import logging
import shutil
import tempfile
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import streamlit as st

from ovearth_core import cache as result_cache_
from ovearth_core import files, georef, io, pipeline, review
from ovearth_core.analysis import diagnose, gallery
from ovearth_core.errors import OVEarthInputError, Problem
from ovearth_core.options import Options
from ovearth_core.results import Results
from ovearth_core.run import Run
from ovearth_core.types import SampleList
from ovearth_core.viz import overlay
from ovearth_core.viz import tiles as tile_viz
from ovearth_core.viz.images import (
    DISPLAY_MAX_SIDE,
    RGB8,
    SOURCE_MAX_PIXELS,
    DetailImage,
    DisplayImage,
    ImagePathError,
    decodes_reduced,
    detail_crop,
    display_from_source,
    load_detail,
    load_display_image,
    load_region,
    load_source_rgb,
    resolve_image_path,
)

# One folder per server process, removed at exit: instances never share uploads.
UPLOAD_DIR = Path(tempfile.mkdtemp(prefix="ovearth_uploads_"))
atexit.register(shutil.rmtree, UPLOAD_DIR, ignore_errors=True)
UPLOAD_KEEP_SECONDS = 24 * 3600
UPLOAD_KEEP_BYTES = 2 * 1024 ** 3
FileKey = tuple[str, int, int, int, int]
Stamp = tuple[int, int, int, int]


@dataclass
class Evaluation:
    """One evaluation run: the results (or the problems that stopped it) and the table;
    ``view``: the results typed (:class:`~ovearth_core.results.Results`, built once with
    the evaluation): what pages read; ``results``: the evaluator's dict, only handed to the
    core's readers of the output; ``from_cache``: the numbers were loaded from the on-disk
    result cache."""

    results: dict[str, Any] | None = None
    view: Results | None = None
    rows: list[dict[str, Any]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    seconds: float = 0.0
    run: Run | None = None
    from_cache: bool = False
    gt_sha256: str = ""  # of the bytes evaluated
    pred_sha256: str = ""


def file_key(path: Path) -> FileKey:
    """``(path, mtime_ns, size, inode, ctime_ns)``; a missing file gets ``-1`` for each
    (its read fails later)."""
    try:
        st_ = path.stat()
    except OSError:
        return (str(path), -1, -1, -1, -1)
    return (str(path), st_.st_mtime_ns, st_.st_size, st_.st_ino, st_.st_ctime_ns)


def save_upload(name: str, data: bytes) -> Path:
    """Store uploaded bytes under their SHA-256 (same content, same path and cache key).

    The file keeps the uploaded name (inside a folder named by the digest) so that
    validation reports name the file the user knows. Each server process has its own
    folder (removed when it exits); every write goes to a unique temporary file renamed
    into place, so two sessions uploading the same file at once never see partial bytes;
    the folder is pruned to :data:`UPLOAD_KEEP_BYTES` and :data:`UPLOAD_KEEP_SECONDS`.
    """
    digest = hashlib.sha256(data).hexdigest()
    safe = Path(name).name or "upload.json"
    target = UPLOAD_DIR / digest / safe
    target.parent.mkdir(parents=True, exist_ok=True)
    if not target.exists():  # atomic; a concurrent writer of the same bytes is harmless
        files.atomic_write(target, data, mode=0o600)
    prune_uploads(keep=target)
    return target


def prune_uploads(keep: Path | None = None, now: float | None = None) -> None:
    """Remove uploads older than the age cap, then the oldest while over the size cap."""
    now = time.time() if now is None else now
    files = []
    for f in UPLOAD_DIR.glob("*/*"):
        try:
            st_ = f.stat()
        except OSError:
            continue
        files.append((st_.st_mtime, st_.st_size, f))
    files.sort()
    total = sum(size for _, size, _ in files)
    for mtime, size, f in files:
        if f == keep:
            continue
        if now - mtime > UPLOAD_KEEP_SECONDS or total > UPLOAD_KEEP_BYTES:
            f.unlink(missing_ok=True)
            total -= size


@st.cache_data(show_spinner=False, max_entries=64)
def digest(key: FileKey) -> str:
    """SHA-256 of a regular file (read once per key). An evaluation's own digests are
    :attr:`Evaluation.gt_sha256` and :attr:`Evaluation.pred_sha256`."""
    return result_cache_.file_digest(key[0])


@st.cache_resource(show_spinner=False, max_entries=2)
def _ground_truth(key: FileKey) -> tuple[io.GroundTruth, str]:
    """The parsed ground truth and the SHA-256 of the bytes it was parsed from."""
    return pipeline.read_ground_truth(key[0])


@st.cache_resource(show_spinner=False, max_entries=8)
def _samples(gt: FileKey, pred: FileKey, options: Options) -> pipeline.Loaded:
    """Validated samples of one task and the SHA-256s of the ground-truth and prediction
    bytes they were built from (each file read once; raises OVEarthInputError), under
    ``options`` as :meth:`Options.loader` keys them."""
    ground_truth, gt_sha = _ground_truth(gt)
    return pipeline.load(gt[0], pred[0], options, ground_truth=ground_truth, gt_sha256=gt_sha)


def samples(gt: FileKey, pred: FileKey, options: Options) -> SampleList:
    """Validated samples of one task under ``options`` (raises OVEarthInputError)."""
    return _samples(gt, pred, options.loader()).samples


# cache_resource, not cache_data: one shared object per key, never copied. cache_data
# unpickled ~1.6 MB of results and rows on every rerun of every page (~80 ms per query
# switch). Callers treat the Evaluation as read-only.
def evaluate(gt: FileKey, pred: FileKey, options: Options) -> Evaluation:
    """Evaluate a submission through the one pipeline (:mod:`ovearth_core.pipeline`: the
    result cache entry the report and the leaderboard share); bad input comes back as
    ``problems``, never raised. Under the evaluator's options only: the average
    precision's own never evaluate again."""
    return _evaluate(gt, pred, options.evaluator())


@st.cache_resource(show_spinner=False, max_entries=16)
def _evaluate(gt: FileKey, pred: FileKey, options: Options) -> Evaluation:
    logging.getLogger("ovearth_inspector").info("evaluated %s %s %s", gt[0], pred[0], options)
    start = time.perf_counter()
    try:
        loaded = _samples(gt, pred, options.loader())
        run, from_cache = pipeline.evaluate_cached(replace(loaded, options=options),
                                                   result_cache()[0])
        view = run.view  # read once, here: a malformed result is a report, not a traceback
    except OVEarthInputError as err:
        return Evaluation(problems=err.problems)
    rows = diagnose.query_rows(run)  # the run's kept box facts: no IoU computed again
    return Evaluation(run.results, view, rows, seconds=time.perf_counter() - start, run=run,
                      from_cache=from_cache, gt_sha256=loaded.gt_sha256,
                      pred_sha256=loaded.pred_sha256)


def result_cache() -> tuple[result_cache_.ResultCache | None, str]:
    """The on-disk result cache shared with the command-line tools (``None`` when
    ``OVEARTH_CACHE=off``, misconfigured, or a folder refused as shared), and a note
    saying which."""
    try:
        return result_cache_.opened()
    except ValueError as err:  # a bad OVEARTH_CACHE_MAX_BYTES: say so, run without
        return None, f"result cache off: {err}"


# Full-resolution pixels are kept for the last two images only (a 5200 x 5200 image is
# 81 MB): enough to switch between the queries of one image without decoding again. They
# are decoded on a worker thread (Pillow releases the GIL while decoding), so that a large
# JPEG's reduced display decode runs at the same time: 0.25 s instead of 0.45 s.
_DECODER = ThreadPoolExecutor(max_workers=2, thread_name_prefix="ovearth-decode")


@st.cache_resource(show_spinner=False, max_entries=2)
def _source_image(images_dir: str, image_path: str, width: int, height: int,
                  stamp: Stamp) -> Future[RGB8 | None]:
    return _DECODER.submit(load_source_rgb, images_dir, image_path, width, height)


@st.cache_resource(show_spinner=False, max_entries=24)
def display_image(images_dir: str, image_path: str, width: int, height: int,
                  stamp: Stamp) -> DisplayImage:
    """The display image of an annotation; ``stamp`` (:func:`image_stamp`) invalidates edits.

    Large JPEGs: a reduced decode, while the full resolution decodes beside it for the
    detail window. Other images: derived from the full-resolution decode (one decode).
    Unreadable or mis-sized files take the notice path of ``load_display_image``, and so
    do images over ``SOURCE_MAX_PIXELS`` (decoded at display size; no full resolution kept).
    """
    if width * height > SOURCE_MAX_PIXELS:
        return load_display_image(images_dir, image_path, width, height)
    source = _source_image(images_dir, image_path, width, height, stamp)
    if max(width, height) > DISPLAY_MAX_SIDE and decodes_reduced(images_dir, image_path):
        return load_display_image(images_dir, image_path, width, height)
    rgb = source.result()
    if rgb is None:
        return load_display_image(images_dir, image_path, width, height)
    return display_from_source(rgb)


@st.cache_resource(show_spinner=False, max_entries=24)
def detail_image(images_dir: str, image_path: str, width: int, height: int,
                 stamp: Stamp, region: tuple[float, float, float, float]
                 ) -> DetailImage | None:
    """Full-resolution window around ``region`` when the display image is downscaled."""
    if max(width, height) <= DISPLAY_MAX_SIDE:  # the display image is the original
        return None
    if width * height > SOURCE_MAX_PIXELS:  # read from the file, window only
        return load_detail(images_dir, image_path, width, height, region)
    source = _source_image(images_dir, image_path, width, height, stamp).result()
    return None if source is None else detail_crop(source, region)


@st.cache_resource(show_spinner=False, max_entries=64)
def image_georef(images_dir: str, image_path: str, stamp: tuple[int, int]
                 ) -> georef.Georef | None:
    """The image's CRS and transform (``None``: not georeferenced, or unreadable: the
    display's notice says why)."""
    try:
        return georef.read_georef(resolve_image_path(images_dir, image_path))
    except (ImagePathError, OSError, ValueError):
        return None


@st.cache_data(show_spinner=False, max_entries=8)
def review_state(key: FileKey) -> review.ReviewState:
    """The review sidecar's state; its key (mtime, size) changes with every append, from
    this session or another, so a rerun always shows what the file holds."""
    return review.load_state(key[0])


def image_stamp(images_dir: Path, image_path: str) -> Stamp:
    """``(mtime, size, inode, ctime)`` of an annotation's image (as :func:`file_key`: an
    image saved again shows, even at the same size and mtime); ``-1`` each when missing or
    escaping."""
    try:
        path = resolve_image_path(images_dir, image_path)
    except ImagePathError:
        return (-1, -1, -1, -1)
    return file_key(path)[1:]


@st.cache_resource(show_spinner=False, max_entries=48)
def gallery_tiles(gt: FileKey, pred: FileKey, options: Options, selector: str,
                  modality: str | None) -> list[gallery.Tile]:
    """Every gallery tile of a cached evaluation (unfiltered, in query order)."""
    evaluation = evaluate(gt, pred, options)
    if evaluation.run is None:
        return []
    return gallery.tiles(evaluation.run, evaluation.rows, selector, modality)


# The full-resolution masks of the last two queries tiled (a 3,333 x 3,546 mask is 12 MB
# and 30 ms to decode): a page of one query's 48 tiles decodes them once, not per tile.
@st.cache_resource(show_spinner=False, max_entries=2)
def _tile_masks(gt: FileKey, pred: FileKey, options: Options, query_id: str
                ) -> overlay.Decoded:
    return overlay.decode_masks(evaluate(gt, pred, options).run.sample(query_id))


# One entry per tile picture (a few kB of JPEG): a page of 48 costs one decode per tile
# the first time, nothing afterwards.
@st.cache_resource(show_spinner=False, max_entries=2000)
def tile_jpeg(gt: FileKey, pred: FileKey, options: Options, images_dir: str,
              tile: gallery.Tile, stamp: Stamp) -> bytes:
    """The JPEG of one tile: the original pixels around its object, masks and boxes."""
    run = evaluate(gt, pred, options).run
    sample, row = run.sample(tile.query_id), run.row(tile.query_id)
    region = tile_viz.crop_region(tile.box, sample.width, sample.height)
    scale = tile_viz.load_scale(region)
    if scale >= 1 and sample.width * sample.height <= SOURCE_MAX_PIXELS:
        # Full resolution: cut from the image decoded once (the viewer's cached source),
        # not one decode of the whole file per tile (48 of a dense scene's page).
        source = _source_image(images_dir, sample.image_path, sample.width, sample.height,
                               stamp).result()
        window = None if source is None else tile_viz.source_window(source, region)
    else:
        window = load_region(images_dir, sample.image_path, sample.width, sample.height,
                             region, scale)
    focus = None if tile.box_index is None else (
        "GT" if tile.kind == "gt" else "pred", tile.box_index)
    return tile_viz.jpeg_bytes(tile_viz.render_tile(
        window, sample, region, tile.modality, row, focus,
        decoded=_tile_masks(gt, pred, options, tile.query_id)))


def clear_caches() -> None:
    """Forget every cached value of the app (the sidebar's "Reload files", tests): through
    Streamlit's own ``clear()`` of both cache kinds, so no cached function can be left out
    of a hand-written list (issue 39: such lists missed eight of 31)."""
    st.cache_data.clear()
    st.cache_resource.clear()
