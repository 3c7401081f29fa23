"""The audit's candidate pairs at scale (issue 48, item 3): time and peak memory of
:func:`ovearth_core.audit.consensus.audit_samples` on crowded queries, and a fingerprint of
the audit's whole output on the consensus benchmark's world (``benchmarks/audit.py``), to
show a change leaves the results as they were.

    .venv/bin/python -m benchmarks.audit_pairs crowd     # 10 submissions x 1,000 boxes, one query
    .venv/bin/python -m benchmarks.audit_pairs singles   # 5,000 one-box submissions, one query
    .venv/bin/python -m benchmarks.audit_pairs identity  # SHA-256 of the audit per modality

Each case runs in a child process under an address-space limit (``--limit-gb``, default 4)
and reports wall time and the child's peak resident memory; beside it, the evaluator
(:func:`ovearth_core.evaluate.evaluate_samples`) on one submission holding every pooled box
of the query, timed the same way, as the yardstick. ``PYTHONPATH`` chooses the code
measured (a checkout of the old commit for "before").
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np

SIZE = 512


def _crowd_samples(n_subs: int, n_boxes: int, seed: int = 0) -> list[list]:
    """One query on one image: 5 GT boxes; each submission ``n_boxes`` boxes of 40-200 px
    scattered over the 512 x 512 image (most pairs overlap), random scores."""
    from ovearth_core.types import Sample

    rng = np.random.default_rng(seed)
    gt = np.array([[50, 50, 150, 150], [200, 200, 320, 300], [10, 300, 90, 420],
                   [350, 40, 480, 140], [300, 350, 420, 480]], dtype=float)
    out = []
    for _ in range(n_subs):
        xy = rng.uniform(0, SIZE - 200, (n_boxes, 2))
        wh = rng.uniform(40, 200, (n_boxes, 2))
        boxes = np.concatenate([xy, xy + wh], axis=1)
        out.append([Sample("q1", "ship", False, "a.png", "a1", "ship", SIZE, SIZE,
                           gt_boxes=gt, pred_boxes=boxes,
                           pred_box_scores=rng.uniform(0, 1, n_boxes),
                           has_prediction_row=True)])
    return out


def _evaluate_pooled(subs: list[list]) -> None:
    from dataclasses import replace

    from ovearth_core.evaluate import evaluate_samples
    from ovearth_core.types import SampleList

    first = subs[0][0]
    pooled = replace(first, pred_boxes=np.concatenate([s[0].pred_boxes for s in subs]),
                     pred_box_scores=np.concatenate([s[0].pred_box_scores for s in subs]))
    evaluate_samples(SampleList([pooled], task="open_vocabulary", modalities=("bbox",),
                                score_threshold=None, bbox_format="xyxy"), 0.5)


CASES = {"crowd": (10, 1000), "singles": (5000, 1)}


def _child(case: str, what: str) -> None:
    from ovearth_core.audit.consensus import audit_samples

    n_subs, n_boxes = CASES[case]
    subs = _crowd_samples(n_subs, n_boxes)
    t0 = time.perf_counter()
    if what == "audit":
        result = audit_samples(subs, [f"s{i}" for i in range(n_subs)], "bbox", 0.5, 0.0)
        digest = hashlib.sha256(json.dumps(result, sort_keys=True).encode()).hexdigest()[:16]
    else:
        _evaluate_pooled(subs)
        digest = "-"
    seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": round(seconds, 2), "peak_mb": round(peak), "sha": digest}))


def _measure(case: str, what: str, limit_gb: float) -> dict:
    limit = int(limit_gb * 2**30)
    code = (f"import resource; resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))\n"
            f"from benchmarks.audit_pairs import _child; _child({case!r}, {what!r})")
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=1800)
    if run.returncode != 0:
        last = (run.stderr.strip().splitlines() or ["?"])[-1]
        return {"failed": last[:160]}
    return json.loads(run.stdout.strip().splitlines()[-1])


def _identity(images: int, submissions: int) -> dict[str, str]:
    """SHA-256 of the audit's output (suspects, objects, weights) per modality on the
    consensus benchmark's world (seed 0)."""
    import tempfile
    from pathlib import Path

    from benchmarks.audit import ground_truth, inject, persona, world
    from ovearth_core.audit import audit
    from ovearth_core.options import Options

    out = {}
    for modality in ("bbox", "oriented_bbox", "segmentation"):
        rng = np.random.default_rng(0)
        imgs = world(images, rng)
        labels = inject(imgs, 10, rng)
        gt = ground_truth(imgs, labels, modality)
        with tempfile.TemporaryDirectory() as tmp:
            gt_path = Path(tmp) / "ground_truth.json"
            gt_path.write_text(json.dumps(gt))
            paths = []
            for s, skill in enumerate(np.linspace(0.55, 0.95, submissions)):
                p = Path(tmp) / f"model_{s:02d}.json"
                p.write_text(json.dumps(persona(imgs, gt, float(skill), s, modality)))
                paths.append(p)
            result = audit(gt_path, paths, Options("vocabulary", (modality,)), min_score=0.0)
        out[modality] = hashlib.sha256(json.dumps(result, sort_keys=True).encode()
                                       ).hexdigest()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.audit_pairs")
    parser.add_argument("what", choices=(*CASES, "identity"))
    parser.add_argument("--limit-gb", type=float, default=4.0)
    parser.add_argument("--images", type=int, default=300)
    parser.add_argument("--submissions", type=int, default=24)
    args = parser.parse_args(argv)
    if args.what == "identity":
        print(json.dumps(_identity(args.images, args.submissions), indent=2))
        return 0
    print(json.dumps({"case": args.what, "audit": _measure(args.what, "audit", args.limit_gb),
                      "evaluator": _measure(args.what, "evaluate", args.limit_gb)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
