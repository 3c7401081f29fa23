"""The additive registry (ovearth_core.analysis.additive) reproduces the evaluator.

Every entry's pieces, summed over all queries of a demo evaluation, give the evaluator's own
summary value (the spec's "Metrics" section defines those); and summing pieces over a subset of
queries gives what evaluating only that subset gives, which is what the bootstrap and the
category subsets rely on.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ovearth_core.analysis import additive
from ovearth_core.evaluate import evaluate_samples
from ovearth_core.io import load_samples
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
