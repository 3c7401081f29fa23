"""A 20,000 x 20,000 GeoTIFF scene in the explorer, the Gallery and the report (issue 29).

Usage (from the repository root):

    .venv/bin/python -m benchmarks.geotiff [--side 20000]

Generates once (into ``benchmarks/data/geotiff``, git-ignored) a 3-band 8-bit tiled
(512 x 512, deflate) GeoTIFF in EPSG:32633 with overviews (2 to 64), 48 storage tanks
of 10 to 40 px in one open-vocabulary query (boxes only: the evaluator caps masks
at 100,000,000 pixels), among them a 10-px red target, and one
submission (the target found, the rest partly). Then, each in its own process, the RSS a
view adds: the peak RSS (``VmHWM``, reset through ``/proc/self/clear_refs`` once the data
is loaded) minus the RSS before it, for

- the explorer: Streamlit's ``AppTest``, the Overview first (evaluation cached), then the
  explorer opened on the query; checked to show the target from its own pixels (the detail
  window holds the red square at full resolution);
- the Gallery page (first page of tiles), after the Overview likewise; the target's tile is
  checked to show it at >= 40 px;
- the reviewer report (``ovearth_core.report``'s ``main``), after importing it.

Target: each <= 300 MB. Nothing here asserts (the figures depend on the machine).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "data" / "geotiff"


def target(side: int) -> tuple[int, int, int]:
    """``(x, y, size)`` of the red square (12,345, 6,789 in the 20,000-px scene)."""
    return int(side * 0.61725), int(side * 0.33945), 10

_PRELUDE = '''
import json, sys, time
def _status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1]) / 1024
def _reset_peak():
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
'''

APP = '''
import warnings
warnings.simplefilter("ignore")
from streamlit.testing.v1 import AppTest
from pages.common import data, state
data_dir, page, qid = {data_dir!r}, {page!r}, {qid!r}
at = AppTest.from_file("app.py", default_timeout=600)
at.session_state["gt_path"] = data_dir + "/ground_truth.json"
at.session_state["images_dir"] = data_dir
at.session_state["pred_path"] = data_dir + "/predictions/detector.json"
at.session_state["task"] = "vocabulary"
at.session_state["selected"] = {{"vocabulary": qid}}
at.run()
assert not at.exception and not at.error, (at.exception, at.error)
before = _status("VmRSS")
_reset_peak()
start = time.perf_counter()
at.switch_page(page)
at.run()
seconds = time.perf_counter() - start
assert not at.exception and not at.error, (at.exception, at.error)
check = ""
if page == state.EXPLORER_PAGE:
    import numpy as np
    x, y, side = {target!r}
    shown = data.display_image(data_dir, "scene.tif", {side}, {side}, data.image_stamp(
        __import__("pathlib").Path(data_dir), "scene.tif"))
    detail = data.detail_image(data_dir, "scene.tif", {side}, {side}, data.image_stamp(
        __import__("pathlib").Path(data_dir), "scene.tif"), (x, y, x + side, y + side))
    red = detail.rgb[int(y - detail.top):int(y - detail.top) + side,
                     int(x - detail.left):int(x - detail.left) + side]
    check = (f"display {{shown.rgb.shape[1]}} x {{shown.rgb.shape[0]}} ({{shown.notice}}); "
             f"detail window at scale {{detail.scale}}, target pixels all red: "
             f"{{bool((red == [255, 0, 0]).all())}}")
else:
    from ovearth_core.viz import tiles
    x, y, side = {target!r}
    region = tiles.crop_region((x, y, x + side, y + side), {side}, {side})
    check = f"target tile: {{side * tiles.tile_scale(region):.0f}} px on screen"
print(json.dumps({{"seconds": seconds, "added_mb": _status("VmHWM") - before,
                  "before_mb": before, "check": check}}))
'''

REPORT = '''
from ovearth_core.report import cli
data_dir = {data_dir!r}
before = _status("VmRSS")
_reset_peak()
start = time.perf_counter()
code = cli.main(["--gt", data_dir + "/ground_truth.json", "--predictions",
          data_dir + "/predictions/detector.json", "--images", data_dir, "--task", "vocabulary",
          "--modalities", "bbox", "--no-cache",
          "--out", data_dir + "/report.html"])
seconds = time.perf_counter() - start
assert code == 0, code
print(json.dumps({{"seconds": seconds, "added_mb": _status("VmHWM") - before,
                  "before_mb": before, "check": ""}}))
'''


def _boxes(side: int) -> list[tuple[int, int, int]]:
    """``(x, y, size)`` of the 48 tanks: the target, then a grid over the scene."""
    out = [target(side)]
    for k in range(47):
        size = 10 + (k * 7) % 31
        out.append((int((k % 8 + 0.5) * side / 8), int((k // 8 + 0.5) * side / 6), size))
    return out


def write_scene(side: int, folder: Path) -> None:
    """The GeoTIFF (strip by strip: bounded memory) and the JSON files."""
    import numpy as np
    import rasterio
    from rasterio.enums import Resampling
    from rasterio.transform import from_origin
    from rasterio.windows import Window

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "predictions").mkdir(exist_ok=True)
    boxes = _boxes(side)
    profile = {"driver": "GTiff", "width": side, "height": side, "count": 3, "dtype": "uint8",
               "tiled": True, "blockxsize": 512, "blockysize": 512, "compress": "deflate",
               "crs": "EPSG:32633", "transform": from_origin(400_000.0, 5_000_000.0, 0.5, 0.5),
               "BIGTIFF": "IF_SAFER"}
    rng = np.random.default_rng(29)
    tmp = folder / "scene.tif.part"
    with rasterio.open(tmp, "w", **profile) as dst:
        cols = np.arange(side)
        for top in range(0, side, 512):
            rows = np.arange(top, min(side, top + 512))[:, None]
            strip = np.empty((3, rows.size, side), dtype=np.uint8)
            strip[0] = (rows * 7 // 97 + cols * 3 // 89) % 200
            strip[1] = (rows // 40 + cols // 55) % 180 + 30
            strip[2] = rng.integers(60, 90, (rows.size, side), dtype=np.uint8)
            for x, y, size in boxes:
                if top <= y < top + 512 or top <= y + size - 1 < top + 512:
                    y0, y1 = max(y, top) - top, min(y + size, top + rows.size) - top
                    strip[:, y0:y1, x:x + size] = np.array([255, 0, 0], np.uint8)[:, None, None]
            dst.write(strip, window=Window(0, top, side, rows.size))
        dst.build_overviews([2, 4, 8, 16, 32, 64], Resampling.average)
    os.replace(tmp, folder / "scene.tif")

    gt = {"annotations": [{
        "id": "scene_tanks", "image_path": "scene.tif", "width": side, "height": side,
        "category_name": "storage tank", "segmentation": None,
        "bbox": [[x, y, size, size] for x, y, size in boxes],
        "oriented_bbox": [[[x, y], [x + size, y], [x + size, y + size], [x, y + size]]
                          for x, y, size in boxes]}],
        "tasks": {"open_vocabulary": [{"query_id": "ov_tanks", "ann_id": "scene_tanks",
                                       "type": "positive", "phrase": "storage tank"}]}}
    found = boxes[: len(boxes) // 2]
    pred = {"tasks": {"open_vocabulary": [{
        "query_id": "ov_tanks", "segmentation": None,
        "bbox": [{"bbox": [x + 1, y, x + s + 1, y + s], "score": 0.9 - 0.01 * k}
                 for k, (x, y, s) in enumerate(found)]
        + [{"bbox": [x + 200, y + 200, x + 230, y + 230], "score": 0.3} for x, y, _ in found[:8]],
        "oriented_bbox": []}]}}
    (folder / "ground_truth.json").write_text(json.dumps(gt))
    (folder / "predictions" / "detector.json").write_text(json.dumps(pred))


def _child(code: str) -> dict[str, object]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), OVEARTH_DATA_ROOT=str(DATA.parent))
    out = subprocess.run([sys.executable, "-c", _PRELUDE + code], cwd=ROOT, env=env,
                         capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--side", type=int, default=20_000)
    args = parser.parse_args(argv)
    marker = DATA / "side.txt"
    if not marker.exists() or marker.read_text() != str(args.side):
        start = time.perf_counter()
        write_scene(args.side, DATA)
        marker.write_text(str(args.side))
        print(f"generated {args.side:,} x {args.side:,} GeoTIFF in "
              f"{time.perf_counter() - start:.0f} s: "
              f"{(DATA / 'scene.tif').stat().st_size / 2**20:.0f} MB on disk")
    from pages.common import state

    print(f"load average {os.getloadavg()[0]:.1f}\n")
    print("| view | RSS added (target <= 300 MB) | time | check |\n| --- | --- | --- | --- |")
    for label, code in (
            ("explorer, the query opened", APP.format(data_dir=str(DATA), page=state.EXPLORER_PAGE,
                                                      qid="ov_tanks", target=target(args.side),
                                                      side=args.side)),
            ("Gallery, first page", APP.format(data_dir=str(DATA), page=state.GALLERY_PAGE,
                                               qid="ov_tanks", target=target(args.side),
                                               side=args.side)),
            ("reviewer report", REPORT.format(data_dir=str(DATA)))):
        got = _child(code)
        print(f"| {label} | {got['added_mb']:.0f} MB (RSS before {got['before_mb']:.0f} MB) | "
              f"{got['seconds']:.1f} s | {got['check']} |")


if __name__ == "__main__":
    main()
