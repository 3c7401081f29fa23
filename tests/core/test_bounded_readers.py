"""Every reader of a user-named side file (taxonomy, to-coco mapping, classes file, DOTA
label files, DIOR-RSVG XML) reads through the bounded regular-file check of
:mod:`ovearth_core.files` (issue 26 item 8): a named pipe is refused at once (never waited
on), a file over the input cap is refused without being read, each with the file named."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from PIL import Image

from ovearth_core.analysis import slices
from ovearth_core.convert import label_maps
from ovearth_core.convert.coco import from_coco_export
from ovearth_core.errors import OVEarthInputError

REPO = Path(__file__).resolve().parents[2]

# Each reader, as a statement on a path ``p`` (a tmp folder ``t`` beside it).
READERS = {
    "taxonomy": "from ovearth_core.analysis import slices; slices.load_taxonomy(p)",
    "classes file": "from ovearth_core.convert import label_maps; label_maps.read_classes(p)",
    "to-coco mapping": "from ovearth_core.convert.coco import from_coco_export; "
                       "from_coco_export(p, t, t / 'out')",
    "DOTA label file": "from ovearth_core.convert.dota import from_dota; "
                       "from_dota(p.parent, t, t / 'out')",
    "RSVG XML": "from ovearth_core.convert.rsvg import from_rsvg; "
                "from_rsvg(p.parent, t, t / 'out')",
}
NAMES = {"taxonomy": "taxonomy.json", "classes file": "classes.txt",
         "to-coco mapping": "mapping.json", "DOTA label file": "P0001.txt",
         "RSVG XML": "00001.xml"}


def _images(tmp: Path) -> Path:
    """An images folder with the image the DOTA label file P0001.txt names."""
    folder = tmp / "images"
    folder.mkdir()
    Image.new("RGB", (8, 8)).save(folder / "P0001.png")
    return folder


def _run_reader(reader: str, path: Path, tmp: Path, **env: str) -> subprocess.CompletedProcess:
    """The reader in a fresh interpreter: a reader that waits on a pipe is killed after 60 s
    (the test then fails on the timeout, it does not hang)."""
    code = textwrap.dedent(f"""
        import sys
        from pathlib import Path
        from ovearth_core.errors import OVEarthInputError
        p, t = Path({str(path)!r}), Path({str(tmp)!r})
        try:
            {READERS[reader]}
        except OVEarthInputError as err:
            print(err)
            sys.exit(2)
        print("read without a problem")
    """)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO), **env},
                          timeout=60, check=False)


@pytest.mark.parametrize("reader", READERS)
def test_a_named_pipe_is_refused_at_once(tmp_path: Path, reader: str) -> None:
    folder = tmp_path / "src"
    folder.mkdir()
    pipe = folder / NAMES[reader]
    os.mkfifo(pipe)
    proc = _run_reader(reader, pipe, _images(tmp_path))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "named pipe (FIFO)" in proc.stdout and str(pipe) in proc.stdout
    assert "Traceback" not in proc.stderr


def _big(reader: str, path: Path, size: int) -> None:
    """A well-formed file of the reader's kind, of at least ``size`` bytes."""
    pad = "x" * size
    text = {"taxonomy": json.dumps({"ship": "vehicle", pad: "vehicle"}),
            "classes file": f"water\n{pad}\n",
            "to-coco mapping": json.dumps({"format": "nope", "pad": pad}),
            "DOTA label file": "0 0 1 0 1 1 0 1 ship 0\n" * (size // 20 + 1),
            "RSVG XML": f"<annotation><pad>{pad}</pad></annotation>"}[reader]
    path.write_text(text)


@pytest.mark.parametrize("reader", READERS)
def test_a_file_over_the_cap_is_refused_unread(tmp_path: Path, reader: str) -> None:
    folder = tmp_path / "src"
    folder.mkdir()
    path = folder / NAMES[reader]
    _big(reader, path, 1_200_000)
    proc = _run_reader(reader, path, _images(tmp_path), OVEARTH_MAX_INPUT_MB="1")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "at most 1 MB" in proc.stdout and str(path) in proc.stdout
    assert f"({path.stat().st_size:,} bytes)" in proc.stdout


def test_a_gigabyte_taxonomy_is_refused_without_reading(tmp_path: Path) -> None:
    """A sparse 1 GB file (no disk used): refused on its size, no MemoryError."""
    path = tmp_path / "taxonomy.json"
    with open(path, "wb") as handle:
        handle.truncate(1 << 30)
    with pytest.raises(OVEarthInputError) as err:
        slices.load_taxonomy(path)
    (problem,) = err.value.problems
    assert problem.file == str(path) and problem.field == "(file)"
    assert "1.0 GB" in problem.found and "at most 200 MB" in problem.expected


def test_a_folder_is_refused_as_a_classes_file(tmp_path: Path) -> None:
    with pytest.raises(OVEarthInputError) as err:
        label_maps.read_classes(tmp_path)
    assert "a folder" in str(err.value)


def test_small_side_files_still_read(tmp_path: Path) -> None:
    tax = tmp_path / "taxonomy.json"
    tax.write_text('{"ship": "vehicle"}')
    assert slices.load_taxonomy(tax) == {"ship": "vehicle"}
    classes = tmp_path / "classes.txt"
    classes.write_text("\ufeffbackground\nwater\n")
    assert label_maps.read_classes(classes) == {0: "background", 1: "water"}
    mapping = tmp_path / "mapping.json"
    mapping.write_text('{"format": "other"}')
    with pytest.raises(OVEarthInputError) as err:
        from_coco_export(mapping, tmp_path, tmp_path / "out")
    assert err.value.problems[0].field == "format"
