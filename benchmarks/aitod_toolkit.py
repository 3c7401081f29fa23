"""The ``--aitod`` block against the AI-TOD toolkit itself: faster-coco-eval-aitod's
``COCOeval_faster`` (its ``all_stats``), when it is installed. It builds from source (C++, minutes),
so it is no test dependency; tests/analysis/test_aitod.py checks the same keys against
pycocotools set up as the toolkit, with its oLRP written out. Usage::

    pip install faster-coco-eval-aitod==1.0.2
    python -m benchmarks.aitod_toolkit [SYNTH_FULL_DIR]

``SYNTH_FULL_DIR``: a ``python -m ovearth_core.synth --scale full --no-images`` folder (each
persona with boxes, plain and hard-negative views); the dense tiny-object case always runs.
Prints the largest difference of each case and every key that differs by more than 1e-9.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# The toolkit's all_stats, in order (its stats[1], AP at IoU 0.25, is always -1: skipped).
STATS = ("map@[0.5:0.95]", None, "map@0.5", "map@0.75", "map_verytiny", "map_tiny",
         "map_small", "map_medium", "mar@1", "mar@100", "mar@1500", "mar_verytiny", "mar_tiny",
         "mar_small", "mar_medium", "olrp", "olrp_loc", "olrp_fp", "olrp_fn")


def toolkit_numbers(samples: list[Any], hard: bool) -> dict[str, float | None]:
    from faster_coco_eval_aitod import COCO, COCOeval_faster
    from test_aitod import coco_dataset

    dataset, dets = coco_dataset(samples, hard)
    with contextlib.redirect_stdout(io.StringIO()):
        gt = COCO()
        gt.dataset = dataset
        gt.createIndex()
        ev = COCOeval_faster(gt, gt.loadRes(dets), "bbox")
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    return {k: None if v == -1 else float(v)
            for k, v in zip(STATS, ev.all_stats[:len(STATS)], strict=True) if k}


def compare(samples: list[Any], hard: bool, label: str) -> None:
    from ovearth_core.analysis.aitod import AITOD_KEYS
    from ovearth_core.analysis.ap import average_precision_report

    ours = average_precision_report(samples, 0.5, ("bbox",), hard, aitod=True)["bbox"]["aitod"]
    want = toolkit_numbers(samples, hard)
    diffs = {k: abs(ours[k] - want[k]) if None not in (ours[k], want[k])
             else 0.0 if ours[k] is want[k] else float("inf") for k in AITOD_KEYS}
    bad = {k: (ours[k], want[k]) for k, d in diffs.items() if d > 1e-9}
    print(f"{label} ({'hard negatives' if hard else 'positives only'}): largest |difference| "
          f"{max(diffs.values()):.3g}; keys over 1e-9: {bad or 'none'}")


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.aitod_toolkit",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", nargs="?", type=Path, help="a synthetic full-scale folder")
    args = parser.parse_args()
    sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "analysis")]
    from test_aitod import dense_tiny

    from ovearth_core.io import load_samples

    for hard in (False, True):
        compare(dense_tiny(0, n_queries=4, per_query=250), hard, "dense tiny objects")
    if args.folder is None:
        return
    for pred in sorted((args.folder / "predictions").glob("*.json")):
        samples = list(load_samples(args.folder / "ground_truth.json", pred, "vocabulary",
                                    modalities=("bbox",)))
        if any(len(s.pred_boxes) for s in samples):
            for hard in (False, True):
                compare(samples, hard, pred.name)


if __name__ == "__main__":
    main()
