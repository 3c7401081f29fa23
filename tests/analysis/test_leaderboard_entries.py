"""Leaderboard board entries (issue 28): what a leaderboard keeps of each result instead of
its per-query rows (summary, coverage, and the per-category sums of every ranked metric's
pieces), cached beside the result. The sums equal an independent per-row sum; the reports
from cold, warm, in-process and sequential runs are bit-identical, subsets included; a file
rewritten between the caller's hash and the worker's parse, a damaged or malformed entry and
edited analysis code never give stale numbers."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from analysis_fixtures import make_ground_truth, make_predictions

from ovearth_core import pipeline
from ovearth_core.analysis import leaderboard as lb
from ovearth_core.analysis import rank_stats, standings
from ovearth_core.analysis.additive import AdditiveMetric
from ovearth_core.cache import ResultCache, file_digest
from ovearth_core.options import TASK_KEYS, Options

MODS = "segmentation,bbox,oriented_bbox"
TASKS = ("vocabulary", "referring")
STABILITY: dict[str, Any] = dict(sizes=(2, 5, 10), n_subsets=50, seed=3)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Five submissions on 90 annotations of 25 categories (1-4 boxes each, duplicates,
    background boxes, empty rows): one without referring rows, one without masks."""
    root = tmp_path_factory.mktemp("entries")
    gt = make_ground_truth(seed=11, n_annotations=90, n_categories=25)
    (root / "ground_truth.json").write_text(json.dumps(gt))
    (root / "predictions").mkdir()
    for i, skill in enumerate((0.2, 0.45, 0.6, 0.75, 0.95)):
        preds = make_predictions(gt, seed=40 + i, skill=skill)
        if i == 0:
            preds["tasks"]["referring"] = []
        if i == 3:
            for rows in preds["tasks"].values():
                for row in rows:
                    del row["segmentation"]
        (root / "predictions" / f"model_{i}.json").write_text(json.dumps(preds))
    return root


def _pieces(metric: str, row: dict[str, Any]) -> tuple[float, ...] | None:
    """The reference rules, written out from the spec's per-query fields (not the registry):
    a query counts for a modality when its entry is there and evaluated."""
    if metric == "presence_mcc":
        gt, pred = row["gt_present"], row["pred_present"]
        return (float(gt and pred), float(pred and not gt), float(not gt and not pred),
                float(gt and not pred))
    key = "seg" if metric.startswith("seg") else (
        "oriented_bbox" if metric.startswith("oriented") else "bbox")
    e = row.get(key)
    if e is None or not e["evaluated"]:
        return None
    if metric == "seg_macro_miou":
        return (e["iou"], 1.0)
    if metric == "seg_micro_miou":
        return (e["intersection"], e["union"])
    if metric.endswith("_mean_micro_f1"):
        return (*e["tp_at"], e["num_pred"], e["num_gt"])
    return (e["tp"], e["fp"], e["fn"])


def _reference_sums(result: dict[str, Any], metric: str) -> dict[str, list[float]]:
    """Per category, the pieces summed in row order (Python floats)."""
    out: dict[str, list[float]] = {}
    for row in result["per_sample"]:
        p = _pieces(metric, row)
        acc = out.setdefault(row["category"], [])
        if p is None:
            continue
        if not acc:
            acc.extend([0.0] * len(p))
        for i, v in enumerate(p):
            acc[i] += float(v)
    return out


def _bits(value: Any) -> str:
    """A JSON text that tells every float bit apart (``-0.0`` from ``0.0``), arrays by
    dtype, shape and bytes."""
    def walk(v: Any) -> Any:
        if isinstance(v, float):
            return struct.pack("<d", v).hex()
        if isinstance(v, np.ndarray):
            return [v.dtype.str, list(v.shape), v.tobytes().hex()]
        if isinstance(v, standings.CategorySums | standings.QueryPieces):
            return {f.name: walk(getattr(v, f.name)) for f in dataclasses.fields(v)}
        if isinstance(v, dict):
            return {k: walk(x) for k, x in v.items()}
        if isinstance(v, list | tuple):
            return [walk(x) for x in v]
        return v
    return json.dumps(walk(value))


@pytest.mark.parametrize("task", TASKS)
def test_category_sums_equal_an_independent_per_row_sum(folder: Path, task: str) -> None:
    _, results = lb.evaluate_folder(folder, task, MODS)
    assert len(results) >= 4
    for result in results:
        sums = standings.category_sums(result)
        assert list(sums.categories) == sorted({r["category"] for r in result["per_sample"]})
        assert set(sums.sums) == set(standings.METRICS)
        for metric, spec in standings.METRICS.items():
            ref = _reference_sums(result, metric)
            array = sums.sums[metric]
            assert array.shape == (len(sums.categories), spec.size)
            for i, cat in enumerate(sums.categories):
                expected = ref[cat] or [0.0] * spec.size
                assert array[i].tolist() == expected, (metric, cat)


def _entry_path(store: ResultCache, folder: Path, task: str, model: str) -> Path:
    gt_sha = file_digest(folder / "ground_truth.json")
    pred_sha = file_digest(folder / "predictions" / f"{model}.json")
    return store.path(lb.board_key(gt_sha, pred_sha, Options(task, MODS).evaluator()))


def test_hot_cold_in_process_and_sequential_reports_are_identical(folder: Path,
                                                                  tmp_path: Path) -> None:
    sequential = lb.folder_leaderboard(folder, TASKS, MODS, workers=1, **STABILITY)
    assert all(sequential[TASK_KEYS[t]]["stability"] for t in TASKS)
    store = ResultCache(tmp_path / "c")
    cold = lb.folder_leaderboard(folder, TASKS, MODS, workers=2, cache=store, **STABILITY)
    warm_store = ResultCache(tmp_path / "c")
    warm = lb.folder_leaderboard(folder, TASKS, MODS, workers=2, cache=warm_store,
                                 **STABILITY)
    in_process = lb.folder_leaderboard(folder, TASKS, MODS, workers=1,
                                       cache=ResultCache(tmp_path / "c"), **STABILITY)
    cold_here = lb.folder_leaderboard(folder, TASKS, MODS, workers=1,
                                      cache=ResultCache(tmp_path / "c2"), **STABILITY)
    for report in (cold, warm, in_process, cold_here):
        assert report == sequential
        assert _bits(report) == _bits(sequential)
    # The warm run read one board entry per file and task (a file without rows for a
    # task too: it is left out of the ranking after it is read) and the ground truth's
    # query counts, and nothing else.
    files = len(list((folder / "predictions").glob("*.json")))
    assert (warm_store.hits, warm_store.misses) == (files * len(TASKS) + 1, 0)
    _, entries = lb.evaluate_folder(folder, "vocabulary", MODS, workers=2,
                                    cache=ResultCache(tmp_path / "c"), board=True)
    assert entries and all("per_sample" not in e and standings.SUMS in e for e in entries)


def test_entries_are_derived_from_results_cached_without_them(folder: Path,
                                                              tmp_path: Path) -> None:
    """A cache filled before board entries existed (or by the report, the app): each board
    entry is derived from the stored result once, stored, and equal."""
    sequential = lb.folder_leaderboard(folder, ("vocabulary",), MODS, workers=1, **STABILITY)
    store = ResultCache(tmp_path / "c")
    for _ in lb.evaluate_folder(folder, "vocabulary", MODS, workers=2, cache=store):
        pass
    models = sequential["open_vocabulary"]["models"]
    assert not any(_entry_path(store, folder, "vocabulary", m).exists() for m in models)
    again = ResultCache(tmp_path / "c")
    derived = lb.folder_leaderboard(folder, ("vocabulary",), MODS, workers=2, cache=again,
                                    **STABILITY)
    assert _bits(derived) == _bits(sequential)
    assert all(_entry_path(store, folder, "vocabulary", m).exists() for m in models)
    warm = ResultCache(tmp_path / "c")
    assert _bits(lb.folder_leaderboard(folder, ("vocabulary",), MODS, workers=2, cache=warm,
                                       **STABILITY)) == _bits(sequential)
    assert (warm.hits, warm.misses) == (len(models) + 1, 0)  # and the query counts


def _damage_flip(path: Path, store: ResultCache, key: str) -> None:
    blob = bytearray(path.read_bytes())
    blob[-3] ^= 0x40
    path.write_bytes(bytes(blob))


def _damage_shape(path: Path, store: ResultCache, key: str) -> None:
    """A well-formed entry under the right key whose sums lack a category row."""
    value, arrays = store.get_arrays(key)
    short = {k: a[:-1] for k, a in arrays.items()}
    assert store.put(key, value, short)


def _damage_missing(path: Path, store: ResultCache, key: str) -> None:
    value, arrays = store.get_arrays(key)
    assert store.put(key, value, dict(list(arrays.items())[1:]))


def _damage_keys(path: Path, store: ResultCache, key: str) -> None:
    value, arrays = store.get_arrays(key)
    del value["summary"]
    assert store.put(key, value, arrays)


@pytest.mark.parametrize("damage", [_damage_flip, _damage_shape, _damage_missing,
                                    _damage_keys])
def test_a_damaged_board_entry_is_recomputed_with_a_warning(
        folder: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture, damage: Any) -> None:
    sequential = lb.folder_leaderboard(folder, ("vocabulary",), MODS, workers=1, **STABILITY)
    store = ResultCache(tmp_path / "c")
    lb.folder_leaderboard(folder, ("vocabulary",), MODS, workers=2, cache=store, **STABILITY)
    path = _entry_path(store, folder, "vocabulary", "model_2")
    damage(path, store, path.stem)
    warm = ResultCache(tmp_path / "c")
    with caplog.at_level(logging.WARNING, logger="ovearth_core.cache"):
        report = lb.folder_leaderboard(folder, ("vocabulary",), MODS, workers=2, cache=warm,
                                       **STABILITY)
    assert _bits(report) == _bits(sequential)
    assert [p for p, _ in warm.rejected] == [path]
    assert any(str(path) in r.getMessage() for r in caplog.records)
    # Recomputed and stored again: the next run loads it without complaint.
    after = ResultCache(tmp_path / "c")
    assert _bits(lb.folder_leaderboard(folder, ("vocabulary",), MODS, workers=2, cache=after,
                                       **STABILITY)) == _bits(sequential)
    assert not after.rejected and after.misses == 0


class _RewriteAfterHash:
    """``file_digest`` that, after hashing ``target`` once, writes ``replacement`` into it
    (the file saved again between the caller's lookup and the worker's read)."""

    def __init__(self, target: Path, replacement: bytes) -> None:
        self.target, self.replacement, self.fired = target, replacement, False

    def __call__(self, path: Any) -> str:
        out = file_digest(path)
        if Path(path) == self.target and not self.fired:
            self.fired = True
            self.target.write_bytes(self.replacement)
        return out


@pytest.mark.parametrize("board", [False, True])
@pytest.mark.parametrize("workers", [1, 2])
def test_a_file_rewritten_between_hash_and_parse_is_never_stale(
        folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, board: bool,
        workers: int) -> None:
    gt = folder / "ground_truth.json"
    pred = tmp_path / "model.json"
    other = tmp_path / "other.json"
    a = (folder / "predictions" / "model_1.json").read_bytes()
    b = (folder / "predictions" / "model_4.json").read_bytes()
    pred.write_bytes(a)
    other.write_bytes(b"{}")  # a second job, so that two workers start
    [fresh_a] = [o.result for o in lb.evaluate_submissions(gt, [pred], "vocabulary", MODS,
                                                           workers=1, board=board)]
    pred.write_bytes(b)
    [fresh_b] = [o.result for o in lb.evaluate_submissions(gt, [pred], "vocabulary", MODS,
                                                           workers=1, board=board)]
    assert _bits(fresh_a) != _bits(fresh_b)
    pred.write_bytes(a)
    store = ResultCache(tmp_path / "c")
    spy = _RewriteAfterHash(pred, b)
    monkeypatch.setattr(lb, "file_digest", spy)
    first = lb.evaluate_submissions(gt, [pred, other], "vocabulary", MODS, cache=store,
                                    workers=workers, board=board)[0]
    monkeypatch.undo()
    assert spy.fired and not first.cached
    # The numbers are those of the bytes the worker parsed (b), under b's digest only.
    assert first.sha256 == hashlib.sha256(b).hexdigest()
    assert _bits(first.result) == _bits(fresh_b)
    gt_sha = file_digest(gt)
    options = Options("vocabulary", MODS).evaluator()
    sha_a = hashlib.sha256(a).hexdigest()
    assert not store.path(pipeline.entry_key(gt_sha, sha_a, options)).exists()
    assert not store.path(lb.board_key(gt_sha, sha_a, options)).exists()
    pred.write_bytes(a)
    for cached in (False, True):  # a is evaluated, then loaded: never b's numbers
        [again] = lb.evaluate_submissions(gt, [pred], "vocabulary", MODS, cache=store,
                                          workers=1, board=board)
        assert again.cached is cached and _bits(again.result) == _bits(fresh_a)


def test_the_entry_key_covers_the_analysis_code(monkeypatch: pytest.MonkeyPatch,
                                                tmp_path: Path) -> None:
    """Board entries are derived by analysis code the evaluator's code digest does not
    cover: editing the ranked metrics' pieces changes every entry's key."""
    options = Options("vocabulary", MODS).evaluator()
    base = lb.board_key("a" * 64, "b" * 64, options)
    assert base != pipeline.entry_key("a" * 64, "b" * 64, options)
    copy = tmp_path / "additive.py"
    copy.write_bytes(Path(lb.additive.__file__).read_bytes())
    monkeypatch.setattr(lb.additive, "__file__", str(copy))
    lb._board_code.cache_clear()
    try:
        assert lb.board_key("a" * 64, "b" * 64, options) == base  # the same code
        copy.write_bytes(copy.read_bytes() + b"\n")
        lb._board_code.cache_clear()
        assert lb.board_key("a" * 64, "b" * 64, options) != base
    finally:
        monkeypatch.undo()
        lb._board_code.cache_clear()
    assert lb.board_key("a" * 64, "b" * 64, options) == base


def test_category_stats_of_entries_equal_those_of_results(folder: Path) -> None:
    _, results = lb.evaluate_folder(folder, "vocabulary", MODS)
    entries = [lb.board_entry(r) for r in results]
    mixed = [e if i % 2 else r for i, (r, e) in enumerate(zip(results, entries, strict=True))]
    for metric in standings.METRICS:
        cats, ref = standings.category_stats(results, metric)
        for other in (entries, mixed):
            cats2, stats = standings.category_stats(other, metric)
            assert cats2 == cats and stats.tobytes() == ref.tobytes()
    # model_3 sent no masks: every query counts with IoU 0 (it is left out of the
    # ranking as not submitting the modality, not by its sums).
    assert np.all(standings.category_stats(results, "seg_macro_miou")[1][3][:, 0] == 0)
    assert not standings.submits(results[3], "seg_macro_miou")


def test_the_ground_truth_is_parsed_once_cold_and_never_warm(
        folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Cold: one parse for the query counts and every task's jobs; warm: none (the
    counts are stored data of the ground truth's digest)."""
    calls: list[str] = []
    real = lb.parse_ground_truth

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(str(args[1]))
        return real(*args, **kwargs)

    monkeypatch.setattr(lb, "parse_ground_truth", counting)
    store = ResultCache(tmp_path / "c")
    cold = lb.folder_leaderboard(folder, TASKS, MODS, workers=1, cache=store, **STABILITY)
    assert len(calls) == 1
    warm = lb.folder_leaderboard(folder, TASKS, MODS, workers=1,
                                 cache=ResultCache(tmp_path / "c"), **STABILITY)
    assert len(calls) == 1 and _bits(warm) == _bits(cold)
    monkeypatch.undo()
    assert _bits(cold) == _bits(lb.folder_leaderboard(folder, TASKS, MODS, workers=1,
                                                      **STABILITY))


@pytest.mark.parametrize("planted", [[1, 2, 3], {"vocabulary": -1, "referring": 0,
                                                  "reasoning": 0}])
def test_malformed_query_counts_are_recomputed_with_a_warning(
        folder: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture, planted: Any) -> None:
    from ovearth_core.cache import make_key

    sequential = lb.folder_leaderboard(folder, TASKS, MODS, workers=1, **STABILITY)
    store = ResultCache(tmp_path / "c")
    entry = make_key("query_counts", {"gt_sha256": file_digest(folder / "ground_truth.json")})
    assert store.put(entry, planted)
    with caplog.at_level(logging.WARNING, logger="ovearth_core.cache"):
        report = lb.folder_leaderboard(folder, TASKS, MODS, workers=1, cache=store,
                                       **STABILITY)
    assert _bits(report) == _bits(sequential)
    assert [p for p, _ in store.rejected] == [store.path(entry)]
    assert any("query counts" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("seed", range(6))
def test_average_ranks_equal_scipys_rankdata_exactly(seed: int) -> None:
    from scipy.stats import rankdata

    rng = np.random.default_rng(seed)
    for shape in [(1,), (2,), (9,), (49,), (30, 7), (200, 49)]:
        values = rng.integers(0, 4, shape).astype(float)  # many ties
        values[values == 3] = -np.inf  # undefined metrics, as ranked
        if seed % 2:
            values += rng.random(shape) * (seed > 2)  # ties only sometimes
        got = rank_stats.average_ranks(values)
        ref = rankdata(values, axis=-1)
        assert got.dtype == np.float64 and got.tobytes() == ref.tobytes(), shape


def test_a_warm_leaderboard_imports_no_scipy(folder: Path, tmp_path: Path) -> None:
    """scipy.stats took 0.5-1 s of every leaderboard command, for the ranks alone; a warm
    run (nothing to evaluate, so no assignment problem either) loads no scipy."""
    import subprocess
    import sys

    code = ("import sys\n"
            "from ovearth_core.analysis.leaderboard import folder_leaderboard\n"
            "from ovearth_core.cache import ResultCache\n"
            f"folder_leaderboard({str(folder)!r}, ('vocabulary', 'referring'), {MODS!r}, "
            f"workers=1, cache=ResultCache({str(tmp_path / 'c')!r}), n_subsets=50)\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'scipy'))\n")
    lb.folder_leaderboard(folder, TASKS, MODS, workers=1, cache=ResultCache(tmp_path / "c"),
                          n_subsets=50)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_each_submission_is_hashed_once_per_run(folder: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Every task's lookups use the one digest of the run's start (three tasks: one hash
    of each file, not three); the ground truth is read once."""
    tasks = ("vocabulary", "referring", "reasoning")
    store = ResultCache(tmp_path / "c")
    cold = lb.folder_leaderboard(folder, tasks, MODS, workers=1, cache=store, **STABILITY)
    hashed: list[str] = []

    def counting(path: Any) -> str:
        hashed.append(Path(path).name)
        return file_digest(path)

    monkeypatch.setattr(lb, "file_digest", counting)
    warm = lb.folder_leaderboard(folder, tasks, MODS, workers=1,
                                 cache=ResultCache(tmp_path / "c"), **STABILITY)
    assert _bits(warm) == _bits(cold)
    files = sorted(p.name for p in (folder / "predictions").glob("*.json"))
    assert sorted(hashed) == files


@pytest.mark.parametrize("workers", [1, 2])
def test_a_cold_run_hashes_each_file_in_the_job_that_parses_it(
        folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int) -> None:
    """Cold, the caller hashes the first file only (its lookup misses): every later one is
    looked up by its job, under the digest of the bytes it reads and parses, and the next
    task looks up the digests the first task's jobs found (fails before issue 38's round
    five: every file was hashed here first)."""
    sequential = lb.folder_leaderboard(folder, TASKS, MODS, workers=1, **STABILITY)
    hashed: list[str] = []

    def counting(path: Any) -> str:
        hashed.append(Path(path).name)
        return file_digest(path)

    monkeypatch.setattr(lb, "file_digest", counting)
    cold = lb.folder_leaderboard(folder, TASKS, MODS, workers=workers,
                                 cache=ResultCache(tmp_path / "c"), **STABILITY)
    assert _bits(cold) == _bits(sequential)
    assert hashed == ["model_0.json"]


def test_jobs_look_up_what_the_caller_did_not(folder: Path, tmp_path: Path) -> None:
    """A run whose first file is new: the later files are found in the cache by the workers
    (cached, numbers equal), and a damaged entry a worker found is reported by the
    caller's cache."""
    gt = folder / "ground_truth.json"
    preds = sorted((folder / "predictions").glob("*.json"))
    fresh = lb.evaluate_submissions(gt, preds, "vocabulary", MODS, workers=1, board=True)
    store = ResultCache(tmp_path / "c")
    lb.evaluate_submissions(gt, preds, "vocabulary", MODS, workers=2, board=True, cache=store)
    options = Options("vocabulary", MODS).evaluator()
    gt_sha = file_digest(gt)
    first_sha = file_digest(preds[0])
    for key in (pipeline.entry_key(gt_sha, first_sha, options),
                lb.board_key(gt_sha, first_sha, options)):
        store.path(key).unlink()
    damaged = _entry_path(store, folder, "vocabulary", "model_3")
    _damage_flip(damaged, store, damaged.stem)
    warm = ResultCache(tmp_path / "c")
    again = lb.evaluate_submissions(gt, preds, "vocabulary", MODS, workers=2, board=True,
                                    cache=warm)
    assert [o.cached for o in again] == [False, True, True, True, True]
    assert all(o.in_worker for o in again)
    assert [_bits(o.result) for o in again] == [_bits(o.result) for o in fresh]
    assert [o.sha256 for o in again] == [file_digest(p) for p in preds]
    assert [p for p, _ in warm.rejected] == [damaged]


def test_a_report_of_full_results_sums_each_row_once_per_metric(
        folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Full results (the sequential leaderboard, the app's sidebar result) are summed once
    for every metric, not once per metric for every metric."""
    names, results = lb.evaluate_folder(folder, "vocabulary", MODS)
    rows: dict[str, int] = {}
    matrix = AdditiveMetric.matrix

    def counted(self: AdditiveMetric, of: Any) -> Any:
        rows[self.name] = rows.get(self.name, 0) + len(of)
        return matrix(self, of)

    monkeypatch.setattr(AdditiveMetric, "matrix", counted)
    report = standings.leaderboard_report(names, results, **STABILITY)
    assert set(report["stability"]) == set(rows)
    total = sum(len(r["per_sample"]) for r in results)
    assert rows == dict.fromkeys(rows, total)
