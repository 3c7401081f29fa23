"""Leaderboard: Spearman by formula and scipy, subset metrics by matrix product equal the
evaluator on the subset, stability end cases, folder evaluation, and a folder's files
checked like typed paths (links out, pipes and devices of our own are refused unread)."""

from __future__ import annotations

import json
import os
import resource
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from analysis_fixtures import make_ground_truth, make_predictions
from app_fixtures import Dataset, write_dataset
from cli_inprocess import run_module
from scipy.stats import spearmanr

from ovearth_core.analysis.leaderboard import (
    evaluate_folder,
    evaluate_submissions,
    folder_files,
    folder_leaderboard,
)
from ovearth_core.analysis.standings import (
    METRICS,
    available_metrics,
    category_stats,
    leaderboard_report,
    mcc_vs_miou,
    metric_values,
    random_subsets,
    spearman,
    spearman_rows,
    subset_stability,
)
from ovearth_core.cache import ResultCache
from ovearth_core.errors import OVEarthInputError
from ovearth_core.evaluate import evaluate_samples
from ovearth_core.io import load_samples
from ovearth_core.types import SampleList
from ovearth_core.workers import worker_count

MODS = "segmentation,bbox,oriented_bbox"


def test_spearman_hand_worked() -> None:
    # Ranks 5 4 3 2 1 against 4 5 3 1 2: d = 1 -1 0 1 -1, sum d^2 = 4,
    # rho = 1 - 6 * 4 / (5 * (25 - 1)) = 0.8.
    a = [0.9, 0.7, 0.5, 0.3, 0.1]
    b = [0.8, 0.9, 0.4, 0.1, 0.3]
    assert spearman(a, b) == pytest.approx(0.8)
    assert spearman(a, a) == pytest.approx(1.0)
    assert spearman(a, a[::-1]) == pytest.approx(-1.0)


@pytest.mark.parametrize("seed", range(10))
def test_spearman_rows_equal_scipy_with_ties(seed: int) -> None:
    rng = np.random.default_rng(seed)
    ref = rng.integers(0, 5, 8).astype(float)
    rows = rng.integers(0, 4, (20, 8)).astype(float)
    got = spearman_rows(ref, rows)
    for g, row in zip(got, rows, strict=True):
        expected = spearmanr(ref, row).statistic
        if np.isnan(expected):
            assert np.isnan(g)
        else:
            assert g == pytest.approx(expected)


def test_undefined_values_rank_last() -> None:
    assert spearman([np.nan, 0.2, 0.9], [0.0, 0.1, 0.5]) == pytest.approx(1.0)


def test_random_subsets_have_the_right_size_and_vary() -> None:
    s = random_subsets(30, 7, 500, np.random.default_rng(0))
    assert s.shape == (500, 30) and np.all(s.sum(axis=1) == 7)
    assert np.all(s.sum(axis=0) > 0)
    assert len({row.tobytes() for row in s}) > 450


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("board")
    gt = make_ground_truth(seed=7, n_annotations=40, n_categories=12)
    (root / "ground_truth.json").write_text(json.dumps(gt))
    (root / "predictions").mkdir()
    for i, skill in enumerate((0.3, 0.5, 0.7, 0.9)):
        preds = make_predictions(gt, seed=20 + i, skill=skill)
        if i == 0:
            preds["tasks"]["referring"] = []
        (root / "predictions" / f"model_{i}.json").write_text(json.dumps(preds))
    return root


@pytest.fixture(scope="module")
def board(folder: Path) -> tuple[list[str], list[dict[str, Any]]]:
    return evaluate_folder(folder, "vocabulary", modalities=MODS)


def test_models_without_rows_for_a_task_are_left_out(folder: Path) -> None:
    names, _ = evaluate_folder(folder, "referring", modalities=MODS)
    assert names == ["model_1", "model_2", "model_3"]


def test_full_set_metrics_equal_the_evaluator(board: tuple[list[str], list[dict[str, Any]]],
                                              ) -> None:
    names, results = board
    assert names == [f"model_{i}" for i in range(4)]
    metrics = available_metrics(results[0])
    assert set(metrics) == set(METRICS)
    for metric in metrics:
        _, stats = category_stats(results, metric)
        a, b = METRICS[metric].summary_path
        expected = [r["summary"][a][b] for r in results]
        assert metric_values(stats, metric).tolist() == pytest.approx(expected), metric


@pytest.mark.parametrize("metric", list(METRICS))
def test_subset_metric_equals_evaluating_the_subset(
        folder: Path, board: tuple[list[str], list[dict[str, Any]]], metric: str) -> None:
    names, results = board
    categories, stats = category_stats(results, metric)
    chosen = [c for i, c in enumerate(categories) if i % 3 != 1]
    indicator = np.array([[c in chosen for c in categories]], dtype=float)
    sub = METRICS[metric].value(np.einsum("mck,sc->smk", stats, indicator))[0]
    a, b = METRICS[metric].summary_path
    for m, name in enumerate(names):
        samples = load_samples(folder / "ground_truth.json",
                               folder / "predictions" / f"{name}.json", "vocabulary",
                               modalities=MODS)
        kept = SampleList([s for s in samples if s.category in chosen], task=samples.task,
                          modalities=samples.modalities, score_threshold=None,
                          bbox_format="xyxy")
        assert sub[m] == pytest.approx(evaluate_samples(kept, 0.5)["summary"][a][b])


def test_stability_end_cases_and_determinism(board: tuple[list[str], list[dict[str, Any]]],
                                             ) -> None:
    _, results = board
    _, stats = category_stats(results, "seg_macro_miou")
    out = subset_stability(stats, "seg_macro_miou", sizes=(1, 3, 12, 13), n_subsets=300,
                           seed=3, k=2)
    assert [r["size"] for r in out["sizes"]] == [1, 3, 12]  # 13 > 12 categories
    whole = out["sizes"][-1]
    assert whole["median_spearman"] == 1.0 and whole["mean_top_k_recovery"] == 1.0
    again = subset_stability(stats, "seg_macro_miou", sizes=(1, 3, 12, 13), n_subsets=300,
                             seed=3, k=2)
    assert again == out
    small = out["sizes"][0]
    assert -1.0 <= small["median_spearman"] <= 1.0
    assert small["num_defined"] <= 300


def test_top_k_recovery_on_a_hand_built_case() -> None:
    # Three models, two categories; model 0 is best on category 0 only, model 2 on category 1.
    # Full macro scores: 0.55, 0.5, 0.6 -> top-1 is model 2. A one-category subset recovers
    # it only when category 1 is drawn.
    iou = np.array([[0.9, 0.2], [0.5, 0.5], [0.3, 0.9]])
    stats = np.stack([iou, np.ones_like(iou)], axis=-1)
    out = subset_stability(stats, "seg_macro_miou", sizes=(1,), n_subsets=400, seed=0, k=1)
    recovery = out["sizes"][0]["mean_top_k_recovery"]
    assert 0.4 < recovery < 0.6


def test_mcc_vs_miou_equals_scipy(board: tuple[list[str], list[dict[str, Any]]]) -> None:
    _, results = board
    mcc = [r["summary"]["presence"]["mcc"] for r in results]
    miou = [r["summary"]["seg"]["positive_macro_miou"] for r in results]
    out = mcc_vs_miou(results)
    assert out["num_models"] == 4
    assert out["spearman"] == pytest.approx(spearmanr(mcc, miou).statistic)


def test_leaderboard_report_shape(board: tuple[list[str], list[dict[str, Any]]]) -> None:
    names, results = board
    out = leaderboard_report(names, results, ["seg_macro_miou"], sizes=(5, 20), n_subsets=200)
    json.dumps(out)
    assert out["ranking"]["seg_macro_miou"][0] == "model_3"
    assert [r["size"] for r in out["stability"]["seg_macro_miou"]["sizes"]] == [5]
    assert out["mcc_vs_miou"]["num_models"] == 4


def test_folder_leaderboard_covers_each_task(folder: Path) -> None:
    out = folder_leaderboard(folder, ("vocabulary", "referring", "reasoning"), MODS,
                             sizes=(5,), n_subsets=200, stability_metrics=["bbox_micro_f1"])
    # Keyed as the JSON names each task (issue 46: c100000 keyed "vocabulary").
    assert list(out) == ["open_vocabulary", "referring", "reasoning"]
    assert out["open_vocabulary"]["models"] == [f"model_{i}" for i in range(4)]
    assert out["referring"]["models"] == ["model_1", "model_2", "model_3"]
    assert out["referring"]["mcc_vs_miou"] is None
    assert out["reasoning"]["models"] == []  # no reasoning queries in this ground truth
    assert out["open_vocabulary"]["stability"]["bbox_micro_f1"]["num_subsets"] == 200


# --- the folder's files are checked like typed paths (issue 18) ----------------------------


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (3 * 1024 ** 3, 3 * 1024 ** 3))


@pytest.fixture()
def hostile(tmp_path: Path) -> Dataset:
    """A benchmark folder whose predictions/ also holds a link to /etc/passwd, a link to a
    valid submission outside the folder, a named pipe and (as root) a zero device."""
    ds = write_dataset(tmp_path / "bench")
    elsewhere = write_dataset(tmp_path / "elsewhere")
    preds = ds.root / "predictions"
    (preds / "passwd.json").symlink_to("/etc/passwd")
    (preds / "outside.json").symlink_to(elsewhere.model_b)
    (preds / "inside.json").symlink_to(ds.model_a)  # stays in the folder: fine
    os.mkfifo(preds / "pipe.json")
    if os.geteuid() == 0:
        os.mknod(preds / "zero.json", stat.S_IFCHR | 0o444, os.makedev(1, 5))
    return ds


def test_folder_files_refuse_links_out_pipes_and_devices(hostile: Dataset) -> None:
    preds = hostile.root / "predictions"
    with pytest.raises(OVEarthInputError) as info:
        evaluate_folder(hostile.root, "vocabulary", modalities="bbox")
    found = {Path(p.file).name: (p.field, p.expected, p.found) for p in info.value.problems}
    inside = f"a file inside {hostile.root} (links may not leave it)"
    expected = {
        "passwd.json": ("(file)", inside,
                        f"a path that resolves to {Path('/etc/passwd').resolve()}"),
        "outside.json": ("(file)", inside,
                         f"a path that resolves to {preds.parents[1] / 'elsewhere' / 'predictions' / 'model_b.json'}"),  # noqa: E501
        "pipe.json": ("(file)", "a regular file", "a named pipe (FIFO)"),
    }
    if os.geteuid() == 0:
        expected["zero.json"] = ("(file)", "a regular file", "a character device")
    assert found == expected


def test_folder_files_with_other_roots(hostile: Dataset, tmp_path: Path) -> None:
    preds = hostile.root / "predictions"
    for name in ("passwd.json", "pipe.json", "zero.json"):
        (preds / name).unlink(missing_ok=True)
    gt, files = folder_files(hostile.root, roots=[tmp_path])  # the outside link is in a root
    assert gt == hostile.root / "ground_truth.json"
    assert [p.name for p in files] == ["inside.json", "model_a.json", "model_b.json",
                                       "outside.json"]
    names, _ = evaluate_folder(hostile.root, "vocabulary", modalities="bbox", roots=[tmp_path])
    assert names == ["inside", "model_a", "model_b", "outside"]


def test_the_leaderboard_command_refuses_them_with_a_message(hostile: Dataset) -> None:
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "ovearth_core.leaderboard", str(hostile.root),
                           "--task", "vocabulary"], capture_output=True, text=True, timeout=120,
                          check=False, preexec_fn=_limit_memory)
    assert proc.returncode == 2 and proc.stdout == ""
    assert "Traceback" not in proc.stderr and "MemoryError" not in proc.stderr
    for name in ("passwd.json", "outside.json", "pipe.json"):
        assert f"predictions/{name}, field (file)" in proc.stderr
    assert "resolves to /etc/passwd" in proc.stderr or "resolves to /usr/" in proc.stderr
    assert "root:" not in proc.stderr  # nothing of the file was read
    assert time.perf_counter() - started < 60


# --- parallel evaluation and the result cache (issue 17) ----------------------------------


def test_parallel_and_cached_equal_the_sequential_leaderboard(folder: Path,
                                                              tmp_path: Path) -> None:
    tasks = ("vocabulary", "referring", "reasoning")
    kw: dict[str, Any] = dict(sizes=(2, 5), n_subsets=200)
    sequential = folder_leaderboard(folder, tasks, MODS, workers=1, **kw)
    store = ResultCache(tmp_path / "c")
    parallel = folder_leaderboard(folder, tasks, MODS, workers=2, cache=store, **kw)
    warm = folder_leaderboard(folder, tasks, MODS, workers=2, cache=store, **kw)
    assert parallel == sequential and warm == sequential
    assert json.dumps(parallel, sort_keys=True) == json.dumps(sequential, sort_keys=True)
    # Every evaluator value too, not only the ranking built from them.
    for task in tasks:
        seq = evaluate_folder(folder, task, modalities=MODS)
        par = evaluate_folder(folder, task, modalities=MODS, workers=2)
        hit = evaluate_folder(folder, task, modalities=MODS, workers=2, cache=store)
        assert par == seq and hit == seq
    assert store.hits >= 8  # the warm board and the last loop read the cache


def test_progress_is_reported_once_per_submission(folder: Path, tmp_path: Path) -> None:
    store = ResultCache(tmp_path / "c")
    gt, preds = folder_files(folder)
    for expect_cached in (False, True):
        calls: list[tuple[int, int, str, bool]] = []
        outcomes = evaluate_submissions(gt, preds, "vocabulary", MODS, cache=store, workers=2,
                                        progress=lambda d, t, o, c=calls: c.append(
                                            (d, t, o.name, o.cached)))
        assert [c[0] for c in calls] == [1, 2, 3, 4] and {c[1] for c in calls} == {4}
        assert sorted(c[2] for c in calls) == [p.stem for p in preds]
        assert all(c[3] is expect_cached for c in calls)
        assert [o.name for o in outcomes] == [p.stem for p in preds]


def test_an_invalid_submission_is_reported_not_raised_in_parallel(folder: Path,
                                                                  tmp_path: Path) -> None:
    bad = tmp_path / "broken.json"
    bad.write_text('{"tasks": {"open_vocabulary": [{"query_id": 5}]}}')
    gt, preds = folder_files(folder)
    outcomes = evaluate_submissions(gt, [*preds, bad], "vocabulary", MODS, workers=2,
                                    cache=ResultCache(tmp_path / "c"))
    assert [o.problems == [] for o in outcomes] == [True] * 4 + [False]
    assert outcomes[-1].result is None and "broken.json" in outcomes[-1].problems[0].file
    assert ResultCache(tmp_path / "c").size() > 0 and len(
        ResultCache(tmp_path / "c").entries()) == 4


def test_worker_count_is_the_usable_cores() -> None:
    expected = (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                else os.cpu_count())
    assert worker_count() == expected


def test_the_command_reports_progress_and_cached_results(folder: Path, tmp_path: Path) -> None:
    cache_dir = tmp_path / "cli_cache"
    cmd = [str(folder), "--task", "vocabulary", "--modalities", MODS, "--subsets", "200",
           "--cache-dir", str(cache_dir), "--workers", "2"]
    cold = run_module("ovearth_core.leaderboard", *cmd)
    warm = run_module("ovearth_core.leaderboard", *cmd)
    off = run_module("ovearth_core.leaderboard", *cmd, "--no-cache")
    assert cold.returncode == warm.returncode == off.returncode == 0, cold.stderr
    assert json.loads(cold.stdout) == json.loads(warm.stdout) == json.loads(off.stdout)
    lines = [ln for ln in cold.stderr.splitlines() if "] model_" in ln]
    assert len(lines) == 4 and not any("cached" in ln for ln in lines)  # one line each
    assert f"result cache {cache_dir}" in cold.stderr
    warm_lines = [ln for ln in warm.stderr.splitlines() if "] model_" in ln]
    assert len(warm_lines) == 4 and all(ln.endswith("(cached)") for ln in warm_lines)
    assert "result cache off" in off.stderr
    # 4 results, 4 board entries, the query counts and the ranks' statistics (issue 49)
    assert len(ResultCache(cache_dir).entries()) == 10


_PARENT: list[int] = []


def _dying_job(job: Any) -> Any:
    """The worker's job, except that a worker given model_2 dies (as if killed for memory)."""
    from ovearth_core.analysis import leaderboard as lb

    if os.getpid() not in _PARENT and job.pred_path.endswith("model_2.json"):
        os._exit(1)
    return lb._run_job(job, encoded=True)


def test_a_worker_that_dies_leaves_its_jobs_to_the_caller(folder: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    import multiprocessing

    from ovearth_core.analysis import leaderboard as lb

    _PARENT[:] = [os.getpid()]
    # Forked workers see the patch (masks only: no GEOS thread pool is involved).
    monkeypatch.setattr(lb, "_evaluate_job", _dying_job)
    monkeypatch.setattr(lb, "_pool_context", lambda: multiprocessing.get_context("fork"))
    gt, preds = folder_files(folder)
    outcomes = evaluate_submissions(gt, preds, "vocabulary", "segmentation", workers=2)
    expected = evaluate_folder(folder, "vocabulary", modalities="segmentation")
    assert [o.name for o in outcomes] == expected[0]
    assert [o.result for o in outcomes] == expected[1]


def test_small_batches_stay_in_this_process_unless_asked(folder: Path,
                                                         monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    from ovearth_core.analysis import leaderboard as lb

    gt, preds = folder_files(folder)
    auto = evaluate_submissions(gt, preds, "vocabulary", MODS)  # a few kB: here
    forced = evaluate_submissions(gt, preds, "vocabulary", MODS, workers=2)
    monkeypatch.setattr(lb, "PARALLEL_MIN_BYTES", 1)
    large = evaluate_submissions(gt, preds, "vocabulary", MODS)  # "large": workers
    assert [o.in_worker for o in auto] == [False] * 4
    assert [o.in_worker for o in forced] == [True] * 4 == [o.in_worker for o in large]
    assert [o.result for o in auto] == [o.result for o in forced] == [o.result for o in large]


def test_workers_get_the_largest_files_first(folder: Path, monkeypatch) -> None:
    """Issue 17: jobs go to the pool largest file first (a large file started last keeps
    one worker busy while the others idle); the outcomes keep the submissions' order."""
    from concurrent.futures import Future

    from ovearth_core.analysis import leaderboard

    submitted: list[str] = []

    class InlinePool:  # records the submission order, runs each job here
        def __init__(self, **_kwargs: object) -> None:
            pass

        def __enter__(self) -> InlinePool:
            return self

        def __exit__(self, *_exc: object) -> None:
            return None

        def submit(self, fn: Any, job: Any) -> Future:
            submitted.append(Path(job.pred_path).name)
            future: Future = Future()
            future.set_result(fn(job))
            return future

    monkeypatch.setattr(leaderboard, "ProcessPoolExecutor", InlinePool)
    gt, preds = folder_files(folder)
    outcomes = evaluate_submissions(gt, preds, "vocabulary", MODS, workers=2)
    by_size = sorted(preds, key=lambda p: (-p.stat().st_size, preds.index(p)))
    assert len({p.stat().st_size for p in preds}) > 1  # the order is not the given one
    assert submitted == [p.name for p in by_size] != [p.name for p in preds]
    assert [o.name for o in outcomes] == [p.stem for p in preds]
    assert all(o.result is not None and o.in_worker for o in outcomes)


def test_the_workers_preload_imports_no_scipy() -> None:
    """Issue 17: what a forkserver preloads for its workers (and the evaluator they run)
    imports no scipy (scipy.stats alone took ~1 s; the ranks and p-values import it when
    they are computed)."""
    from ovearth_core.analysis import leaderboard

    code = ("import importlib, sys\n"
            f"for name in {leaderboard._PRELOAD!r}: importlib.import_module(name)\n"
            "import ovearth_core.analysis.compare\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'scipy'))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


_LAUNCHER = '''
import os, sys, threading
# Stands for Streamlit's launcher, the app server's main script: a worker that runs this
# file again (as __mp_main__) leaves its process id in the log.
if __name__ == "__mp_main__":
    with open(os.environ["MAIN_RUNS"], "a") as log:
        log.write(f"{os.getpid()}\\n")
if __name__ == "__main__":
    from pathlib import Path
    from ovearth_core.analysis.leaderboard import evaluate_submissions
    from ovearth_core.evaluate import evaluate_samples
    from ovearth_core.io import load_samples
    stop = threading.Event()
    threading.Thread(target=stop.wait, daemon=True).start()  # a server's threads
    demo = Path(sys.argv[1])
    preds = sorted((demo / "predictions").glob("*.json"))
    outcomes = evaluate_submissions(demo / "ground_truth.json", preds, "referring", "bbox",
                                    workers=2)
    same = [o.result == evaluate_samples(load_samples(demo / "ground_truth.json", p,
                                                      "referring", modalities="bbox"))
            for o, p in zip(outcomes, preds)]
    main = sys.modules["__main__"]
    print(all(o.in_worker for o in outcomes), all(same), main.__spec__ is None)
    stop.set()
'''


def test_app_workers_do_not_run_the_servers_main_script_again(tmp_path: Path) -> None:
    """Issue 17 (cold leaderboard in the app): workers of a process with threads come from a
    forkserver, and multiprocessing re-runs the parent's main file in each one, unless it
    was imported by name. In the app that file is Streamlit's launcher (0.8-0.9 s of
    imports a worker, every run). Here a stand-in main script logs each such re-run: none
    may happen, the results equal the sequential ones, and the main module is left as it
    was."""
    script = tmp_path / "launcher.py"
    script.write_text(_LAUNCHER)
    log = tmp_path / "main_runs.txt"
    demo = Path(__file__).resolve().parents[2] / "assets" / "demo"
    proc = subprocess.run([sys.executable, str(script), str(demo)], capture_output=True,
                          text=True, timeout=300, check=False,
                          env={**os.environ, "MAIN_RUNS": str(log)})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True", "True", "True"]
    assert not log.exists(), log.read_text()


def test_leaderboard_cli_ranks_by_map_with_the_detection_cap(tmp_path: Path) -> None:
    """Issue 25: ``--average-precision --max-detections N`` adds AP and COCO's / DOTA's
    per-category mAP to the ranking, each model's AP report at that cap; a model without
    boxes is not submitted (ranked last, listed), not a zero."""
    from ovearth_core.analysis.ap import average_precision_report

    demo = Path(__file__).resolve().parents[2] / "assets" / "demo"
    out = tmp_path / "lb.json"
    proc = run_module("ovearth_core.leaderboard", str(demo), "--task", "vocabulary",
                      "--modalities", "bbox", "--subsets", "200", "--workers", "1",
                      "--no-cache", "--average-precision", "--max-detections", "110",
                      "--output", str(out))
    assert proc.returncode == 0, proc.stderr
    board = json.loads(out.read_text())["open_vocabulary"]
    names = board["models"]
    for i, name in enumerate(names):
        samples = load_samples(demo / "ground_truth.json", demo / "predictions" / f"{name}.json",
                               "vocabulary", modalities="bbox")
        rep = average_precision_report(samples, 0.5, samples.modalities, False, 110)
        if name in board["not_submitted"]["bbox_coco_map"]:
            assert board["metrics"]["bbox_coco_map"][i] is None
            continue
        assert board["metrics"]["bbox_coco_map"][i] == pytest.approx(
            rep["bbox"]["coco"]["map@[0.5:0.95]"], abs=1e-12)
        assert board["metrics"]["bbox_dota_map"][i] == pytest.approx(
            rep["bbox"]["voc_devkit"]["map_11_point"], abs=1e-12)
        assert board["metrics"]["bbox_ap"][i] == pytest.approx(rep["bbox"]["ap_every_point"],
                                                               abs=1e-12)
    values = dict(zip(names, board["metrics"]["bbox_coco_map"], strict=True))
    order = board["ranking"]["bbox_coco_map"]
    defined = [n for n in order if values[n] is not None]
    assert defined == sorted(defined, key=lambda n: -values[n])
    assert order[len(defined):] == board["not_submitted"]["bbox_coco_map"]
    assert "bbox_coco_map" not in board["stability"]
