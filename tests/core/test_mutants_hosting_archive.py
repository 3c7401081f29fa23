"""A participant's archive at the edges of each rule (issue 47, mutation testing of
``ovearth_core/hosting/archive.py``).

tests/core/test_hosting_archives.py shows each kind of strange zip refused; these tests pin
where each rule's line runs: exactly at a limit and one over (entries, depth, size, the end
record's place), which entries are skipped (hidden, ``__MACOSX``, at any level), which
names are escaping (absolute, ``..``, a drive, an empty folder) and which only look so,
which header fields are read (the end record's total at offset 10, zip64's at 32), and what
a message names (the archive and the entry, printable, relative to the submission). The
limits are lowered with ``monkeypatch`` where building the real number of entries would be
slow; the module reads them when it runs.
"""

from __future__ import annotations

import io
import os
import stat
import struct
import zipfile
from pathlib import Path

import pytest

from ovearth_core.errors import OVEarthInputError
from ovearth_core.hosting import archive

PRED = b'{"tasks": {}}'


def _zip(files: list[tuple[str | zipfile.ZipInfo, bytes]], method: int = zipfile.ZIP_STORED,
         comment: bytes = b"") -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", method) as z:
        for name, data in files:
            z.writestr(name, data)
        z.comment = comment
    return buffer.getvalue()


def _read(tmp_path: Path, data: bytes, max_bytes: int = 1 << 20) -> tuple[str, bytes]:
    path = tmp_path / "sub.zip"
    path.write_bytes(data)
    return archive.read_json_member(path, max_bytes, max_bytes / (1024 * 1024))


def _refused(tmp_path: Path, data: bytes, max_bytes: int = 1 << 20) -> list:
    with pytest.raises(OVEarthInputError) as caught:
        _read(tmp_path, data, max_bytes)
    return caught.value.problems


def _touch(path: Path, data: bytes = PRED) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


# ---- shown ---------------------------------------------------------------------------------

def test_shown_escapes_undecodable_bytes_and_control_characters() -> None:
    name = "a" + os.fsdecode(b"\xff") + "b\nc\x00d\te"
    assert archive.shown(name) == "a\\xffb\\nc\\x00d\\te"
    assert archive.shown("plain é.json") == "plain é.json"


# ---- find_json: the unpacked folder ---------------------------------------------------------

def test_find_json_skips_hidden_entries_and_resource_forks_at_every_level(
        tmp_path: Path) -> None:
    want = _touch(tmp_path / "run" / "p.JSON")
    for name in (".p.json", ".hidden/p.json", "run/.x.json", "__MACOSX/p.json",
                 "run/__MACOSX/q.json", "run/.git/q.json"):
        _touch(tmp_path / name)
    assert archive.find_json(tmp_path) == want


def test_find_json_descends_into_a_folder_named_like_a_json_file(tmp_path: Path) -> None:
    want = _touch(tmp_path / "out.json" / "inner" / "p.json")
    assert archive.find_json(tmp_path) == want


def test_find_json_never_follows_a_folder_link(tmp_path: Path) -> None:
    outside = _touch(tmp_path / "outside" / "p.json").parent
    res = tmp_path / "res"
    res.mkdir()
    (res / "linked").symlink_to(outside, target_is_directory=True)
    with pytest.raises(OVEarthInputError) as caught:
        archive.find_json(res)
    (problem,) = caught.value.problems
    assert problem.found == "no .json file (the zip holds: linked)"


@pytest.mark.parametrize("depth", [2, 3])
def test_find_json_reads_folders_exactly_max_depth_deep_and_no_deeper(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, depth: int) -> None:
    """MAX_DEPTH 2: ``d/d/p.json`` (two folders) is found, ``d/d/d/p.json`` refused, the
    message naming the first folder too deep, relative to the submission."""
    monkeypatch.setattr(archive, "MAX_DEPTH", 2)
    want = _touch(tmp_path / ("d/" * depth + "p.json"))
    if depth == 2:
        assert archive.find_json(tmp_path) == want
        return
    with pytest.raises(OVEarthInputError) as caught:
        archive.find_json(tmp_path)
    (problem,) = caught.value.problems
    assert (problem.file, problem.field) == (str(tmp_path), "(submission)")
    assert problem.expected == "folders nested at most 2 deep in the submitted zip"
    assert problem.found == "more than 2 (d/d/d...)"


def test_find_json_shortens_a_deep_folders_name(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(archive, "MAX_DEPTH", 0)
    _touch(tmp_path / ("x" * 200) / "p.json")
    with pytest.raises(OVEarthInputError) as caught:
        archive.find_json(tmp_path)
    assert caught.value.problems[0].found == f"more than 0 ({'x' * 120}...)"


@pytest.mark.parametrize(("extra", "refused"), [(2, False), (3, True)])
def test_find_json_counts_entries_of_every_folder_up_to_max_entries(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, extra: int, refused: bool) -> None:
    """MAX_ENTRIES 4: ``run/`` and ``run/p.json`` plus 2 more files (4 entries in all,
    hidden ones included) pass, 3 more are refused."""
    monkeypatch.setattr(archive, "MAX_ENTRIES", 4)
    want = _touch(tmp_path / "run" / "p.json")
    for i in range(extra - 1):
        _touch(tmp_path / "run" / f"f{i}")
    _touch(tmp_path / ".hidden")
    if not refused:
        assert archive.find_json(tmp_path) == want
        return
    with pytest.raises(OVEarthInputError) as caught:
        archive.find_json(tmp_path)
    (problem,) = caught.value.problems
    assert (problem.file, problem.field) == (str(tmp_path), "(submission)")
    assert problem.expected == "at most 4 files and folders in the submitted zip"
    assert problem.found == "more than 4"


def test_find_json_lists_at_most_five_other_files_sorted(tmp_path: Path) -> None:
    for name in ("g.txt", "b/a.txt", "f.txt", "e.txt", "d.txt", "c.txt"):
        _touch(tmp_path / name)
    with pytest.raises(OVEarthInputError) as caught:
        archive.find_json(tmp_path)
    (problem,) = caught.value.problems
    assert problem.expected == ("one prediction JSON file (e.g. predictions.json) in the "
                                "submitted zip")
    assert problem.found == "no .json file (the zip holds: b/a.txt, c.txt, d.txt, e.txt, f.txt)"


def test_find_json_in_an_empty_folder_finds_nothing(tmp_path: Path) -> None:
    with pytest.raises(OVEarthInputError) as caught:
        archive.find_json(tmp_path)
    (problem,) = caught.value.problems
    assert (problem.file, problem.field) == (str(tmp_path), "(submission)")
    assert problem.found == "no .json file (the zip holds: nothing)"


def test_find_json_names_the_first_five_json_files_and_their_count(tmp_path: Path) -> None:
    for name in ("f.json", "a/b.json", "e.json", "d.json", "c.json", "b.json"):
        _touch(tmp_path / name)
    with pytest.raises(OVEarthInputError) as caught:
        archive.find_json(tmp_path)
    (problem,) = caught.value.problems
    assert (problem.file, problem.field) == (str(tmp_path), "(submission)")
    assert problem.expected == ("one prediction JSON file (e.g. predictions.json) in the "
                                "submitted zip")
    assert problem.found == "6 .json files: a/b.json, b.json, c.json, d.json, e.json"


def test_find_json_walks_in_name_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The walk goes depth first in name order, so the folder named as too deep is the same
    on every file system: ``a/x`` before ``b/y`` (find_json mutants 15 and 17: the entries
    not sorted in reverse before they are pushed on the stack)."""
    monkeypatch.setattr(archive, "MAX_DEPTH", 1)
    for top in ("b", "a", "c"):
        _touch(tmp_path / top / "x" / "p.json")
    with pytest.raises(OVEarthInputError) as caught:
        archive.find_json(tmp_path)
    assert caught.value.problems[0].found == "more than 1 (a/x...)"


def test_a_resource_fork_folder_does_not_hide_the_files_after_it(tmp_path: Path) -> None:
    """``__MACOSX`` sorts between capitals and small letters: skipping it must not end the
    folder's listing (find_json mutant 53: ``continue`` made ``break``)."""
    _touch(tmp_path / "__MACOSX" / "._P.json")
    _touch(tmp_path / ".DS_Store")
    want = _touch(tmp_path / "Predictions.json")
    assert archive.find_json(tmp_path) == want


def test_find_json_refuses_a_folder_it_cannot_read(tmp_path: Path) -> None:
    with pytest.raises(OVEarthInputError) as caught:
        archive.find_json(tmp_path / "missing")
    (problem,) = caught.value.problems
    assert (problem.file, problem.field) == (str(tmp_path / "missing"), "(submission)")
    assert (problem.expected, problem.found) == ("a readable folder",
                                                 "No such file or directory")


def test_find_json_shows_an_undecodable_name_printably(tmp_path: Path) -> None:
    _touch(tmp_path / os.fsdecode(b"\xffa.txt"))
    _touch(tmp_path / "b\nc.txt")
    with pytest.raises(OVEarthInputError) as caught:
        archive.find_json(tmp_path)
    assert caught.value.problems[0].found == "no .json file (the zip holds: \\xffa.txt, b\\nc.txt)"


# ---- declared_entries: the end record ----------------------------------------------------

def _eocd(total: int, on_disk: int = 1, tail: bytes = b"") -> bytes:
    return (b"PK\x05\x06" + struct.pack("<HHHHIIH", 0, 0, on_disk, total, 0, 0, len(tail))
            + tail)


def test_declared_entries_reads_the_total_not_this_disks_count(tmp_path: Path) -> None:
    path = tmp_path / "z.zip"
    path.write_bytes(b"junk" + _eocd(total=7, on_disk=3))
    assert archive.declared_entries(path) == 7


def test_declared_entries_needs_22_bytes_of_record(tmp_path: Path) -> None:
    path = tmp_path / "z.zip"
    path.write_bytes(_eocd(5))  # exactly 22 bytes, at offset 0
    assert archive.declared_entries(path) == 5
    path.write_bytes(b"junk" + _eocd(5)[:21])  # (declared_entries mutant 27: + for -)
    with pytest.raises(OVEarthInputError) as caught:
        archive.declared_entries(path)
    (problem,) = caught.value.problems
    assert (problem.file, problem.field, problem.expected) == (
        str(path), "(file)", "a readable zip archive")
    assert problem.found == "no end-of-central-directory record (not a zip, or truncated)"


def test_a_zip_with_the_longest_comment_is_read(tmp_path: Path) -> None:
    """The end record can sit 22 + 65,535 bytes before the end (a full comment)."""
    data = _zip([("p.json", PRED)], comment=b"c" * 0xFFFF)
    assert _read(tmp_path, data) == ("p.json", PRED)


def _zip64_tail(total: int, on_disk: int, *, locator_first: bool,
                record_ok: bool = True) -> bytes:
    """A zip64 end record (56 bytes: total at 32, this disk's count at 24), its locator (20
    bytes, the record's offset at 8) and a saturated classic record, laid out either
    record-locator-end or locator-end-record (the locator then at offset 0: ``at == 20``)."""
    record = (b"PK\x06\x06" if record_ok else b"PK\x06\x07") + struct.pack(
        "<QHHIIQQQQ", 44, 45, 45, 0, 0, on_disk, total, 0, 0)
    assert len(record) == 56

    def locator(offset: int) -> bytes:
        return b"PK\x06\x07" + struct.pack("<IQI", 0, offset, 1)

    end = _eocd(0xFFFF, 0xFFFF)
    if locator_first:
        return locator(20 + 22) + end + record
    return record + locator(0) + end


@pytest.mark.parametrize("locator_first", [False, True])
def test_declared_entries_reads_zip64s_total_when_the_classic_field_is_saturated(
        tmp_path: Path, locator_first: bool) -> None:
    path = tmp_path / "z.zip"
    path.write_bytes(_zip64_tail(70_000, 3, locator_first=locator_first))
    assert archive.declared_entries(path) == 70_000


def test_declared_entries_keeps_the_classic_count_without_a_valid_zip64_record(
        tmp_path: Path) -> None:
    path = tmp_path / "z.zip"
    path.write_bytes(_zip64_tail(70_000, 3, locator_first=False, record_ok=False))
    assert archive.declared_entries(path) == 0xFFFF
    path.write_bytes(_zip64_tail(70_000, 3, locator_first=True)[:-1])  # record cut short
    assert archive.declared_entries(path) == 0xFFFF
    path.write_bytes(b"x" * 20 + _eocd(0xFFFF))  # no locator before the record
    assert archive.declared_entries(path) == 0xFFFF


def test_a_zip64_count_over_the_limit_is_refused_before_parsing(tmp_path: Path) -> None:
    problems = _refused(tmp_path, _zip64_tail(archive.MAX_ENTRIES + 1, 1, locator_first=False))
    assert [(p.field, p.expected, p.found) for p in problems] == [
        ("(submission)", "at most 10,000 entries in the zip", "10,001 entries")]


# ---- read_json_member: the entry count ------------------------------------------------------

@pytest.mark.parametrize(("count", "refused"), [(3, False), (4, True)])
def test_the_declared_entry_count_is_limited_exactly(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     count: int, refused: bool) -> None:
    monkeypatch.setattr(archive, "MAX_ENTRIES", 3)
    data = _zip([("p.json", PRED)] + [(f"f{i}", b"") for i in range(count - 1)])
    if not refused:
        assert _read(tmp_path, data) == ("p.json", PRED)
        return
    (problem,) = _refused(tmp_path, data)
    assert (problem.file, problem.field) == (str(tmp_path / "sub.zip"), "(submission)")
    assert (problem.expected, problem.found) == ("at most 3 entries in the zip", "4 entries")


def _understated(data: bytes, count: int) -> bytes:
    """``data`` with its end record's two counts set to ``count``."""
    at = data.rfind(b"PK\x05\x06")
    return data[:at + 8] + struct.pack("<HH", count, count) + data[at + 12:]


@pytest.mark.parametrize(("count", "refused"), [(3, False), (4, True)])
def test_the_real_entry_count_is_limited_when_the_record_understates_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, count: int, refused: bool) -> None:
    monkeypatch.setattr(archive, "MAX_ENTRIES", 3)
    data = _understated(_zip([("p.json", PRED)] + [(f"f{i}", b"") for i in range(count - 1)]), 1)
    if not refused:
        assert _read(tmp_path, data) == ("p.json", PRED)
        return
    (problem,) = _refused(tmp_path, data)
    assert (problem.field, problem.expected, problem.found) == (
        "(submission)", "at most 3 entries in the zip", "4 entries")


# ---- read_json_member: each entry ------------------------------------------------------------

@pytest.mark.parametrize("method", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED,
                                    zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA])
def test_each_of_the_four_methods_is_read(tmp_path: Path, method: int) -> None:
    assert _read(tmp_path, _zip([("p.json", PRED)], method)) == ("p.json", PRED)


def _patched(data: bytes, *, flag: int = 0, method: int | None = None) -> bytes:
    out = bytearray(data)
    for magic, flag_at, method_at in ((b"PK\x03\x04", 6, 8), (b"PK\x01\x02", 8, 10)):
        at = data.find(magic)
        while at >= 0:
            old = struct.unpack_from("<H", out, at + flag_at)[0]
            out[at + flag_at:at + flag_at + 2] = struct.pack("<H", old | flag)
            if method is not None:
                out[at + method_at:at + method_at + 2] = struct.pack("<H", method)
            at = data.find(magic, at + 4)
    return bytes(out)


def test_an_encrypted_entry_is_named_and_other_flags_are_not(tmp_path: Path) -> None:
    """Bit 0 is encryption; bit 1 (a deflate option) is not."""
    data = _zip([("p.json", PRED)], zipfile.ZIP_DEFLATED)
    assert _read(tmp_path, _patched(data, flag=0x2)) == ("p.json", PRED)
    (problem,) = _refused(tmp_path, _patched(data, flag=0x1))
    assert (problem.file, problem.field) == (f"{tmp_path / 'sub.zip'}:p.json", "(zip entry)")
    assert (problem.expected, problem.found) == ("an unencrypted entry",
                                                 "an encrypted entry (a password is needed)")


def test_an_unknown_method_is_named_with_the_four_known(tmp_path: Path) -> None:
    (problem,) = _refused(tmp_path, _patched(_zip([("p.json", PRED)]), method=9))
    assert problem.expected == "an entry compressed with stored, deflate, bzip2, lzma"
    assert problem.found == "compression method 9"
    assert problem.field == "(zip entry)"


@pytest.mark.parametrize("name", ["/p.json", "a\\p.json", "C:p.json", "C:", "a/../p.json",
                                  "../p.json", "..", "a//p.json", "/"])
def test_an_escaping_name_is_refused(tmp_path: Path, name: str) -> None:
    problems = _refused(tmp_path, _zip([("ok.json", PRED), (name, b"x")]))
    assert [(p.file, p.expected, p.found) for p in problems
            if p.found == "an absolute or escaping name"] == [
        (f"{tmp_path / 'sub.zip'}:{name}",
         "a relative name without '..', '\\' or an empty folder", "an absolute or escaping name")]


@pytest.mark.parametrize("name", ["x..txt", "...", ":", "ab:c", "run/", "a.b/c..d.txt",
                                  "run/..X"])
def test_a_name_that_only_looks_escaping_is_read(tmp_path: Path, name: str) -> None:
    assert _read(tmp_path, _zip([("p.json", PRED), (name, b"")])) == ("p.json", PRED)


@pytest.mark.parametrize(("folders", "refused"), [(2, False), (3, True)])
@pytest.mark.parametrize("entry", ["p.json", ""])
def test_names_nest_at_most_max_depth_folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              folders: int, refused: bool, entry: str) -> None:
    """MAX_DEPTH 2: ``d/d/p.json`` and the folder entry ``d/d/`` pass; ``d/d/d/p.json`` and
    ``d/d/d/`` (three folders, as the unpacked folder's walk counts them) are refused
    (_entry_problems mutants 20-21: the trailing ``/`` of a folder entry kept as a part; and
    the folder entry's depth, once counted one short)."""
    monkeypatch.setattr(archive, "MAX_DEPTH", 2)
    data = _zip([("d/" * folders + entry, b"" if not entry else PRED)]
                + ([] if entry else [("p.json", PRED)]))
    if not refused:
        assert _read(tmp_path, data)[1] == PRED
        return
    (problem,) = _refused(tmp_path, data)
    assert (problem.expected, problem.found) == ("a name nested at most 2 folders deep",
                                                 "3 folders")


def _linked(system: int) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo("p.json")
    info.create_system = system
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info


def test_a_link_is_a_unix_mode_on_a_unix_entry_only(tmp_path: Path) -> None:
    (problem,) = _refused(tmp_path, _zip([(_linked(3), b"/etc/passwd")]))
    assert (problem.expected, problem.found) == ("a regular file or folder", "a symbolic link")
    # The same bits from a DOS-made entry are not a Unix mode: an ordinary file.
    assert _read(tmp_path, _zip([(_linked(0), PRED)])) == ("p.json", PRED)
    regular = zipfile.ZipInfo("p.json")
    regular.create_system = 3
    regular.external_attr = (stat.S_IFREG | 0o644) << 16
    assert _read(tmp_path, _zip([(regular, PRED)])) == ("p.json", PRED)


@pytest.mark.filterwarnings("ignore:Duplicate name")
def test_a_duplicate_file_is_refused_a_repeated_folder_is_not(tmp_path: Path) -> None:
    assert _read(tmp_path, _zip([("run/", b""), ("run/", b""), ("run/p.json", PRED)]))[0] == \
        "run/p.json"
    problems = _refused(tmp_path, _zip([("run/p.json", PRED), ("run/p.json", PRED)]))
    assert [(p.file, p.expected, p.found) for p in problems] == [
        (f"{tmp_path / 'sub.zip'}:run/p.json", "each name once", "a duplicate name")]


@pytest.mark.parametrize("files", [
    [("p.json", PRED), ("p.json/notes.txt", b"x")],
    [("p.json/", b""), ("p.json", PRED)],
    [("run", b""), ("run/p.json", PRED)],
    [("a/b", b""), ("a/b/c/p.json", PRED)],
])
def test_a_name_both_file_and_folder_is_refused(tmp_path: Path, files: list) -> None:
    problems = _refused(tmp_path, _zip(files))
    both = [p for p in problems if p.found == "both a file and a folder"]
    assert len(both) == 1 and both[0].expected == "a name that is a file or a folder, not both"
    assert both[0].field == "(zip entry)"


def test_at_most_five_file_and_folder_clashes_are_listed_sorted(tmp_path: Path) -> None:
    files = [(f"{c}", b"") for c in "fedcba"] + [(f"{c}/x", b"") for c in "fedcba"]
    problems = _refused(tmp_path, _zip(files + [("p.json", PRED)]))
    label = str(tmp_path / "sub.zip")
    assert [p.file for p in problems] == [f"{label}:{c}" for c in "abcde"]


def test_every_problem_of_every_entry_is_reported(tmp_path: Path) -> None:
    data = _patched(_zip([("p.json", PRED), ("/q.json", b"")]), flag=0x1)
    problems = _refused(tmp_path, data)
    assert sorted((p.file.rsplit(":", 1)[1], p.found) for p in problems) == [
        ("/q.json", "an absolute or escaping name"),
        ("/q.json", "an encrypted entry (a password is needed)"),
        ("p.json", "an encrypted entry (a password is needed)")]


def test_an_entrys_name_in_a_message_is_printable_and_at_most_300_characters(
        tmp_path: Path) -> None:
    name = "/" + "n\x01" * 400
    problems = _refused(tmp_path, _zip([("p.json", PRED), (name, b"")]))
    assert len(problems) == 1 and len(problems[0].file) == 300
    assert problems[0].file.startswith(f"{tmp_path / 'sub.zip'}:/n\\x01n")


# ---- read_json_member: the one JSON file and its size --------------------------------------

@pytest.mark.parametrize("skipped", [".p.json", "run/.p.json", ".run/p.json",
                                     "__MACOSX/p.json", "run/__MACOSX/p.json", "dir.json/"])
def test_hidden_forks_and_folders_are_not_the_submission(tmp_path: Path, skipped: str) -> None:
    data = _zip([(skipped, b"" if skipped.endswith("/") else b"x"), ("run/P.JSON", PRED)])
    assert _read(tmp_path, data) == ("run/P.JSON", PRED)


@pytest.mark.parametrize(("names", "found"), [
    ([], "0: no .json file"),
    (["b.json", "a.json"], "2: b.json, a.json"),
    ([f"{c}.json" for c in "abcdef"], "6: a.json, b.json, c.json, d.json, e.json"),
])
def test_exactly_one_json_file_is_wanted(tmp_path: Path, names: list, found: str) -> None:
    (problem,) = _refused(tmp_path, _zip([(n, PRED) for n in names] + [("notes.txt", b"")]))
    assert (problem.file, problem.field) == (str(tmp_path / "sub.zip"), "(submission)")
    assert problem.expected == "one prediction JSON file (e.g. predictions.json) in the zip"
    assert problem.found == found


@pytest.mark.parametrize(("size", "refused"), [(100, False), (101, True)])
def test_the_declared_size_is_limited_exactly(tmp_path: Path, size: int,
                                              refused: bool) -> None:
    data = b"{}".ljust(size)
    zipped = _zip([("run/p.json", data)], zipfile.ZIP_DEFLATED)
    if not refused:
        assert _read(tmp_path, zipped, max_bytes=100) == ("run/p.json", data)
        return
    (problem,) = _refused(tmp_path, zipped, max_bytes=100)
    assert (problem.file, problem.field) == (f"{tmp_path / 'sub.zip'}:run/p.json",
                                             "(file size)")
    assert problem.expected == (f"a file of at most {100 / (1024 * 1024):g} MB (this "
                                "competition's limit)")
    assert problem.found == "0.0 MB (101 bytes)"


def _lying(size: int, declared: int) -> bytes:
    data = _zip([("p.json", b" " * size)], zipfile.ZIP_DEFLATED)
    return data.replace(struct.pack("<I", size), struct.pack("<I", declared))


def test_a_size_understated_in_the_headers_is_refused_not_read_whole(tmp_path: Path) -> None:
    """The headers say 10 bytes, the data inflates to 5,000: the zip module stops at the
    declared size and the checksum refuses the entry (a bomb by ratio reads no further)."""
    (problem,) = _refused(tmp_path, _lying(5_000, 10), max_bytes=100)
    assert (problem.file, problem.field, problem.expected) == (
        str(tmp_path / "sub.zip"), "(file)", "a readable zip archive")
    assert problem.found.startswith("BadZipFile: ")


def test_an_unreadable_zip_names_the_error(tmp_path: Path) -> None:
    data = _zip([("p.json", PRED * 40)], zipfile.ZIP_DEFLATED)
    at = data.find(b"p.json") + len("p.json")
    (problem,) = _refused(tmp_path, data[:at] + b"\xff" * 12 + data[at + 12:])
    assert (problem.file, problem.field, problem.expected) == (
        str(tmp_path / "sub.zip"), "(file)", "a readable zip archive")
    assert problem.found.startswith(("BadZipFile: ", "error: ")) and len(problem.found) <= 300


def test_names_are_duplicates_only_when_equal(tmp_path: Path) -> None:
    """``notes``, ``notes `` and ``notesX`` are three names; ``/p.json`` is refused as
    absolute, not also as a duplicate of ``p.json`` (_entry_problems mutants 110-112: the
    duplicate key stripped of spaces, of leading slashes or of ``X``)."""
    files = [("p.json", PRED), ("notes", b""), ("notes ", b""), ("notesX", b"")]
    assert _read(tmp_path, _zip(files)) == ("p.json", PRED)
    problems = _refused(tmp_path, _zip([("p.json", PRED), ("/p.json", b"")]))
    assert [p.found for p in problems] == ["an absolute or escaping name"]


def test_a_clash_names_its_entry_in_at_most_300_characters(tmp_path: Path) -> None:
    """(_entry_problems mutant 150: the clash's name cut at 301)"""
    long = "n" * 400
    problems = _refused(tmp_path, _zip([(long, b""), (f"{long}/x", b""), ("p.json", PRED)]))
    assert [len(p.file) for p in problems] == [300]
    assert problems[0].found == "both a file and a folder"


def test_the_zip_modules_error_is_cut_at_300_characters(tmp_path: Path) -> None:
    """A local header whose 200-character name differs from the directory's: the zip
    module's message quotes both names; the refusal keeps 300 characters of it
    (read_json_member mutant 108: cut at 301)."""
    name = "a" * 195 + ".json"
    data = _zip([(name, PRED)])
    local = data.find(name.encode())
    data = data[:local] + b"b" + data[local + 1:]
    (problem,) = _refused(tmp_path, data)
    assert problem.found.startswith("BadZipFile: File name in directory")
    assert len(problem.found) == 300


def test_the_last_end_record_counts_not_a_look_alike_inside_an_entry(tmp_path: Path) -> None:
    """A stored entry holding the end record's signature, followed by 0xFF bytes: the
    record is the last one, the zip's own (declared_entries mutant 23: ``find`` for
    ``rfind`` reads 65,535 entries from the entry's bytes)."""
    data = _zip([("p.json", PRED), ("notes.bin", b"PK\x05\x06" + b"\xff" * 30)])
    assert _read(tmp_path, data) == ("p.json", PRED)


def test_a_zip64_count_is_unsigned(tmp_path: Path) -> None:
    """A total of 2**64 - 1 is that many entries, not -1 (declared_entries mutant 99:
    ``<q`` for ``<Q``), and is refused before the zip module parses the directory."""
    path = tmp_path / "z.zip"
    path.write_bytes(_zip64_tail(2**64 - 1, 1, locator_first=False))
    assert archive.declared_entries(path) == 2**64 - 1
    (problem,) = _refused(tmp_path, path.read_bytes())
    assert problem.found == f"{2**64 - 1:,} entries"
