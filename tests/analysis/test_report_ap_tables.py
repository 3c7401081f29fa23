"""The report's average precision as Markdown and LaTeX (issue 50): the HTML AP table's keys,
NMS-AP's and AI-TOD's when computed, each cell the JSON's number in percent; no such
column without the options; "—" for a submission lacking them or the modality."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from analysis_fixtures import sample_list
from test_nms_ap import scenes

from ovearth_core.analysis.ap import average_precision_report
from ovearth_core.evaluate import evaluate_samples
from ovearth_core.report.tables import ap_table_latex, ap_table_markdown

ROOT = Path(__file__).resolve().parents[2]
MODS = ("bbox", "oriented_bbox")
# The JSON path of each column label (block, key) of a box modality's AP report, written
# out here: the report's labels and the analysis JSON's keys.
PATHS = {"AP": (None, "ap_every_point"), "AP 11-pt": (None, "ap_11_point"),
         "AP@[.5:.95]": ("coco", "ap@[0.5:0.95]"), "mAP@[.5:.95]": ("coco", "map@[0.5:0.95]"),
         "mAP@.5": ("coco", "map@0.5"), "DOTA mAP (VOC07)": ("voc_devkit", "map_11_point"),
         "DOTA mAP (every point)": ("voc_devkit", "map_every_point"),
         "NMS-mAP@[.5:.95]": ("coco", "nms_map@[0.5:0.95]"),
         "NMS-mAP@.5": ("coco", "nms_map@0.5"), "AI-TOD mAP": ("aitod", "map@[0.5:0.95]"),
         "AI-TOD AP_vt": ("aitod", "map_verytiny"), "AI-TOD AP_t": ("aitod", "map_tiny"),
         "oLRP": ("aitod", "olrp")}
PROTOCOL_LABELS = ("NMS-mAP@[.5:.95]", "NMS-mAP@.5", "AI-TOD mAP", "AI-TOD AP_vt",
                   "AI-TOD AP_t", "oLRP")
MODALITY = {"HBB": "bbox", "OBB": "oriented_bbox"}


def _side(seed: int, protocols: bool, modalities: tuple[str, ...] = MODS) -> tuple:
    samples = sample_list(scenes(seed, 6), modalities=modalities)
    report = average_precision_report(samples, 0.5, modalities, True, nms_ap=protocols,
                                      aitod=protocols)
    return report, evaluate_samples(samples, 0.5)


def _json_value(report: dict, modality: str, label: str) -> float | None:
    block, key = PATHS[label]
    entry = report[modality]
    return (entry if block is None else entry[block])[key]


def parse_markdown(text: str) -> tuple[list[str], dict[str, list[str]]]:
    """The header cells and each row's cells (bold marks dropped)."""
    lines = [line for line in text.strip().splitlines() if line.startswith("|")]
    cells = [[c.strip().strip("*") for c in line.strip("|").split("|")] for line in lines]
    return cells[0], {row[0]: row[1:] for row in cells[2:]}


def _expected(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.2f}"


def test_markdown_cells_are_the_json_numbers_and_protocol_columns_appear() -> None:
    sides = {"full": _side(0, True), "plain": _side(0, False)}
    header, rows = parse_markdown(ap_table_markdown(sides))
    columns = header[1:]
    for label in PROTOCOL_LABELS:
        assert f"HBB {label}" in columns and f"OBB {label}" in columns
    report = sides["full"][0]
    checked = 0
    for col, name in enumerate(columns):
        modality_label, _, label = name.partition(" ")
        want = _expected(_json_value(report, MODALITY[modality_label], label))
        assert rows["full"][col] == want, name
        if label in PROTOCOL_LABELS:  # the submission computed without the options
            assert rows["plain"][col] == "—", name
        else:
            assert rows["plain"][col] == _expected(
                _json_value(sides["plain"][0], MODALITY[modality_label], label)), name
        checked += 1
    assert checked == 2 * len(PATHS)
    # the numbers are not all equal: NMS-AP moved on this data (the test can tell them apart)
    assert rows["full"][columns.index("HBB NMS-mAP@[.5:.95]")] != rows["full"][
        columns.index("HBB mAP@[.5:.95]")]


def test_without_the_options_no_protocol_column() -> None:
    text = ap_table_markdown({"a": _side(1, False), "b": _side(2, False)})
    latex = ap_table_latex({"a": _side(1, False), "b": _side(2, False)})
    for label in PROTOCOL_LABELS:
        assert label not in text and label not in latex
    assert "mAP@[.5:.95]" in text


def test_latex_has_the_markdown_numbers_and_bold_best_lowest_olrp() -> None:
    sides = {"a_1": _side(3, True), "b": _side(4, True)}
    header, rows = parse_markdown(ap_table_markdown(sides))
    latex = ap_table_latex(sides)
    body = {}
    for line in latex.splitlines():
        if line.endswith(r"\\") and line.split(" & ")[0] in (r"a\_1", "b"):
            cells = [c.strip() for c in line.removesuffix(r"\\").split(" & ")]
            body[cells[0]] = [re.sub(r"\\textbf\{(.*)\}", r"\1", c) for c in cells[1:]]
    assert body[r"a\_1"] == [c.replace("–", "--") for c in rows["a_1"]]
    assert body["b"] == [c.replace("–", "--") for c in rows["b"]]
    assert r"\multicolumn{13}{c}{HBB}" in latex and r"\multicolumn{13}{c}{OBB}" in latex
    col = header[1:].index("HBB oLRP")
    values = [float(r[col]) for r in rows.values()]
    best = [line for line in latex.splitlines() if r"\textbf" in line]
    lowest = f"{min(values):.2f}"
    assert any(rf"\textbf{{{lowest}}}" in line for line in best)


def test_a_submission_without_a_modality_shows_not_submitted() -> None:
    boxes_only = _side(5, True, ("bbox",))
    header, rows = parse_markdown(ap_table_markdown({"both": _side(5, True),
                                                     "hbb": boxes_only}))
    obb = [i for i, name in enumerate(header[1:]) if name.startswith("OBB ")]
    assert obb and all(rows["hbb"][i] == "—" for i in obb)


@pytest.mark.parametrize("protocols", [True, False])
def test_report_html_holds_the_tables(protocols: bool, tmp_path: Path) -> None:
    """Through the report command: the Markdown in the HTML holds the analysis JSON's
    numbers (computed by the analysis command on the same files)."""
    import html
    import json
    import subprocess
    import sys

    demo = ROOT / "assets" / "demo"
    flags = ["--hard-negatives", "--nms-ap", "--aitod"] if protocols else []
    common = ["--gt", str(demo / "ground_truth.json"), "--predictions",
              str(demo / "predictions" / "strong_localiser.json"), "--modalities", "bbox",
              *flags]
    out, js = tmp_path / "r.html", tmp_path / "a.json"
    for args in (["ovearth_core.report", *common, "--out", str(out)],
                 ["ovearth_core.analysis", *common, "--output", str(js)]):
        proc = subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True,
                              cwd=ROOT, timeout=600)
        assert proc.returncode == 0, proc.stderr
    page = out.read_text(encoding="utf-8")
    found = re.search(r'<pre id="ap-markdown-open_vocabulary">(.*?)</pre>', page, re.S)
    assert found is not None
    header, rows = parse_markdown(html.unescape(found.group(1)))
    report = json.loads(js.read_text())["analysis"]["average_precision"]
    (row,) = rows.values()
    for col, name in enumerate(header[1:]):
        modality_label, _, label = name.partition(" ")
        assert row[col] == _expected(_json_value(report, MODALITY[modality_label], label))
    assert any(label in header[1:][0] or label in " ".join(header)
               for label in PROTOCOL_LABELS) is protocols
    assert '<pre id="ap-latex-open_vocabulary">' in page
