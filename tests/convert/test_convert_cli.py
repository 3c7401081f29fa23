"""Every converter's bad inputs: a clear problem (file, line or id, field, expected, found),
exit status 2, nothing written; and the command line's happy paths, ``--force``, atomicity.

Each corpus row copies the sample data of one format into a temporary folder, breaks one
thing and runs the command in-process (``main``: the exit status and stderr) and through the
Python API (``_run`` raises :class:`OVEarthInputError`; the first problem is checked). Rows
marked ``subprocess`` also run as a real ``python -m ovearth_core.convert`` process; the
other command-line tests run its entry point in this process (tests/cli_inprocess.py).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from cli_inprocess import run_module
from convert_helpers import DATA, DEMO, ROOT, run_cli, run_cli_process
from PIL import Image

from ovearth_core.convert import __main__ as cli
from ovearth_core.convert import common
from ovearth_core.errors import OVEarthInputError

Mutate = Callable[[Path], None]


def _json_edit(rel: str, edit: Callable[[object], object]) -> Mutate:
    def mutate(src: Path) -> None:
        path = src / rel
        path.write_text(json.dumps(edit(json.loads(path.read_text()))))
    return mutate


def _set(rel: str, keys: tuple[object, ...], value: object) -> Mutate:
    def edit(doc: object) -> object:
        node = doc
        for k in keys[:-1]:
            node = node[k]  # type: ignore[index]
        node[keys[-1]] = value  # type: ignore[index]
        return doc
    return _json_edit(rel, edit)


def _write(rel: str, content: str | bytes) -> Mutate:
    def mutate(src: Path) -> None:
        path = src / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    return mutate


def _remove(rel: str) -> Mutate:
    return lambda src: (src / rel).unlink()


def _image(rel: str, size: tuple[int, int], mode: str = "L") -> Mutate:
    return lambda src: Image.new(mode, size).save(src / rel)


FORMATS = {
    "coco": ["from-coco", "--instances", "@coco/instances.json", "--results",
             "@coco/results.json", "--images", "@coco/images"],
    "dota": ["from-dota", "--labels", "@dota/labelTxt", "--results", "@dota/results/model_a",
             "--images", "@dota/images"],
    "rsvg": ["from-rsvg", "--annotations", "@rsvg/Annotations", "--predictions",
             "@rsvg/predictions.json", "--images", "@rsvg/JPEGImages"],
    "maps": ["from-label-maps", "--gt", "@label_maps/gt", "--classes", "@label_maps/classes.txt",
             "--pred", "@label_maps/pred/model_x", "--images", "@label_maps/images",
             "--ignore-index", "0"],
}


@dataclass(frozen=True)
class Case:
    id: str
    fmt: str
    mutate: Mutate
    file: str  # relative to the copied sample folder, or "(options)"
    field: str
    expected: str  # substring of Problem.expected
    line: int | None = None
    extra: tuple[str, ...] = ()
    subprocess: bool = False


INST = "coco/instances.json"
R = "coco/results.json"
ANN0 = "annotations[0] (id 10)"
CASES = [
    Case("coco-not-json", "coco", _write(INST, "{"), INST, "(document)", "valid UTF-8 JSON",
         subprocess=True),
    Case("coco-top-level-list", "coco", _write(INST, "[]"), INST, "(document)", "an object"),
    Case("coco-no-images", "coco", _set(INST, ("images",), None), INST, "images",
         "a list of image"),
    Case("coco-image-id-twice", "coco", _set(INST, ("images", 1, "id"), 1), INST,
         "images[1] (id 1).id", "unique"),
    Case("coco-file-name-escapes", "coco", _set(INST, ("images", 0, "file_name"), "../1.png"), INST,
         "images[0] (id 1).file_name", "relative path"),
    Case("coco-width-zero", "coco", _set(INST, ("images", 0, "width"), 0), INST,
         "images[0] (id 1).width", "a positive integer"),
    Case("coco-image-unreadable", "coco", _write("coco/images/2.png", b"not a png"), INST,
         "images[1] (id 2).file_name", "an image file at"),
    Case("coco-image-size", "coco", _image("coco/images/2.png", (41, 30)), INST,
         "images[1] (id 2).width/height", "the size of"),
    Case("coco-category-name-twice", "coco", _set(INST, ("categories", 1, "name"), "storage tank"),
         INST, "categories[1] (id 2).name", "unique"),
    Case("coco-unknown-image", "coco", _set(INST, ("annotations", 0, "image_id"), 99), INST,
         f"{ANN0}.image_id", "the id of an image"),
    Case("coco-unknown-category", "coco", _set(INST, ("annotations", 0, "category_id"), 3), INST,
         f"{ANN0}.category_id", "the id of a category"),
    Case("coco-zero-width-box", "coco", _set(INST, ("annotations", 0, "bbox"), [4, 4, 0, 6]), INST,
         f"{ANN0}.bbox", "positive width and height"),
    Case("coco-iscrowd-2", "coco", _set(INST, ("annotations", 0, "iscrowd"), 2), INST,
         f"{ANN0}.iscrowd", "0 or 1"),
    Case("coco-polygon-two-points", "coco",
         _set(INST, ("annotations", 0, "segmentation"), [[4, 4, 14, 4]]), INST,
         f"{ANN0}.segmentation[0]", "at least three vertices"),
    Case("coco-rle-size", "coco",
         _set(INST, ("annotations", 3, "segmentation", "size"), [40, 30]), INST,
         "annotations[3] (id 13).segmentation.size", "the image's [height, width]"),
    Case("coco-rle-sum", "coco",
         _set(INST, ("annotations", 2, "segmentation", "counts"), [618, 8]), INST,
         "annotations[2] (id 12).segmentation.counts", "run lengths summing"),
    Case("coco-obb-crossing", "coco",
         _set(INST, ("annotations", 4, "oriented_bbox"), [[5, 10], [25, 12], [15, 5], [15, 17]]),
         INST, "annotations[4] (id 14).oriented_bbox", "not self-crossing"),
    Case("coco-annotation-id-twice", "coco", _set(INST, ("annotations", 1, "id"), 10), INST,
         "annotations[1] (id 10).id", "unique"),
    Case("coco-lvis-negative-present", "coco", _set(INST, ("images", 0, "neg_category_ids"), [2]),
         INST, "images[0] (id 1).neg_category_ids", "absent from the image"),
    Case("coco-results-object", "coco", _write(R, "{}"), R, "(document)", "a list"),
    Case("coco-results-no-score", "coco", _json_edit(R, lambda d: [
        {k: v for k, v in d[0].items() if k != "score"}] + d[1:]), R, "[0].score",
         "a finite number", subprocess=True),
    Case("coco-results-unknown-image", "coco", _set(R, (2, "image_id"), 7), R, "[2].image_id",
         "the id of an image"),
    Case("coco-results-no-geometry", "coco", _set(R, (0,), {"image_id": 1, "category_id": 2,
                                                             "score": 0.5}), R, "[0]",
         "a bbox or a segmentation"),
    Case("coco-negatives", "coco", lambda src: None, "(options)", "--negatives",
         "all or a non-negative integer", extra=("--negatives", "x")),
    Case("dota-nine-fields", "dota", _write("dota/labelTxt/P0001.txt",
                                            "gsd:1\n\n1 2 3 4 5 6 7 8 plane\n"),
         "dota/labelTxt/P0001.txt", "(object)", "10 fields", line=3, subprocess=True),
    Case("dota-zero-area", "dota", _write("dota/labelTxt/P0002.txt",
                                          "imagesource:x\ngsd:1\n0 0 5 5 10 10 15 15 ship 0\n"),
         "dota/labelTxt/P0002.txt", "x1 y1 x2 y2 x3 y3 x4 y4", "positive area", line=3),
    Case("dota-difficult-yes", "dota", _write("dota/labelTxt/P0002.txt",
                                              "0 0 5 0 5 5 0 5 ship yes\n"),
         "dota/labelTxt/P0002.txt", "difficult", "0 or 1", line=1),
    Case("dota-image-missing", "dota", _remove("dota/images/P0003.png"),
         "dota/labelTxt/P0003.txt", "(image)", "an image P0003."),
    Case("dota-not-utf8", "dota", _write("dota/labelTxt/P0003.txt", b"gsd:\xff\n"),
         "dota/labelTxt/P0003.txt", "(file)", "a UTF-8 text"),
    Case("dota-result-unknown-image", "dota", _write("dota/results/model_a/Task1_ship.txt",
                                                     "P9 0.5 0 0 5 0 5 5 0 5\n"),
         "dota/results/model_a/Task1_ship.txt", "image_name", "an image with a label file",
         line=1),
    Case("dota-result-score", "dota", _write("dota/results/model_a/Task1_ship.txt",
                                             "P0001 0.5 0 0 5 0 5 5 0 5\n"
                                             "P0001 - 0 0 5 0 5 5 0 5\n"),
         "dota/results/model_a/Task1_ship.txt", "score", "a finite number", line=2),
    Case("dota-no-labels", "dota", lambda src: [p.unlink() for p in
                                                (src / "dota/labelTxt").iterdir()],
         "dota/labelTxt", "--labels", "label files"),
    Case("rsvg-doctype", "rsvg", _write("rsvg/Annotations/00002.xml",
                                        '<!DOCTYPE a [<!ENTITY e "x">]><annotation/>'),
         "rsvg/Annotations/00002.xml", "(document)", "XML without DOCTYPE", subprocess=True),
    Case("rsvg-box", "rsvg", lambda src: (src / "rsvg/Annotations/00002.xml").write_text(
        (src / "rsvg/Annotations/00002.xml").read_text().replace("<xmax>38", "<xmax>1")),
         "rsvg/Annotations/00002.xml", "<object> 0 <bndbox>", "xmax > xmin", line=4),
    Case("rsvg-pred-unknown", "rsvg", _set("rsvg/predictions.json", (1, "object"), 5),
         "rsvg/predictions.json", "[1].image/object", "an annotated expression"),
    Case("rsvg-pred-twice", "rsvg", _set("rsvg/predictions.json", (1, "object"), 0),
         "rsvg/predictions.json", "[1].image/object", "one box per expression"),
    Case("rsvg-pred-box", "rsvg", _set("rsvg/predictions.json", (0, "bbox"), [4, 6, 2, 18]),
         "rsvg/predictions.json", "[0].bbox", "x2 > x1"),
    Case("maps-rgb", "maps", _image("label_maps/gt/tile_a.png", (8, 6), "RGB"),
         "label_maps/gt/tile_a.png", "(image mode)", "a single-band", subprocess=True),
    Case("maps-unknown-value", "maps", lambda src: Image.new("L", (8, 6), 9).save(
        src / "label_maps/gt/tile_b.png"), "label_maps/gt/tile_b.png", "(pixel values)",
         "class indices"),
    Case("maps-pred-size", "maps", _image("label_maps/pred/model_x/tile_b.png", (6, 8)),
         "label_maps/pred/model_x/tile_b.png", "(size)", "the ground truth's size"),
    Case("maps-pred-missing", "maps", _remove("label_maps/pred/model_x/tile_a.png"),
         "label_maps/pred/model_x/tile_a.png", "(file)", "a predicted label map"),
    Case("maps-image-size", "maps", _image("label_maps/images/tile_b.png", (9, 6)),
         "label_maps/gt/tile_b.png", "(size)", "the size of tile_b.png"),
    Case("maps-classes-twice", "maps", _write("label_maps/classes.txt", "0 a\n1 b\n1 c\n"),
         "label_maps/classes.txt", "index", "unique", line=3),
]


def _argv(case: Case, src: Path, out: Path) -> list[str]:
    return [*_paths(case.fmt, src), "--out", str(out), "--quiet", *case.extra]


def _paths(fmt: str, root: Path) -> list[str]:
    """The format's arguments, sample paths (marked with @) under ``root``."""
    return [str(root / a[1:]) if a.startswith("@") else a for a in FORMATS[fmt]]


def _prepare(case: Case, tmp_path: Path) -> tuple[Path, Path]:
    src = tmp_path / "src"
    shutil.copytree(DATA, src)
    case.mutate(src)
    return src, tmp_path / "out" / "bench"


def _check_first_problem(case: Case, problems: list, src: Path) -> None:
    first = problems[0]
    file = case.file if case.file == "(options)" else str(src / case.file)
    assert (first.file, first.field, first.line) == (file, case.field, case.line), str(first)
    assert case.expected in first.expected, first.expected
    assert first.found


def _nothing_written(out: Path) -> None:
    assert not out.exists()
    assert not out.parent.exists() or list(out.parent.iterdir()) == []


def test_corpus_ids_are_unique_and_cover_every_format() -> None:
    assert len({c.id for c in CASES}) == len(CASES)
    assert {c.fmt for c in CASES} == set(FORMATS)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_api(case: Case, tmp_path: Path) -> None:
    src, out = _prepare(case, tmp_path)
    out.parent.mkdir()
    argv = _argv(case, src, out)
    if case.file == "(options)":  # argparse refuses it before the API sees it
        with pytest.raises(SystemExit):
            cli.build_parser().parse_args(argv)
        with pytest.raises(OVEarthInputError) as info:
            cli.coco.from_coco(src / INST, src / "coco/images", out, negatives="x")
    else:
        with pytest.raises(OVEarthInputError) as info:
            cli._run(cli.build_parser().parse_args(argv), "test")
    _check_first_problem(case, info.value.problems, src)
    _nothing_written(out)


@pytest.mark.parametrize("case", [c for c in CASES if c.file != "(options)"],
                         ids=[c.id for c in CASES if c.file != "(options)"])
def test_bad_input_cli(case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src, out = _prepare(case, tmp_path)
    out.parent.mkdir()
    assert cli.main(_argv(case, src, out)) == 2
    err = capsys.readouterr().err
    assert "invalid input" in err and case.field in err and "expected" in err
    assert str(src / case.file) in err and "Traceback" not in err
    if case.line is not None:
        assert f"line {case.line}" in err
    _nothing_written(out)


@pytest.mark.parametrize("case", [c for c in CASES if c.subprocess],
                         ids=[c.id for c in CASES if c.subprocess])
def test_bad_input_subprocess(case: Case, tmp_path: Path) -> None:
    src, out = _prepare(case, tmp_path)
    out.parent.mkdir()
    proc = run_cli_process(*_argv(case, src, out))
    assert proc.returncode == 2
    assert case.field in proc.stderr and "Traceback" not in proc.stderr
    assert proc.stdout == ""
    _nothing_written(out)


# ------------------------------------------------------------------ happy paths, folders


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_each_converter_writes_a_benchmark_folder(fmt: str, tmp_path: Path) -> None:
    out = tmp_path / "bench"
    args = _paths(fmt, DATA)
    proc = run_cli(*args, "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"wrote {out}:")
    assert sorted(p.name for p in out.iterdir()) == ["README.md", "ground_truth.json", "images",
                                                     "predictions"]
    gt = json.loads((out / "ground_truth.json").read_text())
    paths = {a["image_path"] for a in gt["annotations"]}
    assert all((out / p).is_file() for p in paths)
    assert len(list((out / "predictions").glob("*.json"))) == 1
    assert "Made by `python -m ovearth_core.convert from-" in (out / "README.md").read_text()
    assert [p.name for p in tmp_path.iterdir()] == ["bench"]  # no temporary folder left


def test_a_non_empty_folder_is_kept_unless_forced(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    out.mkdir()
    (out / "mine.txt").write_text("keep")
    args = _paths("dota", DATA)
    proc = run_cli(*args, "--out", str(out))
    assert proc.returncode == 2 and "--force" in proc.stderr
    assert [p.name for p in out.iterdir()] == ["mine.txt"]
    proc = run_cli(*args, "--out", str(out), "--force")
    assert proc.returncode == 0, proc.stderr
    assert not (out / "mine.txt").exists() and (out / "ground_truth.json").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bench"]


def test_an_empty_folder_is_filled(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    out.mkdir()
    cli.main([*_paths("rsvg", DATA), "--out", str(out), "--quiet"])
    assert (out / "ground_truth.json").is_file()


def test_a_failure_while_writing_leaves_nothing(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(common, "_place", broken)
    out = tmp_path / "bench"
    args = _paths("coco", DATA)
    assert cli.main([*args, "--out", str(out), "--quiet"]) == 2
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("flags", [(), ("--link",)])
def test_images_are_hard_linked_by_default(tmp_path: Path, flags: tuple[str, ...]) -> None:
    """Issue 34, item 11: DOTA and COCO image sets are tens of gigabytes; a benchmark's
    images are read, never written, so by default they are hard links (no copy, no space),
    copies only across file systems or with --copy."""
    src = tmp_path / "src"
    shutil.copytree(DATA / "rsvg", src)
    out = tmp_path / "bench"
    assert cli.main(["from-rsvg", "--annotations", str(src / "Annotations"), "--images",
                     str(src / "JPEGImages"), "--out", str(out), *flags, "--quiet"]) == 0
    assert (out / "images" / "00001.jpg").stat().st_ino == (
        src / "JPEGImages" / "00001.jpg").stat().st_ino


def test_copy_copies_images(tmp_path: Path) -> None:
    src = tmp_path / "src"
    shutil.copytree(DATA / "rsvg", src)
    out = tmp_path / "bench"
    assert cli.main(["from-rsvg", "--annotations", str(src / "Annotations"), "--images",
                     str(src / "JPEGImages"), "--out", str(out), "--copy", "--quiet"]) == 0
    copied, source = out / "images" / "00001.jpg", src / "JPEGImages" / "00001.jpg"
    assert copied.stat().st_ino != source.stat().st_ino
    assert copied.read_bytes() == source.read_bytes()


@pytest.mark.parametrize("command", ["from-coco", "from-dota", "from-rsvg", "from-voc",
                                     "from-label-maps", "to-coco"])
def test_every_converter_takes_quiet(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    """README: every converter takes --quiet (to-coco refused it, issue 34, item 10)."""
    with pytest.raises(SystemExit) as done:
        cli.main([command, "--help"])
    assert done.value.code == 0 and "--quiet" in capsys.readouterr().out


def test_to_coco_quiet(tmp_path: Path) -> None:
    proc = run_cli("to-coco", "--gt", str(DEMO / "ground_truth.json"), "--predictions",
                   str(DEMO / "predictions" / "strong_localiser.json"), "--task", "referring",
                   "--out", str(tmp_path / "coco"), "--quiet")
    assert proc.returncode == 0, proc.stderr


def test_to_coco_cli(tmp_path: Path) -> None:
    out = tmp_path / "coco"
    proc = run_cli("to-coco", "--gt", str(DEMO / "ground_truth.json"), "--predictions",
                   str(DEMO / "predictions" / "strong_localiser.json"), "--task", "referring",
                   "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    mapping = json.loads((out / "mapping.json").read_text())
    assert mapping["task"] == "referring" and len(mapping["queries"]) == 45
    bad = tmp_path / "bad.json"
    bad.write_text('{"annotations": [], "tasks": {"referring": [{"query_id": "r1"}]}}')
    proc = run_cli("to-coco", "--gt", str(bad), "--predictions", str(bad), "--task",
                   "referring", "--out", str(tmp_path / "x"))
    assert proc.returncode == 2 and "tasks.referring[0].ann_id" in proc.stderr
    assert not (tmp_path / "x").exists()


def test_progress_lines_appear_on_slow_inputs_only(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    clock = iter(range(0, 1000))
    monkeypatch.setattr(common.time, "monotonic", lambda: float(next(clock)))
    stream = io.StringIO()
    assert list(common.progress(range(20), "reading", True, stream=stream)) == list(range(20))
    lines = stream.getvalue().splitlines()
    assert lines[0] == "reading: 1/20 (0 %)" and lines[-1] == "reading: 20/20 (100 %)"
    assert len(lines) == 11
    quiet = io.StringIO()
    monkeypatch.setattr(common.time, "monotonic", lambda: 0.0)
    assert list(common.progress(range(20), "reading", True, stream=quiet)) == list(range(20))
    assert quiet.getvalue() == ""


def test_a_converted_folder_is_a_benchmark_folder(tmp_path: Path) -> None:
    """Tools that take a benchmark folder (here the leaderboard) read a converted one.

    The board ranks boxes, which come from DOTA Task2 files only (issue 46): each model gets
    Task2 files beside its Task1 ones, its upright rectangles as boxes, written by hand."""
    results = tmp_path / "results"
    task2 = {"harbor": "P0003 0.5 1 1 5 5\n",
             "plane": "P0001 0.9 10 10 30 20\nP0001 0.8 41 10 61 30\nP0002 0.4 0 0 10 10\n",
             "ship": "P0001 0.7 70 50 90 60\nP0002 0.6 30 20 50 40\n"}
    for name in ("model_a", "model_b"):
        shutil.copytree(DATA / "dota" / "results" / "model_a", results / name)
        for cat, text in task2.items():
            (results / name / f"Task2_{cat}.txt").write_text(text)
    (results / "model_b" / "Task1_ship.txt").write_text("P0001 0.7 70 50 90 50 90 60 70 60\n")
    (results / "model_b" / "Task2_ship.txt").write_text("P0001 0.7 70 50 90 60\n")
    out = tmp_path / "bench"
    assert cli.main(["from-dota", "--labels", str(DATA / "dota" / "labelTxt"), "--images",
                     str(DATA / "dota" / "images"), "--results", str(results / "model_a"),
                     "--results", str(results / "model_b"), "--out", str(out), "--quiet"]) == 0
    proc = run_module("ovearth_core.leaderboard", str(out), "--task", "vocabulary",
                      "--modalities", "bbox", "--subsets", "5", cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    board = json.loads(proc.stdout)["open_vocabulary"]
    assert board["models"] == ["model_a", "model_b"]
    # model_b drops the P0002 ship false positive: F1 6/7 against 0.75.
    assert board["metrics"]["bbox_micro_f1"] == pytest.approx([0.75, 6 / 7])


def test_missing_parent_folders_of_out_are_created(tmp_path: Path) -> None:
    """Issue 27 defect 7: ``--out bench/dota`` without ``bench/``."""
    out = tmp_path / "bench" / "dota"
    proc = run_cli(*_paths("dota", DATA), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert (out / "ground_truth.json").is_file()
    assert [p.name for p in (tmp_path / "bench").iterdir()] == ["dota"]


def test_parents_created_for_a_failed_write_are_removed(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(common, "_place", broken)
    out = tmp_path / "a" / "b" / "bench"
    assert cli.main([*_paths("coco", DATA), "--out", str(out), "--quiet"]) == 2
    assert list(tmp_path.iterdir()) == []


def test_out_below_a_link_or_a_file_is_still_refused(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "bench").mkdir()
    (tmp_path / "here").symlink_to(tmp_path / "real" / "bench")
    (tmp_path / "plain.txt").write_text("x")
    for out in (tmp_path / "here", tmp_path / "plain.txt" / "dota"):
        proc = run_cli(*_paths("rsvg", DATA), "--out", str(out))
        assert proc.returncode == 2 and "--out" in proc.stderr and "Traceback" not in \
            proc.stderr, proc.stderr
    assert list((tmp_path / "real" / "bench").iterdir()) == []
