"""A participant's archive, however strange, is refused with one message (issue 48).

Each zip below is built byte by byte (headers patched where Python's ``zipfile`` cannot write
the case: encryption, a compression method it lacks, names that are not UTF-8). EvalAI's
path reads the uploaded zip itself (:func:`unzipped_submission`): every case must end in an
``OVEarthInputError`` naming the archive, nothing written in the work folder or beside it.
Codabench's path walks the folder the platform unpacked (:func:`find_submission`): a tree
1,100 folders deep, or with more entries than the limit, is refused the same way. Two cases
run end to end as the platforms run them (exit status 2, one message, no traceback), and a
hypothesis test mutates a valid zip's bytes at random.
"""

from __future__ import annotations

import io
import json
import os
import stat
import struct
import subprocess
import sys
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ovearth_core.errors import OVEarthInputError
from ovearth_core.hosting.archive import MAX_DEPTH, MAX_ENTRIES
from ovearth_core.hosting.config import HostingConfig, Limits
from ovearth_core.hosting.scorer import find_submission, unzipped_submission
from ovearth_core.options import Options
from tests.hosting_helpers import GT, hosting, lay_out, run_worker

PRED = b'{"tasks": {"open_vocabulary": []}}'


def _zip(files: list[tuple[str, bytes]], method: int = zipfile.ZIP_STORED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", method) as archive:
        for name, data in files:
            archive.writestr(name, data)
    return buffer.getvalue()


def _headers(data: bytes) -> list[tuple[int, int]]:
    """``(offset, kind)`` of every local (0) and central (1) header."""
    found = []
    for kind, magic in ((0, b"PK\x03\x04"), (1, b"PK\x01\x02")):
        at = data.find(magic)
        while at >= 0:
            found.append((at, kind))
            at = data.find(magic, at + 4)
    return found


def _patch(data: bytes, *, flags: int = 0, method: int | None = None,
           name: tuple[bytes, bytes] | None = None) -> bytes:
    """Set flag bits / the method in every header; replace a name's bytes (same length)."""
    out = bytearray(data)
    for at, kind in _headers(data):
        flag_at, method_at = (at + 6, at + 8) if kind == 0 else (at + 8, at + 10)
        out[flag_at:flag_at + 2] = struct.pack("<H", struct.unpack_from("<H", out, flag_at)[0]
                                               | flags)
        if method is not None:
            out[method_at:method_at + 2] = struct.pack("<H", method)
    if name is not None:
        out = bytearray(bytes(out).replace(name[0], name[1]))
    return bytes(out)


def _symlink() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        info = zipfile.ZipInfo("predictions.json")
        info.create_system = 3
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        archive.writestr(info, "/etc/passwd")
    return buffer.getvalue()


def _garbled_deflate() -> bytes:
    data = _zip([("predictions.json", PRED * 50)], zipfile.ZIP_DEFLATED)
    start = data.find(b"predictions.json") + len("predictions.json")
    return data[:start] + b"\xff" * 20 + data[start + 20:]


def _lying_size() -> bytes:
    """A bomb by ratio: 30 MB of spaces declared as 100 bytes in both headers."""
    data = _zip([("predictions.json", PRED + b" " * 30_000_000)], zipfile.ZIP_DEFLATED)
    real = struct.pack("<I", len(PRED) + 30_000_000)
    return data.replace(real, struct.pack("<I", 100))


ARCHIVES = {
    "encrypted": (lambda: _patch(_zip([("predictions.json", PRED)]), flags=0x1),
                  "an encrypted entry"),
    "implode_method": (lambda: _patch(_zip([("predictions.json", PRED)]), method=6),
                       "compression method 6"),
    "aes_method": (lambda: _patch(_zip([("predictions.json", PRED)]), method=99),
                   "compression method 99"),
    "truncated": (lambda: _zip([("predictions.json", PRED * 100)])[:300],
                  "no end-of-central-directory record"),
    "garbled_deflate": (_garbled_deflate, "expected a readable zip archive"),
    "bomb_declared": (lambda: _zip([("predictions.json", PRED + b" " * 30_000_000)],
                                   zipfile.ZIP_DEFLATED), "(file size)"),
    "bomb_lying_size": (_lying_size, "expected a readable zip archive"),
    "duplicate_names": (lambda: _zip([("predictions.json", PRED), ("predictions.json", PRED)]),
                        "a duplicate name"),
    "absolute_name": (lambda: _zip([("/predictions.json", PRED)]),
                      "an absolute or escaping name"),
    "dotdot_name": (lambda: _zip([("../../predictions.json", PRED)]),
                    "an absolute or escaping name"),
    "backslash_name": (lambda: _zip([("..\\..\\predictions.json", PRED)]),
                       "an absolute or escaping name"),
    "symlink_entry": (_symlink, "a symbolic link"),
    "deep_path": (lambda: _zip([("d/" * 1100 + "predictions.json", PRED)]), "1100 folders"),
    "non_utf8_name": (lambda: _patch(_zip([("XXpred.json", PRED)]), flags=0x800,
                                     name=(b"XXpred.json", b"\xff\xfepred.json")),
                      "expected a readable zip archive"),
    "folder_named_like_the_file": (lambda: _zip([("predictions.json", PRED),
                                                 ("predictions.json/notes.txt", b"x")]),
                                   "both a file and a folder"),
    "huge_entry_count": (lambda: _zip([("predictions.json", PRED)]
                                      + [(f"f{i}", b"") for i in range(MAX_ENTRIES + 1)]),
                         f"{MAX_ENTRIES + 2:,} entries"),
}

def _config() -> HostingConfig:
    return HostingConfig(tasks=("vocabulary",), options=Options("vocabulary", "bbox"),
                         limits=Limits(max_mb=1.0))


def _tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.mark.parametrize("case", sorted(ARCHIVES))
def test_a_strange_zip_is_refused_with_one_message(tmp_path: Path, case: str) -> None:
    build, wanted = ARCHIVES[case]
    sub = tmp_path / "submission.zip"
    sub.write_bytes(build())
    work = tmp_path / "work"
    work.mkdir()
    with pytest.raises(OVEarthInputError) as caught:
        unzipped_submission(sub, work, _config())
    message = str(caught.value)
    assert "submission.zip" in message and wanted in message, message
    assert message.isprintable() or "\n" in message
    assert _tree(tmp_path) == ["submission.zip", "work"]


@pytest.mark.parametrize("name", ["predictions.json", "run/predictions.json"])
def test_an_ordinary_zip_is_still_read(tmp_path: Path, name: str) -> None:
    sub = tmp_path / "submission.zip"
    sub.write_bytes(_zip([(name, PRED), ("__MACOSX/._x.json", b"x"), ("run/", b"")],
                         zipfile.ZIP_DEFLATED))
    work = tmp_path / "work"
    work.mkdir()
    assert unzipped_submission(sub, work, _config()).read_bytes() == PRED


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255)), max_size=6),
       cut=st.integers(0, 10_000))
def test_mutated_zips_are_read_or_refused_never_crash(tmp_path: Path, edits: list,
                                                      cut: int) -> None:
    data = bytearray(_zip([("run/predictions.json", PRED * 3), ("readme.txt", b"hello")],
                          zipfile.ZIP_DEFLATED))
    for at, value in edits:
        data[at % len(data)] = value
    data = data[:len(data) - cut % 40]
    folder = tmp_path / f"case{abs(hash((tuple(edits), cut)))}"
    (folder / "work").mkdir(parents=True)
    (folder / "submission.zip").write_bytes(bytes(data))
    try:
        path = unzipped_submission(folder / "submission.zip", folder / "work", _config())
    except OVEarthInputError as err:
        assert "submission.zip" in str(err)
        assert _tree(folder) == ["submission.zip", "work"]
    else:
        assert path.parent == folder / "work"


def _deep(root: Path, depth: int) -> Path:
    """``root`` with a prediction file ``depth`` folders ``d`` down (built with relative
    mkdirs: the absolute path is longer than some calls accept)."""
    here = os.open(root, os.O_RDONLY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=here)
            inner = os.open("d", os.O_RDONLY, dir_fd=here)
            os.close(here)
            here = inner
        fd = os.open("predictions.json", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=here)
        os.write(fd, PRED)
        os.close(fd)
    finally:
        os.close(here)
    return root


def _flatten(root: Path) -> None:
    """Remove :func:`_deep`'s chain one level at a time (pytest's own clean-up, like
    ``shutil.rmtree``, recurses once per folder and would fail on it later)."""
    top = root / "d"
    while (top / "d").is_dir():
        os.rename(top / "d", root / "d.next")
        for name in os.listdir(top):
            os.unlink(top / name)
        os.rmdir(top)
        os.rename(root / "d.next", top)
    if top.is_dir():
        for name in os.listdir(top):
            os.unlink(top / name)
        os.rmdir(top)


@pytest.fixture
def deep(tmp_path: Path) -> Iterator[Callable[[Path, int], Path]]:
    made: list[Path] = []

    def make(root: Path, depth: int) -> Path:
        made.append(root)
        return _deep(root, depth)

    yield make
    for root in made:
        _flatten(root)


def test_a_folder_deeper_than_the_limit_is_refused(tmp_path: Path, deep: Callable) -> None:
    with pytest.raises(OVEarthInputError, match=f"folders nested at most {MAX_DEPTH} deep"):
        find_submission(deep(tmp_path, 1100))


def test_a_folder_with_too_many_entries_is_refused(tmp_path: Path) -> None:
    (tmp_path / "predictions.json").write_bytes(PRED)
    for i in range(MAX_ENTRIES):
        (tmp_path / f"f{i}").touch()
    with pytest.raises(OVEarthInputError, match=f"at most {MAX_ENTRIES:,} files and folders"):
        find_submission(tmp_path)


def test_a_shallow_folder_and_an_undecodable_name_are_found(tmp_path: Path,
                                                           deep: Callable) -> None:
    deep(tmp_path, MAX_DEPTH - 1)
    assert find_submission(tmp_path).read_bytes() == PRED
    odd = tmp_path / "odd"
    odd.mkdir()
    (odd / os.fsdecode(b"\xffpred.json")).write_bytes(PRED)
    (odd / "notes.txt").write_bytes(b"x")
    assert find_submission(odd).name == os.fsdecode(b"\xffpred.json")


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bundle") / "bundle.zip"
    hosting("codabench", "--gt", str(GT), "--out", str(out), "--task", "vocabulary",
            "--modalities", "bbox")
    return out


@pytest.mark.parametrize("case", ["deep", "non_utf8_invalid", "symlinked_json"])
def test_codabench_refuses_a_strange_folder_with_exit_2(bundle: Path, tmp_path: Path,
                                                        deep: Callable, case: str) -> None:
    root = lay_out(bundle, tmp_path, {})
    res = root / "input" / "res"
    if case == "deep":
        deep(res, 1100)
    elif case == "non_utf8_invalid":
        (res / os.fsdecode(b"\xff\xfe.json")).write_bytes(b"not json")
    else:
        (res / "predictions.json").symlink_to(GT)
    run = run_worker(root)
    assert run.returncode == 2, run.stderr
    assert run.stderr.count("submission rejected; no scores written") == 1
    assert "Traceback" not in run.stderr and "misconfigured" not in run.stderr
    assert list((root / "output").iterdir()) == []


WORKER = """
import importlib, json, sys
sys.path.append(sys.argv[1])
module = importlib.import_module("challenge_data.challenge_1.evaluation_script")
print(json.dumps(module.evaluate(sys.argv[2], sys.argv[3], "test")))
"""


def test_evalai_refuses_an_encrypted_zip_without_a_traceback(tmp_path: Path) -> None:
    out = tmp_path / "challenge.zip"
    hosting("evalai", "--gt", str(GT), "--out", str(out), "--phase", "Test,2026-02-01")
    work = tmp_path / "work"
    with zipfile.ZipFile(out) as z:
        for folder in (work / "challenge_data", work / "challenge_data" / "challenge_1"):
            folder.mkdir(parents=True)
            (folder / "__init__.py").write_text("")
        z.extract("evaluation_script.zip", tmp_path)
    with zipfile.ZipFile(tmp_path / "evaluation_script.zip") as z:
        z.extractall(work / "challenge_data" / "challenge_1" / "evaluation_script")
    sub = tmp_path / "submission.zip"
    sub.write_bytes(ARCHIVES["encrypted"][0]())
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    run = subprocess.run([sys.executable, "-c", WORKER, str(work), str(GT), str(sub)],
                         capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    output = json.loads(run.stdout.strip().splitlines()[-1])
    assert "result" not in output and "an encrypted entry" in output["submission_result"]["error"]
    assert "Traceback" not in run.stderr
