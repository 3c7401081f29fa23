"""The gate on every page (issue 48): the folders a page reads (the submissions folder of the
Audit and Leaderboard pages, the sidebar's ``predictions/``, the images folder) hold
symbolic links out of the data roots; nothing outside is read (every ``open`` and listing
of the process is watched through Python's audit hooks), nothing of it is shown, and the
refused files are named.

At c100000 the Audit page read ``*.json`` of its folder without the gate: a link to an
outside file that is no JSON showed its first characters in the error box, a valid one
voted."""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from app_fixtures import Dataset, app_on, assert_on, goto
from audit_scene import write_audit_dataset
from streamlit.testing.v1 import AppTest

from ovearth_core.paths import ENV_VAR
from pages.common import nav

MARKER = "SECRET-48-do-not-show"
TIMEOUT = 180

pytestmark = pytest.mark.usefixtures("fresh_caches")


class Watch:
    """Paths opened or listed by this process while ``on`` (``sys.addaudithook`` cannot
    be removed: one hook for the module, switched on by the fixture)."""

    on = False
    seen: list[str] = []

    @classmethod
    def hook(cls, event: str, args: tuple) -> None:
        if not cls.on or event not in ("open", "os.listdir", "os.scandir", "glob.glob"):
            return
        path = args[0] if args else None
        if isinstance(path, (str, bytes, os.PathLike)):
            cls.seen.append(os.fsdecode(path))


sys.addaudithook(Watch.hook)


@pytest.fixture()
def watch() -> Iterator[type[Watch]]:
    Watch.seen = []
    Watch.on = True
    try:
        yield Watch
    finally:
        Watch.on = False


def _inside(path: str, folder: Path) -> bool:
    try:
        return Path(os.path.abspath(path)).resolve().is_relative_to(folder.resolve())
    except (OSError, ValueError, RuntimeError):
        return False


@pytest.fixture()
def scene(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Dataset, Path]:
    """The audit scene inside the only data root, with links out: ``predictions/leak.json``
    (a valid submission outside), ``predictions/secret.json`` (an outside file that is no
    JSON, holding :data:`MARKER`) and the first image of the ground truth."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    monkeypatch.setenv(ENV_VAR, str(root))
    gt, preds = write_audit_dataset(root / "data")
    outside.mkdir()
    shutil.copy(preds[1], outside / "leak.json")
    (outside / "secret.json").write_text(f"{MARKER} " * 20)
    (preds[0].parent / "leak.json").symlink_to(outside / "leak.json")
    (preds[0].parent / "secret.json").symlink_to(outside / "secret.json")
    image = json.loads(gt.read_text())["annotations"][0]["image_path"]
    shutil.move(gt.parent / image, outside / "image.png")
    (gt.parent / image).symlink_to(outside / "image.png")
    return Dataset(gt.parent, gt, gt.parent, preds[0], preds[1]), outside


LAZY_TABLES_OPEN = dict.fromkeys(("_w_categories_open", "_w_cmp_diffs_open",
                                  "_w_cmp_flipped_open", "_w_cmp_categories_open",
                                  "_w_cmp_review_open"), True)


def _texts(at: AppTest) -> list[str]:
    out = []
    for kind in ("error", "warning", "info", "markdown", "caption", "exception", "success",
                 "code", "text", "title", "header", "subheader"):
        out += [str(e.value) for e in getattr(at, kind)]
    out += [str(d.value.to_dict()) for d in at.dataframe]
    return out


def _warned(at: AppTest, name: str) -> str:
    found = [w.value for w in at.warning if f"`{name}` left out" in w.value]
    assert len(found) == 1, [w.value for w in at.warning]
    return found[0]


@pytest.mark.parametrize("page", [p.file for p in nav.PAGES])
def test_no_page_reads_or_shows_a_file_out_of_the_roots(scene: tuple[Dataset, Path],
                                                        watch: type[Watch], page: str) -> None:
    ds, outside = scene
    # The lazy expanders of the Overview's and Compare's long tables and Compare's review
    # panel open (issue 49), so that what they show is checked as before.
    at = app_on(ds, TIMEOUT, selected={"vocabulary": "ov_000001"}, **LAZY_TABLES_OPEN)
    goto(at, page)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert_on(at, page)
    read = sorted({p for p in watch.seen if _inside(p, outside)})
    assert not read, read
    assert not [t for t in _texts(at) if MARKER in t]
    assert watch.seen  # the watch sees this page's own reads


@pytest.mark.parametrize("page", ["pages/Audit.py", "pages/Leaderboard.py"])
def test_the_submissions_folder_names_each_refused_link(scene: tuple[Dataset, Path],
                                                        page: str) -> None:
    ds, outside = scene
    at = app_on(ds, TIMEOUT)
    goto(at, page)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    for name in ("leak", "secret"):
        why = _warned(at, name)
        assert "expected a file inside" in why and "(links may not leave it)" in why
        assert f"resolves to {outside / f'{name}.json'}" in why
    assert not [t for t in _texts(at) if MARKER in t]
    if page == "pages/Audit.py":  # the outside submission does not vote
        voters = {row for d in at.dataframe for row in d.value.get("submission", [])}
        assert voters and "leak" not in voters
    else:
        assert "leak" not in list(at.dataframe[0].value["model"])
