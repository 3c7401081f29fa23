"""Tests of ovearth_core.report: self-contained HTML, numbers, paper tables, CLI errors."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest
from cli_inprocess import run_module
from PIL import Image
from report_fixtures import build_dataset

from ovearth_core.analysis.compare import compare_results
from ovearth_core.evaluate import evaluate_samples
from ovearth_core.io import load_samples
from ovearth_core.options import Options
from ovearth_core.report import draw as report_draw
from ovearth_core.report import (
    main,
    paper_table_latex,
    paper_table_markdown,
    worst_queries,
)
from ovearth_core.report.tables import field_table_latex, field_table_markdown
from ovearth_core.viz.overlay import MASK_COLOURS, MATCHED

ALL = "segmentation,bbox,oriented_bbox"
TASKS = {"vocabulary": "open_vocabulary", "referring": "referring", "reasoning": "reasoning"}


class _Collector(HTMLParser):
    """Every tag with its attributes, and the text of each cell carrying data-metric."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.cells: list[tuple[dict[str, str | None], str]] = []
        self._open: dict[str, str | None] | None = None
        self._text: list[str] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.tags.append((tag, a))
        if tag == "td" and "data-metric" in a:
            self._open, self._text = a, []
        self._in_script = tag == "script"
        if self._in_script:
            self.scripts.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._open is not None:
            self.cells.append((self._open, "".join(self._text).strip()))
            self._open = None
        if tag == "script":
            self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._open is not None:
            self._text.append(data)
        if self._in_script:
            self.scripts[-1] += data


def _parse(path: Path) -> _Collector:
    parser = _Collector()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def _evaluate(gt: Path, pred: Path, task: str, modalities: str = ALL) -> dict[str, Any]:
    return evaluate_samples(load_samples(gt, pred, task, modalities=modalities), 0.5)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return build_dataset(tmp_path_factory.mktemp("data"), missing_images=(3,))


@pytest.fixture(scope="module")
def compare_report(dataset: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("out") / "report.html"
    rc = main(["--gt", str(dataset.gt), "--predictions", str(dataset.pred_a), "--compare",
               str(dataset.pred_b), "--images", str(dataset.gt.parent), "--modalities", ALL,
               "--out", str(out), "--resamples", "1000"])
    assert rc == 0
    return out


def test_report_is_self_contained(compare_report: Path) -> None:
    doc = _parse(compare_report)
    for tag, attrs in doc.tags:
        for key in ("src", "href", "data", "action", "poster"):
            value = (attrs.get(key) or "").strip().lower()
            assert not value.startswith(("http:", "https:", "//", "ftp:")), (tag, key, value)
        if tag == "script":
            assert "src" not in attrs
        if tag == "link":
            assert attrs.get("rel") != "stylesheet"
        if tag == "img":
            assert (attrs.get("src") or "").startswith("data:image/jpeg;base64,")
        assert tag not in ("iframe", "object", "embed")
    text = compare_report.read_text(encoding="utf-8")
    assert "@import" not in text and "url(http" not in text
    # plotly.js inlined exactly once; every figure only calls it.
    bundles = [s for s in doc.scripts if len(s) > 1_000_000]
    assert len(bundles) == 1
    assert text.count("Plotly.newPlot") >= 10


def test_report_metric_cells_match_evaluator(dataset: Any, compare_report: Path) -> None:
    cells = _parse(compare_report).cells
    expected_count = 0
    for task, key in TASKS.items():
        a = _evaluate(dataset.gt, dataset.pred_a, task)
        b = _evaluate(dataset.gt, dataset.pred_b, task)
        cmp = compare_results(a, b, n_resamples=1000)
        for sub, res in (("A", a), ("B", b)):
            for modality in ("presence", "seg", "bbox", "oriented_bbox"):
                block = res["summary"].get(modality)
                if block is None:
                    continue
                for metric, value in block["key_metrics"].items():
                    found = [t for attrs, t in cells if attrs.get("data-task") == key
                             and attrs.get("data-modality") == modality
                             and attrs.get("data-metric") == metric
                             and attrs.get("data-sub") == sub]
                    assert found == ["–" if value is None else f"{value:.4f}"], (key, metric)
                    expected_count += 1
        for m in cmp.metrics:
            found = [t for attrs, t in cells if attrs.get("data-task") == key
                     and attrs.get("data-modality") == m.modality
                     and attrs.get("data-metric") == m.metric and attrs.get("data-sub") == "diff"]
            assert found == ["–" if m.diff is None else f"{m.diff:+.4f}"]
            expected_count += 1
    # 13 vocabulary metrics (MCC + 4 + 4 + 4) and 12 for each other task: A, B and diff.
    assert expected_count == 3 * (13 + 12 + 12)
    assert len(cells) == expected_count


def test_report_sections_and_identity(dataset: Any, compare_report: Path) -> None:
    text = compare_report.read_text(encoding="utf-8")
    for path in (dataset.gt, dataset.pred_a, dataset.pred_b):
        assert hashlib.sha256(path.read_bytes()).hexdigest() in text
        assert path.name in text
    for heading in ("Configuration and data identity", "Paper-style table", "Open vocabulary task",
                    "Referring task", "Reasoning task", "Presence confusion matrix",
                    "McNemar", "Per-category results", "The 12 worst queries"):
        assert heading in text
    # Image 3 is missing: its queries are drawn on a blank canvas with a notice.
    assert "image file not found: images/img_3.png" in text
    assert "blank 96 x 80 canvas" in text


def test_gallery_shows_worst_queries_with_overlays(dataset: Any, compare_report: Path) -> None:
    doc = _parse(compare_report)
    cards = [(a["data-gallery"], a["data-query"]) for tag, a in doc.tags
             if tag == "div" and "data-query" in a]
    a = _evaluate(dataset.gt, dataset.pred_a, "vocabulary")
    worst = [a["per_sample"][i]["sample_id"] for i, _ in worst_queries(a, 12)]
    assert [q for g, q in cards if g == "worst"][:12] == worst
    # The biggest mask-IoU differences, B better first, then A better (3 each way).
    b = _evaluate(dataset.gt, dataset.pred_b, "vocabulary")
    diffs = compare_results(a, b, n_resamples=1000).query_diffs["seg"]
    expected = ([d.sample_id for d in reversed(diffs) if d.diff > 0][:3]
                + [d.sample_id for d in diffs if d.diff < 0][:3])
    assert [q for g, q in cards if g == "diff"][:6] == expected
    # Two overlays (A and B) per card.
    images = [t for t in doc.tags if t[0] == "img"]
    assert len(images) == 2 * len(cards)


def test_worst_queries_ranking_by_hand(dataset: Any) -> None:
    res = _evaluate(dataset.gt, dataset.pred_a, "vocabulary")
    rows = res["per_sample"]
    # A answers the negatives of even annotations (0, 2, 4): six hallucinations.
    fp_negatives = [i for i, r in enumerate(rows) if r["negative"] and r["pred_present"]]
    assert len(fp_negatives) == 6
    everything = worst_queries(res, 100)
    assert len(everything) == 12 + 6  # every positive, every hallucination, no correct negative
    assert [i for i, _ in everything[12:]] == fp_negatives
    scores = [s for _, s in everything[:12]]
    assert scores == sorted(scores)
    # A positive with all three modalities: mean of IoU, HBB F1 and OBB F1.
    i, s = next((i, s) for i, s in everything if not rows[i]["negative"] and s > 0)
    r = rows[i]
    assert s == pytest.approx((r["seg"]["iou"] + r["bbox"]["f1"] + r["oriented_bbox"]["f1"]) / 3)
    # Twelve cards: hallucinations get a third of them (4), positives the rest (8).
    twelve = worst_queries(res, 12)
    assert [i for i, _ in twelve] == [i for i, _ in everything[:8]] + fp_negatives[:4]
    # With too few positives, hallucinations fill the remaining cards.
    few = {"per_sample": [r for r in rows if r["negative"]] + [rows[0], rows[1]]}
    picked = worst_queries(few, 6)
    assert [few["per_sample"][i]["negative"] for i, _ in picked] == [False] * 2 + [True] * 4
    assert worst_queries(res, 0) == []


def _parse_markdown(text: str) -> tuple[list[str], dict[str, list[float | None]]]:
    lines = [ln for ln in text.strip().splitlines()]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    assert re.fullmatch(r"\|:---\|(---:\|)+", lines[1])
    rows = {}
    for ln in lines[2:]:
        cells = [c.strip().strip("*") for c in ln.strip().strip("|").split("|")]
        rows[cells[0]] = [None if c == "–" else float(c) for c in cells[1:]]
    return header, rows


def _parse_latex(text: str) -> dict[str, list[float | None]]:
    body = text.split(r"\midrule")[1].split(r"\bottomrule")[0]
    rows = {}
    for ln in body.strip().splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)&", ln.strip().removesuffix(r"\\"))]
        values = [re.sub(r"\\textbf\{(.*)\}", r"\1", c) for c in cells[1:]]
        rows[cells[0]] = [None if v == "--" else float(v) for v in values]
    return rows


def _expected_row(gt: Path, pred: Path, modalities: str) -> list[float | None]:
    out: list[float | None] = []
    for task in TASKS:
        s = _evaluate(gt, pred, task, modalities)["summary"]
        out.append(round(100 * s["seg"]["positive_macro_miou"], 2) if s["seg"] else None)
        if task == "vocabulary":
            mcc = s["presence"]["mcc"]
            out.append(None if mcc is None else round(mcc, 2))
        f1 = s["bbox"]["positive_micro_f1_by_iou"]["0.50"] if s["bbox"] else None
        out.append(None if f1 is None else round(100 * f1, 2))
    return out


@pytest.mark.parametrize("modalities", [ALL, "segmentation"])
def test_paper_tables_parse_to_evaluator_numbers(dataset: Any, modalities: str) -> None:
    results = {}
    for name, pred in (("model_A", dataset.pred_a), ("model&B", dataset.pred_b)):
        results[name] = {key: _evaluate(dataset.gt, pred, task, modalities)
                         for task, key in TASKS.items()}
    markdown = paper_table_markdown(results)
    latex = paper_table_latex(results)
    header, md_rows = _parse_markdown(markdown)
    assert header == ["Submission", "Open vocabulary ma-IoU", "Open vocabulary MCC",
                      "Open vocabulary mi-F1@0.5", "Referring ma-IoU", "Referring mi-F1@0.5",
                      "Reasoning ma-IoU", "Reasoning mi-F1@0.5"]
    tex_rows = _parse_latex(latex)
    assert set(tex_rows) == {r"model\_A", r"model\&B"}
    for name, pred in (("model_A", dataset.pred_a), ("model&B", dataset.pred_b)):
        expected = _expected_row(dataset.gt, pred, modalities)
        assert md_rows[name] == expected
        assert tex_rows[name.replace("_", r"\_").replace("&", r"\&")] == expected
    if modalities == "segmentation":
        assert md_rows["model_A"][2] is None  # no boxes: mi-F1 column is a dash
    # The best value of each column is bold (both formats), ties bold in both rows.
    for col in range(7):
        values = [r[col] for r in md_rows.values() if r[col] is not None]
        if not values:
            continue
        best = f"{max(values):.2f}"
        assert f"**{best}**" in markdown and rf"\textbf{{{best}}}" in latex
    assert latex.startswith(r"\begin{tabular}{lccccccc}")
    assert r"\cmidrule(lr){2-4} \cmidrule(lr){5-6} \cmidrule(lr){7-8}" in latex


# The field table's columns, read straight off the evaluator's JSON: (path, percent?).
FIELD_PATHS = {
    "open_vocabulary": [(("seg", "gres_giou"), True), (("seg", "gres_ciou"), True),
                        (("negative_accuracy",), True), (("presence", "recall"), True),
                        (("seg", "category_cum_miou"), True),
                        (("bbox", "grounding", "Pr@0.5"), True),
                        (("bbox", "counting", "rmse_with_negatives"), False),
                        (("bbox", "by_size", "very_tiny", "recall"), True),
                        (("bbox", "by_size", "tiny", "recall"), True),
                        (("bbox", "by_size", "small", "recall"), True)],
    "referring": [(("bbox", "grounding", k), True) for k in
                  ("Pr@0.5", "Pr@0.6", "Pr@0.7", "Pr@0.8", "Pr@0.9", "mean_iou", "cum_iou")]
                 + [(("seg", "positive_micro_miou"), True), (("seg", "positive_macro_miou"), True),
                    (("seg", "category_cum_miou"), True), (("bbox", "counting", "mae"), False),
                    (("bbox", "counting", "rmse"), False)],
}


def _field_row(result: dict[str, Any], task: str) -> list[float | str | None]:
    missing = result["coverage"]["not_submitted_modalities"]
    out: list[float | str | None] = []
    for path, percent in FIELD_PATHS["referring" if task == "reasoning" else task]:
        if {"seg": "segmentation", "bbox": "bbox"}.get(path[0]) in missing:
            out.append("not submitted")
            continue
        value: Any = result["summary"]
        for key in path:
            value = None if value is None else value.get(key)
        out.append(None if value is None else round(100 * value if percent else value, 2))
    return out


@pytest.mark.parametrize("task", list(TASKS.values()))
def test_field_tables_parse_to_evaluator_numbers(dataset: Any, tmp_path: Path, task: str) -> None:
    # B has no boxes at all: its HBB columns read "not submitted", not 0.
    doc = orjson.loads(dataset.pred_b.read_bytes())
    for rows in doc["tasks"].values():
        for row in rows:
            row["bbox"] = []
    no_boxes = tmp_path / "no_boxes.json"
    no_boxes.write_bytes(orjson.dumps(doc))
    cli = next(k for k, v in TASKS.items() if v == task)
    results = {name: {task: _evaluate(dataset.gt, pred, cli)} for name, pred in (
        ("model_A", dataset.pred_a), ("model&B", no_boxes))}
    markdown = field_table_markdown(results, task)
    latex = field_table_latex(results, task)
    lines = markdown.strip().splitlines()
    md = {cells[0]: cells[1:] for cells in ([c.strip().strip("*") for c in ln.strip("|").split("|")]
                                            for ln in lines[2:])}
    body = latex.split(r"\midrule")[1].split(r"\bottomrule")[0].strip().splitlines()
    tex = {cells[0]: cells[1:] for cells in (
        [re.sub(r"\\textbf\{(.*)\}", r"\1", c.strip())
         for c in re.split(r"(?<!\\)&", ln.strip().removesuffix(r"\\"))] for ln in body)}
    for name, tex_name in (("model_A", r"model\_A"), ("model&B", r"model\&B")):
        want = _field_row(results[name][task], task)
        assert [None if c == "–" else "not submitted" if c == "—" else float(c)
                for c in md[name]] == want
        assert [None if c == "--" else "not submitted" if c == "---" else float(c)
                for c in tex[tex_name]] == want
    assert "not submitted" in _field_row(results["model&B"][task], task)
    # Count errors: the lower is the better (bold); the other columns, the higher.
    both = {name: {task: _evaluate(dataset.gt, pred, cli)} for name, pred in (
        ("A", dataset.pred_a), ("B", dataset.pred_b))}
    rows = {r[0]: r[1:] for r in ([c.strip() for c in ln.strip("|").split("|")] for ln in
                                  field_table_markdown(both, task).strip().splitlines()[2:])}
    paths = FIELD_PATHS["referring" if task == "reasoning" else task]
    for col, (path, _) in enumerate(paths):
        values = [_field_row(both[n][task], task)[col] for n in ("A", "B")]
        if None in values or values[0] == values[1]:
            continue
        best = min(values) if "counting" in path else max(values)
        winner = "A" if values[0] == best else "B"
        assert rows[winner][col] == f"**{best:.2f}**", path
        assert not rows["B" if winner == "A" else "A"][col].startswith("**"), path


def test_report_has_a_field_table_per_task(compare_report: Path) -> None:
    text = compare_report.read_text(encoding="utf-8")
    assert text.count("<h3>Field metrics</h3>") == 3
    for task in TASKS.values():
        assert f'id="field-markdown-{task}"' in text and f'id="field-latex-{task}"' in text


def test_single_submission_report_and_default_tasks(tmp_path: Path) -> None:
    data = build_dataset(tmp_path / "d")
    gt = orjson.loads(data.gt.read_bytes())
    gt["tasks"]["referring"] = []
    gt["tasks"]["reasoning"] = []
    data.gt.write_bytes(orjson.dumps(gt))
    out = tmp_path / "single.html"
    assert main(["--gt", str(data.gt), "--predictions", str(data.pred_a), "--modalities",
                 "segmentation", "--out", str(out), "--worst", "3"]) == 0
    text = out.read_text(encoding="utf-8")
    assert "Open vocabulary task" in text and "Referring task" not in text
    assert "McNemar" not in text and "The 3 worst queries" in text
    doc = _parse(out)
    assert sum(1 for t, _ in doc.tags if t == "img") == 3
    assert "image file not found" not in text  # images default to the GT's folder
    assert out.stat().st_mode & 0o044  # readable by others, unlike a bare mkstemp file


def _run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """``python -m ovearth_core.report *args`` in this process (tests/cli_inprocess.py)."""
    return run_module("ovearth_core.report", *args)


def test_cli_bad_prediction_exits_2_without_output(dataset: Any, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_bytes(orjson.dumps({"tasks": {"open_vocabulary": [
        {"query_id": "ov_999999", "segmentation": None}]}}))
    out = tmp_path / "r.html"
    proc = _run_cli("--gt", str(dataset.gt), "--predictions", str(dataset.pred_a),
                    "--compare", str(bad), "--modalities", ALL, "--out", str(out))
    assert proc.returncode == 2
    assert "invalid input" in proc.stderr and "ov_999999" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not out.exists()
    assert list(tmp_path.iterdir()) == [bad]  # no temporary file left either


@pytest.mark.parametrize(("args", "message"), [
    (["--modalities", "mask"], "--modalities"),
    (["--modalities", ALL, "--iou-threshold", "1.5"], "--iou-threshold"),
    (["--modalities", ALL, "--task", "caption"], "invalid choice"),
    (["--modalities", ALL, "--resamples", "10"], "from 1,000 to 100,000, found '10'"),
    # Issue 35 item 6: 10**12 AP resamples ended in a MemoryError traceback, and 3,000 AP
    # resamples of 1,000 were reported as "the first 3,000 of the key metrics' resamples".
    (["--modalities", ALL, "--ap-resamples", "1000000000000"], "from 100 to 100,000"),
    (["--modalities", ALL, "--resamples", "1000", "--ap-resamples", "3000"],
     "--ap-resamples 3,000 is more than --resamples 1,000"),
    (["--modalities", ALL, "--seed", "9" * 5000], "found a number of 5,000 characters"),
    (["--modalities", ALL, "--worst", "-1"], "--worst: expected a whole number from 0"),
    # The reason, not argparse's "invalid _report_slice value" (the function's name).
    (["--modalities", ALL, "--slice-by", "tag"], "tag is not sliced in the report (group:"),
    (["--modalities", ALL, "--slice-by", "nonsense"], "expected one of category, group"),
])
def test_cli_bad_options_exit_2(dataset: Any, tmp_path: Path, args: list[str],
                                message: str) -> None:
    out = tmp_path / "r.html"
    rc_args = ["--gt", str(dataset.gt), "--predictions", str(dataset.pred_a), "--out",
               str(out), *args]
    assert _exit_code(rc_args) == 2
    proc = _run_cli(*rc_args)
    assert proc.returncode == 2
    assert message in proc.stderr and "Traceback" not in proc.stderr
    assert not out.exists()


def _exit_code(args: list[str]) -> int:
    """main()'s return value, or the code of argparse's SystemExit."""
    try:
        return main(args)
    except SystemExit as err:
        return int(err.code or 0)


def test_cli_missing_ground_truth_exits_2(tmp_path: Path) -> None:
    """A real ``python -m ovearth_core.report`` process (the shipped entry point)."""
    proc = subprocess.run([sys.executable, "-m", "ovearth_core.report", "--gt",
                           str(tmp_path / "nope.json"), "--predictions",
                           str(tmp_path / "p.json"), "--modalities", ALL, "--out",
                           str(tmp_path / "r.html")], capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 2
    assert "nope.json" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "r.html").exists()


def test_auto_modalities_read_b_with_a_modalities(dataset: Any, tmp_path: Path) -> None:
    # With --modalities auto, a masks-only B is read with A's modalities (all three), so the
    # two submissions stay comparable; the boxes it never gave are "not submitted" (issue
    # 13): shown as "–" with a warning, never as an empty submission's 0.
    doc = orjson.loads(dataset.pred_b.read_bytes())
    for rows in doc["tasks"].values():
        for row in rows:
            row["bbox"], row["oriented_bbox"] = [], []
    masks_only = tmp_path / "masks_only.json"
    masks_only.write_bytes(orjson.dumps(doc))
    out = tmp_path / "r.html"
    assert main(["--gt", str(dataset.gt), "--predictions", str(dataset.pred_a), "--compare",
                 str(masks_only), "--modalities", "auto", "--out", str(out),
                 "--task", "referring", "--resamples", "1000"]) == 0
    cells = {(a["data-modality"], a["data-metric"], a["data-sub"]): t
             for a, t in _parse(out).cells}
    assert cells[("bbox", "positive_micro_recall", "B")] == "–"
    assert cells[("bbox", "positive_micro_recall", "diff")] == "–"
    assert cells[("bbox", "positive_micro_recall", "A")] == "1.0000"
    assert cells[("seg", "positive_macro_miou", "B")] != "–"
    assert "masks_only: the submission has no non-empty bbox prediction" in out.read_text()


def test_report_on_ground_truth_without_queries(dataset: Any, tmp_path: Path) -> None:
    gt = orjson.loads(dataset.gt.read_bytes())
    gt["tasks"] = {"open_vocabulary": [], "referring": [], "reasoning": []}
    empty_gt = tmp_path / "gt.json"
    empty_gt.write_bytes(orjson.dumps(gt))
    empty = tmp_path / "none.json"
    empty.write_bytes(b'{"tasks": {}}')
    out = tmp_path / "r.html"
    assert main(["--gt", str(empty_gt), "--predictions", str(empty), "--compare", str(empty),
                 "--modalities", "segmentation", "--out", str(out)]) == 0
    cells = _parse(out).cells
    # Every task is shown; with no query every metric is null, shown as a dash.
    assert {a["data-task"] for a, _ in cells} == set(TASKS.values())
    assert {t for _, t in cells} == {"–"}
    assert "The 0 worst queries" in out.read_text(encoding="utf-8")


def test_overlay_thumbnail_blends_masks_where_they_are(dataset: Any) -> None:
    samples = load_samples(dataset.gt, dataset.pred_a, "referring", modalities=ALL)
    result = evaluate_samples(samples, 0.5)
    sample, row = samples[0], result["per_sample"][0]  # GT x 10..50, prediction x 14..54
    display = report_draw.load_display(dataset.gt.parent, sample)
    assert display.notice is None and display.scale == 1
    thumb = np.asarray(report_draw.overlay_thumbnail(display, sample, row), dtype=float)
    # The zoom region is the whole 96 x 80 image here: thumbnail pixel = original * factor.
    factor = 256 / 96
    assert thumb.shape[:2] == (round(80 * factor), 256)
    image = np.asarray(Image.open(dataset.gt.parent / sample.image_path), dtype=float)
    alpha = report_draw.MASK_OPACITY
    gt_colour, pred_colour = (np.array(MASK_COLOURS[k], dtype=float)
                              for k in ("GT mask", "predicted mask"))

    def at(x: float, y: float) -> np.ndarray:
        return thumb[int(y * factor), int(x * factor)]

    np.testing.assert_allclose(at(12.5, 30.5), (1 - alpha) * image[30, 12] + alpha * gt_colour,
                               atol=1)
    np.testing.assert_allclose(at(52.5, 30.5),
                               (1 - alpha) * image[30, 52] + alpha * pred_colour, atol=1)
    both = (1 - alpha) * ((1 - alpha) * image[30, 30] + alpha * gt_colour) + alpha * pred_colour
    np.testing.assert_allclose(at(30.5, 30.5), both, atol=1)
    np.testing.assert_allclose(at(80.5, 70.5), image[70, 80], atol=0)
    # Matched boxes are outlined in the "matched" green along the GT box's left edge.
    assert tuple(at(10.0, 30.5)) == tuple(int(MATCHED[i:i + 2], 16) for i in (1, 3, 5))


def test_a_second_report_loads_the_evaluations_from_the_cache(dataset: Any,
                                                              tmp_path: Path) -> None:
    """Issue 17: the report reads the shared result cache; the documents are identical."""
    cache_dir = tmp_path / "cache"
    args = ["--gt", str(dataset.gt), "--predictions", str(dataset.pred_a), "--compare",
            str(dataset.pred_b), "--modalities", ALL, "--resamples", "1000",
            "--cache-dir", str(cache_dir)]
    runs = [_run_cli(*args, "--out", str(tmp_path / f"r{i}.html")) for i in range(2)]
    off = _run_cli(*args, "--no-cache", "--out", str(tmp_path / "off.html"))
    assert [r.returncode for r in (*runs, off)] == [0, 0, 0], runs[0].stderr
    n = 2 * len(TASKS)
    assert f"result cache {cache_dir}: 0 of {n} evaluations cached" in runs[0].stderr
    assert f"result cache {cache_dir}: {n} of {n} evaluations cached" in runs[1].stderr
    assert f"result cache off: 0 of {n} evaluations cached" in off.stderr
    # Identical but for the minute the document was generated in.
    html = [re.sub(r"Generated \d{4}-\d\d-\d\d \d\d:\d\d UTC", "Generated (time)",
                   (tmp_path / name).read_text(encoding="utf-8"))
            for name in ("r0.html", "r1.html", "off.html")]
    assert all("Generated (time)" in h for h in html)
    assert html[0] == html[1] == html[2]


def test_cli_refuses_when_no_image_is_found(dataset: Any, tmp_path: Path) -> None:
    """Issue 27: a wrong --images folder made every overlay a blank "image file not found"
    canvas, exit 0 and nothing on stderr. Now: exit 2 naming the folder, nothing written."""
    wrong = tmp_path / "elsewhere"
    wrong.mkdir()
    out = tmp_path / "r.html"
    proc = _run_cli("--gt", str(dataset.gt), "--predictions", str(dataset.pred_a),
                    "--images", str(wrong), "--modalities", ALL, "--out", str(out),
                    "--resamples", "1000")
    assert proc.returncode == 2, proc.stderr
    assert str(wrong) in proc.stderr and "none of the 6 images" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not out.exists()


def test_cli_warns_about_some_missing_images(dataset: Any, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    proc = _run_cli("--gt", str(dataset.gt), "--predictions", str(dataset.pred_a),
                    "--modalities", ALL, "--out", str(out), "--resamples", "1000")
    assert proc.returncode == 0, proc.stderr
    # build_dataset(missing_images=(3,)) leaves out images/img_3.png of six.
    assert "warning: 1 of the 6 images" in proc.stderr and "images/img_3.png" in proc.stderr
    assert out.exists()


def test_report_shows_pooled_ap_and_per_category_map_with_the_cap(tmp_path: Path) -> None:
    """Issue 25: the report has AP, labelled pooled or mean over N categories, equal to the
    analysis command's with the same --max-detections and --hard-negatives (demo data:
    queries with more than 100 boxes, so the cap matters and is noted)."""
    demo = Path(__file__).resolve().parents[2] / "assets" / "demo"
    gt, pred = demo / "ground_truth.json", demo / "predictions" / "box_detector.json"
    out = tmp_path / "r.html"
    proc = _run_cli("--gt", str(gt), "--predictions", str(pred), "--task", "vocabulary",
                    "--modalities", "bbox,oriented_bbox", "--worst", "0", "--no-cache",
                    "--max-detections", "110", "--hard-negatives", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    analysis = tmp_path / "a.json"
    done = run_module("ovearth_core.analysis", "--gt", str(gt), "--predictions", str(pred),
                      "--modalities", "bbox,oriented_bbox", "--max-detections", "110",
                      "--hard-negatives", "--output", str(analysis))
    assert done.returncode == 0, done.stderr
    ap = json.loads(analysis.read_text())["analysis"]["average_precision"]
    html = out.read_text(encoding="utf-8")
    cells = {(m, k): v for m, k, v in re.findall(
        r'<td data-task="open_vocabulary" data-modality="(\w+)" data-ap="([^"]+)" '
        r'data-sub="A">([^<]*)</td>', html)}
    for m in ("bbox", "oriented_bbox"):
        coco, devkit = ap[m]["coco"], ap[m]["voc_devkit"]
        want = {"ap_every_point": ap[m]["ap_every_point"], "coco.ap@[0.5:0.95]":
                coco["ap@[0.5:0.95]"], "coco.map@[0.5:0.95]": coco["map@[0.5:0.95]"],
                "coco.map@0.5": coco["map@0.5"], "voc_devkit.map_11_point":
                devkit["map_11_point"], "voc_devkit.map_every_point": devkit["map_every_point"]}
        for key, value in want.items():
            assert cells[(m, key)] == f"{value:.4f}", (m, key)
    n = ap["bbox"]["coco"]["num_categories"]
    assert f"mAP@[.5:.95]: COCO&#x27;s mAP, 101 points, mean over {n} categories" in html
    assert "AP: VOC every point, pooled over all queries, class-agnostic" in html
    assert "at most 110 boxes per query" in html and "boxes on negative queries count" in html
    over = ap["bbox"]["coco"]["queries_over_cap"]
    assert over and "cap of 110" in html and over[0] in html


def test_report_ap_differences_have_paired_intervals_and_the_few_units_warning(
        dataset: Any, compare_report: Path) -> None:
    """Issue 25: each AP's B − A has its interval and resamples used, those of
    ap_differences computed here from the files (every box, the report's default options);
    the dataset's 24 vocabulary queries get the few-units warning under the AP table."""
    from ovearth_core.analysis.ap_bootstrap import ap_run
    from ovearth_core.analysis.compare import DEFAULT_AP_RESAMPLES, ap_differences
    from ovearth_core.labels import ap_keys

    task = "open_vocabulary"
    samples = [load_samples(dataset.gt, p, task, modalities=ALL)
               for p in (dataset.pred_a, dataset.pred_b)]
    results = [evaluate_samples(s, 0.5) for s in samples]
    runs = [ap_run(s, 0.5, s.modalities) for s in samples]
    expected = ap_differences(*results, *runs, DEFAULT_AP_RESAMPLES, seed=0, unit="query")
    html = compare_report.read_text(encoding="utf-8")
    cells = {(m, k, sub): v for m, k, sub, v in re.findall(
        rf'<td[^>]* data-task="{task}" data-modality="(\w+)" data-ap="([^"]+)" '
        r'data-sub="(diff|ci)">([^<]*)</td>', html)}
    assert len(expected) == 2 * len(ap_keys(None))  # no protocol asked for
    for m in expected:
        diff = "–" if m.diff is None else f"{m.diff:+.4f}"
        ci = ("–" if m.ci_low is None else
              f"[{m.ci_low:+.4f}, {m.ci_high:+.4f}] ({m.n_valid:,})")
        assert cells[(m.modality, m.metric, "diff")] == diff, m
        assert cells[(m.modality, m.metric, "ci")] == ci, m
    assert any(m.ci_low is not None and m.ci_low < m.ci_high for m in expected)
    section = html[html.index(f'id="ap-{task}"'):]
    section = section[:section.index("<h3", 10)]
    assert "no interval" not in section
    assert f"the first {DEFAULT_AP_RESAMPLES:,} of the key metrics&#x27; resamples" in section
    assert "AP intervals. Thin evidence: the intervals and tests rest on 24 queries (fewer " \
           "than 30)" in section


def test_report_ap_intervals_use_every_box_whatever_the_score_threshold(
        dataset: Any, tmp_path: Path) -> None:
    """The observed AP ignores --score-threshold (every box); its intervals do too: equal to
    ap_differences of the runs on samples loaded without a threshold, paired through the
    thresholded evaluation's rows (same queries). Every other answer's boxes score 0.5,
    below the threshold of 0.7."""
    from ovearth_core.analysis.ap_bootstrap import ap_run
    from ovearth_core.analysis.compare import ap_differences
    from ovearth_core.report import build_report_data

    task = "open_vocabulary"
    preds = []
    for k, path in enumerate((dataset.pred_a, dataset.pred_b)):
        doc = json.loads(path.read_text())
        for i, row in enumerate(doc["tasks"][task]):
            for box in row["bbox"] + row["oriented_bbox"]:
                box["score"] = 0.5 if (i + k) % 2 else 0.9
        preds.append(tmp_path / path.name)
        preds[-1].write_text(json.dumps(doc))
    data = build_report_data(dataset.gt, preds, Options("vocabulary", ALL, score_threshold=0.7),
                             dataset.gt.parent, ["vocabulary"], worst=0, ap_resamples=300)
    every = [load_samples(dataset.gt, p, task, modalities=ALL) for p in preds]
    kept = [load_samples(dataset.gt, p, task, score_threshold=0.7, modalities=ALL)
            for p in preds]
    assert 0 < sum(len(s.pred_boxes) for s in kept[0]) < sum(len(s.pred_boxes)
                                                             for s in every[0])
    runs = [ap_run(s, 0.5, s.modalities) for s in every]
    expected = ap_differences(*[evaluate_samples(s, 0.5) for s in kept], *runs, 300, seed=0)
    got = data.comparisons[task].ap_metrics
    assert got == expected
    thresholded = [ap_run(s, 0.5, s.modalities) for s in kept]
    assert got != ap_differences(*[evaluate_samples(s, 0.5) for s in kept], *thresholded,
                                 300, seed=0)
    assert all(m.ci_low is not None for m in got if m.a is not None and m.b is not None)


def test_cli_ap_resamples_reach_the_intervals(dataset: Any, tmp_path: Path) -> None:
    """``--ap-resamples`` at a non-default value reaches the report: its AP intervals are
    ap_differences' at 150 resamples (not the default 1,000) and the note names 150; below
    100 the command refuses with a message and writes nothing."""
    from ovearth_core.analysis.ap_bootstrap import ap_run
    from ovearth_core.analysis.compare import ap_differences

    out = tmp_path / "r.html"
    args = ["--gt", str(dataset.gt), "--predictions", str(dataset.pred_a), "--compare",
            str(dataset.pred_b), "--images", str(dataset.gt.parent), "--modalities", ALL,
            "--task", "vocabulary", "--out", str(out)]
    assert main([*args, "--ap-resamples", "150"]) == 0
    html = out.read_text(encoding="utf-8")
    task = "open_vocabulary"
    samples = [load_samples(dataset.gt, p, task, modalities=ALL)
               for p in (dataset.pred_a, dataset.pred_b)]
    runs = [ap_run(s, 0.5, s.modalities) for s in samples]
    expected = ap_differences(*[evaluate_samples(s, 0.5) for s in samples], *runs, 150,
                              seed=0, unit="query")
    cells = dict(re.findall(rf'data-task="{task}" data-modality="bbox" data-ap="([^"]+)" '
                            r'data-sub="ci">([^<]*)</td>', html))
    shown = [m for m in expected if m.modality == "bbox" and m.ci_low is not None]
    assert shown
    for m in shown:
        assert cells[m.metric] == f"[{m.ci_low:+.4f}, {m.ci_high:+.4f}] ({m.n_valid:,})"
        assert m.n_valid <= 150
    assert "the first 150 of the key metrics&#x27; resamples" in html
    refused = _run_cli(*args[:-1], str(tmp_path / "none.html"), "--ap-resamples", "50")
    assert refused.returncode == 2
    assert "--ap-resamples: expected a whole number from 100 to 100,000, found '50'" in \
        refused.stderr
    assert "Traceback" not in refused.stderr and not (tmp_path / "none.html").exists()
