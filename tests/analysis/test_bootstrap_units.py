"""Bootstrap over images (Compare and slices) against a resampling built by hand, and the
few-units warning."""

from __future__ import annotations

import numpy as np
import pytest
from dense_fixtures import write_dense_dota

from ovearth_core.analysis import slices
from ovearth_core.analysis.compare import compare_results
from ovearth_core.analysis.evidence import MIN_UNITS
from ovearth_core.analysis.evidence import thin_evidence as few_units_warning
from ovearth_core.evaluate import evaluate_samples
from ovearth_core.options import Options
from ovearth_core.types import Sample, SampleList

CATEGORIES = ("ship", "plane", "small vehicle")


def _benchmark(hit_rate: float, seed: int, n_images: int = 7) -> tuple[SampleList, dict]:
    """One query per (image, category), DOTA-style: 10 x 10 GT boxes in a row, each found
    exactly with probability ``hit_rate``, plus a stray box now and then."""
    rng = np.random.default_rng(seed)
    out = []
    layout = np.random.default_rng(99)  # the same GT for every submission
    for i in range(n_images):
        for c in CATEGORIES:
            n = int(layout.integers(1, 12))
            gt = np.array([[20 * k, 0, 20 * k + 10, 10] for k in range(n)], dtype=float)
            pred = gt[rng.random(n) < hit_rate]
            if rng.random() < 0.5:
                pred = np.concatenate([pred, [[500.0, 500, 510, 510]]])
            out.append(Sample(f"img{i}_{c}", c, False, f"images/{i}.png", f"a{i}{c}", c,
                              1000, 1000, gt_boxes=gt, pred_boxes=pred.reshape(-1, 4),
                              pred_box_scores=np.full(len(pred), np.nan)))
    samples = SampleList(out, task="open_vocabulary", modalities=("bbox",),
                         score_threshold=None, bbox_format="xyxy")
    return samples, evaluate_samples(samples, 0.5)


def _micro_f1(rows: list[dict]) -> float:
    """Positive micro F1 written out: 2 TP / (2 TP + FP + FN) over the queries' boxes."""
    tp = sum(r["bbox"]["tp"] for r in rows)
    fp = sum(r["bbox"]["fp"] for r in rows)
    fn = sum(r["bbox"]["fn"] for r in rows)
    return 2 * tp / (2 * tp + fp + fn)


def _by_hand(rows_a: list[dict], rows_b: list[dict] | None, n_resamples: int, seed: int,
             chunk: int = 128) -> np.ndarray:
    """Draw images with replacement (the generator's calls in the library's order: chunks of
    128 resamples, ``integers(0, M, (chunk, M))``), gather each drawn image's queries and
    compute the metric (or B − A) on them."""
    images = list(dict.fromkeys(r["image_path"] for r in rows_a))
    of_image = {im: [i for i, r in enumerate(rows_a) if r["image_path"] == im] for im in images}
    rng = np.random.default_rng(seed)
    values = []
    for start in range(0, n_resamples, chunk):
        draws = rng.integers(0, len(images), size=(min(chunk, n_resamples - start),
                                                     len(images)))
        for draw in draws:
            picked = [i for d in draw for i in of_image[images[d]]]
            a = _micro_f1([rows_a[i] for i in picked])
            values.append(a if rows_b is None else _micro_f1([rows_b[i] for i in picked]) - a)
    return np.array(values)


def test_compare_image_bootstrap_equals_a_hand_built_resampling() -> None:
    _, a = _benchmark(0.6, 1)
    _, b = _benchmark(0.8, 2)
    got = compare_results(a, b, n_resamples=300, seed=5, unit="image")
    diff = got.metric("bbox", "positive_micro_f1")
    low, high = np.percentile(_by_hand(a["per_sample"], b["per_sample"], 300, 5), [2.5, 97.5])
    assert (diff.ci_low, diff.ci_high) == (pytest.approx(low, abs=1e-12),
                                           pytest.approx(high, abs=1e-12))
    assert (got.unit, got.num_units) == ("image", 7)
    assert got.warning == few_units_warning(7, "image") and "7 images" in got.warning
    by_query = compare_results(a, b, n_resamples=300, seed=5)
    assert (by_query.unit, by_query.num_units) == ("query", 21)
    assert by_query.metric("bbox", "positive_micro_f1").ci_low != diff.ci_low


def test_slice_image_bootstrap_equals_a_hand_built_resampling() -> None:
    samples, a = _benchmark(0.6, 1)
    table = slices.slice_table(a, samples, "category", n_resamples=200, seed=3, unit="image")
    assert table.unit == "image"
    assert [v.num_units for v in table.values] == [7, 7, 7]
    # Slices are drawn in table order from one generator: rebuild the order by hand.
    rows = a["per_sample"]
    rng_values: dict[str, np.ndarray] = {}
    rng = np.random.default_rng(3)
    for value in [v.value for v in table.values]:
        members = [r for r in rows if r["category"] == value]
        images = list(dict.fromkeys(r["image_path"] for r in members))
        draws = rng.integers(0, len(images), size=(200, len(images)))
        rng_values[value] = np.array([_micro_f1([r for d in draw for r in members
                                                 if r["image_path"] == images[d]])
                                      for draw in draws])
    for v in table.values:
        m = next(m for m in v.metrics
                 if (m.modality, m.metric) == ("bbox", "positive_micro_f1"))
        low, high = np.percentile(rng_values[v.value], [2.5, 97.5])
        assert (m.ci_low, m.ci_high) == (pytest.approx(low, abs=1e-12),
                                         pytest.approx(high, abs=1e-12))


def test_query_unit_is_unchanged_and_warns_below_30() -> None:
    _, a = _benchmark(0.6, 1, n_images=12)  # 36 queries on 12 images
    _, b = _benchmark(0.8, 2, n_images=12)
    by_query = compare_results(a, b, n_resamples=100, seed=0)
    assert by_query.num_units == 36 and by_query.warning is None
    by_image = compare_results(a, b, n_resamples=100, seed=0, unit="image")
    assert by_image.num_units == 12 and "12 images" in by_image.warning
    assert few_units_warning(MIN_UNITS, "query") is None
    assert "29 queries" in few_units_warning(MIN_UNITS - 1, "query")


@pytest.mark.parametrize(("doc", "expected"), [
    (b'{"annotations": [], "tasks": {}}', "query"),  # no marker: queries
    (b'{"source": {"format": "DOTA", "resample_unit": "image"}, "annotations": []}', "image"),
    (b'{"source": {"resample_unit": "pixel"}}', "query"),  # unknown: not trusted
    (b'{"source": "DOTA"}', "query"),
    (b"[1, 2]", "query"),
])
def test_default_unit_reads_the_converters_marker(tmp_path, doc: bytes, expected: str) -> None:
    from ovearth_core.analysis.compare import default_unit

    path = tmp_path / "gt.json"
    path.write_bytes(doc)
    assert default_unit(path) == expected


def test_report_resamples_images_of_a_dota_conversion_and_warns(tmp_path) -> None:
    from ovearth_core.report import build_report_data, render_html

    bench = write_dense_dota(tmp_path)
    preds = [bench / "predictions" / "model_a.json", bench / "predictions" / "model_b.json"]
    data = build_report_data(bench / "ground_truth.json", preds, Options("vocabulary", "bbox"),
                             tasks=["vocabulary"], n_resamples=1000)
    cmp = data.comparisons["open_vocabulary"]
    assert (cmp.unit, cmp.num_units) == ("image", 2)
    html = render_html(data)
    assert "paired percentile bootstrap over images" in html
    assert "Thin evidence: the intervals and tests rest on 2 images (fewer than 30)" in html
    by_query = build_report_data(bench / "ground_truth.json", preds,
                                 Options("vocabulary", "bbox"),
                                 tasks=["vocabulary"], n_resamples=1000, bootstrap_unit="query")
    assert by_query.comparisons["open_vocabulary"].num_units == 6
    assert "rest on 6 queries" in render_html(by_query)


@pytest.mark.parametrize(("flag", "unit", "units"), [
    ([], "image", 2),  # auto: the DOTA conversion's source.resample_unit
    (["--slice-unit", "query"], "query", 5),  # the 5 positive queries, on 2 images
])
def test_analysis_command_slices_resample_the_chosen_unit(tmp_path, capsys, flag: list,
                                                          unit: str, units: int) -> None:
    import json

    from ovearth_core.analysis.__main__ import main

    bench = write_dense_dota(tmp_path)
    out = tmp_path / "analysis.json"
    code = main(["--gt", str(bench / "ground_truth.json"), "--predictions",
                 str(bench / "predictions" / "model_a.json"), "--task", "vocabulary",
                 "--modalities", "bbox", "--slice-by", "polarity", "--slice-resamples", "200",
                 "--output", str(out), *flag])
    assert code == 0, capsys.readouterr().err
    table = json.loads(out.read_text())["analysis"]["slices"]["polarity"]
    assert table["unit"] == unit
    positive = next(v for v in table["values"] if v["value"] == "positive")
    assert positive["num_units"] == units and positive["num_queries"] == 5
