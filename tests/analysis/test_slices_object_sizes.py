"""GT-size slices by object (issue 27 defect 8): each GT box counts in its own AI-TOD size
bin, so a dense query of ships of several sizes is in each of those bins (its metrics
whole in each), and a bin's GT box count is its boxes only."""

from __future__ import annotations

import numpy as np

from ovearth_core.analysis import slices
from ovearth_core.evaluate import evaluate_samples
from ovearth_core.types import Sample, SampleList


def _box(x: float, side: float) -> list[float]:
    return [x, 0.0, x + side, side]


def _sample(qid: str, sides: list[float]) -> Sample:
    boxes = np.array([_box(200.0 * i, s) for i, s in enumerate(sides)]).reshape(-1, 4)
    return Sample(qid, "ships", False, "i.png", qid, "ship", 4000, 4000, gt_boxes=boxes,
                  pred_boxes=boxes[:1].copy(), pred_box_scores=np.array([0.9])[:len(boxes)],
                  has_prediction_row=True)


def test_each_gt_box_counts_in_its_size_bin() -> None:
    # q_dense: 5 medium ships (side 40), 2 small (20) and 1 large (100); q_tiny: one 10-px.
    samples = SampleList([_sample("q_dense", [40] * 5 + [20] * 2 + [100]),
                          _sample("q_tiny", [10])], task="referring", modalities=("bbox",),
                         score_threshold=None, bbox_format="xyxy")
    table = slices.slice_table(evaluate_samples(samples, 0.5), samples, "gt_size",
                               n_resamples=10)
    got = {v.value: (v.query_ids, v.num_gt_boxes) for v in table.values}
    # Written out by hand from the AI-TOD bins (sqrt(area): 40 medium, 20 small, 100 large,
    # 10 tiny), in bin order.
    assert got == {"tiny": (("q_tiny",), 1), "small": (("q_dense",), 2),
                   "medium": (("q_dense",), 5), "large": (("q_dense",), 1)}
    assert [v.value for v in table.values] == ["tiny", "small", "medium", "large"]
