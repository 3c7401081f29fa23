"""The additive registry (ovearth_core.analysis.additive) reproduces the evaluator.

Every entry's pieces, summed over all queries of a demo evaluation, give the evaluator's own
summary value (the spec's "Metrics" section defines those); and summing pieces over a subset of
queries gives what evaluating only that subset gives, which is what the bootstrap and the
category subsets rely on.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ovearth_core.analysis import additive
from ovearth_core.evaluate import evaluate_samples
from ovearth_core.io import load_samples
from ovearth_core.presence import presence_cell
from ovearth_core.types import SampleList

DEMO = Path(__file__).resolve().parents[2] / "assets" / "demo"
ALL = "segmentation,bbox,oriented_bbox"


@pytest.fixture(scope="module", params=["box_detector", "strong_localiser", "weak_baseline"])
def runs(request: pytest.FixtureRequest) -> list[tuple[SampleList, dict]]:
    out = []
    for task in ("vocabulary", "referring", "reasoning"):
        samples = load_samples(DEMO / "ground_truth.json",
                               DEMO / "predictions" / f"{request.param}.json", task,
                               modalities=ALL)
        out.append((samples, evaluate_samples(samples)))
    return out


def test_every_key_metric_has_an_entry() -> None:
    keys = {(m.modality, m.metric) for m in additive.METRICS.values()}
    from ovearth_core.metrics import DET_KEY_METRICS, SEG_KEY_METRICS
    assert {("seg", k) for k in SEG_KEY_METRICS} <= keys
    for box in ("bbox", "oriented_bbox"):
        assert {(box, k) for k in DET_KEY_METRICS} <= keys
    assert ("presence", "mcc") in keys


def test_summed_pieces_equal_the_summary(runs: list[tuple[SampleList, dict]]) -> None:
    for _, result in runs:
        recomputed = additive.recompute(result)
        assert recomputed
        for (modality, metric), value in recomputed.items():
            want = result["summary"][modality][metric]
            assert value == (None if want is None else pytest.approx(want, abs=1e-12)), (
                result["task"], modality, metric)


def test_pieces_of_a_subset_equal_evaluating_the_subset(
        runs: list[tuple[SampleList, dict]]) -> None:
    samples, result = runs[0]
    keep = list(range(0, len(samples), 3))
    sub = SampleList([samples[i] for i in keep], task=samples.task,
                     modalities=samples.modalities, score_threshold=samples.score_threshold,
                     bbox_format=samples.bbox_format)
    sub_result = evaluate_samples(sub)
    rows = [result["per_sample"][i] for i in keep]
    for m in additive.metrics_of(result):
        value = float(m.value(m.matrix(rows).sum(axis=0)))
        want = sub_result["summary"][m.modality][m.metric]
        if want is None:
            assert value != value  # nan
        else:
            assert value == pytest.approx(want, abs=1e-12), m.name


# --- matrix: every row's pieces in one pass per field -------------------------------------
# The registry as it was first written: a function per row (kept here as the plain reference
# the vectorised matrix must equal bit for bit).


def _reference_presence(row: dict) -> tuple:
    cell = presence_cell(row["gt_present"], row["pred_present"])
    return tuple(cell == c for c in ("TP", "FP", "TN", "FN"))


def _reference_block(key: str, *fields: str) -> Any:
    def pieces(row: dict) -> tuple | None:
        e = row.get(key)
        if e is None or not e["evaluated"]:
            return None
        out: list[Any] = []
        for f in fields:
            out += e["tp_at"] if f == "tp_at" else [1.0 if f == "1" else e[f]]
        return tuple(out)
    return pieces


REFERENCE = {
    "presence_mcc": _reference_presence,
    **{f"seg_macro_{short}": _reference_block("seg", field, "1")
       for short, field in (("precision", "precision"), ("recall", "recall"), ("miou", "iou"))},
    "seg_micro_miou": _reference_block("seg", "intersection", "union"),
    **{name: pieces for key in ("bbox", "oriented_bbox") for name, pieces in (
        (f"{key}_micro_precision", _reference_block(key, "tp", "num_pred")),
        (f"{key}_micro_recall", _reference_block(key, "tp", "num_gt")),
        (f"{key}_micro_f1", _reference_block(key, "tp", "fp", "fn")),
        (f"{key}_mean_micro_f1", _reference_block(key, "tp_at", "num_pred", "num_gt")))},
}


def _reference_matrix(name: str, rows: list[dict]) -> np.ndarray:
    out = np.zeros((len(rows), additive.METRICS[name].size))
    for i, row in enumerate(rows):
        p = REFERENCE[name](row)
        if p is not None:
            out[i] = p
    return out


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def test_the_reference_covers_the_registry() -> None:
    assert set(REFERENCE) == set(additive.METRICS)


def test_matrix_equals_the_per_row_reference(runs: list[tuple[SampleList, dict]]) -> None:
    for _, result in runs:
        rows = result["per_sample"]
        for name, m in additive.METRICS.items():
            assert _same(m.matrix(rows), _reference_matrix(name, rows)), (result["task"], name)
            assert all(m.pieces(r) == REFERENCE[name](r) for r in rows), name


def _det(evaluated: bool, tp: int, n_pred: int, n_gt: int, tp_at: list[int] | None = None
         ) -> dict:
    return {"evaluated": evaluated, "tp": tp, "fp": n_pred - tp, "fn": n_gt - tp,
            "num_pred": n_pred, "num_gt": n_gt, "tp_at": tp_at or [tp] * 10}


EDGE_ROWS = [
    # not evaluated, absent block, block missing from a hand-made row, a float field, None
    {"gt_present": True, "pred_present": False, "seg": None, "bbox": _det(False, 0, 3, 0)},
    {"gt_present": False, "pred_present": True,
     "seg": {"evaluated": True, "iou": 0.1 + 0.2, "precision": None, "recall": 1 / 3,
             "intersection": 7, "union": 9},
     "bbox": _det(True, 2, 3, 4, [2, 2, 1, 1, 1, 0, 0, 0, 0, 0])},
    {"gt_present": True, "pred_present": True, "seg": {"evaluated": False}},
    {"gt_present": False, "pred_present": False, "seg": None, "bbox": None},
]


@pytest.mark.parametrize("name", sorted(n for n in additive.METRICS
                                        if not n.startswith("oriented")))
@pytest.mark.parametrize("rows", [EDGE_ROWS, EDGE_ROWS[::-1], EDGE_ROWS[:1], []],
                         ids=["edge", "reversed", "one", "none"])
def test_matrix_edge_rows(name: str, rows: list[dict]) -> None:
    m = additive.METRICS[name]
    want = _reference_matrix(name, rows)
    assert _same(m.matrix(rows), want) and want.shape == (len(rows), m.size)


def test_matrix_refuses_a_tp_at_of_another_length() -> None:
    rows = [{"bbox": _det(True, 1, 1, 1, [1] * 10)}, {"bbox": _det(True, 1, 1, 1, [1] * 9)}]
    with pytest.raises(ValueError, match="tp_at"):
        additive.METRICS["bbox_mean_micro_f1"].matrix(rows)
