"""What a user feeds the app: typed paths stay in the data roots, data folders are never
written, and the server's safety settings (local address, no statistics, upload cap)."""

from __future__ import annotations

import os
import shutil
import sys
import tomllib
from pathlib import Path

import pytest
from app_fixtures import Dataset, app_on, write_dataset
from browser_support import CHROMIUM, CHROMIUM_ARGS, IDLE, MS, Server, copy_app
from playwright.sync_api import expect, sync_playwright
from streamlit.testing.v1 import AppTest

from ovearth_core.paths import ENV_VAR
from ovearth_core.viz.images import load_display_image

REPO = Path(__file__).resolve().parents[1]
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
    at.sidebar.text_input(key="_w_gt_path").set_value(str(outside.gt)).run()
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
    at.sidebar.text_input(key=f"_w_{field}").set_value(str(inside)).run()  # sidebar still works
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
    at.sidebar.text_input(key="_w_gt_path").set_value(str(outside.gt)).run()
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
        at.sidebar.radio(key="_w_task").set_value(task).run()
        assert not at.exception
    at.switch_page("pages/1_Query_explorer.py").run()
    assert not at.exception and at.get("plotly_chart")
    assert not [i.value for i in at.info if "image" in i.value]  # the image was read
    at.session_state["cmp_b_path"] = str(subs[1])
    at.switch_page("pages/3_Compare.py").run()
    assert not at.exception
    assert _snapshot(data) == before


def test_data_root_flag_in_a_real_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         outside: Dataset) -> None:
    """``streamlit run app.py -- --data-root DIR`` reaches the app; a path outside is refused
    on the page, the sidebar keeps working."""
    monkeypatch.delenv(ENV_VAR, raising=False)
    app_dir = copy_app(tmp_path / "app")
    server = Server(app_dir, tmp_path / "server.log", ["--data-root", str(outside.root)])
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1600})
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
            browser.close()
    finally:
        server.stop()
