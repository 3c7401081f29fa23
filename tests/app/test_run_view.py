"""The keyed run view (ovearth_core.run, issue 27): a query's sample and row are found by
its query_id, each in its own list, never paired by position; the presence cell is one
rule; a run's box facts survive the result cache's array layout whole.

References: a brute-force search of the lists by ``sample_id``, the presence cells written
out as a table, and the box facts of a freshly evaluated run.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from ovearth_core.analysis import diagnose
from ovearth_core.evaluate import evaluate_run
from ovearth_core.io import load_samples
from ovearth_core.presence import presence_cell
from ovearth_core.run import Run, facts_arrays, facts_from_arrays

DEMO = Path(__file__).resolve().parents[2] / "assets" / "demo"
ALL = "segmentation,bbox,oriented_bbox"


@pytest.fixture(scope="module")
def run() -> Run:
    samples = load_samples(DEMO / "ground_truth.json", DEMO / "predictions" / "weak_baseline.json",
                           "vocabulary", modalities=ALL)
    return evaluate_run(samples, 0.5)


def test_sample_and_row_are_found_by_query_id(run: Run) -> None:
    ids = [s.sample_id for s in run.samples]
    assert len(ids) > 10
    for q in ids:
        [sample] = [s for s in run.samples if s.sample_id == q]
        [row] = [r for r in run.per_sample if r["sample_id"] == q]
        assert run.sample(q) is sample and run.row(q) is row
        entry = run.entry(q)
        assert entry.query_id == q and entry.sample is sample and entry.row.json is row
        assert entry.row is run.view.row(q)
        assert run.samples[run.position(q)] is sample


def test_rows_in_another_order_still_pair_with_their_samples(run: Run) -> None:
    rows = list(run.per_sample)
    random.Random(0).shuffle(rows)
    assert [r["sample_id"] for r in rows] != [s.sample_id for s in run.samples]
    shuffled = Run({**run.results, "per_sample": rows}, run.samples, run.box_facts)
    for sample in run.samples:
        assert shuffled.row(sample.sample_id)["sample_id"] == sample.sample_id
        assert shuffled.sample(sample.sample_id) is sample


def test_an_unknown_query_id_is_a_key_error_naming_it(run: Run) -> None:
    with pytest.raises(KeyError, match="'no_such_query'.*samples"):
        run.sample("no_such_query")
    with pytest.raises(KeyError, match="'no_such_query'.*per_sample"):
        run.row("no_such_query")
    assert not run.has("no_such_query") and run.has(run.samples[0].sample_id)


@pytest.mark.parametrize(("gt_present", "pred_present", "cell"), [
    (True, True, "TP"), (True, False, "FN"), (False, True, "FP"), (False, False, "TN")])
def test_presence_cell(gt_present: bool, pred_present: bool, cell: str) -> None:
    assert presence_cell(gt_present, pred_present) == cell


def test_entry_presence_follows_the_rows(run: Run) -> None:
    seen = set()
    for row in run.per_sample:
        expected = {(True, True): "TP", (True, False): "FN", (False, True): "FP",
                    (False, False): "TN"}[(row["gt_present"], row["pred_present"])]
        assert run.entry(row["sample_id"]).presence == expected
        seen.add(expected)
    assert {"TP", "FP"} <= seen


def test_box_facts_survive_the_cache_layout_whole(run: Run) -> None:
    # A cached run (pages.common.data) is rebuilt from these arrays: a fact left out of
    # them would make a cache hit tag queries differently from a fresh evaluation.
    strays = [f for facts in run.box_facts.values() for f in facts if f.stray_overlap]
    assert strays, "the fixture needs a query with a stray overlap"
    back = facts_from_arrays(facts_arrays(run.box_facts), list(run.box_facts))
    for modality, facts in run.box_facts.items():
        for a, b in zip(facts, back[modality], strict=True):
            assert (a.best_iou, a.duplicated, a.stray_overlap) == (
                b.best_iou, b.duplicated, b.stray_overlap)
            assert a.gt_best_iou.tolist() == b.gt_best_iou.tolist()
    cached = Run(run.results, run.samples, back)
    assert diagnose.query_rows(cached) == diagnose.query_rows(run)


def test_a_repeated_query_id_is_refused_not_paired(run: Run) -> None:
    doubled = Run({**run.results, "per_sample": [*run.per_sample, run.per_sample[0]]},
                  run.samples, run.box_facts)
    with pytest.raises(ValueError, match="per_sample rows repeat a query_id"):
        doubled.row(run.samples[0].sample_id)


def _sidebar_importers(common: Path) -> list[str]:
    import ast

    out = []
    for path in sorted(common.glob("*.py")):
        if path.name == "sidebar.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([node.module or ""] if isinstance(node, ast.ImportFrom) else
                     [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            if isinstance(node, ast.ImportFrom):
                names += [f"{node.module or ''}.{a.name}" for a in node.names]
            if any(n.split(".")[-1] == "sidebar" for n in names):
                out.append(path.name)
                break
    return out


def test_view_modules_get_the_app_run_without_the_sidebar() -> None:
    # The app's Run lives in pages/common/run.py: a view module importing the sidebar for
    # the type made a cycle (sidebar -> tags -> sidebar).
    common = Path(__file__).resolve().parents[2] / "pages" / "common"
    assert (common / "run.py").is_file()
    assert _sidebar_importers(common) == []


def test_a_dense_scene_tags_the_same_from_the_cache_layout(tmp_path: Path) -> None:
    """600 packed ships in one DOTA image (10 px boxes every 8 px), some dropped, some
    doubled and some shifted half a pitch: the cached facts give the same failure tags."""
    import numpy as np
    from PIL import Image

    from ovearth_core.convert import from_dota

    src = tmp_path / "dota"
    (src / "labelTxt").mkdir(parents=True)
    (src / "images").mkdir()
    Image.fromarray(np.zeros((210, 220, 3), dtype=np.uint8)).save(src / "images" / "S.png")

    def quad(x: float, y: float) -> str:
        return " ".join(f"{v:g}" for v in (x, y, x + 10, y, x + 10, y + 10, x, y + 10))

    grid = [(8 * i + 2, 8 * j + 2) for i in range(25) for j in range(24)]
    (src / "labelTxt" / "S.txt").write_text(
        "gsd:0.5\n" + "".join(f"{quad(x, y)} ship 0\n" for x, y in grid))
    rng = np.random.default_rng(1)
    lines = []
    for k, (x, y) in enumerate(grid):
        roll = rng.random()
        if roll < 0.05:
            continue  # missed
        shift = 4.0 if roll > 0.95 else float(rng.uniform(-0.7, 0.7))
        lines.append(f"S {0.99 - k / 1000:.4f} {quad(x + shift, y)}")
        if k % 50 == 3:
            lines.append(f"S 0.2000 {quad(x + 0.5, y)}")  # doubled
    (src / "results" / "m").mkdir(parents=True)
    (src / "results" / "m" / "Task1_ship.txt").write_text("".join(f"{t}\n" for t in lines))
    bench = tmp_path / "bench"
    from_dota(src / "labelTxt", src / "images", bench, [src / "results" / "m"])
    samples = load_samples(bench / "ground_truth.json", bench / "predictions" / "m.json",
                           "vocabulary", modalities="bbox,oriented_bbox")
    run = evaluate_run(samples, 0.5)
    ships = [s for s in run.samples if len(s.gt_boxes) == len(grid)]
    assert ships, "the scene's ship query"
    assert run.row(ships[0].sample_id)["bbox"]["num_gt"] == len(grid)
    assert any(f.stray_overlap for facts in run.box_facts.values() for f in facts)
    back = facts_from_arrays(facts_arrays(run.box_facts), list(run.box_facts))
    for modality, facts in run.box_facts.items():
        assert [(f.best_iou, f.duplicated, f.stray_overlap) for f in back[modality]] == [
            (f.best_iou, f.duplicated, f.stray_overlap) for f in facts]
    assert diagnose.query_rows(Run(run.results, run.samples, back)) == diagnose.query_rows(run)
