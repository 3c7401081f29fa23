"""Independent reference implementations, used only by the tests.

Written from the spec (/work/shared/spec/ovearth-eval-spec.md) and from the COCO
RLE format, not from ``ovearth_core``: nothing here imports the package. The
code favours obviously-correct scalar loops over speed:

* COCO RLE: runs of a mask by ``itertools.groupby`` over the column-major
  pixels, a scalar compressed-string encoder/decoder (the format of
  pycocotools' ``rleToString`` / ``rleFrString``), pixels by ``numpy.repeat``.
* Boxes: scalar axis-aligned IoU; oriented boxes by Sutherland-Hodgman
  clipping and the shoelace formula (spec, "Oriented Bounding Box Evaluation").
* Matching: brute force over every one-to-one matching, keeping the one with
  the most pairs at IoU >= t, then the largest total IoU (spec, "Detection
  Metrics").
* Presence: the formulas of the spec's "Presence Metrics" table.
* ``reference_evaluation``: the whole pipeline from the raw JSON documents to
  the summary numbers, following the spec and the project conventions
  documented in ``ovearth_core/metrics.py`` (evaluated = positive with usable
  GT; empty prediction scores 0; negatives never enter quality summaries).
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from pycocotools import mask as cocomask

Point = tuple[float, float]
THRESHOLDS_050_095 = tuple(round(0.5 + 0.05 * i, 2) for i in range(10))


# --------------------------------------------------------------------------- RLE


def runs_of(mask: npt.ArrayLike) -> list[int]:
    """COCO run lengths of a 2-D 0/1 mask: column-major, starting with background."""
    flat = np.asarray(mask, dtype=np.uint8).flatten(order="F").tolist()
    runs = [0] if flat and flat[0] == 1 else []
    runs += [len(list(group)) for _, group in itertools.groupby(flat)]
    return runs


def mask_from_runs(runs: Sequence[int], height: int, width: int) -> npt.NDArray[np.uint8]:
    """Pixels of a run-length list (column-major, background first)."""
    values = np.arange(len(runs)) % 2
    flat = np.repeat(values.astype(np.uint8), np.asarray(runs, dtype=np.int64))
    assert flat.size == height * width, "runs do not cover the mask"
    return flat.reshape((height, width), order="F")


def encode_runs_string(runs: Sequence[int]) -> str:
    """COCO compressed string of run lengths (LEB128-like, 5 bits + sign, deltas from run 3)."""
    out = []
    for i, run in enumerate(runs):
        x = int(run) - (int(runs[i - 2]) if i > 2 else 0)
        more = True
        while more:
            c = x & 0x1F
            x >>= 5
            more = (x != -1) if (c & 0x10) else (x != 0)
            if more:
                c |= 0x20
            out.append(chr(c + 48))
    return "".join(out)


def decode_runs_string(text: str) -> list[int]:
    """Run lengths of a COCO compressed string; ``ValueError`` on bad characters or truncation."""
    runs: list[int] = []
    p = 0
    while p < len(text):
        x, k, more = 0, 0, True
        while more:
            if p >= len(text):
                raise ValueError("truncated value")
            c = ord(text[p]) - 48
            if not 0 <= c <= 63:
                raise ValueError(f"bad character {text[p]!r}")
            x |= (c & 0x1F) << (5 * k)
            more = bool(c & 0x20)
            p += 1
            k += 1
            if not more and (c & 0x10):
                x |= -1 << (5 * k)
        if len(runs) > 2:
            x += runs[-2]
        runs.append(x)
    return runs


def decode_json_mask(value: Any, height: int, width: int) -> npt.NDArray[np.uint8]:
    """Pixels of a JSON mask value (null / sentinel / list counts / string counts)."""
    if value is None or value.get("size") == [0, 0]:
        return np.zeros((height, width), dtype=np.uint8)
    h, w = value["size"]
    counts = value["counts"]
    if isinstance(counts, list):
        return mask_from_runs(counts, h, w)
    return cocomask.decode({"size": [h, w], "counts": counts.encode("ascii")})


def mask_stats(gt: npt.ArrayLike, pred: npt.ArrayLike) -> dict[str, int]:
    """Pixel counts of two equal-shaped 0/1 masks."""
    g = np.asarray(gt, dtype=bool)
    p = np.asarray(pred, dtype=bool)
    return {"gt_area": int(g.sum()), "pred_area": int(p.sum()),
            "intersection": int((g & p).sum()), "union": int((g | p).sum())}


# ----------------------------------------------------------------- boxes, polygons


def box_iou(a: Sequence[float], b: Sequence[float]) -> float:
    """IoU of two xyxy boxes."""
    iw = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    ih = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = iw * ih
    area_a = (a[2] - a[0]) * (a[3] - a[1])
    area_b = (b[2] - b[0]) * (b[3] - b[1])
    return inter / (area_a + area_b - inter)


def signed_area(poly: Sequence[Point]) -> float:
    """Shoelace signed area (positive for counter-clockwise in a y-up frame)."""
    s = 0.0
    for (x1, y1), (x2, y2) in zip(poly, list(poly[1:]) + [poly[0]], strict=True):
        s += x1 * y2 - x2 * y1
    return 0.5 * s


def _ccw(poly: Sequence[Point]) -> list[Point]:
    pts = [(float(x), float(y)) for x, y in poly]
    return pts if signed_area(pts) >= 0 else pts[::-1]


def clip_polygon(subject: Sequence[Point], clip: Sequence[Point]) -> list[Point]:
    """Sutherland-Hodgman: ``subject`` clipped to the inside of the convex polygon ``clip``."""
    out = _ccw(subject)
    clip_pts = _ccw(clip)
    for a, b in zip(clip_pts, clip_pts[1:] + clip_pts[:1], strict=True):
        if not out:
            break
        ex, ey = b[0] - a[0], b[1] - a[1]

        def side(p: Point, a: Point = a, ex: float = ex, ey: float = ey) -> float:
            return ex * (p[1] - a[1]) - ey * (p[0] - a[0])

        inp = out
        out = []
        for i, cur in enumerate(inp):
            prev = inp[i - 1]
            s_cur, s_prev = side(cur), side(prev)
            if s_cur >= 0:
                if s_prev < 0:
                    out.append(_cross_point(prev, cur, s_prev, s_cur))
                out.append(cur)
            elif s_prev >= 0:
                out.append(_cross_point(prev, cur, s_prev, s_cur))
    return out


def _cross_point(p: Point, q: Point, sp: float, sq: float) -> Point:
    t = sp / (sp - sq)
    return (p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1]))


def polygon_iou(a: Sequence[Point], b: Sequence[Point]) -> float:
    """IoU of two convex polygons (any orientation) by clipping and shoelace areas."""
    inter_poly = clip_polygon(a, b)
    inter = abs(signed_area(inter_poly)) if len(inter_poly) >= 3 else 0.0
    area_a, area_b = abs(signed_area(a)), abs(signed_area(b))
    return inter / (area_a + area_b - inter)


def devkit_poly_iou(a: Sequence[Point], b: Sequence[Point]) -> float:
    """DOTA_devkit's ``polyiou.iou_poly`` as its documented rule: each polygon turned
    counter-clockwise by its shoelace sign, then the intersection is the sum over every pair
    of edges of the signed overlap of the two triangles (origin, edge) they fan out to (a
    triangle's sign: its orientation); the union ``|area a| + |area b| - intersection``.
    For a simple polygon, convex or concave, this is the exact polygon IoU; for a
    self-crossing vertex order it weighs each lobe by its winding number."""
    pa, pb = _ccw(a), _ccw(b)
    inter = 0.0
    for p, q in zip(pa, pa[1:] + pa[:1], strict=True):
        s1 = signed_area([(0.0, 0.0), p, q])
        if s1 == 0:
            continue
        for r, t in zip(pb, pb[1:] + pb[:1], strict=True):
            s2 = signed_area([(0.0, 0.0), r, t])
            if s2 == 0:
                continue
            part = clip_polygon([(0.0, 0.0), p, q], [(0.0, 0.0), r, t])
            area = abs(signed_area(part)) if len(part) >= 3 else 0.0
            inter += area if (s1 > 0) == (s2 > 0) else -area
    return inter / (abs(signed_area(pa)) + abs(signed_area(pb)) - inter)


# ------------------------------------------------------------------------ matching


def brute_force_match(iou: npt.ArrayLike, threshold: float) -> tuple[int, float]:
    """``(pairs, total_iou)`` of the best one-to-one matching with every pair's IoU >= t.

    Enumerates all matchings (each GT row takes a free column or none) and keeps
    the largest number of pairs, then the largest total IoU.
    """
    count, total, _ = brute_force_matching(iou, threshold)
    return count, total


def brute_force_matching(iou: npt.ArrayLike, threshold: float
                         ) -> tuple[int, float, list[tuple[int, int]]]:
    """:func:`brute_force_match` with the matched ``(gt, pred)`` pairs."""
    m = np.asarray(iou, dtype=np.float64)
    n_gt, n_pred = m.shape
    assert n_gt <= 6 and n_pred <= 6, "brute force is for small matrices"
    best: tuple[int, float, list[tuple[int, int]]] = (0, 0.0, [])

    def walk(row: int, used: frozenset[int], count: int, total: float,
             pairs: list[tuple[int, int]]) -> None:
        nonlocal best
        if row == n_gt:
            if count > best[0] or (count == best[0] and total > best[1]):
                best = (count, total, pairs)
            return
        walk(row + 1, used, count, total, pairs)
        for col in range(n_pred):
            if col not in used and m[row, col] >= threshold:
                walk(row + 1, used | {col}, count + 1, total + float(m[row, col]),
                     pairs + [(row, col)])

    walk(0, frozenset(), 0, 0.0, [])
    return best


def greedy_match_count(iou: npt.ArrayLike, threshold: float) -> int:
    """Pairs found by the locally greedy highest-IoU-first strategy (for the trap case)."""
    m = np.asarray(iou, dtype=np.float64)
    pairs = sorted(((m[r, c], r, c) for r in range(m.shape[0]) for c in range(m.shape[1])
                    if m[r, c] >= threshold), reverse=True)
    rows: set[int] = set()
    cols: set[int] = set()
    for _, r, c in pairs:
        if r not in rows and c not in cols:
            rows.add(r)
            cols.add(c)
    return len(rows)


# ------------------------------------------------------------------------ presence


def div(num: float, den: float) -> float | None:
    return None if den == 0 else num / den


def presence_reference(tp: int, fp: int, tn: int, fn: int) -> dict[str, float | None]:
    """Spec "Presence Metrics" formulas; F1 0.0 when P + R == 0, null if P or R is null."""
    p = div(tp, tp + fp)
    r = div(tp, tp + fn)
    if p is None or r is None:
        f1 = None
    elif p + r == 0:
        f1 = 0.0
    else:
        f1 = 2 * p * r / (p + r)
    den = (tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)
    mcc = None if den == 0 else (tp * tn - fp * fn) / math.sqrt(den)
    return {"precision": p, "recall": r, "f1": f1, "accuracy": div(tp + tn, tp + fp + tn + fn),
            "fpr": div(fp, fp + tn), "mcc": mcc}


# ------------------------------------------------------------- whole evaluation


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _pred_box(value: Any, bbox_format: str) -> tuple[list[float] | None, float | None]:
    coords, score = (value["bbox"], value.get("score")) if isinstance(value, dict) else (value,
                                                                                          None)
    x, y, c, d = (float(v) for v in coords)
    if (x, y, c, d) == (0.0, 0.0, 0.0, 0.0):
        return None, score
    return ([x, y, x + c, y + d] if bbox_format == "xywh" else [x, y, c, d]), score


def _pred_obb(value: Any) -> tuple[list[Point], float | None]:
    if isinstance(value, dict):
        return [tuple(p) for p in value["polygon"]], value.get("score")
    return [tuple(p) for p in value], None


def reference_evaluation(gt_doc: dict[str, Any], pred_doc: dict[str, Any], task_key: str,
                         modalities: Sequence[str], iou_threshold: float = 0.5,
                         score_threshold: float | None = None,
                         bbox_format: str = "xyxy") -> dict[str, Any]:
    """Expected summary (and per-query numbers) straight from the JSON documents."""
    anns = {str(a["id"]): a for a in gt_doc["annotations"]}
    queries = gt_doc["tasks"][task_key]
    rows_by_id: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in pred_doc.get("tasks", {}).get(task_key, []):
        rows_by_id[row["query_id"]].append(row)

    per_query: list[dict[str, Any]] = []
    for q in queries:
        ann = anns[str(q["ann_id"])]
        h, w = ann["height"], ann["width"]
        negative = q.get("type") == "negative"
        rows = rows_by_id.get(q["query_id"], [])
        pred_mask = np.zeros((h, w), dtype=np.uint8)
        boxes: list[list[float]] = []
        obbs: list[list[Point]] = []
        box_scores: list[float | None] = []
        obb_scores: list[float | None] = []
        for row in rows:
            if "segmentation" in modalities:
                pred_mask |= decode_json_mask(row.get("segmentation"), h, w)
            for item in (row.get("bbox") or []) if "bbox" in modalities else []:
                box, score = _pred_box(item, bbox_format)
                if box is not None and (score_threshold is None or score >= score_threshold):
                    boxes.append(box)
                    box_scores.append(score)
            for item in ((row.get("oriented_bbox") or []) if "oriented_bbox" in modalities
                         else []):
                poly, score = _pred_obb(item)
                if score_threshold is None or score >= score_threshold:
                    obbs.append(poly)
                    obb_scores.append(score)
        entry: dict[str, Any] = {"id": q["query_id"], "negative": negative,
                                 "ann_id": str(ann["id"]),
                                 "category": ann.get("category_name", "")}
        present = []
        if "segmentation" in modalities:
            gt_mask = (np.zeros((h, w), dtype=np.uint8) if negative
                       else decode_json_mask(ann.get("segmentation"), h, w))
            st = mask_stats(gt_mask, pred_mask)
            st["evaluated"] = not negative and st["gt_area"] > 0
            entry["seg"] = st
            present.append(st["pred_area"] > 0)
        if "bbox" in modalities:
            gt_boxes = [] if negative else [[x, y, x + bw, y + bh]
                                            for x, y, bw, bh in ann.get("bbox") or []]
            iou = [[box_iou(g, p) for p in boxes] for g in gt_boxes]
            entry["bbox"] = _det_stats(iou, len(gt_boxes), len(boxes), negative, iou_threshold)
            entry["bbox"].update(_field_stats(gt_boxes, boxes, box_scores, False,
                                              entry["bbox"], iou_threshold))
            present.append(len(boxes) > 0)
        if "oriented_bbox" in modalities:
            gt_obbs = [] if negative else [[tuple(p) for p in poly]
                                           for poly in ann.get("oriented_bbox") or []]
            iou = [[polygon_iou(g, p) for p in obbs] for g in gt_obbs]
            entry["oriented_bbox"] = _det_stats(iou, len(gt_obbs), len(obbs), negative,
                                                iou_threshold)
            entry["oriented_bbox"].update(_field_stats(gt_obbs, obbs, obb_scores, True,
                                                       entry["oriented_bbox"], iou_threshold))
            present.append(len(obbs) > 0)
        entry["pred_present"] = any(present)
        per_query.append(entry)

    summary: dict[str, Any] = {"num_samples": len(queries)}
    if task_key == "open_vocabulary":
        tp = sum(1 for e in per_query if not e["negative"] and e["pred_present"])
        fn = sum(1 for e in per_query if not e["negative"] and not e["pred_present"])
        fp = sum(1 for e in per_query if e["negative"] and e["pred_present"])
        tn = sum(1 for e in per_query if e["negative"] and not e["pred_present"])
        summary["num_positive"] = tp + fn
        summary["num_negative"] = fp + tn
        summary["negative_accuracy"] = div(tn, fp + tn)
        summary["negative_false_positive_rate"] = div(fp, fp + tn)
        summary["presence"] = {"tp": tp, "fp": fp, "tn": tn, "fn": fn,
                               **presence_reference(tp, fp, tn, fn)}
    open_vocab = task_key == "open_vocabulary"
    summary["seg"] = _seg_summary(per_query, open_vocab) if "segmentation" in modalities else None
    for key in ("bbox", "oriented_bbox"):
        summary[key] = (_det_summary([e[key] for e in per_query],
                                     [e["negative"] for e in per_query], open_vocab)
                        if key in modalities else None)
    return {"summary": summary, "per_query": per_query}


def _det_stats(iou: list[list[float]], n_gt: int, n_pred: int, negative: bool,
               threshold: float) -> dict[str, Any]:
    evaluated = not negative and n_gt > 0
    tp, total = brute_force_match(np.asarray(iou).reshape(n_gt, n_pred), threshold) if (
        evaluated) else (0, 0.0)
    tp_at = [brute_force_match(np.asarray(iou).reshape(n_gt, n_pred), t)[0] if evaluated else 0
             for t in THRESHOLDS_050_095]
    out: dict[str, Any] = {"num_gt": n_gt, "num_pred": n_pred, "tp": tp, "fp": n_pred - tp,
                           "fn": n_gt - tp, "evaluated": evaluated, "tp_at": tp_at,
                           "matched_total": total,
                           "mean_matched_iou": total / tp if tp else None}
    if evaluated:
        out["precision"] = tp / n_pred if n_pred else 0.0
        out["recall"] = tp / n_gt
        out["f1"] = 2 * tp / (n_pred + n_gt)
    else:
        out["precision"] = out["recall"] = out["f1"] = None
    return out


def _seg_summary(per_query: list[dict[str, Any]], open_vocab: bool) -> dict[str, Any]:
    ev = [e for e in per_query if e["seg"]["evaluated"]]
    ious = [e["seg"]["intersection"] / e["seg"]["union"] for e in ev]
    out: dict[str, Any] = {
        "num_samples_evaluated": len(ev),
        "num_positive_evaluated": len(ev),
        "positive_micro_miou": div(sum(e["seg"]["intersection"] for e in ev),
                                   sum(e["seg"]["union"] for e in ev)),
        "positive_macro_miou": _mean(ious),
        "positive_macro_dice": _mean([2 * e["seg"]["intersection"]
                                      / (e["seg"]["gt_area"] + e["seg"]["pred_area"])
                                      for e in ev]),
        "positive_macro_precision": _mean([e["seg"]["intersection"] / e["seg"]["pred_area"]
                                           if e["seg"]["pred_area"] else 0.0 for e in ev]),
        "positive_macro_recall": _mean([e["seg"]["intersection"] / e["seg"]["gt_area"]
                                        for e in ev]),
    }
    for t in (0.5, 0.6, 0.7, 0.8, 0.9):
        out[f"Pr@{t}"] = _mean([1.0 if v >= t else 0.0 for v in ious])
    for name, key in (("annotation_macro_miou", "ann_id"), ("category_macro_miou", "category")):
        groups: dict[str, list[float]] = defaultdict(list)
        for e, v in zip(ev, ious, strict=True):
            groups[e[key]].append(v)
        out[name] = _mean([sum(v) / len(v) for v in groups.values()])
    # Class-wise IoU as land-cover benchmarks compute it (EarthVL notes): per category
    # sum I / sum U, then the mean over categories.
    sums: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for e in ev:
        sums[e["category"]][0] += e["seg"]["intersection"]
        sums[e["category"]][1] += e["seg"]["union"]
    out["category_cum_miou"] = _mean([i / u for i, u in sums.values()])
    if open_vocab:
        # GRES: a negative query (no target) scores 1 when its mask is empty, else 0; its
        # predicted pixels add to the cumulative union.
        scored = [1.0 if e["seg"]["pred_area"] == 0 else 0.0 for e in per_query
                  if e["negative"]]
        scored += [e["seg"]["intersection"] / e["seg"]["union"] for e in ev]
        out["gres_giou"] = _mean(scored)
        out["gres_ciou"] = div(sum(e["seg"]["intersection"] for e in ev),
                               sum(e["seg"]["union"] for e in ev)
                               + sum(e["seg"]["pred_area"] for e in per_query if e["negative"]))
    return out


AI_TOD_BINS = (("very_tiny", 0.0, 8.0), ("tiny", 8.0, 16.0), ("small", 16.0, 32.0),
               ("medium", 32.0, 96.0), ("large", 96.0, math.inf))


def size_bin_name(area: float) -> str:
    """AI-TOD bin of a box by the square root of its area in pixels."""
    side = math.sqrt(area)
    return next(name for name, lo, hi in AI_TOD_BINS if lo <= side < hi)


def _geom_area(geom: Any, oriented: bool) -> float:
    return abs(signed_area(geom)) if oriented else (geom[2] - geom[0]) * (geom[3] - geom[1])


def _geom_intersection(a: Any, b: Any, oriented: bool) -> float:
    if oriented:
        poly = clip_polygon(a, b)
        return abs(signed_area(poly)) if len(poly) >= 3 else 0.0
    return (max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
            * max(0.0, min(a[3], b[3]) - max(a[1], b[1])))


def _field_stats(gts: list[Any], preds: list[Any], scores: list[float | None], oriented: bool,
                 det: dict[str, Any], threshold: float) -> dict[str, Any]:
    """Top-1 overlap and size-bin counts of one query (docs/metrics.md, "Added keys").

    Top-1: the highest score, an unscored box counting as +inf, the first on ties; its
    best GT box: the highest IoU, the first on ties. No prediction: I = 0, U = the
    largest GT box area.
    """
    out: dict[str, Any] = {"top1": None, "gt_bins": [], "pred_bins": [], "gt_hit": [],
                           "pred_hit": []}
    if not det["evaluated"]:
        return out
    if not preds:
        out["top1"] = (0.0, 0.0, max(_geom_area(g, oriented) for g in gts))
    else:
        top = 0
        for k in range(1, len(preds)):
            key = math.inf if scores[k] is None else scores[k]
            best = math.inf if scores[top] is None else scores[top]
            if key > best:
                top = k
        best_iou, best_pair = -1.0, (0.0, 1.0)
        for g in gts:
            inter = _geom_intersection(g, preds[top], oriented)
            union = _geom_area(g, oriented) + _geom_area(preds[top], oriented) - inter
            if inter / union > best_iou:
                best_iou, best_pair = inter / union, (inter, union)
        out["top1"] = (best_iou, *best_pair)
    iou = [[(polygon_iou(g, p) if oriented else box_iou(g, p)) for p in preds] for g in gts]
    _, _, pairs = brute_force_matching(np.asarray(iou).reshape(len(gts), len(preds)), threshold)
    out["gt_bins"] = [size_bin_name(_geom_area(g, oriented)) for g in gts]
    out["pred_bins"] = [size_bin_name(_geom_area(p, oriented)) for p in preds]
    out["gt_hit"] = [any(r == k for r, _ in pairs) for k in range(len(gts))]
    out["pred_hit"] = [any(c == k for _, c in pairs) for k in range(len(preds))]
    return out


def _field_summaries(entries: list[dict[str, Any]], negatives: list[bool],
                     open_vocab: bool) -> dict[str, Any]:
    """Grounding (RSVG), counting and size-bin summaries of evaluated queries."""
    ev = [e for e in entries if e["evaluated"]]
    ious = [e["top1"][0] for e in ev]
    grounding: dict[str, Any] = {"num_evaluated": len(ev),
                                 "num_single_target": sum(e["num_gt"] == 1 for e in ev)}
    for t in (0.5, 0.6, 0.7, 0.8, 0.9):
        grounding[f"Pr@{t}"] = _mean([1.0 if v >= t else 0.0 for v in ious])
    grounding["mean_iou"] = _mean(ious)
    grounding["cum_iou"] = div(sum(e["top1"][1] for e in ev), sum(e["top1"][2] for e in ev))
    errors = [e["num_pred"] - e["num_gt"] for e in ev]
    counting: dict[str, Any] = {
        "num_evaluated": len(ev),
        "mae": _mean([abs(x) for x in errors]),
        "rmse": None if not ev else math.sqrt(sum(x * x for x in errors) / len(errors)),
        "mean_gt": _mean([e["num_gt"] for e in ev]),
        "mean_pred": _mean([e["num_pred"] for e in ev]),
    }
    if open_vocab:
        with_neg = errors + [e["num_pred"] for e, neg in zip(entries, negatives, strict=True)
                             if neg]
        counting["rmse_with_negatives"] = (None if not with_neg else
                                           math.sqrt(sum(x * x for x in with_neg)
                                                     / len(with_neg)))
    by_size = {}
    for name, _, _ in AI_TOD_BINS:
        n_gt = sum(b == name for e in ev for b in e["gt_bins"])
        tp = sum(b == name and h for e in ev for b, h in zip(e["gt_bins"], e["gt_hit"],
                                                             strict=True))
        n_pred = sum(b == name for e in ev for b in e["pred_bins"])
        hit = sum(b == name and h for e in ev for b, h in zip(e["pred_bins"], e["pred_hit"],
                                                              strict=True))
        p, r = div(hit, n_pred), div(tp, n_gt)
        by_size[name] = {"num_gt": n_gt, "tp": tp, "fn": n_gt - tp, "recall": r,
                         "num_pred": n_pred, "matched_pred": hit, "precision": p,
                         "f1": None if p is None or r is None else
                         (0.0 if p + r == 0 else 2 * p * r / (p + r))}
    return {"grounding": grounding, "counting": counting, "by_size": by_size}


def _det_summary(entries: list[dict[str, Any]], negatives: list[bool],
                 open_vocab: bool) -> dict[str, Any]:
    ev = [e for e in entries if e["evaluated"]]
    tp = sum(e["tp"] for e in ev)
    n_pred = sum(e["num_pred"] for e in ev)
    n_gt = sum(e["num_gt"] for e in ev)
    f1_by = {}
    for i, t in enumerate(THRESHOLDS_050_095):
        tp_t = sum(e["tp_at"][i] for e in ev)
        f1_by[f"{t:.2f}"] = div(2 * tp_t, n_pred + n_gt)
    matched = [e for e in ev if e["tp"]]
    return {
        "num_samples_evaluated": len(ev),
        "num_positive_evaluated": len(ev),
        "tp": tp, "fp": n_pred - tp, "fn": n_gt - tp,
        "positive_micro_precision": div(tp, n_pred),
        "positive_micro_recall": div(tp, n_gt),
        "positive_micro_f1": div(2 * tp, n_pred + n_gt),
        "positive_macro_f1": _mean([e["f1"] for e in ev]),
        "positive_macro_matched_iou": _mean([e["matched_total"] / e["tp"] for e in matched]),
        "positive_micro_matched_iou": div(sum(e["matched_total"] for e in ev), tp),
        "positive_mean_micro_f1@[0.5:0.95]": (None if not ev else
                                              sum(f1_by.values()) / len(f1_by)),
        "positive_micro_f1_by_iou": f1_by,
        **_field_summaries(entries, negatives, open_vocab),
    }


# ------------------------------------------------------------- random benchmark data

CATEGORIES = ("bell tower", "pond", "road")


def mask_json(mask: npt.ArrayLike, as_list: bool) -> dict[str, Any]:
    """A JSON mask: uncompressed list counts (numpy runs) or a pycocotools string."""
    arr = np.asarray(mask, dtype=np.uint8)
    if as_list:
        return {"size": list(arr.shape), "counts": runs_of(arr)}
    counts = cocomask.encode(np.asfortranarray(arr))["counts"].decode("ascii")
    return {"size": list(arr.shape), "counts": counts}


def _rect_poly(cx: float, cy: float, w: float, h: float, theta: float,
               clockwise: bool) -> list[list[float]]:
    c, s = math.cos(theta), math.sin(theta)
    pts = [[round(cx + c * x - s * y, 2), round(cy + s * x + c * y, 2)]
           for x, y in ((-w / 2, -h / 2), (w / 2, -h / 2), (w / 2, h / 2), (-w / 2, h / 2))]
    return pts[::-1] if clockwise else pts


def _random_gt(rng: np.random.Generator, ann_id: str) -> tuple[dict[str, Any], np.ndarray]:
    h, w = (int(v) for v in rng.integers(8, 21, 2))
    mask = np.zeros((h, w), dtype=np.uint8)
    y0, x0 = int(rng.integers(0, h - 2)), int(rng.integers(0, w - 2))
    mask[y0:int(rng.integers(y0 + 1, h + 1)), x0:int(rng.integers(x0 + 1, w + 1))] = 1
    mask ^= (rng.random((h, w)) < 0.05).astype(np.uint8)
    r = rng.random()
    if r < 0.1:
        mask[:] = 0
        seg: Any = mask_json(mask, as_list=bool(rng.random() < 0.5))
    elif r < 0.15:
        seg = None
    else:
        seg = mask_json(mask, as_list=bool(rng.random() < 0.5))
    boxes = []
    for _ in range(0 if rng.random() < 0.15 else int(rng.integers(1, 4))):
        bx, by = round(float(rng.uniform(0, w - 2)), 1), round(float(rng.uniform(0, h - 2)), 1)
        bw, bh = round(float(rng.uniform(1, 6)), 1), round(float(rng.uniform(1, 6)), 1)
        boxes.append([bx, by, bw, bh])
    obbs = [_rect_poly(float(rng.uniform(2, w - 2)), float(rng.uniform(2, h - 2)),
                       float(rng.uniform(1.5, 6)), float(rng.uniform(1.5, 6)),
                       float(rng.uniform(0, math.pi)), bool(rng.random() < 0.5))
            for _ in range(0 if rng.random() < 0.15 else int(rng.integers(1, 4)))]
    ann = {"id": ann_id, "image_path": f"images/{ann_id}.tif", "width": w, "height": h,
           "category_name": str(rng.choice(CATEGORIES)), "segmentation": seg,
           "bbox": boxes, "oriented_bbox": obbs}
    return ann, (mask if seg is not None else np.zeros((h, w), dtype=np.uint8))


def _score(rng: np.random.Generator) -> float:
    return 0.3 if rng.random() < 0.1 else round(float(rng.random()), 2)


def _random_pred_row(rng: np.random.Generator, qid: str, ann: dict[str, Any],
                     gt_mask: np.ndarray, max_boxes: int, bbox_format: str,
                     scored: bool) -> dict[str, Any]:
    h, w = ann["height"], ann["width"]
    row: dict[str, Any] = {"query_id": qid}
    kind = rng.choice(["missing", "null", "sentinel", "all-zero", "noisy-gt", "exact-gt",
                       "random"])
    if kind == "null":
        row["segmentation"] = None
    elif kind == "sentinel":
        row["segmentation"] = {"size": [0, 0], "counts": []}
    elif kind != "missing":
        if kind == "all-zero":
            mask = np.zeros((h, w), dtype=np.uint8)
        elif kind == "random":
            mask = (rng.random((h, w)) < rng.random()).astype(np.uint8)
        else:
            mask = gt_mask.copy()
            if kind == "noisy-gt":  # keep part of the GT, add part of a shifted copy
                keep = rng.random((h, w)) < rng.uniform(0.5, 1.0)
                grow = np.roll(gt_mask, 1, axis=int(rng.integers(0, 2))).astype(bool)
                mask = ((mask.astype(bool) & keep) | (grow & (rng.random((h, w)) < 0.5)))
                mask = mask.astype(np.uint8)
        row["segmentation"] = mask_json(mask, as_list=bool(rng.random() < 0.5))
    boxes: list[Any] = []
    for _ in range(int(rng.integers(0, max_boxes + 1))):
        if rng.random() < 0.1:
            xyxy = [0, 0, 0, 0]
        elif ann["bbox"] and rng.random() < 0.75:
            gx, gy, gw, gh = ann["bbox"][int(rng.integers(0, len(ann["bbox"])))]
            x, y = gx + float(rng.normal(0, 0.6)), gy + float(rng.normal(0, 0.6))
            bw, bh = gw * float(rng.uniform(0.7, 1.3)), gh * float(rng.uniform(0.7, 1.3))
            xyxy = [round(x, 3), round(y, 3), round(x + bw, 3), round(y + bh, 3)]
        else:
            x, y = float(rng.uniform(0, w)), float(rng.uniform(0, h))
            xyxy = [round(x, 3), round(y, 3), round(x + float(rng.uniform(1, 6)), 3),
                    round(y + float(rng.uniform(1, 6)), 3)]
        coords = ([xyxy[0], xyxy[1], round(xyxy[2] - xyxy[0], 6), round(xyxy[3] - xyxy[1], 6)]
                  if bbox_format == "xywh" and xyxy != [0, 0, 0, 0] else xyxy)
        if xyxy != [0, 0, 0, 0] and coords[2] <= 0:
            continue
        boxes.append({"bbox": coords, "score": _score(rng)} if scored or rng.random() < 0.5
                     else coords)
    obbs: list[Any] = []
    for _ in range(int(rng.integers(0, max_boxes + 1))):
        if ann["oriented_bbox"] and rng.random() < 0.75:
            src = np.asarray(ann["oriented_bbox"][int(rng.integers(0, len(ann["oriented_bbox"])))])
            centre = src.mean(axis=0)
            t = float(rng.normal(0, 0.2))
            rot = np.asarray([[math.cos(t), -math.sin(t)], [math.sin(t), math.cos(t)]])
            pts = (src - centre) @ rot.T * float(rng.uniform(0.8, 1.2)) + centre
            pts += rng.normal(0, 0.5, 2)
            poly = [[round(float(x), 3), round(float(y), 3)] for x, y in pts]
        else:
            poly = _rect_poly(float(rng.uniform(0, w)), float(rng.uniform(0, h)),
                              float(rng.uniform(1.5, 6)), float(rng.uniform(1.5, 6)),
                              float(rng.uniform(0, math.pi)), bool(rng.random() < 0.5))
        obbs.append({"polygon": poly, "score": _score(rng)} if scored or rng.random() < 0.5
                    else poly)
    if boxes or rng.random() < 0.7:
        row["bbox"] = boxes
    if obbs or rng.random() < 0.7:
        row["oriented_bbox"] = obbs
    return row


def random_benchmark(seed: int, *, n_ann: int = 8, n_ov: int = 24, n_ref: int = 8,
                     n_rea: int = 8, bbox_format: str = "xyxy",
                     scored: bool = True) -> tuple[dict[str, Any], dict[str, Any]]:
    """A random ground truth and prediction document covering the spec's edge cases.

    Ground truth: unusable GT (null / all-zero mask, no boxes), list and string
    counts, CW and CCW polygons. Predictions: missing rows, duplicate rows,
    every empty-mask form, [0, 0, 0, 0] sentinels, perturbed GT geometry (IoUs
    over the whole range), scores with ties at 0.3, object and shorthand forms.
    With ``scored`` every box carries a score (for ``--score-threshold``).
    """
    rng = np.random.default_rng(seed)
    anns, gt_masks = [], {}
    for i in range(n_ann):
        ann, mask = _random_gt(rng, f"{i + 1:06d}")
        anns.append(ann)
        gt_masks[ann["id"]] = mask
    tasks: dict[str, list[dict[str, Any]]] = {"open_vocabulary": [], "referring": [],
                                              "reasoning": []}
    for key, prefix, n in (("open_vocabulary", "ov", n_ov), ("referring", "ref", n_ref),
                           ("reasoning", "rea", n_rea)):
        for j in range(n):
            ann = anns[int(rng.integers(0, n_ann))]
            q: dict[str, Any] = {"query_id": f"{prefix}_{j + 1:06d}", "ann_id": ann["id"]}
            if key == "open_vocabulary":
                q["type"] = "negative" if rng.random() < 0.45 else "positive"
                q["phrase"] = f"{ann['category_name']} {j}"
            else:
                q["query"] = f"the {ann['category_name']} number {j}"
            tasks[key].append(q)
    gt_doc = {"annotations": anns, "tasks": tasks}
    pred_tasks: dict[str, list[dict[str, Any]]] = {}
    by_id = {a["id"]: a for a in anns}
    for key, queries in tasks.items():
        rows = []
        for q in queries:
            ann = by_id[q["ann_id"]]
            if rng.random() < 0.1:
                continue  # missing row: scored as empty
            if q.get("type") == "negative" and rng.random() < 0.6:
                rows.append({"query_id": q["query_id"], "segmentation": None, "bbox": [],
                             "oriented_bbox": []})
                continue
            duplicate = rng.random() < 0.2
            rows.append(_random_pred_row(rng, q["query_id"], ann, gt_masks[ann["id"]],
                                         2 if duplicate else 3, bbox_format, scored))
            if duplicate:
                rows.append(_random_pred_row(rng, q["query_id"], ann, gt_masks[ann["id"]], 1,
                                             bbox_format, scored))
        order = rng.permutation(len(rows))
        pred_tasks[key] = [rows[i] for i in order]
    return gt_doc, {"tasks": pred_tasks}


def devkit_voc_ap(tp: np.ndarray, fp: np.ndarray, npos: int, use_07_metric: bool) -> float:
    """The end of DOTA_devkit's ``voc_eval`` and its ``voc_ap``, as written there: the
    ranked detections' TP / FP flags (0/1) and the number of (non-difficult) GT boxes to
    VOC07 11-point or every-point AP."""
    fp, tp = np.cumsum(fp), np.cumsum(tp)
    rec = tp / float(npos)
    prec = tp / np.maximum(tp + fp, np.finfo(np.float64).eps)
    if use_07_metric:
        ap = 0.
        for t in np.arange(0., 1.1, 0.1):
            p = 0 if np.sum(rec >= t) == 0 else np.max(prec[rec >= t])
            ap = ap + p / 11.
        return float(ap)
    mrec = np.concatenate(([0.], rec, [1.]))
    mpre = np.concatenate(([0.], prec, [0.]))
    for i in range(mpre.size - 1, 0, -1):
        mpre[i - 1] = np.maximum(mpre[i - 1], mpre[i])
    i = np.where(mrec[1:] != mrec[:-1])[0]
    return float(np.sum((mrec[i + 1] - mrec[i]) * mpre[i + 1]))


def devkit_box_iou(bbgt: np.ndarray, bb: np.ndarray) -> np.ndarray:
    """DOTA_devkit's (and the VOC devkit's) axis-aligned IoU of one box ``bb`` with each
    row of ``bbgt`` (``[x0, y0, x1, y1]``), its ``+ 1`` pixel convention included."""
    ixmin = np.maximum(bbgt[:, 0], bb[0])
    iymin = np.maximum(bbgt[:, 1], bb[1])
    ixmax = np.minimum(bbgt[:, 2], bb[2])
    iymax = np.minimum(bbgt[:, 3], bb[3])
    iw = np.maximum(ixmax - ixmin + 1., 0.)
    ih = np.maximum(iymax - iymin + 1., 0.)
    inters = iw * ih
    uni = ((bb[2] - bb[0] + 1.) * (bb[3] - bb[1] + 1.)
           + (bbgt[:, 2] - bbgt[:, 0] + 1.) * (bbgt[:, 3] - bbgt[:, 1] + 1.) - inters)
    return inters / uni
