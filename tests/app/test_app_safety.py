"""What a user feeds the app: typed paths stay in the data roots, are regular files within
the upload cap (a named pipe or device of our own is refused without waiting), data folders
are never written, and the server's safety settings (local address, no statistics, upload
cap)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import sys
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from app_fixtures import Dataset, app_on, card_html, goto, write_dataset
from browser_support import IDLE, MS, Server, copy_app
from playwright.sync_api import Page, expect
from streamlit.testing.v1 import AppTest

from ovearth_core.files import MAX_INPUT_MB_VAR
from ovearth_core.paths import ENV_VAR
from ovearth_core.viz.images import load_display_image

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "app.py")
DEMO = REPO / "assets" / "demo"


pytestmark = pytest.mark.usefixtures("fresh_caches")


@pytest.fixture()
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The only data root (as ``--data-root``/``OVEARTH_DATA_ROOT`` would set it)."""
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "root"))
    (tmp_path / "root").mkdir()
    return tmp_path / "root"


@pytest.fixture()
def ds(root: Path) -> Dataset:
    return write_dataset(root / "data")


@pytest.fixture()
def outside(tmp_path: Path) -> Dataset:
    return write_dataset(tmp_path / "elsewhere")


def _app(ds: Dataset, **state: object) -> AppTest:
    return app_on(ds, **state)


def _refused(at: AppTest, label: str, typed: str, root: Path) -> None:
    assert not at.exception, [e.value for e in at.exception]
    errors = [e.value for e in at.error]
    assert len(errors) == 1, errors
    assert errors[0].startswith(f"**{label}**") and typed in errors[0]
    assert str(root) in errors[0] and str(DEMO) in errors[0]
    assert "streamlit run app.py -- --data-root DIR" in errors[0] and ENV_VAR in errors[0]
    assert not at.metric  # nothing was evaluated


def test_config_keeps_the_server_local_quiet_and_capped() -> None:
    config = tomllib.loads((REPO / ".streamlit" / "config.toml").read_text())
    assert config["server"]["address"] == "127.0.0.1"
    assert config["server"]["maxUploadSize"] == 200  # MB
    assert config["browser"]["gatherUsageStats"] is False


def test_default_roots_are_the_working_directory_and_demo(monkeypatch: pytest.MonkeyPatch,
                                                          outside: Dataset) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)
    at = AppTest.from_file(APP, default_timeout=120).run()
    assert not at.exception and not at.error and "MCC" in [m.label for m in at.metric]
    at.sidebar.text_input(key="gt_path").set_value(str(outside.gt)).run()
    assert any(str(outside.gt) in e.value and str(Path.cwd()) in e.value for e in at.error)


def test_the_command_line_flag_sets_the_roots(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                              outside: Dataset) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)
    monkeypatch.setattr(sys, "argv", ["app.py", "--data-root", str(tmp_path / "elsewhere")])
    at = _app(outside).run()  # as after `streamlit run app.py -- --data-root DIR`
    assert not at.exception and not at.error
    assert [m.value for m in at.metric if m.label == "MCC"] == ["0.250"]
    monkeypatch.setattr(sys, "argv", ["app.py"])
    at = _app(outside, images_dir=str(DEMO),
              pred_path=str(DEMO / "predictions" / "box_detector.json")).run()
    _refused(at, "Ground truth JSON", str(outside.gt), Path.cwd())


@pytest.mark.parametrize(("field", "label"), [("gt_path", "Ground truth JSON"),
                                              ("pred_path", "Submission path"),
                                              ("images_dir", "Images folder")])
@pytest.mark.parametrize("how", ["absolute", "dotdot", "symlink"])
def test_typed_path_outside_the_roots_is_not_read(ds: Dataset, outside: Dataset, root: Path,
                                                  field: str, label: str, how: str) -> None:
    target = {"gt_path": outside.gt, "pred_path": outside.model_a,
              "images_dir": outside.images}[field]
    if how == "absolute":
        typed = str(target)
    elif how == "dotdot":
        typed = str(root / ".." / target.relative_to(root.parent))
    else:
        os.symlink(target, root / "link")
        typed = str(root / "link")
    at = _app(ds, **{field: typed}).run()
    _refused(at, label, typed, root)
    inside = {"gt_path": ds.gt, "pred_path": ds.model_a, "images_dir": ds.images}[field]
    at.sidebar.text_input(key=field).set_value(str(inside)).run()  # sidebar still works
    assert not at.exception and not at.error
    assert [m.value for m in at.metric if m.label == "MCC"] == ["0.250"]


@pytest.mark.parametrize("typed", ["/srv/_x_ *y* $z$/gt.json", "/srv/a`b/gt.json"])
def test_a_refused_path_is_shown_verbatim(ds: Dataset, root: Path, typed: str) -> None:
    at = _app(ds, gt_path=typed).run()
    _refused(at, "Ground truth JSON", typed, root)
    fence = "`` " if "`" in typed else "`"
    assert f"{fence}{typed}{fence[::-1]}" in at.error[0].value  # a code span: no markup


def test_submissions_next_to_an_outside_ground_truth_are_not_listed(ds: Dataset,
                                                                    outside: Dataset) -> None:
    at = _app(ds).run()
    assert [Path(o).name for o in at.sidebar.selectbox(key="_w_pick").options] == \
        ["model_a", "model_b"]  # the page shows stems
    at.sidebar.text_input(key="gt_path").set_value(str(outside.gt)).run()
    assert not at.exception
    assert "_w_pick" not in [s.key for s in at.sidebar.selectbox]


def test_image_paths_stay_in_the_images_folder(tmp_path: Path) -> None:
    ds = write_dataset(tmp_path / "data")
    secret = write_dataset(tmp_path / "secret")
    os.symlink(secret.root / "images", ds.root / "images" / "linked")
    for image_path, why in [(str(secret.root / "images" / "rgb.png"), "not a relative path"),
                            ("images/../../secret/images/rgb.png", "leaves the images folder"),
                            ("images/linked/rgb.png", "resolves outside")]:
        shown = load_display_image(ds.root, image_path, 64, 48)
        assert why in shown.notice and shown.rgb.max() == shown.rgb.min()  # blank canvas
    assert load_display_image(ds.root, "images/rgb.png", 64, 48).notice is None


@pytest.fixture()
def fifo(root: Path) -> Iterator[Path]:
    """A named pipe inside the data root that no one ever writes to."""
    path = root / "pipe.json"
    os.mkfifo(path)
    yield path
    try:  # a reader still waiting (as the previous code did) gets its end of file
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass


def _report(at: AppTest) -> str:
    assert not at.exception, [e.value for e in at.exception]
    assert len(at.error) == 1, [e.value for e in at.error]
    return at.error[0].value


@pytest.mark.parametrize("field", ["gt_path", "pred_path"])
def test_a_named_pipe_typed_in_the_sidebar_is_refused_at_once(ds: Dataset, fifo: Path,
                                                              field: str) -> None:
    """It hung the page forever, with the cyclic GC of the whole server paused."""
    at = app_on(ds, timeout=60, **{field: str(fifo)}).run()
    report = _report(at)
    assert f"`{fifo.name}`, field `(file)`" in report and "found a named pipe (FIFO)" in report
    assert "a regular file" in report
    at.sidebar.text_input(key=field).set_value(
        str(ds.gt if field == "gt_path" else ds.model_a)).run()
    assert not at.exception and not at.error and at.metric


def test_a_named_pipe_typed_as_the_taxonomy_is_refused_at_once(ds: Dataset, fifo: Path) -> None:
    """Issue 26 item 8: the Slices page's taxonomy waited on the pipe forever."""
    at = app_on(ds, timeout=60, slice_attr="group", slice_taxonomy=str(fifo))
    goto(at, "pages/Slices.py")
    report = _report(at.run())
    assert "The taxonomy could not be read" in report and fifo.name in report
    assert "found a named pipe (FIFO)" in report and "a regular file" in report


def test_a_typed_file_over_the_upload_cap_is_not_read(ds: Dataset, root: Path) -> None:
    """A 1.5 GB file was read whole (server 0.2 -> 3.2 GB, 44 s); the cap is the upload
    cap (sparse: it costs nothing here)."""
    big = root / "big.json"
    with big.open("wb") as handle:
        handle.truncate(1_500_000_000)
    report = _report(app_on(ds, timeout=60, pred_path=str(big)).run())
    assert "`big.json`, field `(file)`" in report and "a file of at most 200 MB" in report
    assert "1.4 GB (1,500,000,000 bytes)" in report


def test_the_cap_follows_the_environment(ds: Dataset, root: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    padded = root / "padded.json"
    padded.write_text(ds.model_a.read_text() + " " * 20_000)
    monkeypatch.setenv(MAX_INPUT_MB_VAR, "0.01")
    report = _report(app_on(ds, timeout=60, pred_path=str(padded)).run())
    assert "a file of at most 0.01 MB" in report and MAX_INPUT_MB_VAR in report


def test_an_image_path_with_a_nul_byte_is_a_notice(ds: Dataset, root: Path) -> None:
    """The file-stamp helper raised ``ValueError: embedded null byte`` (an exception box)."""
    doc = json.loads(ds.gt.read_text())
    doc["annotations"][0]["image_path"] = "images/rgb\u0000.png".encode().decode(
        "unicode_escape")
    gt = root / "nul_gt.json"
    gt.write_text(json.dumps(doc))
    at = app_on(ds, timeout=60, gt_path=str(gt), selected={"vocabulary": "ov_000001"}).run()
    goto(at, "pages/Query_explorer.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("contains a NUL byte" in i.value for i in at.info)
    assert "class='ov-card'" in card_html(at)  # the viewer drew its card (on a blank canvas)


def test_a_named_pipe_as_an_image_is_a_notice(ds: Dataset) -> None:
    """An image that is a pipe blocked the decoder thread (and the page) forever."""
    image = ds.images / "images" / "rgb.png"
    image.unlink()
    os.mkfifo(image)
    try:
        at = app_on(ds, timeout=60, selected={"vocabulary": "ov_000001"}).run()
        goto(at, "pages/Query_explorer.py").run()
    finally:
        try:
            os.close(os.open(image, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass
    assert not at.exception, [e.value for e in at.exception]
    assert any("named pipe" in i.value and "blank 64 x 48 canvas" in i.value for i in at.info)


def test_the_leaderboard_checks_each_file_like_a_typed_path(ds: Dataset, outside: Dataset,
                                                           fifo: Path) -> None:
    """The folder's files followed links out of the data roots (ranking a file the sidebar
    refuses, reading /etc/passwd) and a link to a zero device ended in a MemoryError."""
    preds = ds.root / "predictions"
    (preds / "passwd.json").symlink_to("/etc/passwd")
    (preds / "outside.json").symlink_to(outside.model_b)
    (preds / "pipe.json").symlink_to(fifo)
    if os.geteuid() == 0:
        os.mknod(preds / "zero.json", stat.S_IFCHR | 0o444, os.makedev(1, 5))
    at = app_on(ds, timeout=60)
    goto(at, "pages/Leaderboard.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert sorted(at.dataframe[0].value["model"]) == ["model_a", "model_b"]
    warnings = {w.value.split("`")[1]: w.value for w in at.warning if "`" in w.value}
    assert set(warnings) == {"passwd", "outside", "pipe"} | (
        {"zero"} if os.geteuid() == 0 else set())
    assert "found a path that resolves to /etc/passwd" in warnings["passwd"] or \
        "resolves to /usr" in warnings["passwd"]
    assert f"resolves to {outside.model_b}" in warnings["outside"]
    assert "found a named pipe (FIFO)" in warnings["pipe"]
    if os.geteuid() == 0:
        assert "found a character device" in warnings["zero"]


def _snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(folder)): (p.lstat().st_mtime_ns, p.lstat().st_size)
            for p in [folder, *folder.rglob("*")]}


def test_the_app_never_writes_into_the_data_folder(root: Path) -> None:
    data = root / "demo"
    shutil.copytree(DEMO, data)
    before = _snapshot(data)
    gt = data / "ground_truth.json"
    subs = sorted((data / "predictions").glob("*.json"))
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["gt_path"] = str(gt)
    at.session_state["images_dir"] = str(data)
    at.session_state["pred_path"] = str(subs[0])
    at.run()
    assert not at.exception and not at.error and at.metric
    for task in ("referring", "reasoning", "vocabulary"):
        at.sidebar.radio(key="task").set_value(task).run()
        assert not at.exception
    goto(at, "pages/Query_explorer.py").run()
    assert not at.exception and "class='ov-card'" in card_html(at)  # the viewer drew its card
    assert not [i.value for i in at.info if "image" in i.value]  # the image was read
    at.session_state["cmp_b_path"] = str(subs[1])
    goto(at, "pages/Compare.py").run()
    assert not at.exception
    assert _snapshot(data) == before


def test_data_root_flag_in_a_real_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         outside: Dataset,
                                         new_page: Callable[..., Page]) -> None:
    """``streamlit run app.py -- --data-root DIR`` reaches the app; a path outside is refused
    on the page, the sidebar keeps working."""
    monkeypatch.delenv(ENV_VAR, raising=False)
    app_dir = copy_app(tmp_path / "app")
    server = Server(app_dir, tmp_path / "server.log", ["--data-root", str(outside.root)])
    try:
        page = new_page(1400, 1600)
        page.goto(server.url)
        page.wait_for_selector(IDLE, timeout=MS)
        sidebar = page.get_by_test_id("stSidebar")
        for label, value in (("Ground truth JSON", outside.gt), ("Images folder",
                             outside.images), ("Submission path", outside.model_a)):
            field = sidebar.get_by_label(label, exact=True)
            field.fill(str(value))
            field.press("Enter")
            page.wait_for_timeout(300)
        expect(page.get_by_text("Presence confusion matrix").first).to_be_visible(timeout=MS)
        page.wait_for_selector(IDLE, timeout=MS)
        field = sidebar.get_by_label("Ground truth JSON", exact=True)
        field.fill("/etc/passwd")
        field.press("Enter")
        expect(page.get_by_text("/etc/passwd is outside the data roots").first) \
            .to_be_visible(timeout=MS)
        expect(page.get_by_text(f"({outside.root}, ").first).to_be_visible()
        page.wait_for_selector(IDLE, timeout=MS)
        assert page.get_by_test_id("stException").count() == 0
        assert "Traceback" not in page.locator("body").inner_text()
        assert sidebar.get_by_label("Ground truth JSON", exact=True).is_editable()
    finally:
        server.stop()
