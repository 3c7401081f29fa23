"""What the converters share, rule by rule (issue 47, mutation testing of
``ovearth_core/convert/common.py``): direct calls on small inputs, expected values written
out here (hand-worked counts, texts and paths), so each rule is pinned without a converter's
run around it.
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

import orjson
import pytest
from PIL import Image

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
