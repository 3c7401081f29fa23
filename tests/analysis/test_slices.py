"""Slices (ovearth_core.analysis.slices): each slice's metrics equal the evaluator run on the
slice's queries alone; bins at their edges; the bootstrap is seeded and paired."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cli_inprocess import run_module

from ovearth_core.analysis import slices
from ovearth_core.errors import OVEarthInputError
from ovearth_core.evaluate import evaluate_samples
from ovearth_core.io import load_samples
from ovearth_core.options import Options
from ovearth_core.report.build import build_report_data
from ovearth_core.report.html import render_html
from ovearth_core.types import Sample, SampleList

DEMO = Path(__file__).resolve().parents[2] / "assets" / "demo"


def _load(persona: str, task: str = "vocabulary") -> tuple[SampleList, dict[str, Any]]:
    s = load_samples(DEMO / "ground_truth.json", DEMO / "predictions" / f"{persona}.json", task,
                     modalities="segmentation,bbox,oriented_bbox")
    return s, evaluate_samples(s, 0.5)


@pytest.fixture(scope="module")
def strong() -> tuple[SampleList, dict[str, Any]]:
    return _load("strong_localiser")


def _subset(samples: SampleList, ids: set[str]) -> SampleList:
    return SampleList([s for s in samples if s.sample_id in ids], task=samples.task,
                      modalities=samples.modalities, score_threshold=samples.score_threshold,
                      bbox_format=samples.bbox_format, submitted=samples.submitted)


@pytest.mark.parametrize("attribute", ["category", "group", "polarity", "gt_size", "num_gt",
                                       "phrase_words", "image_size", "tag"])
@pytest.mark.parametrize("persona", ["strong_localiser", "box_detector"])
def test_slice_metrics_equal_the_evaluator_on_the_slice(attribute: str, persona: str) -> None:
    samples, result = _load(persona)
    taxonomy = json.loads((DEMO / "taxonomy.json").read_text())
    tags = {samples[0].sample_id: frozenset({"gt_error", "duplicate"}),
            samples[3].sample_id: frozenset({"gt_error"})}
    table = slices.slice_table(result, samples, attribute, taxonomy, tags, n_resamples=50)
    assert len(table.values) >= 2
    if attribute not in ("tag", "gt_size"):  # tags and per-box sizes overlap; every other
        # attribute partitions the queries
        assert sum(v.num_queries for v in table.values) == len(samples)
    if attribute == "gt_size":  # every GT box in exactly one bin
        assert sum(v.num_gt_boxes for v in table.values) == sum(len(s.gt_boxes)
                                                                for s in samples)
    for v in table.values:
        sub = evaluate_samples(_subset(samples, set(v.query_ids)), 0.5)
        assert v.num_queries == sub["summary"]["num_samples"]
        assert v.num_positive == sub["summary"]["num_positive"]
        assert v.num_negative == sub["summary"]["num_negative"]
        assert v.metrics, "every submitted modality's key metrics"
        for m in v.metrics:
            expected = sub["summary"][m.modality][m.metric]
            if expected is None:
                assert m.value is None
            else:
                assert m.value == pytest.approx(expected, abs=1e-12)


def test_not_submitted_modalities_have_no_slice_metrics() -> None:
    samples, result = _load("box_detector")
    table = slices.slice_table(result, samples, "polarity", n_resamples=10)
    assert {m.modality for m in table.values[0].metrics} == {"presence", "bbox",
                                                             "oriented_bbox"}


@pytest.mark.parametrize(("side", "expected"), [
    (0.0, "very_tiny"), (7.999, "very_tiny"), (8.0, "tiny"), (15.999, "tiny"), (16.0, "small"),
    (31.999, "small"), (32.0, "medium"), (95.999, "medium"), (96.0, "large"), (5000.0, "large"),
])
def test_size_bins_at_their_edges(side: float, expected: str) -> None:
    assert slices.size_bin(side) == expected


def _sample(boxes: list[list[float]], phrase: str = "a b", w: int = 100, h: int = 100,
            negative: bool = False, category: str = "tank") -> Sample:
    return Sample("q", phrase, negative, "i.png", "a", category, w, h,
                  gt_boxes=np.array(boxes, dtype=float).reshape(-1, 4))


@pytest.mark.parametrize(("boxes", "expected"), [
    ([], ("no_box",)),
    ([[0, 0, 4, 16]], ("tiny",)),  # sqrt(64) = 8: the edge belongs to the upper bin
    ([[0, 0, 4, 15.9]], ("very_tiny",)),
    ([[10, 10, 42, 42], [0, 0, 2, 2]], ("very_tiny", "medium")),  # each box: sqrt(1024) = 32
    ([[0, 0, 96, 96], [0, 0, 1, 1], [5, 5, 6, 6]], ("very_tiny", "large")),
])
def test_gt_size_is_each_box(boxes: list[list[float]], expected: tuple[str, ...]) -> None:
    assert slices.gt_sizes(_sample(boxes)) == expected


@pytest.mark.parametrize(("attribute", "sample", "expected"), [
    ("num_gt", _sample([]), "0"),
    ("num_gt", _sample([[0, 0, 1, 1]] * 4), "4"),
    ("num_gt", _sample([[0, 0, 1, 1]] * 5), "5-9"),
    ("num_gt", _sample([[0, 0, 1, 1]] * 10), "10+"),
    ("phrase_words", _sample([], phrase="tank"), "1"),
    ("phrase_words", _sample([], phrase=" the  red\ttank "), "3"),
    ("phrase_words", _sample([], phrase="w " * 9), "6-9"),
    ("phrase_words", _sample([], phrase="w " * 10), "10+"),
    ("image_size", _sample([], w=1023, h=10), "<1024"),
    ("image_size", _sample([], w=10, h=1024), "1024-2047"),
    ("image_size", _sample([], w=4095, h=4095), "2048-4095"),
    ("image_size", _sample([], w=4096, h=1), ">=4096"),
    ("polarity", _sample([], negative=True), "negative"),
    ("group", _sample([], category="unknown"), slices.NO_GROUP),
    ("group", _sample([], category="tank"), "Industry"),
])
def test_attribute_values(attribute: str, sample: Sample, expected: str) -> None:
    assert slices.query_values([sample], attribute, {"tank": "Industry"}) == [(expected,)]


def test_tags_give_several_slices_and_untagged() -> None:
    a, b = _sample([]), _sample([])
    object.__setattr__(b, "sample_id", "other")
    values = slices.query_values([a, b], "tag", tags={"q": frozenset({"z", "gt_error"})})
    assert values == [("gt_error", "z"), ("untagged",)]


@pytest.mark.parametrize(("attribute", "taxonomy", "field"), [
    ("colour", None, "--slice-by"), ("group", None, "--taxonomy")])
def test_bad_attribute_or_missing_taxonomy_is_an_input_error(attribute: str, taxonomy: Any,
                                                             field: str) -> None:
    with pytest.raises(OVEarthInputError) as err:
        slices.query_values([_sample([])], attribute, taxonomy)
    assert err.value.problems[0].field == field


@pytest.mark.parametrize(("text", "field"), [("[1]", "(top level)"), ('{"a": 3}', "a"),
                                              ("{", "(file)")])
def test_bad_taxonomy_file_names_the_problem(tmp_path: Path, text: str, field: str) -> None:
    path = tmp_path / "taxonomy.json"
    path.write_text(text)
    with pytest.raises(OVEarthInputError) as err:
        slices.load_taxonomy(path)
    assert err.value.problems[0].field == field


def test_bootstrap_is_seeded_and_brackets_the_value(strong: tuple[SampleList, dict]) -> None:
    samples, result = strong
    first = slices.slice_table(result, samples, "image_size", n_resamples=300, seed=4)
    again = slices.slice_table(result, samples, "image_size", n_resamples=300, seed=4)
    other = slices.slice_table(result, samples, "image_size", n_resamples=300, seed=5)
    assert first == again
    assert first != other
    for v in first.values:
        for m in v.metrics:
            if m.value is not None and m.n_valid:
                assert m.ci_low <= m.value + 1e-9 and m.value - 1e-9 <= m.ci_high


def test_paired_interval_of_a_result_with_itself_is_zero(strong: tuple[SampleList, dict]) -> None:
    samples, result = strong
    table = slices.slice_table(result, samples, "polarity", result_b=result, n_resamples=100)
    assert table.paired
    for v in table.values:
        for m in v.metrics:
            if m.value is not None:
                assert (m.diff, m.diff_low, m.diff_high) == (0.0, 0.0, 0.0)


def test_paired_slices_match_each_result_alone(strong: tuple[SampleList, dict]) -> None:
    samples, a = strong
    _, b = _load("weak_baseline")
    paired = slices.slice_table(a, samples, "gt_size", result_b=b, n_resamples=50)
    alone_b = slices.slice_table(b, samples, "gt_size", n_resamples=50)
    for pv, bv in zip(paired.values, alone_b.values, strict=True):
        for pm, bm in zip(pv.metrics, bv.metrics, strict=True):
            assert pm.b == bm.value


def test_table_to_dict_is_json_ready(strong: tuple[SampleList, dict]) -> None:
    samples, result = strong
    doc = slices.table_to_dict(slices.slice_table(result, samples, "polarity", n_resamples=20))
    json.dumps(doc, allow_nan=False)
    assert doc["attribute"] == "polarity" and "query_ids" not in doc["values"][0]
    assert "diff" not in doc["values"][0]["metrics"][0]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    """``python -m ovearth_core.analysis *args`` in this process (tests/cli_inprocess.py)."""
    return run_module("ovearth_core.analysis", *args, cwd=DEMO.parents[1])


def test_cli_slice_by_adds_analysis_slices(tmp_path: Path) -> None:
    gt, pred = DEMO / "ground_truth.json", DEMO / "predictions" / "strong_localiser.json"
    out = tmp_path / "a.json"
    proc = _cli("--gt", str(gt), "--predictions", str(pred), "--modalities", "auto",
                "--task", "referring", "--slice-by", "group", "--slice-by", "gt_size",
                "--slice-resamples", "30", "--output", str(out))
    assert proc.returncode == 0, proc.stderr
    got = json.loads(out.read_text())["analysis"]["slices"]
    assert list(got) == ["group", "gt_size"]
    samples = load_samples(gt, pred, "referring", modalities="auto")
    expected = slices.table_to_dict(slices.slice_table(
        evaluate_samples(samples), samples, "gt_size", n_resamples=30))
    assert got["gt_size"] == json.loads(json.dumps(expected))
    groups = {v["value"] for v in got["group"]["values"]}
    assert groups <= set(json.loads((DEMO / "taxonomy.json").read_text()).values())


def test_cli_bad_taxonomy_and_attribute_exit_2(tmp_path: Path) -> None:
    gt, pred = DEMO / "ground_truth.json", DEMO / "predictions" / "strong_localiser.json"
    bad = tmp_path / "t.json"
    bad.write_text("[]")
    base = ["--gt", str(gt), "--predictions", str(pred), "--modalities", "auto"]
    proc = _cli(*base, "--slice-by", "group", "--taxonomy", str(bad))
    assert proc.returncode == 2 and "(top level)" in proc.stderr
    assert _cli(*base, "--slice-by", "colour").returncode == 2


def test_report_per_group_table(tmp_path: Path) -> None:
    gt = DEMO / "ground_truth.json"
    a = DEMO / "predictions" / "strong_localiser.json"
    b = DEMO / "predictions" / "weak_baseline.json"
    taxonomy = slices.load_taxonomy(DEMO / "taxonomy.json")
    plain = build_report_data(gt, [a], Options("vocabulary", "auto"), tasks=["vocabulary"],
                              worst=0)
    assert "Per-group results" not in render_html(plain)
    data = build_report_data(gt, [a, b], Options("vocabulary", "auto"), tasks=["vocabulary"],
                             worst=0,
                             n_resamples=1000, taxonomy=taxonomy)
    table = data.groups["open_vocabulary"]
    assert table.paired
    alone = slices.slice_table(data.submissions[0].results["open_vocabulary"],
                               data.submissions[0].samples["open_vocabulary"], "group", taxonomy)
    assert [v.value for v in table.values] == [v.value for v in alone.values]
    html = render_html(data)
    assert "Per-group results" in html and "paired bootstrap" in html
    for v in table.values:
        assert v.value.replace("&", "&amp;") in html
