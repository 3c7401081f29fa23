"""Every sidebar option reaches every panel that uses it (issue 27).

For each option of the sidebar (task, modalities with auto off, IoU threshold, score
threshold, predicted bbox format) the app is opened at a non-default value and each panel
that depends on it is compared with the evaluator run directly in the test with that same
value (``load_samples`` + ``evaluate_run``; never the app's cached functions): the
Overview's metric cards, presence confusion matrix, per-category table and the confidence
sweep's best points, the explorer's table, the Gallery's tile counts, Compare's metric
table, Slices, the Leaderboard and the Annotation page. The planted bug this guards: the
confidence sweep not receiving the sidebar's IoU threshold (best F1 0.283 shown for 0.494).

A panel that ignored the option would show the default's number: each case first checks
that its numbers differ from the default's (the premise), so equality means the option
arrived."""

from __future__ import annotations

import functools
import html
import json
import re
from pathlib import Path
from typing import Any

import pytest
from app_fixtures import app_on, assert_ok, card_html, goto
from markdown_tokens import table_frames
from streamlit.testing.v1 import AppTest

from ovearth_core.analysis import additive, diagnose
from ovearth_core.errors import OVEarthInputError
from ovearth_core.evaluate import evaluate_run, evaluate_samples
from ovearth_core.io import load_samples
from ovearth_core.labels import METRIC_LABELS, MODALITY_LABELS
from ovearth_core.run import Run
from ovearth_core.types import MODALITIES, TASK_KEYS
from ovearth_core.viz.analysis_figures import LEADERBOARD_METRIC_LABELS

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "assets" / "demo"
GT = DEMO / "ground_truth.json"
PRED = DEMO / "predictions" / "strong_localiser.json"  # every box scored, all modalities
B_PRED = DEMO / "predictions" / "box_detector.json"  # Compare's B

DEFAULT: dict[str, Any] = {"task": "vocabulary", "auto_modalities": True,
                           "modalities": list(MODALITIES), "iou_threshold": 0.5,
                           "use_score_threshold": False, "score_threshold": 0.3,
                           "bbox_format": "xyxy"}
# One non-default value per sidebar option (the session keys the sidebar's widgets bind).
CASES: dict[str, dict[str, Any]] = {
    "task": {"task": "referring"},
    "modalities": {"auto_modalities": False, "modalities": ["bbox"]},
    "iou_threshold": {"iou_threshold": 0.75},
    "score_threshold": {"use_score_threshold": True, "score_threshold": 0.5},
    "bbox_format": {"bbox_format": "xywh"},
}

pytestmark = pytest.mark.usefixtures("fresh_caches")


@pytest.fixture(scope="module")
def xywh_pred(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The submission with its boxes written as [x, y, w, h]: right only when read as xywh."""
    doc = json.loads(PRED.read_text())
    for rows in doc["tasks"].values():
        for row in rows:
            for box in row.get("bbox") or []:
                x0, y0, x1, y1 = box["bbox"]
                box["bbox"] = [x0, y0, x1 - x0, y1 - y0]
    path = tmp_path_factory.mktemp("xywh") / "strong_localiser_xywh.json"
    path.write_text(json.dumps(doc))
    return path


def _session(case: str) -> dict[str, Any]:
    return {**DEFAULT, **CASES[case]}


def _pred_for(ss: dict[str, Any], xywh: Path) -> Path:
    return xywh if ss["bbox_format"] == "xywh" else PRED


def _modalities(ss: dict[str, Any]) -> tuple[str, ...]:
    return ("auto",) if ss["auto_modalities"] else tuple(
        m for m in MODALITIES if m in ss["modalities"])


def _score(ss: dict[str, Any]) -> float | None:
    return float(ss["score_threshold"]) if ss["use_score_threshold"] else None


@functools.lru_cache(maxsize=64)
def _core(pred: str, task: str, modalities: tuple[str, ...], iou: float,
          score: float | None, fmt: str) -> Run:
    """The reference: the evaluator itself with these options."""
    return evaluate_run(load_samples(GT, pred, task, score, fmt, modalities), iou)


def _core_of(ss: dict[str, Any], xywh: Path, **change: Any) -> Run:
    o = {"pred": str(_pred_for(ss, xywh)), "task": ss["task"], "modalities": _modalities(ss),
         "iou": float(ss["iou_threshold"]), "score": _score(ss), "fmt": ss["bbox_format"]}
    o.update(change)
    return _core(o["pred"], o["task"], o["modalities"], o["iou"], o["score"], o["fmt"])


def _page(page: str | None, ss: dict[str, Any], xywh: Path, **extra: Any) -> AppTest:
    at = app_on(None, gt_path=str(GT), images_dir=str(DEMO),
                pred_path=str(_pred_for(ss, xywh)), **ss, **extra)
    if page is not None:
        goto(at, page)
    at.run()
    assert_ok(at)
    return at


def _frame_with(at: AppTest, *columns: str):
    frames = [d.value for d in at.dataframe if set(columns) <= set(d.value.columns)]
    assert len(frames) == 1, [list(d.value.columns) for d in at.dataframe]
    return frames[0]


def _same(shown: Any, value: Any) -> bool:
    if value is None:
        return shown is None or shown != shown  # None, or NaN in a frame
    if isinstance(value, float):
        return shown == pytest.approx(value, abs=1e-12)
    return shown == value


def _fmt(value: float | None) -> str:
    """The cards' rule, written out: three decimals, "—" for None."""
    return "—" if value is None else f"{value:.3f}"


def _premise(case: str, xywh: Path, pick) -> None:
    """The option changes this panel's reference numbers (else the test proves nothing)."""
    ss = _session(case)
    same_file = str(_pred_for(ss, xywh))
    try:
        default = _core_of(DEFAULT, xywh, pred=same_file)
    except OVEarthInputError:
        # The xywh file read as the default xyxy is refused: a page ignoring the option
        # shows the validation report, which assert_ok catches.
        assert ss["bbox_format"] == "xywh"
        return
    assert pick(_core_of(ss, xywh)) != pick(default), case


# --- Overview --------------------------------------------------------------------------

def _expected_cards(run: Run) -> list[str]:
    """The Overview's cards in page order: presence (open vocabulary), then each evaluated
    modality's key metrics ("—" when the submission has none of it)."""
    s, out = run.results["summary"], []
    if run.results["task"] == "open_vocabulary":
        p = s["presence"]
        out += [_fmt(v) for v in (p["mcc"], p["f1"], p["fpr"], s["negative_accuracy"])]
    missing = run.results["coverage"]["not_submitted_modalities"]
    for key, modality in (("seg", "segmentation"), ("bbox", "bbox"),
                          ("oriented_bbox", "oriented_bbox")):
        if s.get(key):
            out += [("—" if modality in missing else _fmt(v))
                    for v in s[key]["key_metrics"].values()]
    return out


@pytest.mark.parametrize("case", list(CASES))
def test_overview_cards_matrix_and_categories_follow_the_option(case: str,
                                                                xywh_pred: Path) -> None:
    ss = _session(case)
    _premise(case, xywh_pred, lambda r: (_expected_cards(r), r.results["per_category"]))
    core = _core_of(ss, xywh_pred)
    at = _page(None, ss, xywh_pred, _w_categories_open=True)  # the table's expander open
    cards = [m.value for m in at.metric]
    expected = _expected_cards(core)
    assert cards[:len(expected)] == expected

    # The caption names the options the evaluator ran with.
    config = core.results["config"]
    caption = at.caption[0].value
    assert f"IoU threshold {config['iou_threshold']:g}" in caption
    assert ("score threshold none" if config["score_threshold"] is None
            else f"score threshold {config['score_threshold']:g}") in caption
    assert f"modalities {', '.join(config['modalities'])}" in caption

    summary = core.results["summary"]
    buttons = {b.label for b in at.button}
    if core.results["task"] == "open_vocabulary":
        # The first screen's matrix is a Markdown table (issue 49: no chart before its tab).
        table = next(m.value for m in at.markdown if "predicted present" in m.value)
        shown = {name: int(count.replace(",", "")) for name, count in
                 re.findall(r"(TP|FN|FP|TN) \*\*([\d,]+)\*\*", table)}
        presence = summary["presence"]
        assert shown == {k.upper(): presence[k] for k in ("tp", "fn", "fp", "tn")}
        for key, words in (("tp", "true positives"), ("fn", "false negatives"),
                           ("fp", "false positives"), ("tn", "true negatives")):
            assert f"Show {presence[key]:,} {words} →" in buttons
    else:
        hits = sum(r["outcome"] == "hit" for r in diagnose.query_rows(core))
        assert f"Show {hits:,} hits (IoU ≥ 0.5) →" in buttons

    table = _frame_with(at, "category")
    reference = diagnose.category_rows(core.results["per_category"])
    assert len(table) == len(reference)
    for (_, row), ref in zip(table.iterrows(), reference, strict=True):
        for column, value in ref.items():
            assert _same(row[column], value), (case, ref["category"], column)


def _evaluator_f1(ss: dict[str, Any], xywh: Path, threshold: float, modality: str
                  ) -> dict[str, Any]:
    """The evaluator's box metrics of ``modality`` with every box scored at least
    ``threshold`` (and the sidebar's other options)."""
    return _summary(str(_pred_for(ss, xywh)), ss["task"], threshold, ss["bbox_format"],
                    _modalities(ss), float(ss["iou_threshold"]))[modality]


@functools.lru_cache(maxsize=256)
def _summary(pred: str, task: str, threshold: float, fmt: str, modalities: tuple[str, ...],
             iou: float) -> dict[str, Any]:
    """The evaluator's summary with these options (one load and evaluation serves both box
    modalities of a threshold)."""
    samples = load_samples(GT, pred, task, threshold, fmt, modalities)
    return evaluate_samples(samples, iou)["summary"]


@pytest.mark.parametrize("case", list(CASES))
def test_the_sweep_best_points_follow_the_option(case: str, xywh_pred: Path) -> None:
    """Each best-F1 row shown is the evaluator's own micro P / R / F1 at that threshold under
    the sidebar's options (the sweep ignores only the score filter), and no score of a
    quantile grid does better."""
    ss = _session(case)
    at = _page(None, {**ss, "show_analysis": True}, xywh_pred)
    best = _frame_with(at, "part", "criterion", "threshold", "value")
    by_label = {MODALITY_LABELS[m]: m for m in ("bbox", "oriented_bbox")}
    rows = [r for _, r in best.iterrows() if r["criterion"] == "best F1"]
    core_mods = _core_of(ss, xywh_pred).results["config"]["modalities"]
    assert {by_label[r["part"]] for r in rows} == {m for m in ("bbox", "oriented_bbox")
                                                   if m in core_mods}
    for row in rows:
        modality = by_label[row["part"]]
        at_best = _evaluator_f1(ss, xywh_pred, float(row["threshold"]), modality)
        assert row["value"] == pytest.approx(at_best["positive_micro_f1"], abs=1e-12), case
        assert row["precision"] == pytest.approx(at_best["positive_micro_precision"], abs=1e-12)
        assert row["recall"] == pytest.approx(at_best["positive_micro_recall"], abs=1e-12)
        for t in (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9):
            other = _evaluator_f1(ss, xywh_pred, t, modality)["positive_micro_f1"] or 0.0
            assert other <= row["value"] + 1e-12, (case, modality, t)


# --- Query explorer ----------------------------------------------------------------------

EXPLORER_COLUMNS = ("query_id", "outcome", "failure", "seg_iou", "bbox_f1", "obb_f1",
                    "num_gt", "num_pred")


def _per_query(run: Run) -> dict[str, dict[str, Any]]:
    """The explorer's numbers from the evaluator's per-sample rows, by rule."""
    out = {}
    for row in run.results["per_sample"]:
        out[row["sample_id"]] = {
            "seg_iou": (row["seg"] or {}).get("iou"),
            "bbox_f1": (row["bbox"] or {}).get("f1"),
            "obb_f1": (row["oriented_bbox"] or {}).get("f1")}
    return out


@pytest.mark.parametrize("case", list(CASES))
def test_explorer_table_follows_the_option(case: str, xywh_pred: Path) -> None:
    ss = _session(case)
    _premise(case, xywh_pred, lambda r: (_per_query(r), [x["outcome"]
                                                          for x in diagnose.query_rows(r)]))
    core = _core_of(ss, xywh_pred)
    qid = _changed_query(case, ss, xywh_pred)
    at = _page("pages/Query_explorer.py", ss, xywh_pred,
               selected={TASK_KEYS_BY_NAME[core.results["task"]]: qid})
    table = _frame_with(at, *EXPLORER_COLUMNS)
    numbers = _per_query(core)
    rows = {r["query_id"]: r for r in diagnose.query_rows(core)}
    assert set(table["query_id"]) == set(numbers)
    for _, shown in table.iterrows():
        q = shown["query_id"]
        for column, value in numbers[q].items():
            assert _same(shown[column], value), (case, q, column)
        for column in ("outcome", "failure", "num_gt", "num_pred"):
            assert _same(shown[column], rows[q][column]), (case, q, column)
    # The viewer's metric table, of a query whose boxes the option changes.
    card = card_html(at)
    assert f"<code>{qid}</code>" in card
    text = html.unescape(re.sub(r"<[^>]+>", " ", card))
    row = next(r for r in core.results["per_sample"] if r["sample_id"] == qid)
    for key in ("bbox", "oriented_bbox"):
        e = row[key]
        if e:
            assert f"{e['num_gt']} / {e['num_pred']} (TP {e['tp']})" in text, (case, qid, key)
            assert f" {_fmt(e['f1'])} " in text, (case, qid, key)


TASK_KEYS_BY_NAME = {key: name for name, key in TASK_KEYS.items()}


def _changed_query(case: str, ss: dict[str, Any], xywh: Path) -> str:
    """A query whose HBB entry the option changes (the first with boxes when the default
    has no such query: another task, or a file the default format refuses)."""
    core = _core_of(ss, xywh)
    with_boxes = [r for r in core.results["per_sample"] if r["bbox"] and r["bbox"]["num_pred"]]
    try:
        default = _core_of(DEFAULT, xywh, pred=str(_pred_for(ss, xywh)))
    except OVEarthInputError:
        return with_boxes[0]["sample_id"]
    before = {r["sample_id"]: r["bbox"] for r in default.results["per_sample"]}
    key = ("num_gt", "num_pred", "tp")
    for r in with_boxes:
        old = before.get(r["sample_id"])
        if old is None or [old[k] for k in key] != [r["bbox"][k] for k in key]:
            return r["sample_id"]
    return with_boxes[0]["sample_id"]


# --- Gallery -----------------------------------------------------------------------------

def _box_counts(run: Run) -> tuple[int, int]:
    """Predicted HBBs and the false positives among them (the evaluator's ``num_pred`` and
    ``fp`` of every query's ``bbox`` entry)."""
    es = [r["bbox"] for r in run.results["per_sample"] if r["bbox"]]
    return sum(e["num_pred"] for e in es), sum(e["fp"] for e in es)


def _box_modalities(run: Run) -> list[str]:
    return [m for m in ("bbox", "oriented_bbox") if m in run.results["config"]["modalities"]]


@pytest.mark.parametrize("case", list(CASES))
def test_gallery_follows_the_option(case: str, xywh_pred: Path) -> None:
    """The box modalities offered are those evaluated; predicted-HBB tiles: one per
    predicted box, and the false positives among them, by the evaluator's counts."""
    ss = _session(case)
    core = _core_of(ss, xywh_pred)
    # HBB tiles do not depend on which other modalities are evaluated: that case checks the
    # modalities offered.
    _premise(case, xywh_pred, _box_modalities if case == "modalities" else _box_counts)
    total, fps = _box_counts(core)
    at = _page("pages/Gallery.py", ss, xywh_pred, gal_selector="predicted boxes",
               gal_modality="bbox", gal_outcomes=["FP"])
    boxes = next(s for s in at.selectbox if s.label == "Boxes")
    assert list(boxes.options) == [MODALITY_LABELS[m] for m in _box_modalities(core)]
    caption = next(c.value for c in at.caption if "pass the filters" in c.value)
    assert caption.startswith(f"{fps:,} of {total:,} predicted boxes pass the filters"), caption


# --- Compare -----------------------------------------------------------------------------

@pytest.mark.parametrize("case", list(CASES))
def test_compare_metrics_follow_the_option(case: str, xywh_pred: Path) -> None:
    """A's and B's key metrics: the evaluator's under the sidebar's options (B with A's
    resolved modalities)."""
    ss = _session(case)
    core_a = _core_of(ss, xywh_pred)
    mods = tuple(core_a.results["config"]["modalities"])
    core_b = _core_of(ss, xywh_pred, pred=str(B_PRED), modalities=mods)
    at = _page("pages/Compare.py", ss, xywh_pred, cmp_b_path=str(B_PRED))
    # The key metrics' table, and beside it the average precision's (same columns).
    # Static tables (issue 49): the cells as shown, four decimals, "—" for none.
    tables = [t for t in table_frames(m.value for m in at.markdown)
              if {"modality", "metric", "A", "B"} <= set(t.columns)]
    assert tables, [m.value for m in at.markdown]
    shown = {(r["modality"], r["metric"]): (r["A"], r["B"])
             for table in tables for _, r in table.iterrows()}
    expected = {}
    for key in ("seg", "bbox", "oriented_bbox"):
        block_a = core_a.results["summary"].get(key)
        if not block_a:
            continue
        block_b = core_b.results["summary"][key]
        for metric, value in block_a["key_metrics"].items():
            expected[(MODALITY_LABELS[key], METRIC_LABELS.get(metric, metric))] = (
                value, block_b["key_metrics"][metric])
    missing = set(core_a.results["coverage"]["not_submitted_modalities"]) | set(
        core_b.results["coverage"]["not_submitted_modalities"])
    for (modality, metric), (a, b) in expected.items():
        assert (modality, metric) in shown, (modality, metric, sorted(shown))
        got_a, got_b = shown[(modality, metric)]
        name = next(k for k, v in MODALITY_LABELS.items() if v == modality)
        full = {"seg": "segmentation"}.get(name, name)
        if full not in missing:
            for got, value, side in ((got_a, a, "A"), (got_b, b, "B")):
                assert got == ("—" if value is None else f"{value:.4f}"), (
                    case, modality, metric, side)


# --- Slices, Leaderboard, Annotation -----------------------------------------------------

@pytest.mark.parametrize("case", list(CASES))
def test_slices_follow_the_option(case: str, xywh_pred: Path) -> None:
    """By polarity: the positive slice holds every positive query, so its box micro F1 is
    the evaluator's (the micro F1 is over positive queries)."""
    ss = _session(case)
    core = _core_of(ss, xywh_pred)
    at = _page("pages/Slices.py", ss, xywh_pred, slice_attr="polarity")
    table = _frame_with(at, "value", "queries")
    positive = next(r for _, r in table.iterrows() if r["value"] == "positive")
    summary = core.results["summary"]
    assert positive["queries"] == summary["num_positive"]
    checked = 0
    for name in ("bbox_micro_f1", "bbox_micro_precision", "oriented_bbox_micro_f1"):
        m = additive.METRICS[name]
        if summary.get(m.modality) and LEADERBOARD_METRIC_LABELS[name] in table.columns:
            assert _same(positive[LEADERBOARD_METRIC_LABELS[name]],
                         summary[m.modality][m.metric]), (case, name)
            checked += 1
    assert checked


@pytest.mark.parametrize("case", list(CASES))
def test_leaderboard_follows_the_option(case: str, xywh_pred: Path) -> None:
    """The ranking evaluates every submission of the folder on the sidebar's task, IoU
    threshold and box format, on the declared modalities (all three when auto) and every box
    (no score filter; the page says so)."""
    ss = _session(case)
    mods = MODALITIES if ss["auto_modalities"] else _modalities(ss)
    at = _page("pages/Leaderboard.py", ss, xywh_pred, lb_subsets=200)
    table = _frame_with(at, "rank", "model")
    assert set(table["model"]) == {p.stem for p in (DEMO / "predictions").glob("*.json")}
    for _, row in table.iterrows():
        ref = _core(str(DEMO / "predictions" / f"{row['model']}.json"), ss["task"],
                    tuple(mods), float(ss["iou_threshold"]), None, ss["bbox_format"])
        summary = ref.results["summary"]
        missing = ref.results["coverage"]["not_submitted_modalities"]
        for name, m in additive.METRICS.items():
            label = LEADERBOARD_METRIC_LABELS[name]
            if label not in table.columns or not summary.get(m.modality):
                continue
            full = {"seg": "segmentation"}.get(m.modality, m.modality)
            value = None if full in missing else summary[m.modality][m.metric]
            assert _same(row[label], value), (case, row["model"], name)


NUMBER = re.compile(r"(mask IoU|HBB best IoU|HBB F1|OBB best IoU|OBB F1|top score) (—|[0-9.]+)")


@pytest.mark.parametrize("case", list(CASES))
def test_annotation_follows_the_option(case: str, xywh_pred: Path) -> None:
    """Each task's column: the query's HBB / OBB F1 and mask IoU from the evaluator run on
    that task with the sidebar's options and the modalities its task resolved to."""
    ss = _session(case)
    mods = tuple(_core_of(ss, xywh_pred).results["config"]["modalities"])
    at = _page("pages/Annotation.py", ss, xywh_pred)
    links = [m.value for m in at.markdown if "↗](" in m.value and "outcome" in m.value]
    numbers = [c.value for c in at.caption if "HBB F1" in c.value]
    assert links and len(links) == len(numbers)
    for link, caption in zip(links, numbers, strict=True):
        qid = re.search(r"\[([^\]]+) ↗\]", link).group(1).replace("\\", "")
        task = re.search(r"task=([a-z]+)", link).group(1)
        row = next(r for r in _core_of(ss, xywh_pred, task=task, modalities=mods)
                   .results["per_sample"] if r["sample_id"] == qid)
        shown = dict(NUMBER.findall(caption))
        for label, entry, key in (("HBB F1", "bbox", "f1"), ("OBB F1", "oriented_bbox", "f1"),
                                  ("mask IoU", "seg", "iou")):
            value = (row[entry] or {}).get(key)
            assert shown[label] == _fmt(value), (case, qid, label)


# --- a dense scene ---------------------------------------------------------------------

DENSE_W, DENSE_H, GRID_X, GRID_Y, CELL, SIDE = 1240, 840, 30, 20, 40, 20  # 600 cars


def _dense(root: Path) -> tuple[Path, Path]:
    """One image with 600 GT cars in one annotation (as in DOTA), and a prediction per car
    shifted by 0-7 px (IoU from 1 down to about 0.48) with scores spread over (0, 1), plus
    40 boxes on empty ground."""
    from PIL import Image

    (root / "images").mkdir(parents=True)
    Image.new("RGB", (DENSE_W, DENSE_H), (90, 90, 90)).save(root / "images" / "lot.png")
    gt_boxes, preds = [], []
    for i in range(GRID_X * GRID_Y):
        x, y = 10 + CELL * (i % GRID_X), 10 + CELL * (i // GRID_X)
        gt_boxes.append([float(x), float(y), float(SIDE), float(SIDE)])
        shift = i % 8
        preds.append({"bbox": [x + shift, y + shift / 2, x + shift + SIDE, y + shift / 2 + SIDE],
                      "score": round(0.05 + 0.9 * ((i * 37) % 600) / 600, 4)})
    for j in range(40):
        x = 5 + 30 * j
        preds.append({"bbox": [x, DENSE_H - 25, x + SIDE, DENSE_H - 5],
                      "score": round(0.1 + 0.02 * j, 4)})
    gt = {"annotations": [{"id": "lot", "image_path": "images/lot.png", "width": DENSE_W,
                           "height": DENSE_H, "category_name": "car", "segmentation": None,
                           "bbox": gt_boxes, "oriented_bbox": []}],
          "tasks": {"open_vocabulary": [
              {"query_id": "ov_1", "ann_id": "lot", "type": "positive", "phrase": "car"},
              {"query_id": "ov_2", "ann_id": "lot", "type": "negative", "phrase": "ship"}]}}
    sub = {"tasks": {"open_vocabulary": [{"query_id": "ov_1", "bbox": preds},
                                         {"query_id": "ov_2", "bbox": []}]}}
    (root / "predictions").mkdir()
    gt_path, pred_path = root / "ground_truth.json", root / "predictions" / "dense.json"
    gt_path.write_text(json.dumps(gt))
    pred_path.write_text(json.dumps(sub))
    return gt_path, pred_path


@pytest.mark.parametrize("case", ["default", "iou_threshold", "score_threshold"])
def test_a_dense_scene_follows_the_option(case: str, tmp_path: Path) -> None:
    """600 objects of one class in one image: the Overview's HBB cards and the Gallery's
    tile counts at the option are the evaluator's."""
    gt, pred = _dense(tmp_path / "dense")
    ss = {**DEFAULT, **CASES.get(case, {}), "auto_modalities": False, "modalities": ["bbox"]}
    core = evaluate_run(load_samples(gt, pred, "vocabulary", _score(ss), "xyxy", ("bbox",)),
                        float(ss["iou_threshold"]))
    entry = next(r for r in core.results["per_sample"] if r["sample_id"] == "ov_1")["bbox"]
    assert entry["num_gt"] == 600
    # Hand-worked: a car shifted by (s, s / 2) has IoU (20 - s)(20 - s / 2) / (800 - that):
    # s = 0..4 reach 0.5 (s = 4: 0.5625, s = 5: 0.488), s = 0..1 reach 0.75 (s = 2: 0.747).
    scores = [b["score"] for b in json.loads(pred.read_text())["tasks"]["open_vocabulary"][0][
        "bbox"]]
    kept = [s >= ss["score_threshold"] if ss["use_score_threshold"] else True for s in scores]
    shifts = [i % 8 for i in range(600)]
    reach = 2 if ss["iou_threshold"] == 0.75 else 5
    assert entry["num_pred"] == sum(kept)
    assert entry["tp"] == sum(1 for i, s in enumerate(shifts) if s < reach and kept[i])
    common = {"gt_path": str(gt), "images_dir": str(gt.parent), "pred_path": str(pred), **ss}
    at = app_on(None, **common).run()
    assert_ok(at)
    expected = _expected_cards(core)
    assert [m.value for m in at.metric][:len(expected)] == expected
    at = app_on(None, **common, gal_selector="predicted boxes", gal_outcomes=["FP"])
    goto(at, "pages/Gallery.py")
    at.run()
    assert_ok(at)
    caption = next(c.value for c in at.caption if "pass the filters" in c.value)
    assert caption.startswith(f"{entry['fp']:,} of {entry['num_pred']:,} predicted boxes"), (
        caption, entry["tp"])
