"""The on-disk result cache (ovearth_core.cache): keys change with every input byte, option,
environment part and evaluator source byte; a hit equals a fresh evaluation; the size cap
holds with least-recently-used eviction; corrupted, truncated and foreign entries are
ignored and recomputed; two processes writing at once leave only complete entries."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from analysis_fixtures import make_ground_truth, make_predictions

from ovearth_core import cache as cache_mod
from ovearth_core.cache import (
    MISS,
    ResultCache,
    file_digest,
    make_key,
    open_cache,
    parse_size,
)
from ovearth_core.evaluate import evaluate_samples
from ovearth_core.io import load_samples
from ovearth_core.options import Options
from ovearth_core.pipeline import entry_key, evaluate_cached, load

MODS = "segmentation,bbox,oriented_bbox"


def evaluate_file(gt: Path, pred: Path, task: str, modalities: object,
                  iou_threshold: float = 0.5, score_threshold: float | None = None, *,
                  cache: ResultCache | None) -> tuple[dict, bool]:
    """The one pipeline on two files: ``(results, from the cache)``."""
    run, cached = evaluate_cached(load(gt, pred, Options(task, modalities, iou_threshold,
                                                         score_threshold)), cache)
    return run.results, cached


def evaluation_key(gt_sha256: str, pred_sha256: str, task: str, modalities: object,
                   iou_threshold: float = 0.5, score_threshold: float | None = None,
                   bbox_format: str = "xyxy") -> str:
    return entry_key(gt_sha256, pred_sha256, Options(task, modalities, iou_threshold,
                                                     score_threshold, bbox_format))
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("cache_pair")
    gt = make_ground_truth(seed=3, n_annotations=20, n_categories=5)
    preds = make_predictions(gt, seed=4, skill=0.6)
    (root / "gt.json").write_text(json.dumps(gt))
    (root / "pred.json").write_text(json.dumps(preds))
    return root / "gt.json", root / "pred.json"


def _fresh(gt: Path, pred: Path, task: str = "vocabulary", **kw: Any) -> dict[str, Any]:
    samples = load_samples(gt, pred, task, kw.get("score_threshold"),
                           kw.get("bbox_format", "xyxy"), kw.get("modalities", MODS))
    return evaluate_samples(samples, kw.get("iou_threshold", 0.5))


def test_tests_never_write_in_the_home_folder() -> None:
    # conftest points OVEARTH_CACHE_DIR under pytest's temporary folder for every test.
    folder = cache_mod.default_dir().resolve()
    assert not folder.is_relative_to(Path.home() / ".cache")
    assert "result_cache" in str(folder)


def test_default_folder_follows_the_platform_conventions(monkeypatch: pytest.MonkeyPatch,
                                                         tmp_path: Path) -> None:
    """platformdirs' user cache folder (issue 39: no hand-written platform branches); on
    Linux, as the XDG spec says: $XDG_CACHE_HOME when absolute, else ~/.cache."""
    monkeypatch.delenv("OVEARTH_CACHE_DIR")
    if not sys.platform.startswith("linux"):
        pytest.skip("the XDG rules are Linux's; other platforms follow platformdirs")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_mod.default_dir() == tmp_path / "xdg" / "ovearth-inspector"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/is/ignored")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_mod.default_dir() == tmp_path / "home" / ".cache" / "ovearth-inspector"
    monkeypatch.setenv("OVEARTH_CACHE_DIR", str(tmp_path / "mine"))
    assert cache_mod.default_dir() == tmp_path / "mine"


@pytest.mark.parametrize("value", ["off", "OFF", "0", "no", "false"])
def test_the_switch_turns_it_off(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("OVEARTH_CACHE", value)
    assert open_cache() is None


def test_sizes() -> None:
    assert parse_size("1073741824") == 1 << 30
    assert parse_size("500M") == 500 * (1 << 20)
    assert parse_size("2g") == 2 * (1 << 30)
    assert parse_size("64KB") == 64 * 1024
    for bad in ("lots", "-5", "", "inf", "1e400", "nan", "2000T", "9" * 5000):
        # Issue 35 item 12: "inf" and "1e400" raised OverflowError.
        with pytest.raises(ValueError, match="size: expected a number"):
            parse_size(bad)


def test_a_bad_size_in_the_environment_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OVEARTH_CACHE_MAX_BYTES", "a lot")
    with pytest.raises(ValueError, match="OVEARTH_CACHE_MAX_BYTES"):
        ResultCache()


def test_key_changes_with_every_input_byte(pair: tuple[Path, Path], tmp_path: Path) -> None:
    gt, pred = pair
    base = evaluation_key(file_digest(gt), file_digest(pred), "vocabulary", MODS, 0.5)
    assert base == evaluation_key(file_digest(gt), file_digest(pred), "vocabulary", MODS, 0.5)
    for src in (gt, pred):
        data = bytearray(src.read_bytes())
        for at in (0, len(data) // 2, len(data) - 1):
            changed = bytearray(data)
            changed[at] ^= 0x01
            copy = tmp_path / src.name
            copy.write_bytes(bytes(changed))
            digests = {src: file_digest(src), copy: file_digest(copy)}
            g = digests[copy] if src == gt else file_digest(gt)
            p = digests[copy] if src == pred else file_digest(pred)
            assert evaluation_key(g, p, "vocabulary", MODS, 0.5) != base


def test_key_changes_with_every_option(pair: tuple[Path, Path]) -> None:
    g, p = file_digest(pair[0]), file_digest(pair[1])
    base = dict(task="vocabulary", modalities=MODS, iou_threshold=0.5, score_threshold=None,
                bbox_format="xyxy")
    variants = [dict(task="referring"), dict(modalities="segmentation"),
                dict(modalities="auto"), dict(iou_threshold=0.75),
                dict(score_threshold=0.0), dict(score_threshold=0.3),
                dict(bbox_format="xywh")]
    keys = {evaluation_key(g, p, **base)}
    for change in variants:
        keys.add(evaluation_key(g, p, **{**base, **change}))
    assert len(keys) == len(variants) + 1
    # Another kind of value (what was computed) never shares a key either.
    assert cache_mod.key("leaderboard_entry", g, p, Options("vocabulary", **{
        k: v for k, v in base.items() if k != "task"})) not in keys
    # GT and prediction digests are not interchangeable.
    assert evaluation_key(p, g, **base) not in keys


def test_key_changes_with_the_environment_and_the_code() -> None:
    env = cache_mod.environment()
    assert set(cache_mod.NUMERIC_LIBRARIES) <= set(env) and "ovearth_core" in env
    parts = {"x": 1}
    base = make_key("k", parts)
    assert make_key("k", parts, code=cache_mod.code_digest(), env=env) == base
    assert make_key("k", parts, code="0" * 64) != base
    for name in env:
        assert make_key("k", parts, env={**env, name: env[name] + ".1"}) != base


def test_code_digest_covers_every_evaluator_source_byte(monkeypatch: pytest.MonkeyPatch,
                                                        tmp_path: Path) -> None:
    sources = cache_mod.source_files()
    names = {p.name for p in sources}
    assert {"evaluate.py", "metrics.py", "geometry.py", "matching.py", "io.py",
            "masks.py", "cache.py"} <= names
    for path in sources:
        (tmp_path / path.name).write_bytes(path.read_bytes())
    monkeypatch.setattr(cache_mod, "__file__", str(tmp_path / "cache.py"))
    digest = cache_mod.code_digest.__wrapped__()
    assert digest == cache_mod.code_digest()  # the copy is the same code
    metrics_py = tmp_path / "metrics.py"
    metrics_py.write_bytes(metrics_py.read_bytes() + b"\n")
    assert cache_mod.code_digest.__wrapped__() != digest
    metrics_py.write_bytes((ROOT / "ovearth_core" / "metrics.py").read_bytes())
    (tmp_path / "new_module.py").write_text("")
    assert cache_mod.code_digest.__wrapped__() != digest


def test_a_hit_equals_a_fresh_evaluation(pair: tuple[Path, Path], tmp_path: Path) -> None:
    gt, pred = pair
    store = ResultCache(tmp_path / "c")
    first, cached_first = evaluate_file(gt, pred, "vocabulary", MODS, cache=store)
    second, cached_second = evaluate_file(gt, pred, "vocabulary", MODS, cache=store)
    assert (cached_first, cached_second) == (False, True)
    fresh = _fresh(gt, pred)
    assert first == fresh and second == fresh
    assert json.dumps(second, sort_keys=True) == json.dumps(fresh, sort_keys=True)
    # Other options are another entry, equal to their own fresh evaluation.
    other, cached = evaluate_file(gt, pred, "vocabulary", MODS, 0.7, 0.2, cache=store)
    assert not cached and other == _fresh(gt, pred, iou_threshold=0.7, score_threshold=0.2)
    assert len(store.entries()) == 2 and store.hits == 1


def test_an_edited_prediction_file_is_evaluated_again(pair: tuple[Path, Path],
                                                      tmp_path: Path) -> None:
    gt = pair[0]
    doc = json.loads(pair[1].read_text())
    pred = tmp_path / "pred.json"
    pred.write_text(json.dumps(doc))
    store = ResultCache(tmp_path / "c")
    before, _ = evaluate_file(gt, pred, "vocabulary", MODS, cache=store)
    doc["tasks"]["open_vocabulary"] = doc["tasks"]["open_vocabulary"][::2]
    pred.write_text(json.dumps(doc))
    after, cached = evaluate_file(gt, pred, "vocabulary", MODS, cache=store)
    assert not cached and after == _fresh(gt, pred) and after != before


def test_invalid_input_is_never_stored(pair: tuple[Path, Path], tmp_path: Path) -> None:
    from ovearth_core.errors import OVEarthInputError

    bad = tmp_path / "bad.json"
    bad.write_text('{"tasks": {"open_vocabulary": [{"query_id": 5}]}}')
    store = ResultCache(tmp_path / "c")
    for _ in range(2):
        with pytest.raises(OVEarthInputError):
            evaluate_file(pair[0], bad, "vocabulary", MODS, cache=store)
    assert store.entries() == []


def _blob_sizes(store: ResultCache, n: int, payload: int) -> list[str]:
    keys = []
    for i in range(n):
        key = make_key("test", {"i": i})
        assert store.put(key, "x" * payload)
        keys.append(key)
    return keys


def test_eviction_keeps_the_cap_and_removes_the_least_recently_used(tmp_path: Path) -> None:
    probe = ResultCache(tmp_path / "probe", max_bytes=1 << 30)
    probe.put(make_key("test", {"i": -1}), "x" * 1000)
    entry_size = probe.entries()[0][1]
    store = ResultCache(tmp_path / "c", max_bytes=entry_size * 5)
    keys = _blob_sizes(store, 5, 1000)
    assert len(store.entries()) == 5
    # Entry i was last used at time 1000 + i; then entry 0 is read (used now).
    for i, key in enumerate(keys):
        os.utime(store.path(key), (1000 + i, 1000 + i))
    assert store.get(keys[0]) == "x" * 1000
    new = make_key("test", {"i": 99})
    assert store.put(new, "x" * 1000)
    left = {p.name for _, _, p in store.entries()}
    assert store.path(keys[1]).name not in left  # the least recently used went
    assert {store.path(k).name for k in (keys[0], *keys[2:], new)} == left
    assert store.size() <= store.max_bytes
    # Over a much smaller cap, only what fits stays.
    store.evict(entry_size * 2)
    assert len(store.entries()) == 2 and store.size() <= entry_size * 2
    assert {p.name for _, _, p in store.entries()} == {store.path(k).name
                                                       for k in (keys[0], new)}


def test_a_value_larger_than_the_cap_is_not_stored(tmp_path: Path) -> None:
    store = ResultCache(tmp_path / "c", max_bytes=500)
    assert not store.put(make_key("test", {}), "x" * 1000)
    assert store.entries() == []


def _corruptions(blob: bytes) -> dict[str, bytes]:
    flipped = bytearray(blob)
    flipped[-10] ^= 0xFF
    header = bytearray(blob)
    header[0] ^= 0xFF
    return {"truncated": blob[: len(blob) - 7], "header only": blob[:40], "empty": b"",
            "flipped payload byte": bytes(flipped), "bad magic": bytes(header),
            "garbage": b"not a cache entry at all" * 10}


@pytest.mark.parametrize("kind", list(_corruptions(b"x" * 100)))
def test_a_corrupted_entry_is_ignored_and_recomputed(pair: tuple[Path, Path], tmp_path: Path,
                                                     kind: str) -> None:
    gt, pred = pair
    store = ResultCache(tmp_path / "c")
    good, _ = evaluate_file(gt, pred, "vocabulary", MODS, cache=store)
    [(_, _, path)] = store.entries()
    path.write_bytes(_corruptions(path.read_bytes())[kind])
    again, cached = evaluate_file(gt, pred, "vocabulary", MODS, cache=store)
    assert not cached and again == good == _fresh(gt, pred)
    # The recomputed value was stored again, whole.
    third, cached = evaluate_file(gt, pred, "vocabulary", MODS, cache=store)
    assert cached and third == good


def test_an_entry_under_another_key_is_ignored(tmp_path: Path) -> None:
    store = ResultCache(tmp_path / "c")
    a, b = make_key("test", {"a": 1}), make_key("test", {"b": 1})
    store.put(a, "value of a")
    store.path(b).write_bytes(store.path(a).read_bytes())  # a file renamed by hand
    assert store.get(b) is MISS and store.get(a) == "value of a"
    assert not store.path(b).exists()


def test_an_unreadable_folder_is_a_miss_not_an_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    store = ResultCache(blocker / "c")
    assert store.get(make_key("test", {})) is MISS
    assert store.put(make_key("test", {}), 1) is False


WRITER = textwrap.dedent("""
    import sys
    from ovearth_core.cache import ResultCache, make_key
    folder, cap, who = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    store = ResultCache(folder, max_bytes=cap)
    for i in range(150):
        # Half the keys are shared by both writers (same key, different writer's value).
        key = make_key("race", {"i": i if i % 2 else f"{who}-{i}"})
        store.put(key, {"i": i, "who": who, "pad": "p" * 3000})
        store.get(make_key("race", {"i": (i * 7) % 150}))
""")


def test_two_processes_writing_at_once(tmp_path: Path) -> None:
    folder = tmp_path / "shared"
    cap = 100 * 3200
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(folder), str(cap), who],
                              cwd=ROOT, stderr=subprocess.PIPE) for who in ("a", "b")]
    for p in procs:
        _, err = p.communicate(timeout=600)
        assert p.returncode == 0, err.decode()
    store = ResultCache(folder, max_bytes=cap)
    entries = store.entries()
    assert entries and store.size() <= cap
    assert not [n for n in os.listdir(folder) if n.endswith(cache_mod.TMP_SUFFIX)]
    for _, _, path in entries:
        key = path.name.removesuffix(cache_mod.SUFFIX)
        value = store.get(key)
        assert value is not MISS, path
        assert value["pad"] == "p" * 3000 and value["who"] in ("a", "b")


def test_a_comma_list_and_a_tuple_are_the_same_request(pair: tuple[Path, Path]) -> None:
    g, p = file_digest(pair[0]), file_digest(pair[1])
    assert (evaluation_key(g, p, "vocabulary", "segmentation, bbox", 0.5)
            == evaluation_key(g, p, "vocabulary", ("segmentation", "bbox"), 0.5))
    assert (evaluation_key(g, p, "vocabulary", "bbox,segmentation", 0.5)
            != evaluation_key(g, p, "vocabulary", "segmentation,bbox", 0.5))
    assert (evaluation_key(g, p, "vocabulary", "auto", 0.5)
            == evaluation_key(g, p, "vocabulary", " auto", 0.5))


# Issue 26: the cache stores data, never code; numbers are those of the bytes hashed.


class _Marker:
    """Unpickling it creates the folder ``path`` (the proof that loading ran code)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple[Any, ...]:
        return (os.mkdir, (str(self.path),))


def _planted(key: str, payload: bytes) -> dict[str, bytes]:
    """Files an attacker could plant under a valid key: the pickle alone, and the pickle
    behind a well-formed header of the cache's layout (magic, key, length, SHA-256)."""
    import hashlib

    header = (cache_mod.MAGIC + bytes.fromhex(key) + len(payload).to_bytes(8, "little")
              + hashlib.sha256(payload).digest())
    legacy = (b"OVEARTH-CACHE\x00" + bytes.fromhex(key) + len(payload).to_bytes(8, "little")
              + hashlib.sha256(payload).digest())  # the layout of entries before issue 26
    return {"raw pickle": payload, "pickle behind a valid header": header + payload,
            "an old-format entry": legacy + payload}


@pytest.mark.parametrize("layout", ["raw pickle", "pickle behind a valid header",
                                    "an old-format entry"])
def test_a_planted_pickle_never_runs(pair: tuple[Path, Path], tmp_path: Path,
                                     layout: str) -> None:
    import pickle

    gt, pred = pair
    marker = tmp_path / "code-ran"
    store = ResultCache(tmp_path / "c")
    key = evaluation_key(file_digest(gt), file_digest(pred), "vocabulary", MODS, 0.5)
    store.folder.mkdir(mode=0o700)
    payload = pickle.dumps(_Marker(marker), protocol=pickle.HIGHEST_PROTOCOL)
    store.path(key).write_bytes(_planted(key, payload)[layout])
    result, cached = evaluate_file(gt, pred, "vocabulary", MODS, cache=store)
    assert not marker.exists(), "loading a cache entry ran code"
    assert not cached and result == _fresh(gt, pred)
    assert store.rejected and store.rejected[0][0] == store.path(key)


class _RewriteOnDigest:
    """A ``hashlib`` stand-in: the moment a SHA-256 of ``original`` is taken, ``target`` is
    rewritten with ``replacement`` (a submission saved again between hashing and reading)."""

    def __init__(self, target: Path, original: bytes, replacement: bytes) -> None:
        import hashlib

        self.real = hashlib
        self.target, self.replacement = target, replacement
        self.trigger = hashlib.sha256(original).hexdigest()
        self.fired = False

    def sha256(self, data: bytes = b"") -> Any:
        outer, h = self, self.real.sha256(data)

        class Hash:
            def update(self, more: bytes) -> None:
                h.update(more)

            def digest(self) -> bytes:
                self.hexdigest()
                return h.digest()

            def hexdigest(self) -> str:
                out = h.hexdigest()
                if out == outer.trigger and not outer.fired:
                    outer.fired = True
                    outer.target.write_bytes(outer.replacement)
                return out

        return Hash()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


def _two_versions(pair: tuple[Path, Path], tmp_path: Path) -> tuple[Path, bytes, bytes]:
    doc = json.loads(pair[1].read_text())
    a = json.dumps(doc).encode()
    doc["tasks"]["open_vocabulary"] = doc["tasks"]["open_vocabulary"][::2]
    b = json.dumps(doc).encode()
    pred = tmp_path / "pred.json"
    pred.write_bytes(a)
    return pred, a, b


def test_the_result_stored_is_of_the_bytes_hashed(pair: tuple[Path, Path], tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    gt = pair[0]
    pred, a, b = _two_versions(pair, tmp_path)
    fresh_a = _fresh(gt, pred)
    store = ResultCache(tmp_path / "c")
    spy = _RewriteOnDigest(pred, a, b)
    monkeypatch.setattr(cache_mod, "hashlib", spy)
    first, cached = evaluate_file(gt, pred, "vocabulary", MODS, cache=store)
    assert spy.fired and not cached
    assert first == fresh_a  # the bytes hashed are the bytes evaluated
    monkeypatch.undo()
    assert first != _fresh(gt, pred)  # the file now holds the other version
    pred.write_bytes(a)
    again, cached = evaluate_file(gt, pred, "vocabulary", MODS, cache=store)
    assert cached and again == fresh_a  # never the other version's numbers


def test_the_leaderboard_never_stores_numbers_under_other_bytes(
        pair: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ovearth_core.analysis.leaderboard import evaluate_submissions

    gt = pair[0]
    pred, a, b = _two_versions(pair, tmp_path)
    fresh_a = _fresh(gt, pred)
    pred.write_bytes(b)
    fresh_b = _fresh(gt, pred)
    pred.write_bytes(a)
    store = ResultCache(tmp_path / "c")
    spy = _RewriteOnDigest(pred, a, b)
    monkeypatch.setattr(cache_mod, "hashlib", spy)
    [first] = evaluate_submissions(gt, [pred], "vocabulary", MODS, cache=store, workers=1)
    monkeypatch.undo()
    assert spy.fired and not first.cached
    assert first.result in (fresh_a, fresh_b)
    pred.write_bytes(a)
    for _ in range(2):  # evaluated (or loaded) as version a, then loaded as a
        [again] = evaluate_submissions(gt, [pred], "vocabulary", MODS, cache=store,
                                       workers=1)
        assert again.result == fresh_a
    assert again.cached


def _same(a: Any, b: Any, where: str = "") -> None:
    """Equal in every field, type and float bit (``-0.0`` is not ``0.0``), keys in order."""
    import struct

    import numpy as np

    assert type(a) is type(b), (where, type(a), type(b))
    if isinstance(a, dict):
        assert list(a) == list(b), where
        for k in a:
            _same(a[k], b[k], f"{where}/{k}")
    elif isinstance(a, list | tuple):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _same(x, y, f"{where}[{i}]")
    elif isinstance(a, float):
        assert struct.pack("<d", a) == struct.pack("<d", b), (where, a, b)
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes(), where
    else:
        assert a == b, (where, a, b)


def test_a_loaded_result_is_bit_identical_to_the_fresh_one(pair: tuple[Path, Path],
                                                           tmp_path: Path) -> None:
    gt, pred = pair
    for task in ("vocabulary", "referring"):
        fresh = _fresh(gt, pred, task)
        store = ResultCache(tmp_path / task)
        _, cached = evaluate_file(gt, pred, task, MODS, cache=store)
        loaded, cached_again = evaluate_file(gt, pred, task, MODS, cache=store)
        assert (cached, cached_again) == (False, True)
        _same(loaded, fresh)


@pytest.mark.parametrize("damage", ["flipped payload byte", "truncated", "garbage"])
def test_a_damaged_entry_is_reported(pair: tuple[Path, Path], tmp_path: Path,
                                     damage: str) -> None:
    gt, pred = pair
    store = ResultCache(tmp_path / "c")
    evaluate_file(gt, pred, "vocabulary", MODS, cache=store)
    [(_, _, path)] = store.entries()
    path.write_bytes(_corruptions(path.read_bytes())[damage])
    again, cached = evaluate_file(gt, pred, "vocabulary", MODS, cache=store)
    assert not cached and again == _fresh(gt, pred)
    [(where, why)] = store.rejected
    assert where == path and why
    assert "1 damaged entry ignored" in cache_mod.hits_line(store, [False])


def test_a_folder_others_can_write_is_refused(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "shared"
    mine = ResultCache(folder)
    key = make_key("test", {"i": 1})
    assert mine.put(key, "value")
    for mode in (0o777, 0o770, 0o702):
        folder.chmod(mode)
        store = ResultCache(folder)
        assert store.get(key) is MISS and store.put(make_key("test", {}), "v") is False
        assert "writable by" in (store.refused or "")
        assert open_cache(folder) is None
        err = capsys.readouterr().err
        assert str(folder) in err and "writable by" in err and "off" in err
    folder.chmod(0o700)
    assert ResultCache(folder).get(key) == "value"


def test_a_linked_or_foreign_folder_is_refused(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    real = tmp_path / "real"
    ResultCache(real).put(make_key("test", {}), "v")
    link = tmp_path / "link"
    link.symlink_to(real)
    store = ResultCache(link)
    assert store.get(make_key("test", {})) is MISS and "link" in (store.refused or "")
    assert open_cache(link) is None
    monkeypatch.setattr(os, "getuid", lambda: os.stat(real).st_uid + 1)
    store = ResultCache(real)
    assert store.get(make_key("test", {})) is MISS and "owned by" in (store.refused or "")


ROWS = [{"id": f"q{i}", "score": i / 7, "seg": {"iou": 0.1 * i, "n": i}, "tp_at": [i] * 3}
        for i in range(12)]


@pytest.mark.parametrize("value", [
    {"per_sample": ROWS, "summary": {"miou": 1 / 3, "none": None}},
    {"rows": ROWS[:3]},  # too few rows for a table
    {"mixed": [*ROWS, {"id": "other keys"}]},  # not one table: kept row by row
    {"reordered": [dict(reversed(list(r.items()))) if i % 2 else r for i, r in enumerate(ROWS)]},
    [[ROWS, ROWS[:2]], {"deeper": [{"t": ROWS}]}],
    {"empty": [], "zero": -0.0, "big": 2 ** 62, "tiny": 5e-324, "s": "é\u2603", "b": [True, 0]},
    "a string",
])
def test_a_value_reads_back_exactly(value: Any, tmp_path: Path) -> None:
    store = ResultCache(tmp_path / "c")
    key = make_key("test", {})
    assert store.put(key, value)
    _same(ResultCache(tmp_path / "c").get(key), value)


@pytest.mark.parametrize("value", [
    {"nan": float("nan")}, {"inf": [float("inf")]}, {"tuple": (1, 2)},
    {"\x00table": 1}, [{"\x00dict": 1}] * 9, {"bytes": b"x"}, {1: "int key"},
])
def test_what_would_not_read_back_exactly_is_not_stored(value: Any, tmp_path: Path) -> None:
    store = ResultCache(tmp_path / "c")
    assert store.put(make_key("test", {}), value) is False
    assert store.entries() == []


def test_arrays_read_back_exactly_and_other_dtypes_are_refused(tmp_path: Path) -> None:
    import numpy as np

    store = ResultCache(tmp_path / "c")
    key = make_key("test", {})
    arrays = {"f": np.array([0.1, -0.0, 5e-324]), "b": np.array([True, False]),
              "i": np.arange(7, dtype=np.int64).reshape(7, 1), "e": np.zeros(0)}
    assert store.put(key, {"v": 1}, arrays)
    value, back = store.get_arrays(key)
    assert value == {"v": 1} and set(back) == set(arrays)
    for name, a in arrays.items():
        _same(np.array(back[name]), a)
    assert not store.put(key, {}, {"o": np.array([object()])})
    assert not store.put(key, {}, {"c": np.array([1j])})


def test_a_ground_truth_changed_during_a_leaderboard_run_is_a_problem(
        pair: tuple[Path, Path], tmp_path: Path) -> None:
    """The run's keys name the ground truth hashed at its start; a job that reads other
    ground-truth bytes says so instead of scoring against them under the first digest."""
    from ovearth_core.analysis.leaderboard import evaluate_submissions

    gt, pred = pair
    started_with = "0" * 64  # the digest of the ground truth when the run started
    store = ResultCache(tmp_path / "c")
    [outcome] = evaluate_submissions(gt, [pred], "vocabulary", MODS, cache=store, workers=1,
                                     gt_sha256=started_with)
    assert outcome.result is None and store.entries() == []
    [problem] = outcome.problems
    assert problem.file == str(gt) and "changed during the run" in problem.found


def _json_trees() -> Any:
    from hypothesis import strategies as st

    scalars = st.none() | st.booleans() | st.integers(-2 ** 63, 2 ** 63 - 1) | st.floats(
        allow_nan=False, allow_infinity=False) | st.text(max_size=5)
    keys = st.lists(st.text(max_size=4).filter(lambda k: not k.startswith("\x00")),
                    min_size=1, max_size=4, unique=True)

    def tables(children: Any) -> Any:  # lists of same-key rows: what becomes a table
        return keys.flatmap(lambda ks: st.lists(
            st.fixed_dictionaries({k: children for k in ks}), min_size=0, max_size=12))

    return st.recursive(scalars, lambda children: st.lists(children, max_size=4)
                        | st.dictionaries(st.text(max_size=4).filter(
                            lambda k: not k.startswith("\x00")), children, max_size=4)
                        | tables(children), max_leaves=40)


def test_any_json_tree_reads_back_exactly(tmp_path: Path) -> None:
    from hypothesis import given, settings

    store = ResultCache(tmp_path / "c", max_bytes=1 << 30)

    @settings(max_examples=150, deadline=None)
    @given(_json_trees())
    def check(value: Any) -> None:
        key = make_key("property", {})
        assert store.put(key, value)
        _same(store.get(key), value)

    check()
