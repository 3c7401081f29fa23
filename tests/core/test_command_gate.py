"""The gate in the commands (issue 48; docs/security.md, "The gate"): a file a command
*finds* in a folder named on its command line has that folder as its root, so a symbolic
link out of it is refused (exit status 2, every such file named, nothing of it read or
shown, nothing written); a file named on the command line itself is read where it is (the
user runs the command with their own rights); the hosted scorer's root is the
participant's unpacked archive, whose links are never followed.

Failed at c100000: ``report --rank DIR`` ranked (or quoted) whatever a link in DIR named,
and the converters read label files, images and result files through links out of their
source folders. The leaderboard and the scorer already refused: pinned here."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from app_fixtures import Dataset, write_dataset
from cli_inprocess import run_module
from convert_helpers import run_cli

from tests.hosting_helpers import GT, PREDICTIONS, hosting, lay_out, run_worker

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "convert"
MARKER = "SECRET-48-do-not-show"
MODS = "segmentation,bbox,oriented_bbox"


def _run(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m module *args`` in this process (tests/cli_inprocess.py)."""
    return run_module(module, *args, cwd=ROOT)


def _link_out(link: Path, outside: Path, content: bytes | None = None) -> Path:
    """Move ``link`` (or write ``content``) to ``outside`` and leave a link in its place."""
    outside.parent.mkdir(parents=True, exist_ok=True)
    if content is None:
        shutil.move(link, outside)
    else:
        outside.write_bytes(content)
    link.symlink_to(outside)
    return link


def _refused(run: subprocess.CompletedProcess[str], *links: Path) -> None:
    assert run.returncode == 2, (run.returncode, run.stderr)
    assert "Traceback" not in run.stderr and MARKER not in run.stderr + run.stdout
    for link in links:
        assert str(link) in run.stderr, (link, run.stderr)
    assert "(links may not leave it)" in run.stderr


@pytest.fixture()
def folder(tmp_path: Path) -> Dataset:
    """A benchmark folder whose ``predictions/`` holds ``leak.json`` (a valid submission
    outside) and ``secret.json`` (an outside file of :data:`MARKER`), both links."""
    ds = write_dataset(tmp_path / "bench")
    preds = ds.root / "predictions"
    _link_out(preds / "leak.json", tmp_path / "outside" / "leak.json", ds.model_b.read_bytes())
    _link_out(preds / "secret.json", tmp_path / "outside" / "secret.json",
              (MARKER + " ").encode() * 20)
    return ds


def test_leaderboard_refuses_a_folder_with_links_out(folder: Dataset, tmp_path: Path) -> None:
    out = tmp_path / "board.json"
    run = _run("ovearth_core.leaderboard", str(folder.root), "--task", "vocabulary",
               "--output", str(out), "--subsets", "1")
    _refused(run, folder.root / "predictions" / "leak.json",
             folder.root / "predictions" / "secret.json")
    assert not out.exists()


def test_report_rank_refuses_a_folder_with_links_out(folder: Dataset, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    run = _run("ovearth_core.report", "--gt", str(folder.gt), "--predictions",
               str(folder.model_a), "--rank", str(folder.root / "predictions"), "--task",
               "vocabulary", "--out", str(out), "--no-cache", "--modalities", MODS)
    _refused(run, folder.root / "predictions" / "leak.json",
             folder.root / "predictions" / "secret.json")
    assert "--rank" in run.stderr and not out.exists()


def test_a_link_inside_the_folder_is_followed(tmp_path: Path) -> None:
    """The root is the folder, not "no links": a link to a file inside it is read."""
    ds = write_dataset(tmp_path / "bench")
    (ds.root / "predictions" / "again.json").symlink_to(ds.model_a)
    out = tmp_path / "report.html"
    run = _run("ovearth_core.report", "--gt", str(ds.gt), "--predictions", str(ds.model_a),
               "--rank", str(ds.root / "predictions"), "--task", "vocabulary", "--out",
               str(out), "--no-cache", "--modalities", MODS)
    assert run.returncode == 0, run.stderr
    assert "again" in out.read_text()


def test_files_named_on_the_command_line_are_read_where_they_are(folder: Dataset,
                                                                  tmp_path: Path) -> None:
    """The audit command takes files, not a folder: the user named them (the shell's
    ``predictions/*.json`` included), so a link among them is read as the user asked. A
    real ``python -m ovearth_core.audit`` process (the shipped entry point)."""
    preds = folder.root / "predictions"
    run = subprocess.run([sys.executable, "-m", "ovearth_core.audit", "--gt", str(folder.gt),
                          "--predictions", str(folder.model_a), str(preds / "leak.json"),
                          "--out", str(tmp_path / "audit.json")],
                         cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr


CONVERT = {
    "dota-label": (["from-dota", "--labels", "@dota/labelTxt", "--results",
                    "@dota/results/model_a", "--images", "@dota/images"],
                   "dota/labelTxt/P0002.txt"),
    "dota-image": (["from-dota", "--labels", "@dota/labelTxt", "--results",
                    "@dota/results/model_a", "--images", "@dota/images"],
                   "dota/images/P0002.png"),
    "dota-result": (["from-dota", "--labels", "@dota/labelTxt", "--results",
                     "@dota/results/model_a", "--images", "@dota/images"],
                    "dota/results/model_a/Task1_ship.txt"),
    "label-map": (["from-label-maps", "--gt", "@label_maps/gt", "--classes",
                   "@label_maps/classes.txt", "--pred", "@label_maps/pred/model_x",
                   "--images", "@label_maps/images", "--ignore-index", "0"],
                  "label_maps/gt/tile_b.png"),
}


@pytest.mark.parametrize("case", sorted(CONVERT))
def test_convert_refuses_a_source_folder_with_a_link_out(tmp_path: Path, case: str) -> None:
    args, moved = CONVERT[case]
    src = tmp_path / "src"
    shutil.copytree(DATA, src)
    link = _link_out(src / moved, tmp_path / "outside" / Path(moved).name)
    out = tmp_path / "out" / "bench"
    run = run_cli(*[str(src / a[1:]) if a.startswith("@") else a for a in args],
                  "--out", str(out))
    _refused(run, link)
    assert not out.exists()


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bundle") / "bundle.zip"
    hosting("codabench", "--gt", str(GT), "--out", str(out))
    return out


@pytest.mark.parametrize("target", ["outside", "reference"])
def test_the_scorer_refuses_a_link_in_the_archive(bundle: Path, tmp_path: Path,
                                                  target: str) -> None:
    """A participant's zip whose ``predictions.json`` is a link (``unzip`` restores them):
    to a file of the machine, or to the hidden reference data."""
    root = lay_out(bundle, tmp_path / "worker", {"readme.txt": b"x"})
    res = root / "input" / "res"
    (res / "readme.txt").unlink()
    aim = root / "input" / "ref" / "ground_truth.json" if target == "reference" else \
        tmp_path / "secret.json"
    if target == "outside":
        aim.write_bytes((PREDICTIONS / "strong_localiser.json").read_bytes()[:-1]
                        + f', "x": "{MARKER}"}}'.encode())
    os.symlink(aim, res / "predictions.json")
    run = run_worker(root)
    assert run.returncode == 2, run.stderr
    assert "submission rejected; no scores written" in run.stderr
    assert "found a symbolic link" in run.stderr and "predictions.json" in run.stderr
    assert MARKER not in run.stderr and "Traceback" not in run.stderr
    assert list((root / "output").iterdir()) == []
