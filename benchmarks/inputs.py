"""Hostile or huge inputs (issue 17): before (commit 9cdefcc) and after, in the same run.

Usage (from the repository root):

    .venv/bin/python -m benchmarks.inputs [--full]

Each figure runs in a child process, once on today's ``ovearth_core`` and once on the one of
commit ``9cdefcc`` (``git archive 9cdefcc ovearth_core``, put first on ``PYTHONPATH``); the
child times the operation alone and reports its peak RSS (``VmHWM``) and its RSS before the
operation, and a digest of the result, so that the two sides are checked to agree:

- duplicate rows: N one-pixel mask rows (and one box each) of one query on a 512 x 512
  image, loaded with ``load_samples``;
- the compressed-RLE pre-check (``parse_rle``) of one valid string of N characters;
- the display decode (``load_display_image``) and one gallery window (``load_region``)
  of a 10,000 x 10,000 16-bit PNG, the pixel cap, and the display of a 6,000 x 6,000
  float32 TIFF;
- with ``--images DIR`` (default: the full-scale synthetic data's images, when present):
  the ordinary case, CPU time of the display and full-resolution decodes of its large
  8-bit JPEGs and PNGs (must not be slower).

Nothing here asserts: the figures depend on the machine and its load (printed).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASELINE = "9cdefcc"

_PRELUDE = '''
import hashlib, json, sys, time
def _status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1]) / 1024
def _report(seconds, digest, before):
    print(json.dumps({"seconds": seconds, "hwm_mb": _status("VmHWM"), "before_mb": before,
                      "digest": digest}))
'''

DUPLICATES = '''
import numpy as np
from ovearth_core import io, masks
n, side = {n}, 512
rng = np.random.default_rng(17)
pixels = rng.choice(side * side, size=n, replace=False).tolist()
gt = {{"annotations": [{{"id": "a", "image_path": "x.png", "width": side, "height": side,
        "category_name": "c", "segmentation": {{"size": [side, side], "counts": [0, side * side]}},
        "bbox": [[0, 0, 1, 1]]}}],
      "tasks": {{"referring": [{{"query_id": "q", "ann_id": "a", "query": "q"}}]}}}}
rows = [{{"query_id": "q",
         "segmentation": {{"size": [side, side], "counts": [p, 1, side * side - p - 1]}},
         "bbox": [[float(k % 500), 0.0, float(k % 500) + 1, 1.0]]}} for k, p in enumerate(pixels)]
ground = io.parse_ground_truth(gt, "gt")
before = _status("VmRSS")
start = time.perf_counter()
s = io.load_samples("gt", "pred", "referring", modalities="segmentation,bbox",
                    ground_truth=ground, predictions_doc={{"tasks": {{"referring": rows}}}})[0]
seconds = time.perf_counter() - start
h = hashlib.sha256(masks.decode(s.pred_mask).tobytes())
h.update(s.pred_boxes.tobytes())
_report(seconds, h.hexdigest()[:16], before)
'''

RLE = '''
from ovearth_core import masks
n = {n}
text = "111" + "0" * (n - 3)  # every run 1 (deltas of 0 from the fourth): a run a char
before = _status("VmRSS")
start = time.perf_counter()
rle, size = masks.parse_rle({{"size": [1000, n // 1000], "counts": text}})
seconds = time.perf_counter() - start
_report(seconds, f"{{size}} area {{masks.area(rle)}}", before)
'''

IMAGE = '''
from ovearth_core.viz import images
folder, op, name, side = {folder!r}, {op!r}, {name!r}, {side}
before = _status("VmRSS")
start = time.perf_counter()
if op == "display":
    out = images.load_display_image(folder, name, side, side)
    assert out.notice is None, out.notice
else:
    out = images.load_region(folder, name, side, side, (side / 2, side / 2, side / 2 + 200,
                                                         side / 2 + 200))
seconds = time.perf_counter() - start
_report(seconds, hashlib.sha256(out.rgb.tobytes()).hexdigest()[:16], before)
'''

ORDINARY = '''
import os
from PIL import Image
from ovearth_core.viz import images
folder = {folder!r}
names = sorted(os.listdir(folder))
sizes = {{}}
for name in names:
    with Image.open(os.path.join(folder, name)) as img:
        if img.size[0] > 4000:
            sizes[name] = img.size
big = [n for n in sizes if n.endswith(".jpg")][:4] + [n for n in sizes if n.endswith(".png")][:2]
h = hashlib.sha256()
before = _status("VmRSS")
start = time.process_time()
for name in big:
    h.update(images.load_display_image(folder, name, *sizes[name]).rgb.tobytes())
    h.update(images.load_source_rgb(folder, name, *sizes[name]).tobytes())
_report(time.process_time() - start, h.hexdigest()[:16], before)
'''

MAKE_IMAGE = '''
import numpy as np
from PIL import Image
side = 10000
rng = np.random.default_rng(0)
rows = np.linspace(500, 50000, side)[:, None]
img = (rows + np.linspace(0, 9000, side)[None, :]).astype(np.uint16)
img[::7, ::5] += rng.integers(0, 400, img[::7, ::5].shape, dtype=np.uint16)
Image.fromarray(img).save(sys.argv[1])
side = 6000
values = rng.normal(0.2, 0.05, (side, side)).astype(np.float32)
values[::97, ::89] = np.nan
Image.fromarray(values).save(sys.argv[2])
'''


def _child(code: str, package_root: Path, cwd: Path) -> dict[str, object]:
    env = dict(os.environ, PYTHONPATH=str(package_root))
    out = subprocess.run([sys.executable, "-c", _PRELUDE + code], cwd=cwd, env=env, check=True,
                         capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _baseline(tmp: Path) -> Path:
    target = tmp / "baseline"
    target.mkdir()
    archive = subprocess.run(["git", "archive", BASELINE, "ovearth_core"], cwd=ROOT,
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    return target


def _row(name: str, target: str, before: dict[str, object], after: dict[str, object]) -> None:
    same = "same result" if before["digest"] == after["digest"] else "RESULTS DIFFER"
    t0, t1 = float(before["seconds"]), float(after["seconds"])  # type: ignore[arg-type]
    m0, m1 = float(before["hwm_mb"]), float(after["hwm_mb"])  # type: ignore[arg-type]
    print(f"| {name} | {target} | {t0:.2f} s, {m0:,.0f} MB | {t1:.2f} s, {m1:,.0f} MB | "
          f"time x{t0 / max(t1, 1e-9):.1f}, peak RSS x{m0 / max(m1, 1e-9):.1f} | {same} |",
          flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true",
                        help="the issue's sizes: 64,000 duplicate rows before too (minutes) "
                             "and a 50 MB RLE string (about 4 GB before)")
    parser.add_argument("--images", type=Path,
                        default=ROOT / "benchmarks" / "data" / "full" / "images",
                        help="a folder of ordinary large 8-bit images (synthetic data)")
    args = parser.parse_args(argv)
    dup_rows = 64_000 if args.full else 16_000
    rle_chars = 50_000_000 if args.full else 20_000_000
    print(f"load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} cores; before = "
          f"{BASELINE}, after = this tree; time of the operation alone, peak RSS = the "
          "child's VmHWM (interpreter and input included)\n")
    print("| figure | target | before | after | ratio (before / after) | check |")
    print("| --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        old, new = _baseline(tmp), ROOT
        subprocess.run([sys.executable, "-c", "import sys\n" + MAKE_IMAGE,
                        str(tmp / "big16.png"), str(tmp / "float32.tif")], check=True, cwd=tmp)
        for rows in (dup_rows,):
            code = DUPLICATES.format(n=rows)
            _row(f"{rows:,} duplicate rows of one query", "linear",
                 _child(code, old, tmp), _child(code, new, tmp))
        growth = [_child(DUPLICATES.format(n=n), new, tmp)["seconds"]
                  for n in (16_000, 64_000)]
        print(f"| after: 16,000 -> 64,000 rows | x4 for linear | {growth[0]:.2f} s | "
              f"{growth[1]:.2f} s | x{growth[1] / growth[0]:.1f} | — |")
        code = RLE.format(n=rle_chars)
        before, after = _child(code, old, tmp), _child(code, new, tmp)
        _row(f"RLE pre-check, {rle_chars / 1e6:.0f}M-character string", "memory ∝ string",
             before, after)
        for result, label in ((before, "before"), (after, "after")):
            extra = float(result["hwm_mb"]) - float(result["before_mb"])  # type: ignore[arg-type]
            print(f"|   {label}: peak above the RSS with the string | — | "
                  f"{extra:,.0f} MB = {extra * 2**20 / rle_chars:.1f} bytes per character "
                  "| | | |")
        for op, name, side, label in (
                ("display", "big16.png", 10_000, "display of a 10,000² 16-bit PNG"),
                ("region", "big16.png", 10_000, "gallery window (200² px) of it"),
                ("display", "float32.tif", 6_000, "display of a 6,000² float32 TIFF (NaNs)")):
            code = IMAGE.format(folder=str(tmp), op=op, name=name, side=side)
            _row(label, "bounded by the display", _child(code, old, tmp),
                 _child(code, new, tmp))
        if args.images.is_dir():
            code = ORDINARY.format(folder=str(args.images))
            _row("large 8-bit JPEG/PNG (synthetic), display + full decode, CPU s",
                 "ratio >= 1.0", _child(code, old, tmp), _child(code, new, tmp))
    print(f"\nload average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
