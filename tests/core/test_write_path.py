"""The write path (issue 26, round three): every write the app and the commands make is
confined (no link followed out of its root), refuses special files, is atomic, and several
files are written all or nothing; names from data are single path components; ``--force``
never removes the inputs; the review sidecar survives a torn last line, a pipe, a device and
hostile command-line text; its reader never raises and never loses a well-formed record.

Each test names the finding of the issue it pins (items 1, 2, 3, 6, 7, 8, 11).
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ovearth_core import files, review
from ovearth_core.convert import __main__ as convert_cli
from ovearth_core.convert import from_dota, to_coco
from ovearth_core.errors import OVEarthInputError

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "assets" / "demo"
DOTA = REPO / "tests" / "data" / "convert" / "dota"
OV = "open_vocabulary"
PY = sys.executable
ENV = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONDONTWRITEBYTECODE": "1"}


@pytest.fixture()
def bench(tmp_path: Path) -> Path:
    out = tmp_path / "bench"
    (out / "predictions").mkdir(parents=True)
    shutil.copy(DEMO / "ground_truth.json", out)
    shutil.copy(DEMO / "predictions" / "box_detector.json", out / "predictions")
    return out


def _tree(folder: Path) -> dict[str, bytes | str]:
    """Every entry under ``folder``: a file's bytes, a link's target, a folder's ``dir``."""
    out: dict[str, bytes | str] = {}
    for p in sorted(folder.rglob("*")):
        rel = str(p.relative_to(folder))
        out[rel] = (f"-> {os.readlink(p)}" if p.is_symlink() else
                    "dir" if p.is_dir() else p.read_bytes())
    return out


# --- 1. writes follow links out of the data roots -------------------------------------------


def test_item1_a_linked_sidecar_folder_is_refused_and_nothing_lands_where_it_points(
        bench: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (bench / ".ovearth").symlink_to(elsewhere)
    path = review.sidecar_for(bench / "ground_truth.json")
    with pytest.raises(OVEarthInputError) as err:
        review.save_view(path, "mine", {"data": "x"})
    assert ".ovearth" in str(err.value) and "symbolic link" in str(err.value)
    with pytest.raises(OVEarthInputError):
        review.tag(path, review.Target(OV, "ov_000001"), "gt_error")
    assert list(elsewhere.iterdir()) == []


def test_item1_a_linked_sidecar_file_is_refused_and_its_target_untouched(
        bench: Path, tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"precious\n")
    (bench / ".ovearth").mkdir()
    (bench / ".ovearth" / "review.jsonl").symlink_to(victim)
    path = review.sidecar_for(bench / "ground_truth.json")
    with pytest.raises(OVEarthInputError) as err:
        review.tag(path, review.Target(OV, "ov_000001"), "gt_error")
    assert "review.jsonl" in str(err.value) and "symbolic link" in str(err.value)
    assert victim.read_bytes() == b"precious\n"


def test_item1_the_apps_export_never_replaces_a_file_a_link_names(bench: Path,
                                                                   tmp_path: Path) -> None:
    """The app's "Write the benchmark without them" writes DIR/.ovearth/exports/without_X;
    a ground_truth.json there that links elsewhere is replaced by the new export (the folder
    is written whole), the file it named is left as it was; a linked exports folder is
    refused."""
    victim = tmp_path / "victim.json"
    victim.write_bytes(b"precious\n")
    gt = bench / "ground_truth.json"
    out = bench / ".ovearth" / "exports" / "without_gt_error"  # where docs/review.md says
    assert review.export_folder(gt, "gt_error") == out
    out.mkdir(parents=True)
    (out / "ground_truth.json").symlink_to(victim)
    review.export_without(gt, [bench / "predictions" / "box_detector.json"], OV, set(), out,
                          root=bench, replace=True)
    assert victim.read_bytes() == b"precious\n"
    assert not (out / "ground_truth.json").is_symlink()
    assert json.loads((out / "ground_truth.json").read_bytes()) == json.loads(gt.read_bytes())

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.rmtree(bench / ".ovearth" / "exports")
    (bench / ".ovearth" / "exports").symlink_to(elsewhere)
    with pytest.raises(OVEarthInputError, match="symbolic link"):
        review.export_without(gt, [], OV, set(), review.export_folder(gt, "gt_error"),
                              root=bench, replace=True)
    assert list(elsewhere.iterdir()) == []


def test_item1_the_export_command_never_writes_through_a_link(bench: Path, tmp_path: Path,
                                                              capsys) -> None:
    victim = tmp_path / "victim.json"
    victim.write_bytes(b"precious\n")
    out = tmp_path / "export"
    out.mkdir()
    (out / "ground_truth.json").symlink_to(victim)
    gt = str(bench / "ground_truth.json")
    status = review.main(["export", "--gt", gt, "--without", "gt_error", "--out", str(out)])
    assert status == 2 and "--force" in capsys.readouterr().err
    assert victim.read_bytes() == b"precious\n"
    assert review.main(["export", "--gt", gt, "--without", "gt_error", "--out", str(out),
                        "--force"]) == 0
    assert victim.read_bytes() == b"precious\n"
    assert not (out / "ground_truth.json").is_symlink()


def test_item1_the_export_command_never_replaces_the_folder_of_its_inputs(
        bench: Path, capsys) -> None:
    before = _tree(bench)
    status = review.main(["export", "--gt", str(bench / "ground_truth.json"), "--without",
                          "gt_error", "--out", str(bench), "--force"])
    assert status == 2
    assert "holds the input" in capsys.readouterr().err
    assert _tree(bench) == before


# --- 2. a converter writes outside --out or over its own output ----------------------------


@pytest.fixture()
def export(tmp_path: Path) -> Path:
    out = tmp_path / "coco"
    to_coco(DEMO / "ground_truth.json", DEMO / "predictions" / "box_detector.json",
            "vocabulary", out)
    return out / "mapping.json"


def _from_mapping(mapping: Path, out: Path, capsys) -> tuple[int, str]:
    status = convert_cli.main(["from-coco", "--mapping", str(mapping), "--images",
                               str(DEMO / "images"), "--out", str(out), "--quiet"])
    return status, capsys.readouterr().err


@pytest.mark.parametrize("name", ["../../x", "..", "a/b", "", "x\ny", "/abs"])
def test_item2_a_submission_name_from_a_mapping_is_one_file_name(export: Path, tmp_path: Path,
                                                                 name: str, capsys) -> None:
    doc = json.loads(export.read_bytes())
    doc["submission"] = name
    export.write_text(json.dumps(doc))
    (tmp_path / "a" / "b").mkdir(parents=True)
    before = _tree(tmp_path)
    status, err = _from_mapping(export, tmp_path / "a" / "b" / "bench", capsys)
    assert status == 2, err
    assert "mapping.json" in err and "submission" in err and "Traceback" not in err
    assert _tree(tmp_path) == before


@pytest.mark.parametrize("image_path", ["ground_truth.json", "README.md",
                                        "predictions/box_detector.json", "Ground_Truth.JSON"])
def test_item2_an_image_never_overwrites_the_converted_files(export: Path, tmp_path: Path,
                                                              image_path: str, capsys) -> None:
    doc = json.loads(export.read_bytes())
    doc["queries"][0]["image_path"] = image_path
    export.write_text(json.dumps(doc))
    out = tmp_path / "bench"
    status, err = _from_mapping(export, out, capsys)
    assert status == 2, err
    assert "mapping.json" in err and "queries[0]" in err and "image_path" in err
    assert not out.exists()


# --- 3. --force deletes the inputs ----------------------------------------------------------


@pytest.mark.parametrize("where", ["split", "parent"])
def test_item3_force_never_removes_a_folder_holding_the_inputs(tmp_path: Path, where: str,
                                                               capsys) -> None:
    split = tmp_path / "split"
    shutil.copytree(DOTA, split)
    before = _tree(tmp_path)
    out = split if where == "split" else tmp_path
    status = convert_cli.main(["from-dota", "--labels", str(split / "labelTxt"), "--images",
                               str(split / "images"), "--out", str(out), "--force", "--quiet"])
    err = capsys.readouterr().err
    assert status == 2, err
    assert "--out" in err and "holds the input" in err
    assert _tree(tmp_path) == before


def test_item3_force_still_replaces_an_output_folder(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    out.mkdir()
    (out / "old.txt").write_text("x")
    from_dota(DOTA / "labelTxt", DOTA / "images", out, force=True)
    assert (out / "ground_truth.json").is_file() and not (out / "old.txt").exists()


# --- 6. a torn last line eats the next record ------------------------------------------------


def test_item6_a_torn_last_line_is_kept_apart_and_reported(bench: Path) -> None:
    path = review.sidecar_for(bench / "ground_truth.json")
    review.tag(path, review.Target(OV, "ov_000001"), "gt_error")
    torn = b'{"v": 1, "ts": "2026-12-01T10:00:00.000+00:00", "event": "tag", "task": "open_'
    with open(path, "ab") as handle:
        handle.write(torn)
    before = path.read_bytes()
    notes: list[str] = []
    review.tag(path, review.Target(OV, "ov_000002"), "model_error", notify=notes.append)
    assert path.read_bytes().startswith(before + b"\n")
    state = review.load_state(path)
    assert state.tagged(OV, "gt_error") == ["ov_000001"]
    assert state.tagged(OV, "model_error") == ["ov_000002"]
    [problem] = state.problems
    assert problem.line == 2 and "cut short" in str(problem)
    assert len(notes) == 1 and "line 2" in notes[0] and "ended mid-line" in notes[0]


def test_item6_a_last_record_without_its_newline_is_kept(bench: Path) -> None:
    path = review.sidecar_for(bench / "ground_truth.json")
    review.tag(path, review.Target(OV, "ov_000001"), "gt_error")
    path.write_bytes(path.read_bytes().rstrip(b"\n"))
    review.tag(path, review.Target(OV, "ov_000002"), "gt_error")
    state = review.load_state(path)
    assert state.tagged(OV, "gt_error") == ["ov_000001", "ov_000002"] and not state.problems


def test_item6_the_cli_says_where_the_torn_line_is(bench: Path, capsys) -> None:
    gt = str(bench / "ground_truth.json")
    path = review.sidecar_for(gt)
    path.parent.mkdir()
    path.write_bytes(b'{"v": 1, "ev')
    assert review.main(["tag", "--gt", gt, "--query", "ov_000003", "model_error"]) == 0
    err = capsys.readouterr().err
    assert "line 1" in err and "ended mid-line" in err
    assert review.load_state(path).tagged(OV, "model_error") == ["ov_000003"]


# --- 7. partial outputs of the suite command --------------------------------------------------


def _no_bigger_files(limit: int):
    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of a kill: a full disk
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


def test_item7_the_suite_writes_every_output_or_none(tmp_path: Path) -> None:
    """A first run writes three files; a second (another submission) can write referring's
    108 kB but not vocabulary's 350 kB (a file size limit, as a full disk): the folder
    keeps the first run's three files, and the command says so (exit 2, no traceback)."""
    folder = tmp_path / "out"
    base = [PY, "-m", "ovearth_core.suite", "--gt", str(DEMO / "ground_truth.json"),
            "--modalities", "auto", "--output-dir", str(folder), "--tasks",
            "referring,vocabulary,reasoning"]
    first = subprocess.run(
        [*base, "--predictions", str(DEMO / "predictions" / "box_detector.json")], env=ENV,
        capture_output=True, timeout=300)
    assert first.returncode == 0, first.stderr
    before = _tree(folder)
    assert len(before) == 3
    second = subprocess.run(
        [*base, "--predictions", str(DEMO / "predictions" / "weak_baseline.json")], env=ENV,
        capture_output=True, text=True, timeout=300, preexec_fn=_no_bigger_files(200_000))
    assert second.returncode == 2
    assert "cannot write" in second.stderr and "Traceback" not in second.stderr
    assert _tree(folder) == before


# --- 8. the sidecar as a pipe or a device ------------------------------------------------------


def _in_child(code: str, timeout: float = 60, memory: int | None = None,
              ) -> subprocess.CompletedProcess[str]:
    def limit() -> None:
        if memory:
            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    return subprocess.run([PY, "-c", code], env=ENV, capture_output=True, text=True,
                          timeout=timeout, preexec_fn=limit)


READ_AND_TAG = """
import sys
from ovearth_core import review
from ovearth_core.errors import OVEarthInputError
path = sys.argv[1] if len(sys.argv) > 1 else {path!r}
state = review.load_state(path)
print(len(state.problems), state.num_events)
print(state.problems[0])
try:
    review.tag(path, review.Target("open_vocabulary", "ov_000001"), "gt_error")
except OVEarthInputError as err:
    print("refused:", err)
"""


def test_item8_a_pipe_as_the_sidecar_is_reported_without_waiting(bench: Path) -> None:
    path = review.sidecar_for(bench / "ground_truth.json")
    path.parent.mkdir()
    os.mkfifo(path)
    try:
        proc = _in_child(READ_AND_TAG.format(path=str(path)), timeout=30)
    except subprocess.TimeoutExpired:
        pytest.fail("reading or tagging a named pipe as the review file hung")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "1 0"
    assert "review.jsonl" in lines[1] and "named pipe" in lines[1]
    assert lines[2].startswith("refused:") and "named pipe" in " ".join(lines[2:])


def test_item8_a_link_to_dev_zero_is_refused_without_reading(bench: Path) -> None:
    path = review.sidecar_for(bench / "ground_truth.json")
    path.parent.mkdir()
    path.symlink_to("/dev/zero")
    proc = _in_child(READ_AND_TAG.format(path=str(path)), timeout=60, memory=1 << 30)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    assert lines[0] == "1 0"
    # Refused before any read: by the gate (a link out of the benchmark folder, issue 48) or,
    # inside it, as a link or a device.
    assert "review.jsonl" in lines[1] and ("symbolic link" in lines[1]
                                           or "character device" in lines[1]
                                           or "resolves to /dev/zero" in lines[1])
    assert lines[2].startswith("refused:")


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root: os.mknod of a character device")
def test_item8_a_device_node_as_the_sidecar_is_refused_root_only(bench: Path) -> None:
    path = review.sidecar_for(bench / "ground_truth.json")
    path.parent.mkdir()
    os.mknod(path, 0o666 | 0o020000, os.makedev(1, 5))  # the /dev/zero device
    proc = _in_child(READ_AND_TAG.format(path=str(path)), timeout=60, memory=1 << 30)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    assert lines[0] == "1 0" and "character device" in lines[1]
    assert lines[2].startswith("refused:") and "character device" in " ".join(lines[2:])


def test_item8_a_sidecar_over_the_cap_is_reported(bench: Path, monkeypatch) -> None:
    path = review.sidecar_for(bench / "ground_truth.json")
    review.tag(path, review.Target(OV, "ov_000001"), "gt_error")
    monkeypatch.setenv(files.MAX_INPUT_MB_VAR, str(path.stat().st_size / 2 / 2**20))
    state = review.load_state(path)
    assert state.num_events == 0 and len(state.problems) == 1
    assert "at most" in str(state.problems[0])


# --- 11. the review command's text ------------------------------------------------------------


def _review(*args: str | bytes) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([PY, "-m", "ovearth_core.review", *args], env=ENV,
                          capture_output=True, timeout=120)


def test_item11_a_note_that_is_not_utf8_is_refused_with_a_message(bench: Path) -> None:
    proc = _review("note", "--gt", str(bench / "ground_truth.json"), "--query", "ov_000001",
                   b"caf\xe9 \xff")
    assert proc.returncode == 2
    err = proc.stderr.decode(errors="replace")
    assert "Traceback" not in err and "UTF-8" in err and "text" in err
    assert not review.sidecar_for(bench / "ground_truth.json").exists()


@pytest.mark.parametrize("query", ["ov_1\nov_2\tgt_error", "ov_1\r", "ov\x1b[2J", "ov\x00"])
def test_item11_a_query_id_with_control_characters_is_refused(bench: Path, query: str) -> None:
    if "\x00" in query:  # argv cannot carry NUL; the function refuses it
        with pytest.raises(OVEarthInputError, match="control"):
            review.tag(review.sidecar_for(bench / "ground_truth.json"),
                       review.Target(OV, query), "gt_error")
        return
    proc = _review("tag", "--gt", str(bench / "ground_truth.json"), "--query", query,
                   "gt_error")
    assert proc.returncode == 2
    err = proc.stderr.decode()
    assert "Traceback" not in err and "query_id" in err and "control" in err
    assert not review.sidecar_for(bench / "ground_truth.json").exists()


def test_item11_a_forged_line_in_the_file_is_never_printed(bench: Path) -> None:
    gt = bench / "ground_truth.json"
    path = review.sidecar_for(gt)
    review.tag(path, review.Target(OV, "ov_000001"), "gt_error")
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"v": 1, "ts": "", "event": "tag", "task": OV,
                                 "query_id": "ov_9\nov_000042", "tag": "gt_error"}) + "\n")
        handle.write(json.dumps({"v": 1, "ts": "", "event": "tag", "task": OV,
                                 "query_id": "ov_8", "tag": "x\ny"}) + "\n")
    proc = _review("list", "--gt", str(gt))
    assert proc.returncode == 0
    assert proc.stdout == b"ov_000001\tgt_error\n"
    assert proc.stderr.decode().count("skipped") == 2


# --- the sidecar reader under fuzzing -------------------------------------------------------


def _record(i: int, query: str, tag: str) -> bytes:
    """A well-formed tag event, written out here (not by the code under test)."""
    return json.dumps({"v": 1, "ts": "2026-12-01T00:00:00.000+00:00", "event": "tag",
                       "task": OV, "query_id": query, "tag": tag}, ensure_ascii=False
                      ).encode()


# Printable names (the documented rule: no character of the Unicode categories "Other" or
# "Separator", except the space).
names = st.text(st.characters(blacklist_categories=("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp",
                                                    "Zs")), min_size=1, max_size=12)
junk = st.binary(max_size=60).filter(lambda b: b"\n" not in b)


@st.composite
def sidecars(draw) -> tuple[bytes, list[tuple[str, str]]]:
    """A file of well-formed records mixed with junk lines and cut records (a proper
    prefix of a JSON object is never valid JSON), and the records it holds, in order."""
    lines, kept = [], []
    for i in range(draw(st.integers(0, 12))):
        choice = draw(st.sampled_from(["record", "junk", "cut"]))
        if choice == "record":
            q, t = draw(names), draw(names)
            lines.append(_record(i, q, t))
            kept.append((q, t))
        elif choice == "junk":
            raw = draw(junk)
            if raw.strip().startswith(b"{"):  # could be a valid record by chance: not junk
                raw = b"#" + raw
            lines.append(raw)
        else:
            full = _record(i, draw(names), draw(names))
            lines.append(full[:draw(st.integers(1, len(full) - 1))])
    end = draw(st.sampled_from([b"\n", b"\r\n"]))
    return end.join(lines) + draw(st.sampled_from([end, b""])), kept


@settings(max_examples=300, deadline=None)
@given(sidecars())
@example((b"[" * 100_000 + b"\n" + _record(0, "q", "t") + b"\n", [("q", "t")]))
@example((b'{"a": ' * 50_000 + b"\n" + _record(0, "q", "t"), [("q", "t")]))
@example((b"\xff\xfe{}\n" + _record(0, "q", "t") + b"\n", [("q", "t")]))
def test_the_reader_never_raises_and_keeps_every_well_formed_record(
        tmp_path_factory: pytest.TempPathFactory, case: tuple[bytes, list[tuple[str, str]]]
        ) -> None:
    data, kept = case
    path = tmp_path_factory.mktemp("fuzz") / "review.jsonl"
    path.write_bytes(data)
    events, problems = review.read_events(path)
    assert [(e["query_id"], e["tag"]) for e in events] == kept
    non_empty = [x for x in data.replace(b"\r\n", b"\n").split(b"\n") if x.strip()]
    assert len(problems) == len(non_empty) - len(kept)


# --- the write path itself (ovearth_core.files) ---------------------------------------------


@pytest.mark.parametrize(("name", "ok"), [
    ("model_a", True), ("model a.json", True), ("résumé", True), ("..x", True),
    ("", False), (".", False), ("..", False), ("a/b", False), ("../x", False),
    ("a\\b", False), ("x\ny", False), ("x\x00", False), ("x\x1b[2J", False),
    ("x\u2028y", False), ("caf\udce9", False), ("x" * 255, True), ("x" * 256, False),
    (3, False), (None, False)])
def test_is_component(name: object, ok: bool) -> None:
    assert files.is_component(name) is ok


def test_write_confined_creates_folders_and_replaces_atomically(tmp_path: Path) -> None:
    path = files.write_confined(tmp_path, "a/b/c.json", b"one")
    assert path == tmp_path / "a" / "b" / "c.json" and path.read_bytes() == b"one"
    os.chmod(path, 0o640)
    assert files.write_confined(tmp_path, path, b"two") == path  # absolute inside the root
    assert path.read_bytes() == b"two" and (path.stat().st_mode & 0o777) == 0o640
    assert sorted(p.name for p in path.parent.iterdir()) == ["c.json"]


@pytest.mark.parametrize("where", ["middle", "final"])
def test_write_confined_follows_no_link_inside_the_root(tmp_path: Path, where: str) -> None:
    root, elsewhere = tmp_path / "root", tmp_path / "elsewhere"
    root.mkdir()
    elsewhere.mkdir()
    (elsewhere / "c.json").write_bytes(b"precious")
    if where == "middle":
        (root / "a").symlink_to(elsewhere)
    else:
        (root / "a").mkdir()
        (root / "a" / "c.json").symlink_to(elsewhere / "c.json")
    with pytest.raises(files.OutputRefused, match="symbolic link"):
        files.write_confined(root, "a/c.json", b"x")
    with pytest.raises(files.OutputRefused, match="symbolic link"):
        files.append_line(root, "a/c.json", b"x\n")
    assert _tree(elsewhere) == {"c.json": b"precious"}


@pytest.mark.parametrize("path", ["../x", "a/../../x", "/etc/passwd", ""])
def test_write_confined_stays_inside_its_root(tmp_path: Path, path: str) -> None:
    root = tmp_path / "root"
    root.mkdir()
    with pytest.raises(files.OutputRefused):
        files.write_confined(root, path, b"x")
    assert list(tmp_path.rglob("*")) == [root]


def test_special_files_and_inputs_are_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "folder").mkdir()
    (tmp_path / "input.json").write_bytes(b"in")
    for name, found in (("pipe", "named pipe"), ("folder", "a folder")):
        with pytest.raises(files.OutputRefused, match=found):
            files.write_confined(tmp_path, name, b"x")
        with pytest.raises(files.OutputRefused, match=found):
            files.append_line(tmp_path, name, b"x\n")
    with pytest.raises(files.OutputRefused, match="input"):
        files.write_confined(tmp_path, "input.json", b"x", inputs=[tmp_path / "input.json"])
    assert (tmp_path / "input.json").read_bytes() == b"in"


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root: os.mknod of a character device")
def test_a_device_node_is_refused_root_only(tmp_path: Path) -> None:
    os.mknod(tmp_path / "zero", 0o666 | 0o020000, os.makedev(1, 5))
    for write in (lambda: files.write_confined(tmp_path, "zero", b"x"),
                  lambda: files.append_line(tmp_path, "zero", b"x\n")):
        with pytest.raises(files.OutputRefused, match="character device"):
            write()


def test_write_files_is_all_or_nothing_when_one_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_bytes(b"old a")
    (tmp_path / "b.json").symlink_to(tmp_path / "a.json")
    with pytest.raises(files.OutputRefused):
        files.write_files(tmp_path, {"a.json": b"new a", "b.json": b"new b"})
    assert _tree(tmp_path) == {"a.json": b"old a", "b.json": f"-> {tmp_path / 'a.json'}"}


def test_write_files_puts_everything_back_when_a_rename_fails(tmp_path: Path,
                                                             monkeypatch) -> None:
    (tmp_path / "a.json").write_bytes(b"old a")
    (tmp_path / "b.json").write_bytes(b"old b")
    real, calls = os.replace, []

    def flaky(src, dst, **kw):
        calls.append(dst)
        if len(calls) == 3:  # a.json and b.json moved in; c.json fails
            raise OSError(28, "No space left on device")
        return real(src, dst, **kw)

    monkeypatch.setattr(os, "replace", flaky)
    with pytest.raises(OSError, match="No space"):
        files.write_files(tmp_path, {"a.json": b"A", "b.json": b"B", "c.json": b"C"})
    monkeypatch.undo()
    assert _tree(tmp_path) == {"a.json": b"old a", "b.json": b"old b"}


def test_folder_writer_is_all_or_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "old.txt").write_bytes(b"old")
    with pytest.raises(files.OutputRefused, match="non-empty"):
        with files.folder_writer(tmp_path, out):
            pass
    with pytest.raises(RuntimeError), files.folder_writer(tmp_path, out, replace=True) as w:
        w.write("a/b.json", b"1")
        raise RuntimeError("the work fails half-way")
    assert _tree(tmp_path) == {"out": "dir", "out/old.txt": b"old"}
    with files.folder_writer(tmp_path, out, replace=True) as w:
        w.write("a/b.json", b"1")
        w.place("c.png", out / "old.txt")
        assert w.target == out and not out.joinpath("a").exists()
    assert _tree(tmp_path) == {"out": "dir", "out/a": "dir", "out/a/b.json": b"1",
                               "out/c.png": b"old"}


def test_folder_writer_refuses_a_linked_target_and_a_folder_of_inputs(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "in.json").write_bytes(b"in")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    with pytest.raises(files.OutputRefused, match="symbolic link"):
        with files.folder_writer(tmp_path, tmp_path / "link", replace=True):
            pass
    with pytest.raises(files.OutputRefused, match="holds the input"):
        with files.folder_writer(tmp_path, tmp_path / "real", replace=True,
                                 inputs=[tmp_path / "link" / "in.json"]):
            pass
    assert (tmp_path / "real" / "in.json").read_bytes() == b"in"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link", "real"]


def test_append_line_reports_a_torn_line_with_its_number(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(b"one\ntwo\nthr")
    torn = files.append_line(tmp_path, "r.jsonl", b"four\n")
    assert torn == files.TornLine(3, b"thr")
    assert files.append_line(tmp_path, "r.jsonl", b"five\n") is None
    assert path.read_bytes() == b"one\ntwo\nthr\nfour\nfive\n"


def test_item11_an_escaped_lone_surrogate_in_the_file_is_a_skipped_line(bench: Path) -> None:
    """JSON can spell text that is not UTF-8 (``"\\udce9"``); printing it would raise
    UnicodeEncodeError, so such a line is reported and skipped like any bad line."""
    gt = bench / "ground_truth.json"
    path = review.sidecar_for(gt)
    review.save_view(path, "ok", {"task": "vocabulary"})
    with open(path, "a", encoding="utf-8") as handle:
        handle.write('{"v": 1, "ts": "", "event": "save_view", "name": "bad", '
                     '"params": {"task": "caf\\udce9"}}\n')
        handle.write('{"v": 1, "ts": "", "event": "note", "task": "open_vocabulary", '
                     '"query_id": "ov_1", "text": "\\ud83d\\ude00 fine"}\n')
    state = review.load_state(path)
    assert list(state.views) == ["ok"] and len(state.problems) == 1
    assert state.problems[0].line == 2 and "UTF-8" in str(state.problems[0])
    assert [n.text for n in state.notes.values()] == ["\U0001f600 fine"]
    proc = _review("views", "--gt", str(gt))
    assert proc.returncode == 0 and proc.stdout == b"ok\ttask=vocabulary\n"


def test_a_pipe_as_a_source_image_is_refused_without_waiting(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "scene.png")
    out = tmp_path / "out"
    with pytest.raises(files.InputRefused, match="named pipe"):
        with files.folder_writer(tmp_path, out) as w:
            w.place("images/scene.png", tmp_path / "scene.png")
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["scene.png"]


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400))
def test_the_reader_never_raises_on_arbitrary_bytes(tmp_path_factory: pytest.TempPathFactory,
                                                    data: bytes) -> None:
    path = tmp_path_factory.mktemp("fuzz") / "review.jsonl"
    path.write_bytes(data)
    events, problems = review.read_events(path)
    lines = [x.removesuffix(b"\r") for x in data.split(b"\n")]
    assert len(events) + len(problems) == sum(1 for x in lines if x.strip())
    assert all(p.line is not None and 1 <= p.line <= len(lines) for p in problems)


def test_item8_the_commands_say_an_unreadable_sidecar_cannot_be_read(bench: Path) -> None:
    """No tags would look like "nothing tagged" (and an export would keep every query):
    ``list``, ``views`` and ``export`` stop with exit status 2 instead."""
    gt = bench / "ground_truth.json"
    path = review.sidecar_for(gt)
    path.parent.mkdir()
    os.mkfifo(path)
    for args in (["list"], ["views"], ["export", "--without", "gt_error", "--out",
                                       str(bench / "out")]):
        proc = _review(*args, "--gt", str(gt))
        err = proc.stderr.decode()
        assert proc.returncode == 2 and "cannot read the review file" in err, err
        assert "named pipe" in err and "Traceback" not in err
    assert not (bench / "out").exists()


def test_append_line_refuses_a_hard_link_to_a_file_elsewhere(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"precious\n")
    os.link(victim, root / "r.jsonl")
    with pytest.raises(files.OutputRefused, match="2 hard links"):
        files.append_line(root, "r.jsonl", b"x\n")
    assert victim.read_bytes() == b"precious\n"


def test_item3_force_keeps_the_classes_file_of_from_dota(tmp_path: Path, capsys) -> None:
    out = tmp_path / "bench"
    out.mkdir()
    (out / "classes.txt").write_text("plane\nharbor\n")
    status = convert_cli.main(["from-dota", "--labels", str(DOTA / "labelTxt"), "--images",
                               str(DOTA / "images"), "--classes", str(out / "classes.txt"),
                               "--out", str(out), "--force", "--quiet"])
    assert status == 2 and "holds the input" in capsys.readouterr().err
    assert (out / "classes.txt").read_text() == "plane\nharbor\n"
