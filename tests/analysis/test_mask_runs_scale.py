"""Mask objects grow with runs, not pixels (issue 48, item 4).

A ground-truth mask of a few runs over a 1 x 536,870,911 scene (``large_masks``' largest)
once made ``python -m ovearth_core.analysis`` cut every run into one segment per column,
that is per pixel, and fail with a MemoryError. Here the command runs in a child whose
address space is limited (as ``tests/analysis/test_viz_read_budget.py`` does), and on small
masks the components, their overlaps and the hull points equal a brute-force reference on
the decoded pixels (``scipy.ndimage.label`` with 8-connectivity, numpy sums, every pixel
corner), for thin masks in particular (one or two rows, runs over many columns).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import refs
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy import ndimage
from scipy.spatial import ConvexHull

from ovearth_core import masks
from ovearth_core.analysis import mask_objects

ROOT = Path(__file__).resolve().parents[2]
W = 536_870_911  # 2**29 - 1: the largest mask large_masks takes


def _rle(pixels: np.ndarray) -> masks.Rle | None:
    return masks.parse_rle(masks.encode(pixels))[0]


def _reference(pixels: np.ndarray) -> tuple[np.ndarray, int]:
    """Labels ``(H, W)`` numbered column-major by first pixel (0 = background), count."""
    labels, k = ndimage.label(pixels.T, structure=np.ones((3, 3)))
    return labels.T, k


def _labels_of(comp: mask_objects.Components, shape: tuple[int, int]) -> np.ndarray:
    """The components painted back on pixels from their pieces (1-based)."""
    flat = np.zeros(shape[0] * shape[1], dtype=np.int64)
    for a, b, lab in zip(comp.start, comp.stop, comp.label, strict=True):
        flat[a:b] = lab + 1
    return flat.reshape(shape[1], shape[0]).T


thin_masks = st.tuples(st.integers(1, 3), st.integers(1, 40)).flatmap(
    lambda s: arrays(np.uint8, s, elements=st.integers(0, 1)))
any_masks = st.tuples(st.integers(1, 9), st.integers(1, 12)).flatmap(
    lambda s: arrays(np.uint8, s, elements=st.integers(0, 1)))


@settings(max_examples=300, deadline=None)
@given(st.one_of(thin_masks, any_masks))
def test_components_equal_scipys_labels(pixels: np.ndarray) -> None:
    rle = _rle(pixels)
    comp = mask_objects.components(rle)
    labels, k = _reference(pixels)
    assert comp.count == k
    if k:
        assert np.array_equal(_labels_of(comp, pixels.shape), labels)
        assert comp.area.tolist() == np.bincount(labels.ravel())[1:].tolist()
        runs = masks.run_lengths(rle)
        assert comp.start.size <= 3 * (runs.size // 2)  # pieces follow the runs


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 3).flatmap(lambda h: st.tuples(
    arrays(np.uint8, (h, 25), elements=st.integers(0, 1)),
    arrays(np.uint8, (h, 25), elements=st.integers(0, 1)))))
def test_overlaps_equal_pixel_sums(pair: tuple[np.ndarray, np.ndarray]) -> None:
    a_px, b_px = pair
    a, b = mask_objects.components(_rle(a_px)), mask_objects.components(_rle(b_px))
    la, _ = _reference(a_px)
    lb, _ = _reference(b_px)
    want = {}
    for i in range(1, la.max() + 1):
        for j in range(1, lb.max() + 1):
            inter = int(((la == i) & (lb == j)).sum())
            if inter:
                want[i - 1, j - 1] = inter / int(((la == i) | (lb == j)).sum())
    i, j, iou = mask_objects.overlaps(a, b)
    assert dict(zip(zip(i.tolist(), j.tolist(), strict=True), iou.tolist(),
                    strict=True)) == want


@settings(max_examples=200, deadline=None)
@given(st.one_of(thin_masks, any_masks))
def test_hull_points_span_the_pixels_hull(pixels: np.ndarray) -> None:
    rle = _rle(pixels)
    if rle is None:
        return
    ys, xs = np.nonzero(pixels)
    corners = np.concatenate([np.stack([xs + dx, ys + dy], axis=1)
                              for dx in (0, 1) for dy in (0, 1)]).astype(float)
    points = masks.hull_points(rle)
    assert {tuple(p) for p in points} <= {tuple(p) for p in corners}
    if np.linalg.matrix_rank(corners - corners[0]) == 2:
        # the same hull: its area to rounding (qhull sums in the points' order)
        assert ConvexHull(points).volume == pytest.approx(ConvexHull(corners).volume, rel=1e-12)


def _long_scene(folder: Path) -> tuple[Path, Path]:
    """One query on a 1 x 536,870,911 scene: GT runs of 200,000,000 and 300,000,000 pixels,
    the prediction 250,000,000 and 100,000,000 (hand-worked below)."""
    def rle(runs: list[int]) -> dict:
        return {"size": [1, W], "counts": refs.encode_runs_string([*runs, W - sum(runs)])}

    gt = {"annotations": [{"id": "1", "image_path": "long.tif", "width": W, "height": 1,
                           "category_name": "road",
                           "segmentation": rle([100, 200_000_000, 100, 300_000_000])}],
          "tasks": {"open_vocabulary": [{"query_id": "q1", "ann_id": "1", "type": "positive",
                                         "phrase": "road"}]}}
    pred = {"tasks": {"open_vocabulary": [{"query_id": "q1", "phrase": "road",
                                           "segmentation": rle([50, 250_000_000, 10,
                                                                100_000_000])}]}}
    (folder / "gt.json").write_text(json.dumps(gt))
    (folder / "pred.json").write_text(json.dumps(pred))
    return folder / "gt.json", folder / "pred.json"


# pycocotools' merge (the evaluator's intersection) reserves 4 bytes a pixel of address
# space, 2 GiB here, without touching it: the limit leaves room for that and for the
# libraries, and the resident peak is checked apart (66 MB here; below a decoded mask).
LIMIT = 3 << 30
CHILD = textwrap.dedent("""
    import atexit, resource, runpy, sys
    resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
    def peak_kb():
        # VmHWM: this program's own resident peak. Not ru_maxrss: Linux carries into it
        # the peak of the memory the process had before exec, and subprocess starts this
        # one by vfork from the test's process (an xdist worker late in the suite holds
        # over 500 MB).
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) for line in status
                        if line.startswith("VmHWM:"))
    atexit.register(lambda: print("peak_kb", peak_kb(), file=sys.stderr))
    sys.argv = ["ovearth_core.analysis", *{args!r}]
    runpy.run_module("ovearth_core.analysis", run_name="__main__")
""")


def test_a_long_thin_mask_is_analysed_within_a_memory_limit(tmp_path: Path) -> None:
    gt, pred = _long_scene(tmp_path)
    out = tmp_path / "out.json"
    args = ["--gt", str(gt), "--prediction", str(pred), "--modalities", "segmentation",
            "--large-masks", "--output", str(out)]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1"}
    run = subprocess.run([sys.executable, "-c", CHILD.format(limit=LIMIT, args=args)],
                         capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "Traceback" not in run.stderr
    peak_kb = int(run.stderr.split("peak_kb")[-1].split()[0])
    assert peak_kb * 1024 < W, peak_kb  # less than the mask decoded (1 byte a pixel)
    result = json.loads(out.read_text())
    seg = result["per_sample"][0]["seg"]
    # GT: [100, 200,000,100) and [200,000,200, 500,000,200); prediction: [50, 250,000,050)
    # and [250,000,060, 350,000,060): 200,000,000 + 49,999,850 + 100,000,000 shared.
    gt_runs = [(100, 200_000_100), (200_000_200, 500_000_200)]
    pred_runs = [(50, 250_000_050), (250_000_060, 350_000_060)]
    inter = sum(max(0, min(b, d) - max(a, c)) for a, b in gt_runs for c, d in pred_runs)
    assert (seg["gt_area"], seg["pred_area"], seg["intersection"]) == (
        500_000_000, 350_000_000, inter)
    assert inter == 349_999_850
    # Components by hand: GT A, B and predictions P, Q (one row: runs 100 and 10 pixels
    # apart are separate objects). P x A = 200,000,000 / 250,000,000 = 0.8: matched; Q's
    # best is B, 100,000,000 / 300,000,000 = 1/3: localisation (>= 0.1), B mislocalised.
    found = result["analysis"]["error_attribution"]["objects"]["segmentation"]
    assert {k: v for k, v in found["predictions"].items() if v} == {"matched": 1,
                                                                   "localisation": 1}
    assert {k: v for k, v in found["ground_truth"].items() if v} == {"matched": 1,
                                                                    "mislocalised": 1}


HULL_CHILD = textwrap.dedent("""
    import resource, sys
    resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
    from ovearth_core import masks
    rle = {{"size": [1, {w}], "counts": [100, 200000000, 100, 300000000, {rest}]}}
    print(masks.hull_points(rle).tolist())
""")


def test_hull_points_of_a_long_thin_mask_follow_the_runs() -> None:
    """The converters' hull points of the same scene's GT mask: the corners of its two
    runs' end columns, found without an array as wide as the scene (1 GiB limit)."""
    child = HULL_CHILD.format(limit=1 << 30, w=W, rest=W - 500_000_200)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1"}
    run = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True,
                         timeout=120, env=env)
    assert run.returncode == 0, run.stderr[-2000:]
    points = {tuple(p) for p in json.loads(run.stdout)}
    assert {(100.0, 0.0), (100.0, 1.0), (500_000_200.0, 0.0), (500_000_200.0, 1.0)} <= points
