"""Issue 49: the ranks with their uncertainty of an unchanged board come from the result
cache, to the bit, and a warm leaderboard imports none of the statistics' libraries
(statsmodels, scikit-posthocs, scipy.stats: 1.4 s of a 2.1 s warm command); a changed
input, option, seed or unit computes them again."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson
import pytest

from ovearth_core.analysis import leaderboard as lb
from ovearth_core.analysis import standings
from ovearth_core.cache import ResultCache
from ovearth_core.options import Options

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "assets" / "demo"
MODS = "segmentation,bbox,oriented_bbox"
HEAVY = ("statsmodels", "scikit_posthocs", "scipy.stats", "pandas", "msgspec")


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "board"
    root.mkdir()
    shutil.copy(DEMO / "ground_truth.json", root / "ground_truth.json")
    shutil.copytree(DEMO / "predictions", root / "predictions")
    return root


def _board(folder: Path, store: ResultCache | None, **ranks: Any) -> bytes:
    options = Options("vocabulary", MODS, **{"rank_resamples": 200, **ranks})
    report = lb.folder_leaderboard(folder, ("vocabulary",), MODS, cache=store, workers=1,
                                   n_subsets=20, ranks=options)
    assert "uncertainty" in report["open_vocabulary"]
    return orjson.dumps(report)


def _computing_forbidden(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count calls of the statistics (a rank report read from the cache makes none)."""
    calls: list[int] = []
    compute = standings.rank_uncertainties

    def counted(*args: Any) -> Any:
        calls.append(1)
        return compute(*args)

    monkeypatch.setattr(standings, "rank_uncertainties", counted)
    return calls


def test_a_cached_rank_report_is_byte_identical_to_a_recomputed_one(
        folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No cache, cold (computed, stored) and warm (read back): the same bytes; the warm
    run computes no statistics."""
    uncached = _board(folder, None)
    cold = _board(folder, ResultCache(tmp_path / "c"))
    calls = _computing_forbidden(monkeypatch)
    warm = _board(folder, ResultCache(tmp_path / "c"))
    assert calls == []
    assert cold == uncached and warm == uncached


@pytest.mark.parametrize("change", [{"alpha": 0.1}, {"rank_resamples": 300},
                                    {"min_count": 3}, {"friedman_blocks": "query"}])
def test_a_changed_rank_option_recomputes(folder: Path, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch,
                                          change: dict[str, Any]) -> None:
    _board(folder, ResultCache(tmp_path / "c"))
    expected = _board(folder, None, **change)
    calls = _computing_forbidden(monkeypatch)
    assert _board(folder, ResultCache(tmp_path / "c"), **change) == expected
    assert calls == [1]


def test_a_changed_seed_or_unit_recomputes(folder: Path, tmp_path: Path) -> None:
    options = Options("vocabulary", MODS, rank_resamples=200)
    store = ResultCache(tmp_path / "c")
    for seed, unit in ((0, "image"), (1, "image"), (0, "query")):
        got = [lb.folder_leaderboard(folder, ("vocabulary",), MODS, cache=s, workers=1,
                                     n_subsets=20, seed=seed, ranks=options, unit=unit)
               for s in (store, None)]
        assert orjson.dumps(got[0]) == orjson.dumps(got[1])
        ranks = got[0]["open_vocabulary"]["uncertainty"]["seg_macro_miou"]
        assert (ranks["seed"], ranks["unit"]) == (seed, unit)


def test_a_changed_submission_recomputes(folder: Path, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """One submission's rows changed (half of its vocabulary rows dropped): its board
    entry and the ranks are computed again, equal to an uncached run's."""
    before = _board(folder, ResultCache(tmp_path / "c"))
    path = folder / "predictions" / "weak_baseline.json"
    doc = json.loads(path.read_text())
    rows = doc["tasks"]["open_vocabulary"]
    doc["tasks"]["open_vocabulary"] = rows[: len(rows) // 2]
    path.write_text(json.dumps(doc))
    expected = _board(folder, None)
    assert expected != before
    calls = _computing_forbidden(monkeypatch)
    assert _board(folder, ResultCache(tmp_path / "c")) == expected
    assert calls == [1]


def test_the_key_follows_every_input_and_option(folder: Path) -> None:
    """Every field of Options, the seed, the unit, a model's name and one piece of one
    query change the key (a rank field the ``ranks`` branch adds is in it too)."""
    names, results = lb.evaluate_folder(folder, "vocabulary", MODS, board=True)
    pieces = [standings.query_pieces(r) for r in results]
    options = Options("vocabulary", MODS)
    base = lb.rank_key(names, results, pieces, options, 0, "image")
    assert base == lb.rank_key(list(names), results, pieces, Options("vocabulary", MODS), 0,
                               "image")
    changed = [
        lb.rank_key(names, results, pieces, Options("vocabulary", MODS, alpha=0.1), 0, "image"),
        lb.rank_key(names, results, pieces, Options("vocabulary", MODS, min_count=3), 0,
                    "image"),
        lb.rank_key(names, results, pieces, options, 1, "image"),
        lb.rank_key(names, results, pieces, options, 0, "query"),
        lb.rank_key(["x", *names[1:]], results, pieces, options, 0, "image"),
    ]
    # one piece of a model the metric ranks; the pieces of one it leaves out (a model
    # without the metric's modality) are no input of the ranks
    metric, kept = next(iter(standings.ranked_models(results).items()))
    left_out = [i for i in range(len(names)) if i not in kept]
    keys = []
    for i in (kept[0], *left_out[:1]):
        bumped = {**pieces[i].pieces, metric: pieces[i].pieces[metric].copy()}
        bumped[metric][0, 0] = bumped[metric][0, 0] + 1.0
        other = replace(pieces[i], pieces=bumped)
        keys.append(lb.rank_key(names, results, [*pieces[:i], other, *pieces[i + 1:]],
                                options, 0, "image"))
    changed.append(keys[0])
    assert len({base, *changed}) == len(changed) + 1
    assert left_out and keys[1] == base


def test_a_warm_leaderboard_imports_no_statistics_library(folder: Path,
                                                         tmp_path: Path) -> None:
    """The command, warm, in a new process: the ranks on (the default), nothing
    evaluated and nothing computed, so none of statsmodels, scikit-posthocs,
    scipy.stats (nor pandas, which scikit-posthocs loads) is imported; its report is
    the cold run's, byte for byte. Fails before issue 49: every warm run computed the
    ranks (and imported the three)."""
    cache, cold, warm = tmp_path / "c", tmp_path / "cold.json", tmp_path / "warm.json"
    flags = ["--task", "vocabulary", "--subsets", "20", "--rank-resamples", "200",
             "--cache-dir", str(cache)]
    done = subprocess.run([sys.executable, "-m", "ovearth_core.leaderboard", str(folder),
                           *flags, "--output", str(cold)], capture_output=True, text=True,
                          cwd=REPO, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    code = ("import sys\n"
            "from ovearth_core.analysis.leaderboard_cli import main\n"
            f"status = main({[str(folder), *flags, '--output', str(warm)]!r})\n"
            f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
            "sys.exit(status)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=REPO, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"
    assert warm.read_bytes() == cold.read_bytes()
