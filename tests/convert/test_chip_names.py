"""Chip names under attack (issue 35, item 10) and chip extents from the split settings
(issue 34, item 9).

ImgSplit names a chip ``<scene>__<rate>__<x>___<y>``. A submission's ``chips`` and a Task1
file's ``image_name`` are user text: offsets of 401 or 5,000 digits, rates that overflow a
division, must come back as a clear message (the file, line and field, what is expected), never
an OverflowError or ValueError. One parser reads every chip name, with a digit count and a value
range for each number.

When the chip images are absent, a chip's extent comes from the split settings: the
``--chip-size`` / ``--chip-gap`` flags of ``from-dota --merge-chips`` (written into the
submission as ``chip_split``), else the chip names' pattern (ImgSplit puts the last chip of a
row flush with the scene's border: its side is the resized scene's width minus that offset),
else ImgSplit's default 1024 px, said so.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from convert_helpers import run_cli
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from ovearth_core.convert import from_dota
from ovearth_core.convert.chips import (
    MAX_OFFSET,
    ChipNameError,
    chip_extent,
    chips_by_scene,
    parse_chip_name,
    read_chip_name,
    scene_extents,
    split_settings,
)
from ovearth_core.errors import OVEarthInputError

HOSTILE = [
    "P0001__1__" + "9" * 401 + "___0",
    "P0001__1__" + "9" * 5000 + "___0",
    "P0001__1__0___" + "1" * 5000,
    "P0001__0." + "0" * 400 + "1__0___0",
    "P0001__" + "9" * 400 + "__0___0",
    "P0001__0.0000001__100___0",
]


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_chip_names_are_refused_with_what_was_expected(name: str) -> None:
    assert parse_chip_name(name) is None
    with pytest.raises(ChipNameError) as err:
        read_chip_name(name)
    text = str(err.value)
    assert "digits" in text or "rate" in text
    with pytest.raises(ValueError, match="chip name"):
        chip_extent(name, (1000, 1000))


def test_chip_name_bounds_hand_worked() -> None:
    assert read_chip_name(f"S__1__{MAX_OFFSET}___0") == ("S", 1.0, MAX_OFFSET, 0)
    assert read_chip_name("S__0.5__824___0") == ("S", 0.5, 824, 0)
    assert parse_chip_name(f"S__1__{MAX_OFFSET + 1}___0") is None
    assert parse_chip_name("S__1__0999999999___0") is None  # 10 digits
    assert parse_chip_name("S__1000__0___0") == ("S", 1000.0, 0, 0)
    assert parse_chip_name("S__1001__0___0") is None
    assert parse_chip_name("S__0.001__0___0") == ("S", 0.001, 0, 0)
    assert parse_chip_name("S__0.0009__0___0") is None


chip_parts = st.one_of(st.text(max_size=12), st.from_regex(r"[0-9]{0,12}(\.[0-9]{0,12})?",
                                                            fullmatch=True),
                       st.integers(0, 10 ** 6).map(lambda k: "9" * k))


@settings(max_examples=300, deadline=None)
@given(st.lists(chip_parts, min_size=1, max_size=4), st.sampled_from(["__", "___", "_", ""]))
def test_any_chip_name_parses_or_is_refused_cleanly(parts: list[str], sep: str) -> None:
    """Any text: a bounded tuple, or ``None`` / :class:`ChipNameError`, nothing else; and
    the extent of an accepted name is finite."""
    name = "P0001__" + sep.join(parts) if len(parts) > 1 else parts[0]
    parsed = parse_chip_name(name)
    try:
        read = read_chip_name(name)
    except ChipNameError as err:
        assert parsed is None and str(err)
        return
    assert read == parsed
    _, rate, x, y = read
    assert 0 <= x <= MAX_OFFSET and 0 <= y <= MAX_OFFSET and 0.001 <= rate <= 1000
    box = chip_extent(name, (4000, 3000)).box
    assert all(abs(v) < 1e13 for v in box)


def test_chips_by_scene_skips_hostile_names() -> None:
    doc = {"tasks": {"open_vocabulary": [{"bbox": [{"chips": ["P1__1__0___0", *HOSTILE]}]}]}}
    assert chips_by_scene(doc) == {"P1": ["P1__1__0___0"]}


def _scene(root: Path, width: int = 1200, height: int = 900) -> None:
    (root / "images").mkdir(parents=True)
    (root / "labelTxt").mkdir()
    Image.new("RGB", (width, height)).save(root / "images" / "P0001.png")
    (root / "labelTxt" / "P0001.txt").write_text("10 10 50 10 50 50 10 50 plane 0\n")


@pytest.mark.parametrize("name", HOSTILE)
def test_from_dota_merge_chips_refuses_hostile_names_without_a_traceback(
        tmp_path: Path, name: str) -> None:
    _scene(tmp_path)
    results = tmp_path / "results" / "m"
    results.mkdir(parents=True)
    (results / "Task1_plane.txt").write_text(
        "P0001__1__0___0 0.5 1 1 5 1 5 5 1 5\n" f"{name} 0.9 1 1 5 1 5 5 1 5\n")
    proc = run_cli("from-dota", "--labels", str(tmp_path / "labelTxt"), "--images",
                   str(tmp_path / "images"), "--results", str(results),
                   "--merge-chips", "--out", str(tmp_path / "bench"), "--quiet")
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "Task1_plane.txt" in proc.stderr and "line 2" in proc.stderr
    assert "image_name" in proc.stderr and ("digits" in proc.stderr or "rate" in proc.stderr)
    assert len(proc.stderr) < 3000  # the 5,000-digit name is shortened in the message
    assert not (tmp_path / "bench").exists()


def test_a_chip_mapped_beyond_the_coordinate_bound_is_a_problem(tmp_path: Path) -> None:
    """A rate of 0.001 maps a chip coordinate of 1e98 to 1e101, beyond the evaluator's
    ±1e100: refused with the file, line and field, not handed to GEOS."""
    _scene(tmp_path)
    results = tmp_path / "results" / "m"
    results.mkdir(parents=True)
    (results / "Task1_plane.txt").write_text("P0001__0.001__0___0 0.9 1e98 1 5 1 5 5 1 5\n")
    with pytest.raises(OVEarthInputError) as err:
        from_dota(tmp_path / "labelTxt", tmp_path / "images", tmp_path / "bench", [results],
                  merge_chips=True)
    assert "line 1" in str(err.value) and "x1" in str(err.value)


# ------------------------------------------------------------ extents (issue 34, item 9)

def test_the_chip_side_comes_from_the_names_pattern() -> None:
    """A 2,000 x 1,500 scene cut into 512-px chips, gap 100 (stride 412): x offsets 0, 412,
    824, 1236 and the last flush with the border, 2000 - 512 = 1488. A box at x 780-820 is
    in chip x 412 only (taking 1024-px chips put it in chip x 0 too: the issue's report)."""
    from ovearth_core.convert.chips import place

    names = [f"S__1__{x}___0" for x in (0, 412, 824, 1236, 1488)]
    chips = scene_extents(names, (2000, 1500), {}, None)
    assert [c.box for c in chips][:2] == [(0, 0, 512, 512), (412, 0, 924, 512)]
    assert all(c.side == 512 and c.source == "chip names" for c in chips)
    assert place((780, 100, 820, 140), chips) == ("in", ("S__1__412___0",))
    # Names at offset 0 only: nothing to read the side from; the default, said so.
    chips = scene_extents(["S__1__0___0"], (2000, 1500), {}, None)
    assert chips[0].side == 1024 and chips[0].source == "ImgSplit's default"
    # Every border offset bounds the side from above; the smallest bound is taken.
    assert scene_extents(names[:2], (2000, 1500), {}, None)[0].side == 1588


def test_the_chip_side_comes_from_the_settings_before_the_names() -> None:
    names = ["S__0.5__0___0", "S__0.5__206___0"]
    settings_ = split_settings({"chip_split": {"subsize": 256, "gap": 50}})
    assert settings_ is not None and (settings_.subsize, settings_.gap) == (256, 50)
    chips = scene_extents(names, (2000, 1500), {}, settings_)
    # At rate 0.5 a 256-px chip at x 206 of the halved scene covers scene x 412-924.
    assert chips[1].box == (412, 0, 924, 512) and chips[1].source == "split settings"
    # A chip image's own size wins.
    chips = scene_extents(names, (2000, 1500), {"S__0.5__0___0": (100, 80)}, settings_)
    assert chips[0].box == (0, 0, 200, 160) and chips[0].sized
    for bad in ({"chip_split": {"subsize": "x"}}, {"chip_split": {"subsize": 10 ** 400}},
                {"chip_split": {"subsize": -5, "gap": 0}}, {"chip_split": []}, {}):
        assert split_settings(bad) is None


def test_from_dota_writes_the_split_settings_of_its_flags_or_the_names(tmp_path: Path) -> None:
    _scene(tmp_path, 2000, 1500)
    results = tmp_path / "results" / "m"
    results.mkdir(parents=True)
    (results / "Task1_plane.txt").write_text(
        "P0001__1__0___0 0.9 10 10 50 10 50 50 10 50\n"
        "P0001__1__1488___988 0.8 10 10 50 10 50 50 10 50\n")
    from_dota(tmp_path / "labelTxt", tmp_path / "images", tmp_path / "a", [results],
              merge_chips=True)
    doc = json.loads((tmp_path / "a" / "predictions" / "m.json").read_text())
    assert doc["chip_split"] == {"subsize": 512, "gap": None, "source": "chip names"}
    from_dota(tmp_path / "labelTxt", tmp_path / "images", tmp_path / "b", [results],
              merge_chips=True, chip_size=600, chip_gap=100)
    doc = json.loads((tmp_path / "b" / "predictions" / "m.json").read_text())
    assert doc["chip_split"] == {"subsize": 600, "gap": 100, "source": "flags"}
