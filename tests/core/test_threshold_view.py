"""The score threshold as a view of one parse (issue 39): every box is kept when a file is
read; the thresholded samples and ``every_box`` (what AP and the sweep rank) come from that
one parse, equal to a load without the threshold and to filtering by score."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ovearth_core import io, types
from ovearth_core.errors import OVEarthInputError
from ovearth_core.io import load_samples

DEMO = Path(__file__).resolve().parents[2] / "assets" / "demo"
GT = DEMO / "ground_truth.json"
PRED = DEMO / "predictions" / "box_detector.json"
BOXES = ("pred_boxes", "pred_box_scores", "pred_obbs", "pred_obb_scores")


@pytest.mark.parametrize("task", ["vocabulary", "referring", "reasoning"])
@pytest.mark.parametrize("threshold", [0.0, 0.3, 0.7, 0.99])
def test_the_view_and_every_box_equal_separate_loads(task: str, threshold: float) -> None:
    view = load_samples(GT, PRED, task, score_threshold=threshold,
                        modalities="bbox,oriented_bbox")
    plain = load_samples(GT, PRED, task, modalities=view.modalities)
    every = view.every_box
    assert every.score_threshold is None and len(every) == len(plain) == len(view)
    for v, e, p in zip(view, every, plain, strict=True):
        assert v.sample_id == e.sample_id == p.sample_id
        for name in BOXES:
            np.testing.assert_array_equal(getattr(e, name), getattr(p, name))
        # The view: every box scoring at least the threshold, in file order (numpy here).
        for boxes, scores in (("pred_boxes", "pred_box_scores"),
                              ("pred_obbs", "pred_obb_scores")):
            keep = getattr(p, scores) >= threshold
            np.testing.assert_array_equal(getattr(v, boxes), getattr(p, boxes)[keep])
            np.testing.assert_array_equal(getattr(v, scores), getattr(p, scores)[keep])


def test_without_a_threshold_every_box_is_the_list_itself() -> None:
    samples = load_samples(GT, PRED, "vocabulary", modalities="bbox")
    assert samples.every_box is samples


def test_auto_follows_the_threshold_as_before() -> None:
    """A threshold above every box score leaves no box: ``auto`` then infers no box
    modality (the spec's rule after confidence filtering), while every_box keeps them."""
    with pytest.raises(OVEarthInputError, match="only empty predictions"):
        load_samples(GT, PRED, "vocabulary", score_threshold=1.01, modalities="auto")
    view = load_samples(GT, PRED, "vocabulary", score_threshold=1.01, modalities="bbox")
    assert not any(len(s.pred_boxes) for s in view)
    assert any(len(s.pred_boxes) for s in view.every_box)


def test_every_box_is_held_to_the_pair_cap_when_used(monkeypatch: pytest.MonkeyPatch) -> None:
    plain = load_samples(GT, PRED, "vocabulary", modalities="bbox")
    most = max(len(s.gt_boxes) * len(s.pred_boxes) for s in plain)
    kept = load_samples(GT, PRED, "vocabulary", score_threshold=0.99, modalities="bbox")
    fewest = max(len(s.gt_boxes) * len(s.pred_boxes) for s in kept)
    assert fewest < most
    monkeypatch.setattr(types, "MAX_PAIRS_PER_QUERY", fewest)
    view = load_samples(GT, PRED, "vocabulary", score_threshold=0.99, modalities="bbox")
    with pytest.raises(OVEarthInputError, match="GT x predicted box pairs"):
        view.every_box  # noqa: B018  (the property's check is the point)


def test_analyses_parse_the_predictions_once(monkeypatch: pytest.MonkeyPatch,
                                             tmp_path: Path) -> None:
    """The analysis command with a threshold reads its boxes from one parse (it parsed
    the prediction file a second time for AP and the sweep before)."""
    from ovearth_core.analysis.__main__ import main

    calls = _count_parses(monkeypatch)
    out = tmp_path / "a.json"
    assert main(["--gt", str(GT), "--predictions", str(PRED), "--task", "vocabulary",
                 "--modalities", "bbox", "--score-threshold", "0.5", "--output",
                 str(out)]) == 0
    assert calls == ["open_vocabulary"]


def _count_parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The task of every parse of a prediction document: by the checker, or by the typed
    decode of a boxes-only load (issue 49) when it vouches for the document (when it does
    not, the checker's parse that follows is the one counted)."""
    calls: list[str] = []
    checker, typed = io.parse_predictions, io._typed_predictions

    def counted(*args, **kwargs):
        calls.append(args[2])
        return checker(*args, **kwargs)

    def counted_typed(*args, **kwargs):
        out = typed(*args, **kwargs)
        if out is not None:
            calls.append(args[1])
        return out

    monkeypatch.setattr(io, "parse_predictions", counted)
    monkeypatch.setattr(io, "_typed_predictions", counted_typed)
    return calls


def test_the_report_parses_each_submission_once_per_task(monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    from ovearth_core.options import Options
    from ovearth_core.report.build import build_report_data

    calls = _count_parses(monkeypatch)
    data = build_report_data(GT, [PRED], Options("vocabulary", "bbox", score_threshold=0.5),
                             DEMO, ["vocabulary"], worst=0)
    assert calls == ["open_vocabulary"]
    ap = data.submissions[0].average_precision["open_vocabulary"]
    # AP ranks every box (its report equals the AP of a load without the threshold).
    from ovearth_core.analysis.ap import average_precision_report

    every = load_samples(GT, PRED, "vocabulary", modalities="bbox")
    want = average_precision_report(every, 0.5, every.modalities, False, 100)
    assert ap["bbox"]["ap_every_point"] == want["bbox"]["ap_every_point"]


def test_every_box_infers_auto_modalities_from_every_box(tmp_path: Path) -> None:
    """``auto`` with a threshold that empties one modality: the view evaluates the others
    (the spec infers after filtering) while every_box keeps the emptied one, as a load
    without the threshold infers it; so AP and the sweep rank what a separate load ranks."""
    import json

    doc = json.loads(PRED.read_text())
    for row in doc["tasks"]["open_vocabulary"]:
        for box in row.get("oriented_bbox") or []:
            box["score"] = min(box.get("score", 0.1), 0.1)
        for box in row.get("bbox") or []:
            box["score"] = max(box.get("score", 0.9), 0.5)
    low = tmp_path / "low_obb.json"
    low.write_text(json.dumps(doc))
    view = load_samples(GT, low, "vocabulary", score_threshold=0.3, modalities="auto")
    plain = load_samples(GT, low, "vocabulary", modalities="auto")
    assert view.modalities == ("bbox",)
    assert plain.modalities == ("bbox", "oriented_bbox")
    every = view.every_box
    assert every.modalities == plain.modalities and every.submitted == plain.submitted
    for e, p, v in zip(every, plain, view, strict=True):
        for name in BOXES:
            np.testing.assert_array_equal(getattr(e, name), getattr(p, name))
        assert len(v.pred_obbs) == 0
