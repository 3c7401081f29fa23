"""One "found" rule (issue 27 defect 5): the Annotation page's verdicts
(:mod:`ovearth_core.analysis.crosstask`) call a query right exactly when the explorer does
not call it failed (:mod:`ovearth_core.analysis.diagnose`: failure tag ``ok``)."""

from __future__ import annotations

from analysis_fixtures import sample, sample_list

from ovearth_core.analysis import crosstask, diagnose
from ovearth_core.evaluate import evaluate_samples


def _grid(n: int, size: float = 10.0, step: float = 20.0) -> list[list[float]]:
    return [[step * (i % 20), step * (i // 20), step * (i % 20) + size, step * (i // 20) + size]
            for i in range(n)]


def test_a_query_the_explorer_calls_failed_is_not_right_on_the_annotation_page() -> None:
    ships = _grid(25)
    samples = sample_list([
        # One of 25 ships found exactly: best OBB IoU 1, OBB F1 2/26 = 0.077.
        sample("ref_dense", ships, ships[:1], [0.9]),
        sample("ref_all", ships, ships, [0.9] * 25),  # every ship found
        sample("ref_one", ships[:1], ships[:1], [0.9]),  # one object, found
    ], task="referring", modalities=("oriented_bbox",))
    rows = diagnose.query_rows(samples, evaluate_samples(samples, 0.5))
    by_id = {r["query_id"]: r for r in rows}
    assert round(by_id["ref_dense"]["obb_f1"], 3) == 0.077
    assert by_id["ref_dense"]["obb_iou"] == 1.0
    # The explorer's rule, written out: failed means a tag other than "ok".
    failed = {r["query_id"] for r in rows if r["failure"] != "ok"}
    assert failed == {"ref_dense"}
    joined = crosstask.join({"referring": (samples, rows)})
    right = {q.query_id for j in joined.values() for qs in j.queries.values() for q in qs
             if q.right}
    assert right == {"ref_all", "ref_one"}
    assert joined["ref_dense"].verdict != crosstask.RIGHT
    assert {r["query_id"] for r in diagnose.filter_rows(rows, failed_only=True)} == failed
