"""What the converters share, rule by rule (issue 47, mutation testing of
``ovearth_core/convert/common.py``): direct calls on small inputs, expected values written
out here (hand-worked counts, texts and paths), so each rule is pinned without a converter's
run around it.
"""

from __future__ import annotations

import io
import os
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest
from PIL import Image

from ovearth_core import georef
from ovearth_core.convert import common
from ovearth_core.convert.common import (
    Benchmark,
    Degenerate,
    MissingImages,
    Problems,
    check_names,
    check_target,
    existing_ancestor,
    extent_ok,
    far_out,
    image_path_ok,
    images_by_stem,
    images_text,
    listed,
    load_json,
    parse_side,
    phrase_of,
    prediction_row,
    progress,
    read_sizes,
    read_source,
    read_text_lines,
    relative_path,
    shown,
    skipped_files,
    source_files,
    utf8_ok,
    write_benchmark,
)
from ovearth_core.errors import OVEarthInputError


def _texts(err: OVEarthInputError | Problems) -> list[str]:
    items = err.items if isinstance(err, Problems) else err.problems
    return [str(p) for p in items]


# ---- bounds ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("lo", "hi", "ok"), [
    (0.0, 1e100, True), (-1e100, 0.0, True), (-5e99, 5e99, True),
    (-1e100, 1e100, False),  # each corner within the bound, the width 2e100 not
    (0.0, 1.1e100, False), (5e99, 1.01e100, False), (3.0, 3.0, True)])
def test_a_boxs_extent_is_within_the_evaluators_bound(lo: float, hi: float, ok: bool) -> None:
    """``hi - lo`` at most 1e100 and ``lo + (hi - lo)`` at most 1e100 (the COCO box the
    evaluator reads back: its x and width)."""
    assert extent_ok(lo, hi) is ok


def test_far_out_is_the_first_value_beyond_the_bound_or_nan() -> None:
    assert far_out([0.0, 1e100, -1e100]) is None
    assert far_out([0.0, -1.5e100, 2e100]) == 1
    assert far_out([1.0, 2.0, float("nan")]) == 2
    assert far_out([float("inf")]) == 0
    assert far_out([]) is None


# ---- names ------------------------------------------------------------------------------------

def test_a_name_not_in_utf8_is_shown_with_its_bytes_escaped() -> None:
    latin1 = os.fsdecode(b"caf\xe9.png")
    assert shown(latin1) == "caf\\xe9.png"
    assert shown(Path("d") / latin1) == "d/caf\\xe9.png"
    assert shown("café.png") == "café.png"
    assert utf8_ok("café.png") is True and utf8_ok(latin1) is False


def test_listed_sorts_and_leaves_out_undecodable_names_each_a_problem() -> None:
    bad = Problems()
    latin1 = Path("src") / os.fsdecode(b"\xff.txt")
    got = listed([Path("src/b.txt"), latin1, Path("src/a.txt")], bad)
    assert got == [Path("src/a.txt"), Path("src/b.txt")]
    assert _texts(bad) == [f"src/\\xff.txt, field (file name): expected {common.UTF8_NAME}, "
                           "found \\xff.txt"]


@pytest.mark.parametrize(("name", "rel"), [
    ("images/a.png", "images/a.png"), ("a.png", "a.png"), ("./x/./y.png", "x/y.png"),
    ("/etc/passwd", None), ("../a.png", None), ("x/../a.png", None), ("~/a.png", None),
    ("a\\b.png", None), ("a\x00.png", None), ("", None), (3, None), (None, None)])
def test_a_relative_path_has_no_root_no_dotdot_no_home_no_backslash(name: Any,
                                                                    rel: str | None) -> None:
    assert relative_path(name) == rel


@pytest.mark.parametrize(("name", "ok"), [
    ("images/a.png", True), ("scene.tif", True), ("predictions.png", True),
    ("predictions/a.png", False), ("Predictions/a.png", False), ("README.md", False),
    ("readme.MD", False), ("ground_truth.json", False), ("GROUND_TRUTH.JSON", False),
    ("sub/README.md", True), ("a/\x01b.png", False), ("../a.png", False), ("/a.png", False)])
def test_an_image_path_is_never_one_of_the_folders_own_files(name: str, ok: bool) -> None:
    """A safe relative path whose first part is not ``ground_truth.json``, ``README.md`` or
    ``predictions`` (in any case: a case-insensitive file system), each part a file name."""
    assert image_path_ok(name) is ok


@pytest.mark.parametrize(("name", "phrase"), [
    ("storage-tank", "storage tank"), ("ground_track_field", "ground track field"),
    ("  a--b__c ", "a b c"), ("plane", "plane")])
def test_a_class_names_phrase_has_single_spaces_for_dashes_and_underscores(name: str,
                                                                           phrase: str) -> None:
    assert phrase_of(name) == phrase


# ---- problems ---------------------------------------------------------------------------------

def test_problems_keep_file_field_expected_found_line_and_query_id() -> None:
    bad = Problems()
    assert len(bad) == 0
    bad.raise_if_any()  # nothing: no error
    bad.add(Path("a.txt"), "width", "a number", "x", line=3)
    bad.add("b.json", "bbox", "a list", None, query_id="q1")
    assert len(bad) == 2
    with pytest.raises(OVEarthInputError) as err:
        bad.raise_if_any()
    assert _texts(err.value) == [
        "a.txt, line 3, field width: expected a number, found str 'x'",
        "b.json, query_id q1, field bbox: expected a list, found null"]
    one = common.fail("c.txt", "(file)", "a file", "<gone>")
    assert _texts(one) == ["c.txt, field (file): expected a file, found gone"]


def test_a_degenerate_box_is_a_problem_naming_the_opt_in_by_default() -> None:
    bad = Problems()
    deg = Degenerate(skip=False)
    deg.add(bad, "l.txt", " bbox ", "x1 > x0", [3, 3], line=7, obj="o1")
    assert _texts(bad) == ["l.txt, line 7, field  bbox : expected x1 > x0 (a box of zero "
                           "area; --skip-degenerate leaves it out), found list [3, 3]"]
    assert deg.warnings() == [] and deg.objects == {} and deg.lines == []


def test_skipped_degenerate_boxes_are_listed_once_per_object_and_per_result_line() -> None:
    """With ``skip`` nothing is a problem; an object is listed once (its first reason),
    however many of its boxes are degenerate; result lines each; counts in words."""
    bad = Problems()
    deg = Degenerate(skip=True)
    deg.add(bad, "gt.xml", " bndbox ", "xmax > xmin", 4, line=2, obj="o1")
    deg.add(bad, "gt.xml", "bndbox", "ymax > ymin", 5, line=3, obj="o1")
    deg.add(bad, "gt.xml", "bndbox", "ymax > ymin", 6, line=9, obj="o2")
    deg.add(bad, "r.txt", "box", "x1 > x0", "1", line=4)
    assert len(bad) == 0
    assert deg.warnings() == [
        "2 objects of zero area left out of the ground truth (--skip-degenerate): "
        "gt.xml line 2 bndbox: zero area (xmax > xmin; found int 4); "
        "gt.xml line 9 bndbox: zero area (ymax > ymin; found int 6)",
        "1 result line of zero area left out of the predictions (--skip-degenerate): "
        "r.txt line 4 box: zero area (x1 > x0; found str '1')"]
    one = Degenerate(skip=True)
    one.add(bad, "gt.xml", "b", "e", 1, line=1, obj="x")
    assert one.warnings()[0].startswith("1 object of zero area left out of the ground truth")
    lines = Degenerate(skip=True)
    for n in (1, 2):
        lines.add(bad, "r.txt", "b", "e", n, line=n)
    assert lines.warnings() == [
        "2 result lines of zero area left out of the predictions (--skip-degenerate): "
        "r.txt line 1 b: zero area (e; found int 1); r.txt line 2 b: zero area (e; found "
        "int 2)"]


# ---- reading sources -------------------------------------------------------------------------

def test_a_source_that_cannot_be_read_is_one_problem_naming_the_file_and_role(tmp_path: Path
                                                                             ) -> None:
    missing = tmp_path / "gone.txt"
    with pytest.raises(OVEarthInputError) as err:
        read_source(missing, "labels file")
    assert _texts(err.value) == [f"{missing}, field (file): expected a readable labels file, "
                                 "found No such file or directory"]
    with pytest.raises(OVEarthInputError) as err:
        read_source(tmp_path, "labels file")
    assert _texts(err.value) == [f"{tmp_path}, field (file): expected a labels file: a regular "
                                 "file, found a folder"]
    with pytest.raises(OVEarthInputError) as err:
        read_source("a\x00b", "labels file")
    assert _texts(err.value) == ["a\x00b, field (file): expected a readable labels file, found "
                                 "embedded null byte"]
    (tmp_path / "ok.txt").write_bytes(b"a b\n")
    assert read_source(tmp_path / "ok.txt", "x") == b"a b\n"


def test_a_json_source_is_utf8_json_whose_top_level_is_the_kind_asked(tmp_path: Path) -> None:
    path = tmp_path / "d.json"
    path.write_bytes(b'[1, {"a": 2}]')
    assert load_json(path, "predictions", list) == [1, {"a": 2}]
    with pytest.raises(OVEarthInputError) as err:
        load_json(path, "ground-truth", dict)
    assert _texts(err.value) == [f"{path}, field (document): expected an object at the top "
                                 "level (ground-truth), found a JSON list"]
    path.write_bytes(b'{"a": 1}')
    with pytest.raises(OVEarthInputError) as err:
        load_json(path, "predictions", list)
    assert _texts(err.value) == [f"{path}, field (document): expected a list at the top level "
                                 "(predictions), found a JSON dict"]
    path.write_bytes(b'{"a": NaN}')
    with pytest.raises(OVEarthInputError) as err:
        load_json(path, "x", dict)
    (problem,) = err.value.problems
    assert (problem.field, problem.expected) == (
        "(document)", "valid UTF-8 JSON (no NaN/Infinity, nesting under 1024)")
    with pytest.raises(OVEarthInputError) as err:
        load_json(tmp_path / "none.json", "classes", dict)
    assert err.value.problems[0].expected == "a readable classes JSON file"


def test_text_lines_drop_a_bom_and_split_any_line_end(tmp_path: Path) -> None:
    path = tmp_path / "l.txt"
    path.write_bytes("\ufeffa b\r\nc\rd\n\n".encode())
    bad = Problems()
    assert read_text_lines(path, bad, "labels") == ["a b", "c", "d", ""]
    path.write_bytes(b"ok\n\xff\n")
    assert read_text_lines(path, bad, "labels") is None
    assert _texts(bad) == [f"{path}, field (file): expected a UTF-8 text labels, found "
                           "undecodable byte at 3"]
    assert read_text_lines(tmp_path / "no.txt", bad, "labels") is None
    assert bad.items[1].expected == "a readable labels" and len(bad) == 2


@pytest.mark.parametrize(("text", "side"), [
    ("1", 1), ("999999999", 999_999_999), ("000000012", 12), ("0", None),
    ("1000000000", None), ("-5", None), ("+5", None), ("5.0", None), ("٣", None),
    (" 5", None), ("", None), (None, None)])
def test_a_side_is_one_to_nine_ascii_digits_above_zero(text: str | None,
                                                       side: int | None) -> None:
    assert parse_side(text) == side


def test_a_sizes_file_gives_width_and_height_by_stem(tmp_path: Path) -> None:
    """``<image> <width> <height>``, spaces or commas; the image by file name (an image
    suffix dropped, in any case) or stem; comments and blank lines skipped; each problem
    with its line, and the line left out."""
    path = tmp_path / "sizes.txt"
    path.write_text("# image w h\n\na.PNG 640 480\nb,100,200\nc.txt 1 2\n"
                    "a 5 5\nd 10\ne 10 0\nf x 3\nP0001.tif  30 40\n" + "g 1 2 3\n")
    bad = Problems()
    assert read_sizes(path, bad) == {"a": (640, 480), "b": (100, 200), "c.txt": (1, 2),
                                     "P0001": (30, 40)}
    assert _texts(bad) == [
        f"{path}, line 6, field image: expected each image once, found str 'a'",
        f"{path}, line 7, field (line): expected <image> <width> <height>, found str 'd 10'",
        f"{path}, line 8, field height: expected a whole number of pixels from 1 to "
        "999,999,999, found str '0'",
        f"{path}, line 9, field width: expected a whole number of pixels from 1 to "
        "999,999,999, found str 'x'",
        f"{path}, line 11, field (line): expected <image> <width> <height>, found str "
        "'g 1 2 3'"]


def test_a_sizes_problem_shows_at_most_the_start_of_the_value(tmp_path: Path) -> None:
    """A bad width or height is shown by its first 20 characters."""
    path = tmp_path / "sizes.txt"
    path.write_text("img " + "9" * 25 + " 3\n")
    bad = Problems()
    assert read_sizes(path, bad) == {}
    assert bad.items[0].found == f"str '{'9' * 20}'"
    assert read_sizes(tmp_path / "missing.txt", bad) == {} and len(bad) == 2


def test_missing_images_are_one_warning_with_where_each_size_came_from() -> None:
    none = MissingImages("imgs")
    assert none.warning(5) == []
    few = MissingImages(Path("imgs"))
    few.add("b", "sizes.txt")
    few.add("a", "the XML")
    few.add("c", "sizes.txt")
    assert few.warning(1234) == [
        "3 of 1,234 images are not in imgs: a, b, c. Converted numbers-only (the benchmark "
        "holds no pixels for them; the app shows none); sizes: 2 from sizes.txt; 1 from the XML"]
    many = MissingImages(None)
    for i in range(1012):
        many.add(f"i{i:04d}", "s")
    (text,) = many.warning(2000)
    assert text.startswith("1,012 of 2,000 images are not given (no --images folder): "
                           "i0000, i0001, i0002, i0003, i0004, i0005, i0006, i0007, i0008, "
                           "i0009 and 1,002 more. Converted")
    assert text.endswith("sizes: 1,012 from s")
    ten = MissingImages("f")
    for i in range(10):
        ten.add(f"n{i}", "s")
    assert ten.warning(10)[0].startswith("10 of 10 images are not in f: n0, n1, n2, n3, n4, "
                                         "n5, n6, n7, n8, n9. Converted")


# ---- folders and images ------------------------------------------------------------------------

def _png(path: Path, size: tuple[int, int]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("L", size).save(path)
    return path


def test_source_files_are_the_folders_matching_files_through_the_gate(tmp_path: Path) -> None:
    """Sorted; the pattern and the suffixes (in any case) select; a subfolder is skipped; a
    link out of the folder and a named pipe are problems naming them, when wanted."""
    src = tmp_path / "src"
    src.mkdir()
    for name in ("b.XML", "a.xml", "c.txt"):
        (src / name).write_text("x")
    (src / "sub.xml").mkdir()
    outside = tmp_path / "secret.xml"
    outside.write_text("s")
    (src / "link.xml").symlink_to(outside)
    (src / "link.txt").symlink_to(outside)
    os.mkfifo(src / "pipe.xml")
    bad = Problems()
    got = source_files(src, bad, suffixes=(".xml",))
    assert got == [src / "a.xml", src / "b.XML"]
    assert sorted(p.file for p in bad.items) == [str(src / "link.xml"), str(src / "pipe.xml")]
    assert all(p.field == "(file)" for p in bad.items)
    bad = Problems()
    assert source_files(src, bad, "*.txt") == [src / "c.txt"]
    assert [p.file for p in bad.items] == [str(src / "link.txt")]
    assert source_files(src, Problems(), "a*") == [src / "a.xml"]


def test_source_files_of_a_link_loop_is_one_problem(tmp_path: Path) -> None:
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    bad = Problems()
    assert source_files(loop, bad) == []
    (problem,) = bad.items
    assert (problem.file, problem.field, problem.expected) == (str(loop), "(folder)",
                                                               "a readable folder")


def test_images_are_found_by_stem_one_file_each(tmp_path: Path) -> None:
    folder = tmp_path / "imgs"
    _png(folder / "a.png", (3, 2))
    _png(folder / "b.PNG", (3, 2))
    (folder / "notes.txt").write_text("x")
    bad = Problems()
    assert images_by_stem(folder, bad) == {"a": folder / "a.png", "b": folder / "b.PNG"}
    assert len(bad) == 0
    _png(folder / "a.tif", (3, 2))
    assert images_by_stem(folder, bad) == {"a": folder / "a.png", "b": folder / "b.PNG"}
    assert _texts(bad) == [f"{folder / 'a.tif'}, field (file): expected one image per file "
                           "stem, found a.png and a.tif"]
    assert images_by_stem(None, bad) == {} and len(bad) == 1
    assert images_by_stem(folder / "a.png", bad) == {}
    assert _texts(bad)[1] == (f"{folder / 'a.png'}, field (folder): expected a folder of "
                              "images, found not a folder")


def test_an_images_size_is_read_from_its_header(tmp_path: Path) -> None:
    assert common.image_size(_png(tmp_path / "w.png", (7, 3))) == (7, 3)
    Image.new("L", (5, 9)).save(tmp_path / "t.tif")
    assert common.image_size(tmp_path / "t.tif") == (5, 9)
    (tmp_path / "n.png").write_bytes(b"not an image")
    with pytest.raises(OSError, match="not an image Pillow can read"):
        common.image_size(tmp_path / "n.png")
    with pytest.raises(OSError):
        common.image_size(tmp_path)


# ---- the benchmark in memory -------------------------------------------------------------------

def _bench() -> Benchmark:
    bench = Benchmark("python -m ovearth_core.convert test --in x")
    bench.add_annotation("a1", "images/p.png", 20, 10, "plane", bbox=[[1, 1, 4, 3]],
                         oriented_bbox=[[[1, 1], [5, 1], [5, 4], [1, 4]]], difficult=True)
    bench.add_annotation("a2", "images/p.png", 20, 10, "ship", bbox=[[2, 2, 3, 3], [9, 1, 2, 2]])
    bench.add_annotation("a3", "images/q.png", 8, 8, "ship")
    bench.add_query("open_vocabulary", "ov1", "a1", "plane")
    bench.add_query("open_vocabulary", "ov2", "a3", "plane", negative=True)
    bench.add_query("open_vocabulary", "ov3", "a2", "ship")
    bench.add_query("referring", "rf1", "a2", "the ship on the left")
    return bench


def test_an_annotation_and_a_query_are_the_specs_objects() -> None:
    bench = _bench()
    assert bench.annotations[0] == {
        "id": "a1", "image_path": "images/p.png", "width": 20, "height": 10,
        "category_name": "plane", "segmentation": None, "bbox": [[1, 1, 4, 3]],
        "oriented_bbox": [[[1, 1], [5, 1], [5, 4], [1, 4]]], "difficult": True}
    assert bench.annotations[2]["bbox"] == [] and bench.annotations[2]["oriented_bbox"] == []
    assert bench.tasks["open_vocabulary"][:2] == [
        {"query_id": "ov1", "ann_id": "a1", "type": "positive", "phrase": "plane"},
        {"query_id": "ov2", "ann_id": "a3", "type": "negative", "phrase": "plane"}]
    assert bench.tasks["referring"] == [{"query_id": "rf1", "ann_id": "a2",
                                         "query": "the ship on the left"}]


def test_the_ground_truth_has_the_tasks_with_rows_and_its_source_when_known() -> None:
    bench = _bench()
    doc = bench.ground_truth()
    assert list(doc) == ["annotations", "tasks"]
    assert list(doc["tasks"]) == ["open_vocabulary", "referring"]
    bench.source = {"format": "dota", "resample_unit": "image"}
    assert bench.ground_truth()["source"] == {"format": "dota", "resample_unit": "image"}
    assert list(bench.ground_truth()) == ["source", "annotations", "tasks"]
    assert Benchmark("c").tasks == {"open_vocabulary": [], "referring": [], "reasoning": []}


def test_the_counts_are_images_annotations_queries_and_boxes() -> None:
    """Images are distinct image paths (2), of which those with a file; boxes are the
    horizontal boxes of every annotation (3)."""
    bench = _bench()
    bench.images = {"images/p.png": Path("src/p.png")}
    bench.submissions = {"zeta": {}, "alpha": {}}
    bench.warnings = ["w"]
    bench.skipped = ["s"]
    assert bench.counts() == {
        "images": 2, "image_files": 1, "numbers_only": 1, "annotations": 3,
        "open_vocabulary": {"positive": 2, "negative": 1}, "referring": 1, "reasoning": 0,
        "boxes": 3, "submissions": ["alpha", "zeta"], "warnings": ["w"], "skipped": ["s"]}


def test_images_text_names_numbers_only_images_when_there_are_some() -> None:
    assert images_text({"images": 1234, "image_files": 1234, "numbers_only": 0}) == "1,234 images"
    assert images_text({"images": 3, "image_files": 2, "numbers_only": 1}) == (
        "3 images (2 with their files in images/, 1 numbers-only)")
    assert images_text({"images": 2000, "image_files": 0, "numbers_only": 2000}) == (
        "2,000 images (0 with their files in images/, 2,000 numbers-only)")


def test_skipped_files_are_one_note_with_at_most_ten_names() -> None:
    assert skipped_files("files", Path("src"), [], "why") == []
    assert skipped_files("files", Path("src"), ["b", "a"], "are not XML") == [
        "2 files in src are not XML: a, b"]
    names = [f"f{i:04d}" for i in range(1011, -1, -1)]
    (note,) = skipped_files("images", Path("i"), names, "have no annotation")
    assert note == ("1,012 images in i have no annotation: f0000, f0001, f0002, f0003, f0004, "
                    "f0005, f0006, f0007, f0008, f0009 and 1,002 more")
    assert skipped_files("x", Path("i"), [str(i) for i in range(10)], "y") == [
        "10 x in i y: 0, 1, 2, 3, 4, 5, 6, 7, 8, 9"]


def test_a_prediction_row_has_every_modality_null_or_empty() -> None:
    assert prediction_row("q", "phrase", "plane") == {
        "query_id": "q", "phrase": "plane", "segmentation": None, "bbox": [],
        "oriented_bbox": []}
    mask = {"size": [2, 2], "counts": "04"}
    assert prediction_row("q", "query", "t", mask, [[1, 2, 3, 4, 0.5]], [[0, 0, 1, 0]]) == {
        "query_id": "q", "query": "t", "segmentation": mask, "bbox": [[1, 2, 3, 4, 0.5]],
        "oriented_bbox": [[0, 0, 1, 0]]}


def test_submission_names_and_image_paths_are_checked_together() -> None:
    bench = _bench()
    bench.submissions = {"ok": {}, "../x": {}, ".hidden": {}, "a/b": {}}
    bench.images = {"images/p.png": Path("p"), "README.md": Path("r"), "../q.png": Path("q")}
    with pytest.raises(OVEarthInputError) as err:
        check_names(bench)
    found = [(p.file, p.field, p.found) for p in err.value.problems]
    assert found == [("<converted benchmark>", "submission", "str '../x'"),
                     ("<converted benchmark>", "submission", "str '.hidden'"),
                     ("<converted benchmark>", "submission", "str 'a/b'"),
                     ("<converted benchmark>", "image_path", "str 'README.md'"),
                     ("<converted benchmark>", "image_path", "str '../q.png'")]
    assert err.value.problems[0].expected == common.files.COMPONENT
    assert err.value.problems[3].expected == common.IMAGE_PATH
    bench.submissions, bench.images = {"model_a": {}}, {"images/p.png": Path("p")}
    check_names(bench)


# ---- writing -----------------------------------------------------------------------------------

def test_the_existing_ancestor_is_the_nearest_name_that_exists(tmp_path: Path) -> None:
    assert existing_ancestor(tmp_path / "a" / "b" / "c") == tmp_path
    (tmp_path / "a").mkdir()
    assert existing_ancestor(tmp_path / "a" / "b" / "c") == tmp_path / "a"
    assert existing_ancestor(tmp_path / "a") == tmp_path
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    assert existing_ancestor(tmp_path / "dangling" / "x") == tmp_path / "dangling"
    assert existing_ancestor(Path("/")) == Path("/")


def test_the_output_folder_is_refused_before_any_work(tmp_path: Path) -> None:
    """A file on the way is refused naming ``--out``; a non-empty folder only with
    ``force``; never one holding an input; a missing or empty one is fine."""
    assert check_target(tmp_path / "new" / "out", False) == tmp_path / "new" / "out"
    (tmp_path / "file").write_text("x")
    with pytest.raises(OVEarthInputError) as err:
        check_target(tmp_path / "file" / "out", False)
    (problem,) = err.value.problems
    assert (problem.file, problem.field, problem.found) == (
        str(tmp_path / "file" / "out"), "--out", f"{tmp_path / 'file'} is a file, not a folder")
    assert problem.expected == "a folder path (its missing parent folders are created)"
    full = tmp_path / "full"
    full.mkdir()
    (full / "keep.txt").write_text("x")
    with pytest.raises(OVEarthInputError) as err:
        check_target(full, False)
    assert err.value.problems[0].field == "--out" and err.value.problems[0].file == str(full)
    assert check_target(full, True) == full
    with pytest.raises(OVEarthInputError):
        check_target(full, True, [full / "keep.txt"])
    assert check_target(full, True, [tmp_path / "elsewhere.txt"]) == full


def _writable() -> Benchmark:
    bench = Benchmark("python -m ovearth_core.convert test")
    bench.add_annotation("a1", "images/p.png", 20, 10, "plane", bbox=[[1, 1, 4, 3]])
    bench.add_annotation("a2", "q.png", 20, 10, "ship", bbox=[[2, 2, 3, 3]])
    bench.add_query("open_vocabulary", "ov1", "a1", "plane")
    bench.add_query("open_vocabulary", "ov2", "a2", "plane", negative=True)
    bench.add_query("reasoning", "rs1", "a2", "what floats")
    return bench


def test_a_benchmark_is_written_as_a_folder_keeping_every_field(tmp_path: Path) -> None:
    """``ground_truth.json`` is the benchmark's document (every annotation field, extras
    too); each submission its tasks and extra members; images placed at their paths (linked
    by default, copied without ``link``); the README names the command, the counts and the
    notes."""
    src = _png(tmp_path / "src" / "p.png", (20, 10))
    bench = _writable()
    bench.annotations[0]["difficult"] = [1]
    bench.images = {"images/p.png": src}
    bench.submissions = {"model_a": {"open_vocabulary": [prediction_row("ov1", "phrase",
                                                                        "plane")]}}
    bench.submission_extra = {"model_a": {"chip_split": {"size": 8}}}
    bench.notes = ["note one"]
    bench.skipped = ["skipped one"]
    bench.inputs = [tmp_path / "src"]
    out = tmp_path / "deep" / "out"
    assert write_benchmark(bench, out) == out
    gt = orjson.loads((out / "ground_truth.json").read_bytes())
    assert gt == {"annotations": bench.annotations,
                  "tasks": {"open_vocabulary": bench.tasks["open_vocabulary"],
                            "reasoning": bench.tasks["reasoning"]}}
    assert gt["annotations"][0]["difficult"] == [1]
    sub = orjson.loads((out / "predictions" / "model_a.json").read_bytes())
    assert sub == {"tasks": bench.submissions["model_a"], "chip_split": {"size": 8}}
    assert (out / "images" / "p.png").read_bytes() == src.read_bytes()
    assert (out / "images" / "p.png").stat().st_ino == src.stat().st_ino  # a hard link
    readme = (out / "README.md").read_text()
    assert readme == (
        "# Converted OVEarth benchmark\n\n"
        "Made by `python -m ovearth_core.convert test`; convert again rather than edit.\n\n"
        "- 2 images (1 with their files in images/, 1 numbers-only); annotations: 2; boxes: 2\n"
        "- open-vocabulary queries: 2 (1 positive, 1 negative); referring: 0; reasoning: 1\n"
        "- submissions in `predictions/`: model_a\n\n"
        "Conversion notes:\n\n"
        "- skipped one\n- note one\n")
    assert sorted(p.name for p in out.iterdir()) == ["README.md", "ground_truth.json",
                                                     "images", "predictions"]


def test_without_submissions_the_predictions_folder_is_there_and_empty(tmp_path: Path) -> None:
    src = _png(tmp_path / "p.png", (20, 10))
    bench = _writable()
    bench.images = {"images/p.png": src}
    out = write_benchmark(bench, tmp_path / "out", link=False)
    assert list((out / "predictions").iterdir()) == []
    assert (out / "images" / "p.png").stat().st_ino != src.stat().st_ino  # a copy
    readme = (out / "README.md").read_text()
    assert "- submissions in `predictions/`: none\n" in readme
    assert readme.endswith("none\n") and "Conversion notes" not in readme


def test_a_bad_name_or_an_occupied_folder_leaves_nothing_written(tmp_path: Path) -> None:
    bench = _writable()
    bench.submissions = {"../evil": {}}
    out = tmp_path / "a" / "b" / "out"
    with pytest.raises(OVEarthInputError):
        write_benchmark(bench, out)
    assert list(tmp_path.iterdir()) == []
    full = tmp_path / "full"
    full.mkdir()
    (full / "x").write_text("x")
    with pytest.raises(OVEarthInputError) as err:
        write_benchmark(_writable(), full)
    assert err.value.problems[0].field == "--out"
    assert sorted(p.name for p in full.iterdir()) == ["x"]


def test_a_failed_write_removes_the_parent_folders_it_made_and_only_those(tmp_path: Path
                                                                         ) -> None:
    """An image that cannot be placed fails the write: the temporary folder and the parents
    made for ``out`` are removed; a parent that existed stays."""
    (tmp_path / "kept").mkdir()
    bench = _writable()
    bench.images = {"images/p.png": tmp_path / "no-such.png"}
    with pytest.raises(OSError):
        write_benchmark(bench, tmp_path / "kept" / "new" / "deeper" / "out")
    assert [p.name for p in tmp_path.iterdir()] == ["kept"]
    assert list((tmp_path / "kept").iterdir()) == []


def test_validate_names_the_options_a_benchmark_needs_and_nothing_otherwise() -> None:
    bench = _writable()
    assert common.validate(bench) == []
    concave = [[0, 0], [10, 0], [2, 2], [0, 10]]
    bench.annotations[0]["oriented_bbox"] = [concave]
    bench.submissions = {"m": {"open_vocabulary": [
        {"query_id": "ov1", "phrase": "plane", "segmentation": None, "bbox": [],
         "oriented_bbox": [{"polygon": concave, "score": 0.9},
                           {"polygon": concave, "score": 0.8}]}]}}
    (need,) = common.validate(bench)
    assert need.startswith("3 concave oriented boxes (ground truth and predictions), kept as "
                           "the polygons DOTA_devkit scores: evaluate this benchmark with "
                           "--concave-obb of ")


# ---- progress ----------------------------------------------------------------------------------

class _Clock:
    """``time.monotonic`` advancing by ``step`` seconds a call."""

    def __init__(self, step: float) -> None:
        self.now, self.step = 0.0, step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


class _Out(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def test_progress_is_quiet_when_off_quick_or_empty(monkeypatch: pytest.MonkeyPatch) -> None:
    out = _Out(False)
    assert list(progress(iter(range(5)), "x", False, stream=out)) == [0, 1, 2, 3, 4]
    assert list(progress([], "x", True, stream=out)) == []
    monkeypatch.setattr(common.time, "monotonic", _Clock(0.01))
    assert list(progress(range(20), "x", True, stream=out)) == list(range(20))
    assert out.getvalue() == ""  # 0.2 s in all: under PROGRESS_AFTER


def test_progress_without_a_terminal_prints_each_tenth_once(monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    monkeypatch.setattr(common.time, "monotonic", _Clock(2.0))
    out = _Out(False)
    assert list(progress(iter(range(20)), "writing", True, stream=out)) == list(range(20))
    assert out.getvalue().splitlines() == ["writing: 1/20 (0 %)"] + [
        f"writing: {done}/20 ({10 * (done // 2)} %)" for done in range(2, 21, 2)]


def test_progress_on_a_terminal_redraws_one_line_and_ends_it(monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    monkeypatch.setattr(common.time, "monotonic", _Clock(2.0))
    out = _Out(True)
    assert list(progress(range(3), "img", True, total=3, stream=out)) == [0, 1, 2]
    assert out.getvalue() == ("\rimg: [##########                    ] 1/3"
                              "\rimg: [####################          ] 2/3"
                              "\rimg: [##############################] 3/3\n")


def test_progress_on_a_terminal_redraws_at_most_ten_times_a_second(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the first second, a redraw only when 0.1 s has passed (or at the end)."""
    times = iter([0.0, 1.5, 1.55, 1.7, 1.72, 1.74])
    monkeypatch.setattr(common.time, "monotonic", lambda: next(times))
    out = _Out(True)
    list(progress(range(5), "b", True, stream=out))
    assert out.getvalue() == ("\rb: [######                        ] 1/5"
                              "\rb: [##################            ] 3/5"
                              "\rb: [##############################] 5/5\n")


# ---- the first run's survivors (issue 47: 84 of 966; each test names the mutants it kills,
# the equivalent ones are listed in docs/tests.md) ----------------------------------------------

def test_a_skipped_object_is_one_per_file_and_name() -> None:
    """Rule: a ground-truth object is named by its file and its name: ``o1`` of two files is
    two objects left out, ``o1`` twice in one file one. Kills ``Degenerate.add`` 23 (the
    key without the file)."""
    bad = Problems()
    deg = Degenerate(skip=True)
    deg.add(bad, "a.xml", "bndbox", "xmax > xmin", 1, line=2, obj="o1")
    deg.add(bad, "b.xml", "bndbox", "xmax > xmin", 2, line=5, obj="o1")
    deg.add(bad, "b.xml", "bndbox", "ymax > ymin", 3, line=6, obj="o1")
    assert deg.warnings() == [
        "2 objects of zero area left out of the ground truth (--skip-degenerate): "
        "a.xml line 2 bndbox: zero area (xmax > xmin; found int 1); "
        "b.xml line 5 bndbox: zero area (xmax > xmin; found int 2)"]


def test_an_error_without_a_message_is_named_by_its_kind(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Rule: a read that fails with no message still says what was found: the error's
    kind (``OSError``, ``ValueError``), never an empty text. Kills ``read_source`` 28
    (``NoneType``)."""
    for error in (OSError(), ValueError()):
        def refuse(path: Any, error: Exception = error) -> bytes:
            raise error
        monkeypatch.setattr(common.files, "read_bounded", refuse)
        with pytest.raises(OVEarthInputError) as err:
            read_source(tmp_path / "x.txt", "labels file")
        assert _texts(err.value) == [f"{tmp_path / 'x.txt'}, field (file): expected a "
                                     f"readable labels file, found {type(error).__name__}"]


def test_a_json_source_that_does_not_parse_names_the_file_and_where(tmp_path: Path) -> None:
    """Rule: invalid JSON is a problem naming the file and the parser's place (``{"a": NaN}``:
    the N is character 6, column 7). Kills ``load_json`` 8 (no file) and 11 (no found)."""
    path = tmp_path / "d.json"
    path.write_bytes(b'{"a": NaN}')
    with pytest.raises(OVEarthInputError) as err:
        load_json(path, "x", dict)
    (problem,) = err.value.problems
    assert problem.file == str(path)
    assert problem.found.endswith("line 1 column 7 (char 6)")


def test_source_files_name_every_refusal_with_the_gates_words(tmp_path: Path) -> None:
    """Rule: each refused entry is a problem with what the gate expected and found (a link
    out: the folder it must stay in and where it leads; a pipe: a regular file, a named
    pipe); a name not in UTF-8 is a problem too, the file left out; a folder that cannot be
    resolved is found "unresolvable". Kills ``source_files`` 14, 23, 24, 25 (the link
    loop's found), 35, 36 (expected, found), 45 (the names' problems not collected)."""
    src = tmp_path / "src"
    src.mkdir()
    (tmp_path / "secret.xml").write_text("s")
    (src / "link.xml").symlink_to(tmp_path / "secret.xml")
    os.mkfifo(src / "pipe.xml")
    (src / os.fsdecode(b"caf\xe9.xml")).write_text("x")
    (src / "a.xml").write_text("x")
    bad = Problems()
    assert source_files(src, bad) == [src / "a.xml"]
    assert [(p.file, p.field, p.expected, p.found) for p in bad.items] == [
        (str(src / "link.xml"), "(file)", f"a file inside {src} (links may not leave it)",
         f"a path that resolves to {tmp_path / 'secret.xml'}"),
        (str(src / "pipe.xml"), "(file)", "a regular file", "a named pipe (FIFO)"),
        (f"{src}/caf\\xe9.xml", "(file name)", common.UTF8_NAME, "caf\\xe9.xml")]
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    bad = Problems()
    assert source_files(loop, bad) == []
    assert bad.items[0].found == "unresolvable"


def test_an_unreadable_sizes_file_is_named_as_one(tmp_path: Path) -> None:
    """Rule: the problem of a sizes file that cannot be read or decoded calls it a sizes
    file. Kills ``read_sizes`` 9, 13, 14."""
    bad = Problems()
    assert read_sizes(tmp_path / "missing.txt", bad) == {}
    (tmp_path / "s.txt").write_bytes(b"a 1 2\n\xff 3 4\n")
    assert read_sizes(tmp_path / "s.txt", bad) == {}
    assert [p.expected for p in bad.items] == ["a readable sizes file",
                                               "a UTF-8 text sizes file"]


def test_a_bad_sizes_line_is_shown_by_its_first_60_characters(tmp_path: Path) -> None:
    """Rule: a line that is not three fields is shown by its first 60 characters, whatever
    follows: here a double quote as the 61st, after a single quote among the first 60
    (so the shown text keeps the quoting of those 60: ``"it's ...``). Kills ``read_sizes``
    45 (61 characters)."""
    line = "it's " + "x" * 55 + '" 1 2'
    path = tmp_path / "sizes.txt"
    path.write_text(line + "\n")
    bad = Problems()
    assert read_sizes(path, bad) == {}
    # describe(): repr of the 60 characters, cut to 57 and "..." (repr quotes with " as
    # the text holds a ' and no ")
    assert bad.items[0].found == 'str "it\'s ' + "x" * 51 + "..."


def test_eleven_names_are_ten_and_one_more() -> None:
    """Rule: at most ten names are listed; the eleventh is "1 more". Kills
    ``MissingImages.warning`` 14 and ``skipped_files`` 13 (more than 11)."""
    names = [f"n{i:02d}" for i in range(11)]
    missing = MissingImages("f")
    for name in names:
        missing.add(name, "s")
    listed_ten = ", ".join(names[:10])
    assert missing.warning(11) == [
        f"11 of 11 images are not in f: {listed_ten} and 1 more. Converted numbers-only (the "
        "benchmark holds no pixels for them; the app shows none); sizes: 11 from s"]
    assert skipped_files("files", Path("src"), names, "are not XML") == [
        f"11 files in src are not XML: {listed_ten} and 1 more"]


def test_an_image_that_is_no_file_is_an_os_error_naming_it(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    """Rule: a folder (a pipe, a device) given as an image is an ``OSError`` whose message
    names it and what was found, at the TIFF check and at Pillow's open alike. Kills
    ``image_size`` 5, 6 (the TIFF check's message lost) and 23, 24 (Pillow's)."""
    with pytest.raises(OSError) as err:
        common.image_size(tmp_path)
    assert str(err.value) == f"{tmp_path}: expected a regular file, found a folder"
    # past the TIFF check (as if the file changed after it), at Pillow's open
    monkeypatch.setattr(georef, "is_tiff", lambda path: False)
    with pytest.raises(OSError) as err:
        common.image_size(tmp_path)
    assert str(err.value) == f"{tmp_path}: expected a regular file, found a folder"


def test_an_images_size_is_read_whatever_the_input_cap(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Rule: only an image's header is read, so the input size cap does not apply: a
    9 KB PNG is measured under a cap of 1,048 bytes (``OVEARTH_MAX_INPUT_MB=0.001``). Kills
    ``image_size`` 15, 17 (the environment's cap)."""
    path = tmp_path / "big.png"
    noise = np.random.default_rng(0).integers(0, 256, (48, 64, 3), dtype=np.uint8)
    Image.fromarray(noise).save(path, compress_level=0)
    assert path.stat().st_size > 9000
    monkeypatch.setenv(common.files.MAX_INPUT_MB_VAR, "0.001")
    with pytest.raises(common.files.InputRefused):  # the cap is in force for a whole read
        common.files.read_bounded(path)
    assert common.image_size(path) == (64, 48)


def test_reading_a_size_restores_pillows_limit_and_keeps_other_warnings(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rule: Pillow's decompression-bomb limit is lifted only while the header is read
    (restored after, it is process-wide), and only the bomb warning is silenced: another
    warning Pillow gives still reaches the caller. Kills ``image_size`` 26 (the limit left
    at ``None``), 8 (a filter of no category: the other warning raises ``TypeError``) and 10
    (every warning silenced)."""
    path = _png(tmp_path / "w.png", (7, 3))
    before = Image.MAX_IMAGE_PIXELS
    assert before is not None
    assert common.image_size(path) == (7, 3)
    assert Image.MAX_IMAGE_PIXELS == before
    pillow_open = Image.open

    def open_warning(*args: Any, **kwargs: Any) -> Any:
        warnings.warn("a Pillow warning", UserWarning, stacklevel=2)
        return pillow_open(*args, **kwargs)

    monkeypatch.setattr(common.Image, "open", open_warning)
    with pytest.warns(UserWarning, match="a Pillow warning"):
        assert common.image_size(path) == (7, 3)
    assert Image.MAX_IMAGE_PIXELS == before


def test_images_by_stem_keeps_the_folders_problems(tmp_path: Path) -> None:
    """Rule: an entry of the images folder the gate refuses is a problem of the caller's
    (a named pipe called ``b.png``), not an error. Kills ``images_by_stem`` 19."""
    folder = tmp_path / "imgs"
    _png(folder / "a.png", (3, 2))
    os.mkfifo(folder / "b.png")
    bad = Problems()
    assert images_by_stem(folder, bad) == {"a": folder / "a.png"}
    assert [(p.file, p.found) for p in bad.items] == [(str(folder / "b.png"),
                                                       "a named pipe (FIFO)")]


def test_a_non_empty_output_folder_is_refused_saying_why(tmp_path: Path) -> None:
    """Rule: the refusal of a non-empty ``--out`` says what was expected (``--force``
    replaces it) and what was found. Kills ``check_target`` 28, 29."""
    full = tmp_path / "full"
    full.mkdir()
    (full / "keep.txt").write_text("x")
    with pytest.raises(OVEarthInputError) as err:
        check_target(full, False)
    assert _texts(err.value) == [f"{full}, field --out: expected a new or empty folder (or "
                                 "--force to replace it), found a non-empty folder"]


def test_a_converted_document_that_does_not_load_names_itself() -> None:
    """Rule: ``validate`` reads what a converter built with the evaluator's loader; a
    problem there (a converter's bug) names the converted file, the ground truth's or the
    submission's (here an x2 left of x1: predicted boxes are read as ``[x1, y1, x2, y2]``,
    what the converters write). Kills ``validate`` 1, 2, 3, 6 (the ground truth's name)
    and 16 (the submission's)."""
    bench = _writable()
    bench.annotations[0]["category_name"] = 5
    with pytest.raises(OVEarthInputError) as err:
        common.validate(bench)
    assert [p.file for p in err.value.problems] == ["<converted ground_truth.json>"]
    bench = _writable()
    bench.submissions = {"m": {"open_vocabulary": [
        prediction_row("ov1", "phrase", "plane",
                       boxes=[{"bbox": [10, 1, 5, 3], "score": 0.9}])]}}
    with pytest.raises(OVEarthInputError) as err:
        common.validate(bench)
    assert [(p.file, p.query_id, p.expected) for p in err.value.problems] == [
        ("<converted predictions/m.json>", "ov1",
         "x2 > x1 and y2 > y1, with a finite width and height (--bbox-format xyxy)")]
    bench.submissions["m"]["open_vocabulary"][0]["bbox"] = [{"bbox": [5, 1, 10, 3],
                                                             "score": 0.9}]
    assert common.validate(bench) == []


def _rle(height: int, width: int) -> dict[str, Any]:
    """An empty mask of ``height`` x ``width`` as compressed RLE, without its pixels."""
    from pycocotools import mask as mask_utils

    rle = mask_utils.frPyObjects({"size": [height, width], "counts": [height * width]},
                                 height, width)
    return {"size": [height, width], "counts": rle["counts"].decode()}


def test_validate_counts_predicted_masks_beyond_the_specs_pixels() -> None:
    """Rule: a predicted mask of more than 100,000,000 pixels (height x width: 20,000 x
    5,001) is kept (``large_masks``) and counted, in every submission and task; one of
    exactly 100,000,000 is within the spec. Two beyond: one line naming ``--large-masks``
    and the app's option. Kills ``validate`` 22, 32, 36 (the large mask refused), 44 (the
    count of the last task only), 45 (subtracted), 48 (width x width), 50 (exactly the cap
    counted), 58, 59, 60 (the line's text) and 56, 57 (the concave line's text, below)."""
    from ovearth_core.options import EXTENSION_COMMANDS

    bench = Benchmark("c")
    bench.add_annotation("a1", "p.png", 5001, 20000, "plane", bbox=[[1, 1, 4, 3]])
    bench.add_annotation("a2", "q.png", 10000, 10000, "ship", bbox=[[1, 1, 4, 3]])
    bench.add_query("open_vocabulary", "ov1", "a1", "plane")
    bench.add_query("referring", "rf1", "a2", "the ship")
    tall = prediction_row("ov1", "phrase", "plane", _rle(20000, 5001))
    bench.submissions = {
        "m": {"open_vocabulary": [tall],
              "referring": [prediction_row("rf1", "query", "the ship", _rle(10000, 10000))]},
        "n": {"open_vocabulary": [tall]}}
    assert common.validate(bench) == [
        "2 predicted masks beyond the spec's 100,000,000 pixels: evaluate this benchmark "
        f"with --large-masks of {EXTENSION_COMMANDS}, or the app's 'Masks beyond the spec's "
        "cap' (link bigmask=1); the spec's rules refuse them"]
    concave = [[0, 0], [10, 0], [2, 2], [0, 10]]
    bench.annotations[0]["oriented_bbox"] = [concave]
    concave_line, large_line = common.validate(bench)
    assert concave_line == (
        "1 concave oriented boxes (ground truth and predictions), kept as the polygons "
        f"DOTA_devkit scores: evaluate this benchmark with --concave-obb of "
        f"{EXTENSION_COMMANDS}, or the app's 'Concave oriented boxes' (link concave=1); the "
        "spec's rules refuse them")
    assert large_line.startswith("2 predicted masks")


def test_writing_keeps_the_converters_warnings_and_each_submissions_extras(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
        ) -> None:
    """Rule: ``write_benchmark`` adds what ``validate`` finds to the converter's warnings
    (both kept, in the README too); a submission without extra members is ``{"tasks"}``
    beside one with some; ``ground_truth.json`` is indented for a reader (two spaces);
    no progress line unless asked (the work taking seconds: the clock steps 2 s a call).
    Kills ``write_benchmark`` 4 (the warnings replaced), 31, 33 (a submission without
    extras), 23, 25 (not indented), 3 (progress shown by default)."""
    monkeypatch.setattr(common.time, "monotonic", _Clock(2.0))
    src = _png(tmp_path / "src" / "p.png", (20, 10))
    bench = _writable()
    bench.annotations[0]["oriented_bbox"] = [[[0, 0], [10, 0], [2, 2], [0, 10]]]  # concave
    bench.images = {"images/p.png": src}
    bench.warnings = ["3 of 4 images are not in imgs"]
    bench.submissions = {"a": {}, "b": {}}
    bench.submission_extra = {"b": {"chip_split": {"size": 8}}}
    out = write_benchmark(bench, tmp_path / "out")
    assert len(bench.warnings) == 2 and bench.warnings[0] == "3 of 4 images are not in imgs"
    assert bench.warnings[1].startswith("1 concave oriented boxes")
    readme = (out / "README.md").read_text()
    assert "- 3 of 4 images are not in imgs\n- 1 concave oriented boxes" in readme
    assert orjson.loads((out / "predictions" / "a.json").read_bytes()) == {"tasks": {}}
    assert orjson.loads((out / "predictions" / "b.json").read_bytes()) == {
        "tasks": {}, "chip_split": {"size": 8}}
    assert (out / "ground_truth.json").read_text().startswith('{\n  "annotations": [\n    {\n')
    assert capsys.readouterr().err == ""


def test_writing_images_shows_its_progress_when_asked(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    """Rule: ``show_progress`` reaches the progress line of the images written, labelled
    "writing images" (stderr is no terminal here: one line a tenth). Kills
    ``write_benchmark`` 47, 54, 55 (the label), 48 (not enabled)."""
    monkeypatch.setattr(common.time, "monotonic", _Clock(2.0))
    src = _png(tmp_path / "p.png", (20, 10))
    bench = _writable()
    bench.images = {"images/p.png": src}
    write_benchmark(bench, tmp_path / "out", show_progress=True)
    assert capsys.readouterr().err == "writing images: 1/1 (100 %)\n"


def test_force_replaces_a_folder_but_never_one_holding_an_input(tmp_path: Path) -> None:
    """Rule: ``force`` reaches the write: a non-empty ``--out`` is replaced with it, refused
    without it even when there are inputs; one that holds an input (``bench.inputs`` or an
    image's source) is refused even with it, and left as it was. Kills ``write_benchmark``
    10 (``force`` lost), 13 (the inputs taken for ``force``), 14 (the inputs not passed)."""
    src = _png(tmp_path / "src" / "p.png", (20, 10))
    out = tmp_path / "out"
    out.mkdir()
    (out / "old.txt").write_text("x")
    bench = _writable()
    bench.images = {"images/p.png": src}
    bench.inputs = [tmp_path / "labels.txt"]
    with pytest.raises(OVEarthInputError):
        write_benchmark(bench, out)
    assert [p.name for p in out.iterdir()] == ["old.txt"]
    write_benchmark(bench, out, force=True)
    assert not (out / "old.txt").exists() and (out / "ground_truth.json").is_file()
    held = tmp_path / "src"
    (held / "labels.txt").write_text("x")
    bench = _writable()
    bench.inputs = [held / "labels.txt"]
    with pytest.raises(OVEarthInputError) as err:
        write_benchmark(bench, held, force=True)
    assert err.value.problems[0].found == f"a folder that holds the input {held / 'labels.txt'}"
    assert sorted(p.name for p in held.iterdir()) == ["labels.txt", "p.png"]


@pytest.mark.parametrize("kind", ["notes", "warnings", "skipped"])
def test_the_readme_has_conversion_notes_for_any_one_kind(tmp_path: Path, kind: str) -> None:
    """Rule: notes, warnings or skipped files, any one of them alone, make the README's
    "Conversion notes"; two submissions are listed comma-separated. Kills ``_readme`` 36,
    37 (``and`` for ``or``) and 31 (the separator)."""
    bench = _writable()
    setattr(bench, kind, [f"one of the {kind}"])
    bench.submissions = {"zeta": {}, "alpha": {}}
    readme = (write_benchmark(bench, tmp_path / "out") / "README.md").read_text()
    assert readme.endswith("- submissions in `predictions/`: alpha, zeta\n\n"
                           f"Conversion notes:\n\n- one of the {kind}\n")


def test_progress_is_quiet_when_off_however_long_and_on_a_quiet_terminal(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Rule: off means no line however long the work takes; a quick run on a terminal
    draws nothing and ends no line; a clock far from zero (``time.monotonic`` has no fixed
    origin) counts from the start. Kills ``progress`` 7 (on when off but not empty), 13
    (``None >= 0`` at the end), 14 (a newline never drawn), 22 (``now + start``)."""
    monkeypatch.setattr(common.time, "monotonic", _Clock(2.0))
    out = _Out(False)
    assert list(progress(range(5), "x", False, stream=out)) == list(range(5))
    assert out.getvalue() == ""
    clock = _Clock(0.01)
    clock.now = 5000.0
    monkeypatch.setattr(common.time, "monotonic", clock)
    for tty in (True, False):
        out = _Out(tty)
        assert list(progress(range(20), "x", True, stream=out)) == list(range(20))
        assert out.getvalue() == ""


def test_progress_starts_at_exactly_progress_after_even_for_one_item(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Rule: the line is shown once ``PROGRESS_AFTER`` (1 s) has passed, that second
    included, for a single item too. Kills ``progress`` 23 (``<=``) and 10 (one item
    quiet)."""
    times = iter([0.0, 1.0])
    monkeypatch.setattr(common.time, "monotonic", lambda: next(times))
    out = _Out(False)
    assert list(progress(["a"], "x", True, stream=out)) == ["a"]
    assert out.getvalue() == "x: 1/1 (100 %)\n"


def test_progress_on_a_terminal_redraws_when_a_tenth_of_a_second_has_passed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Rule: a redraw at most ten times a second means one exactly 0.1 s after the last is
    drawn (0.0 to 0.1: exact in binary floating point; the clock's origin is arbitrary).
    Kills ``progress`` 32 (``> 0.1``)."""
    times = iter([-1.0, 0.0, 0.1, 0.15])
    monkeypatch.setattr(common.time, "monotonic", lambda: next(times))
    out = _Out(True)
    assert list(progress(range(3), "b", True, stream=out)) == [0, 1, 2]
    assert out.getvalue() == ("\rb: [##########                    ] 1/3"
                              "\rb: [####################          ] 2/3"
                              "\rb: [##############################] 3/3\n")
