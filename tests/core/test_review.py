"""Review sidecar (ovearth_core.review): events fold into tags, notes and views; concurrent
writers (threads and processes) lose nothing; state survives a restart; the filtered export
evaluates to the full benchmark's numbers on the same queries."""

from __future__ import annotations

import json
import multiprocessing
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from ovearth_core import review, workers
from ovearth_core.errors import OVEarthInputError
from ovearth_core.evaluate import evaluate_samples
from ovearth_core.io import load_samples

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "assets" / "demo"
OV = "open_vocabulary"
ALL = "segmentation,bbox,oriented_bbox"


@pytest.fixture()
def bench(tmp_path: Path) -> Path:
    """A copy of the demo's JSON (no images: the evaluator does not read them)."""
    out = tmp_path / "bench"
    (out / "predictions").mkdir(parents=True)
    shutil.copy(DEMO / "ground_truth.json", out)
    for p in (DEMO / "predictions").glob("*.json"):
        shutil.copy(p, out / "predictions")
    return out


def test_sidecar_is_beside_the_ground_truth_not_in_it(bench: Path) -> None:
    path = review.sidecar_for(bench / "ground_truth.json")
    assert path == bench.resolve() / ".ovearth" / "review.jsonl"
    review.tag(path, review.Target(OV, "ov_000001"), "gt_error")
    assert json.loads((bench / "ground_truth.json").read_text()) == json.loads(
        (DEMO / "ground_truth.json").read_text())


def test_events_fold_into_the_current_state(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    q = review.Target(OV, "ov_1")
    box = review.Target(OV, "ov_2", "pred", "bbox", 3)
    review.tag(path, q, "gt_error")
    review.tag(path, q, "my own tag")
    review.tag(path, box, "duplicate", by="ana")
    review.untag(path, q, "gt_error")
    review.note(path, q, "first")
    review.note(path, q, "second *not markdown*")
    review.note(path, box, "x")
    review.note(path, box, "")
    review.save_view(path, "v", {"data": "d", "task": "vocabulary"})
    review.save_view(path, "w", {"task": "referring"})
    review.delete_view(path, "w")
    state = review.load_state(path)
    assert state.tags == {q: frozenset({"my own tag"}), box: frozenset({"duplicate"})}
    assert state.notes[q].text == "second *not markdown*" and box not in state.notes
    assert list(state.views) == ["v"] and state.views["v"].params["data"] == "d"
    assert state.query_tags(OV) == {"ov_1": {"my own tag"}, "ov_2": {"duplicate"}}
    assert state.tagged(OV, "duplicate") == ["ov_2"]
    assert state.all_tags() == [*review.BUILTIN_TAGS, "my own tag"]
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert len(lines) == 11 and all(x["v"] == 1 and x["ts"].endswith("+00:00") for x in lines)
    assert lines[2]["object"] == {"source": "pred", "modality": "bbox", "index": 3}
    assert lines[2]["by"] == "ana"


def test_state_survives_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    review.tag(path, review.Target("referring", "ref_9"), "ambiguous_query")
    code = ("import sys; from ovearth_core import review; "
            "print(sorted(review.load_state(sys.argv[1]).query_tags('referring')['ref_9']))")
    out = subprocess.run([sys.executable, "-c", code, str(path)], cwd=REPO, check=True,
                         capture_output=True, text=True).stdout
    assert out.strip() == "['ambiguous_query']"


def _write_many(args: tuple[str, int, int]) -> None:
    path, worker, n = args
    for i in range(n):
        review.tag(path, review.Target(OV, f"q{worker}_{i}"), f"t{worker}",
                   by="x" * (i % 7) * 300 or None)  # long lines too


def test_concurrent_threads_lose_no_tag(tmp_path: Path) -> None:
    path = str(tmp_path / "r.jsonl")
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(_write_many, [(path, w, 60) for w in range(8)]))
    state = review.load_state(path)
    assert not state.problems and state.num_events == 480
    assert len(state.query_tags(OV)) == 480


def test_concurrent_processes_lose_no_tag(tmp_path: Path) -> None:
    """Spawned processes: without ``workers.skip_main`` a worker re-runs this process's
    ``__main__`` file, which an AppTest earlier in the same pytest worker leaves as app.py
    (a crash at start, and a pool restarting its workers forever)."""
    path = str(tmp_path / "r.jsonl")
    context = multiprocessing.get_context("spawn")
    with workers.skip_main(context), context.Pool(4) as pool:
        pool.map_async(_write_many, [(path, w, 50) for w in range(4)]).get(timeout=120)
    state = review.load_state(path)
    assert not state.problems and len(state.query_tags(OV)) == 200


def test_bad_lines_are_reported_and_skipped(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    review.tag(path, review.Target(OV, "a"), "gt_error")
    with open(path, "a") as handle:
        handle.write("not json\n\n[1]\n" + json.dumps({"event": "tag", "task": "nope",
                                                       "query_id": "b", "tag": "x"}) + "\n")
    review.tag(path, review.Target(OV, "c"), "gt_error")
    state = review.load_state(path)
    assert state.tagged(OV, "gt_error") == ["a", "c"]
    assert [p.line for p in state.problems] == [2, 4, 5]


@pytest.mark.parametrize("bad", ["", "   ", "x" * 65, "a\nb"])
def test_bad_tag_is_an_input_error(tmp_path: Path, bad: str) -> None:
    with pytest.raises(OVEarthInputError):
        review.tag(tmp_path / "r.jsonl", review.Target(OV, "a"), bad)
    assert not (tmp_path / "r.jsonl").exists()


def test_bad_object_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(OVEarthInputError):
        review.tag(tmp_path / "r.jsonl", review.Target(OV, "a", "gt", "mask", 0), "x")


def _evaluate(gt: Path, pred: Path) -> dict:
    return evaluate_samples(load_samples(gt, pred, "vocabulary", modalities=ALL), 0.5)


def test_export_without_tagged_queries_evaluates_to_the_same_queries(bench: Path,
                                                                     tmp_path: Path) -> None:
    gt = bench / "ground_truth.json"
    pred = bench / "predictions" / "strong_localiser.json"
    full = _evaluate(gt, pred)
    ids = [r["sample_id"] for r in full["per_sample"]]
    tagged = set(ids[::7]) | {ids[1]}
    sidecar = review.sidecar_for(gt)
    for q in sorted(tagged):
        review.tag(sidecar, review.Target(OV, q), "gt_error")
    review.tag(sidecar, review.Target(OV, ids[2]), "ambiguous_query")  # not excluded
    review.tag(sidecar, review.Target("referring", "ref_000001"), "gt_error")  # other task
    out = tmp_path / "export"
    assert review.main(["export", "--gt", str(gt), "--predictions", str(pred),
                        "--without", "gt_error", "--out", str(out)]) == 0
    exported = _evaluate(out / "ground_truth.json", out / "predictions" / pred.name)
    kept = [r for r in full["per_sample"] if r["sample_id"] not in tagged]
    assert exported["per_sample"] == kept
    # The summary from the kept rows, computed here by hand (numpy), not by the evaluator.
    pos = [r for r in kept if not r["negative"] and r["seg"]["evaluated"]]
    seg = exported["summary"]["seg"]
    assert seg["positive_macro_miou"] == pytest.approx(np.mean([r["seg"]["iou"] for r in pos]))
    tp = sum(r["bbox"]["tp"] for r in kept if r["bbox"]["evaluated"])
    fp = sum(r["bbox"]["fp"] for r in kept if r["bbox"]["evaluated"])
    fn = sum(r["bbox"]["fn"] for r in kept if r["bbox"]["evaluated"])
    assert exported["summary"]["bbox"]["positive_micro_f1"] == pytest.approx(
        2 * tp / (2 * tp + fp + fn))
    other = json.loads((out / "ground_truth.json").read_text())["tasks"]["referring"]
    assert len(other) == len(json.loads(gt.read_text())["tasks"]["referring"])


def test_cli_tags_and_lists(bench: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gt = str(bench / "ground_truth.json")
    assert review.main(["tag", "--gt", gt, "--query", "ov_000003", "model_error"]) == 0
    assert review.main(["tag", "--gt", gt, "--task", "referring", "--query", "ref_000001",
                        "gt_error"]) == 0
    capsys.readouterr()
    assert review.main(["list", "--gt", gt]) == 0
    assert capsys.readouterr().out == "ov_000003\tmodel_error\n"
    assert review.main(["list", "--gt", gt, "--task", "bogus"]) == 2


def test_cli_lists_and_deletes_saved_views(bench: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gt = str(bench / "ground_truth.json")
    review.save_view(review.sidecar_for(gt), "tiny misses", {"data": "d", "failed": "1"})
    capsys.readouterr()
    assert review.main(["views", "--gt", gt]) == 0
    assert capsys.readouterr().out == "tiny misses\tdata=d&failed=1\n"
    assert review.main(["delete-view", "--gt", gt, "tiny misses"]) == 0
    assert review.main(["views", "--gt", gt]) == 0
    assert capsys.readouterr().out == ""


def test_rename_and_delete_views_are_appended_lines_a_script_can_fold(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    review.save_view(path, "a", {"task": "vocabulary"})
    review.save_view(path, "b", {"task": "referring"})
    review.rename_view(path, "a", "b")  # replaces the old b
    review.rename_view(path, "missing", "c")  # renaming nothing changes nothing
    review.save_view(path, "d", {"task": "reasoning"})
    review.delete_view(path, "d")
    before = path.read_text()
    # Read by a script without this package: fold the lines in order, later ones win.
    views: dict[str, dict[str, str]] = {}
    for line in before.splitlines():
        e = json.loads(line)
        if e["event"] == "save_view":
            views[e["name"]] = e["params"]
        elif e["event"] == "delete_view":
            views.pop(e["name"], None)
        elif e["event"] == "rename_view" and e["name"] in views:
            views[e["new_name"]] = views.pop(e["name"])
    assert views == {"b": {"task": "vocabulary"}}
    state = review.load_state(path)
    assert {n: v.params for n, v in state.views.items()} == views
    assert [json.loads(x)["event"] for x in before.splitlines()] == [
        "save_view", "save_view", "rename_view", "rename_view", "save_view", "delete_view"]
    assert not state.problems


def test_a_rename_without_new_name_is_a_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text('{"v": 1, "ts": "x", "event": "rename_view", "name": "a"}\n')
    state = review.load_state(path)
    assert state.num_events == 0 and "new_name" in str(state.problems[0])


def test_cli_renames_a_view(bench: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gt = str(bench / "ground_truth.json")
    review.save_view(review.sidecar_for(gt), "tiny misses", {"data": "d"})
    assert review.main(["rename-view", "--gt", gt, "tiny misses", "tiny (HBB)"]) == 0
    capsys.readouterr()
    assert review.main(["views", "--gt", gt]) == 0
    assert capsys.readouterr().out == "tiny (HBB)\tdata=d\n"


def test_export_carries_the_images(bench: Path, tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 34, item 10: the exported benchmark opens as one: every image its annotations
    name is beside its ground truth, byte for byte (the images folder defaults to the
    ground truth's, as in the app); an image missing at the source is named."""
    shutil.copytree(DEMO / "images", bench / "images")
    gt = bench / "ground_truth.json"
    review.tag(review.sidecar_for(gt), review.Target(OV, "ov_000001"), "gt_error")
    names = sorted({a["image_path"] for a in json.loads(gt.read_text())["annotations"]})
    (bench / names[-1]).unlink()  # one image missing at the source
    out = tmp_path / "export"
    assert review.main(["export", "--gt", str(gt), "--without", "gt_error",
                        "--out", str(out)]) == 0
    for name in names[:-1]:
        assert (out / name).read_bytes() == (DEMO / name).read_bytes(), name
    assert not (out / names[-1]).exists()
    err = capsys.readouterr().err
    assert f"{len(names) - 1} images" in err and names[-1] in err
    # --no-images: the JSON files only, as before
    out2 = tmp_path / "export2"
    assert review.main(["export", "--gt", str(gt), "--without", "gt_error", "--no-images",
                        "--out", str(out2)]) == 0
    assert [p.name for p in out2.iterdir()] == ["ground_truth.json"]


def test_a_sidecar_folder_linking_out_of_the_benchmark_is_not_read(tmp_path: Path) -> None:
    """Issue 48: ``DIR/.ovearth`` a link to a folder elsewhere: its review file (tags, notes
    from another benchmark, any file named so) was read and shown; now it is refused by the
    gate, named, unread (the writes already refused it)."""
    elsewhere = tmp_path / "elsewhere" / review.SIDECAR_DIR
    elsewhere.parent.mkdir()
    review.tag(elsewhere / review.SIDECAR_NAME, review.Target("referring", "ref_9"), "secret")
    bench = tmp_path / "bench"
    bench.mkdir()
    (bench / "ground_truth.json").write_text("{}")
    (bench / review.SIDECAR_DIR).symlink_to(elsewhere)
    path = review.sidecar_for(bench / "ground_truth.json")
    state = review.load_state(path)
    assert state.query_tags("referring") == {}
    [problem] = state.problems
    assert problem.file == str(path) and "(links may not leave it)" in problem.expected
    assert f"resolves to {elsewhere / review.SIDECAR_NAME}" in problem.found
    inside = tmp_path / "inside" / review.SIDECAR_DIR  # a sidecar of its own still reads
    inside.parent.mkdir()
    review.tag(inside / review.SIDECAR_NAME, review.Target("referring", "ref_9"), "mine")
    assert review.load_state(inside / review.SIDECAR_NAME).query_tags("referring")
