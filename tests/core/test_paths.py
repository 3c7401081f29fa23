"""Data roots (ovearth_core.paths): which typed paths the app may read."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as hs

from ovearth_core.files import InputRefused
from ovearth_core.paths import (
    ENV_VAR,
    OutsideDataRootError,
    check_input,
    confine,
    data_roots,
    refusal,
)


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    """``root/`` (data root, with ``gt.json`` and ``sub/``), ``outside/secret.json``."""
    (tmp_path / "root" / "sub").mkdir(parents=True)
    (tmp_path / "root" / "gt.json").write_text("{}")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.json").write_text("{}")
    return tmp_path


@pytest.mark.parametrize(("argv", "env", "expected"), [
    ([], {}, ["cwd", "demo"]),
    (["--data-root", "a"], {}, ["cwd/a", "demo"]),
    (["--data-root=a", "--data-root", "/b"], {}, ["cwd/a", "/b", "demo"]),
    ([], {ENV_VAR: f"/b{os.pathsep}a{os.pathsep}"}, ["/b", "cwd/a", "demo"]),
    (["--data-root", "/b"], {ENV_VAR: "/c"}, ["/b", "/c", "demo"]),
    (["--data-root", "/b", "--data-root", "/b/"], {ENV_VAR: "/b"}, ["/b", "demo"]),
    (["--data-r", "/x", "-x", "--other=1"], {ENV_VAR: " "}, ["cwd", "demo"]),  # no abbreviations
    (["--data-root", "cwd-is-demo/.."], {}, ["cwd", "demo"]),
    (["--data", "/x", "--data-root", "/b"], {}, ["/b", "/x", "demo"]),  # a --data folder is a root
], ids=["default", "relative", "repeated", "env", "both", "dedup", "unknown", "dotdot", "data"])
def test_data_roots(tmp_path: Path, argv: list[str], env: dict[str, str],
                    expected: list[str]) -> None:
    cwd, demo = tmp_path / "cwd", tmp_path / "demo"

    def expand(text: str) -> Path:
        if text.startswith("/"):
            return Path(text).resolve()
        return {"cwd": cwd, "demo": demo}.get(text, tmp_path / text)

    got = data_roots(argv, env, cwd, [demo])
    assert got == tuple(expand(e) for e in expected)


@pytest.mark.parametrize("typed", ["root/gt.json", "root/sub", "root", "root/sub/../gt.json",
                                   "root/missing.json"])
def test_paths_inside_are_allowed(tree: Path, typed: str) -> None:
    assert confine(tree / typed, [tree / "root"]) == (tree / typed).resolve()


@pytest.mark.parametrize("typed", ["outside/secret.json", "root/../outside/secret.json",
                                   "root/sub/../../outside", "rootless.json", "/etc/passwd", "/",
                                   "root/a\x00b"])
def test_paths_outside_are_refused(tree: Path, typed: str) -> None:
    with pytest.raises(OutsideDataRootError) as err:
        confine(tree / typed, [tree / "root"])
    message = str(err.value)
    assert str(tree / typed) in message and str(tree / "root") in message
    assert "--data-root" in message and ENV_VAR in message


def test_symlinks_count_where_they_point(tree: Path) -> None:
    root = tree / "root"
    os.symlink(tree / "outside" / "secret.json", root / "link.json")
    os.symlink(tree / "outside", root / "linkdir")
    os.symlink(root / "gt.json", tree / "outside" / "back.json")
    os.symlink("loop", root / "loop")
    for escape in ("link.json", "linkdir/secret.json", "loop"):
        with pytest.raises(OutsideDataRootError):
            confine(root / escape, [root])
    assert confine(tree / "outside" / "back.json", [root]) == root / "gt.json"


def test_a_root_that_is_a_prefix_string_is_not_a_parent(tree: Path) -> None:
    (tree / "root2").mkdir()
    with pytest.raises(OutsideDataRootError):
        confine(tree / "root2" / "x.json", [tree / "root"])
    assert confine(tree / "root2" / "x.json", [tree / "root", tree / "root2"]).parent.name == \
        "root2"


@given(hs.lists(hs.sampled_from(["a", "b", "..", ".", ""]), max_size=8))
def test_confine_never_returns_a_path_outside(parts: list[str]) -> None:
    root = Path("/srv/data")
    typed = root.joinpath(*parts)
    try:
        out = confine(typed, [root])
    except OutsideDataRootError:
        assert not os.path.normpath(typed).startswith("/srv/data")
    else:
        assert out.is_relative_to(root)


# --- input files: confined, regular, within the cap (check_input, refusal) -----------------


def test_check_input_accepts_a_regular_file_and_returns_it_resolved(tree: Path) -> None:
    root = tree / "root"
    os.symlink("gt.json", root / "alias.json")
    assert check_input(root / "alias.json", [root]) == root / "gt.json"
    assert refusal(root / "gt.json", [root]) is None


def test_refusal_says_what_and_where(tree: Path) -> None:
    root = tree / "root"
    os.symlink(tree / "outside" / "secret.json", root / "link.json")
    os.symlink("/etc/passwd", root / "passwd.json")
    os.mkfifo(root / "pipe.json")
    (root / "big.json").write_bytes(b"x" * 2000)
    expected_inside = f"a file inside {root} (links may not leave it)"
    assert refusal(root / "link.json", [root]) == (
        expected_inside, f"a path that resolves to {tree / 'outside' / 'secret.json'}")
    assert refusal(root / "passwd.json", [root]) == (
        expected_inside, f"a path that resolves to {Path('/etc/passwd').resolve()}")
    assert refusal(root / "pipe.json", [root]) == ("a regular file", "a named pipe (FIFO)")
    assert refusal(root / "sub", [root]) == ("a regular file", "a folder")
    assert refusal(root / "missing.json", [root]) == ("a readable file",
                                                       "No such file or directory")
    expected, found = refusal(root / "big.json", [root], max_bytes=1000)
    assert expected.startswith("a file of at most 0.000954 MB") and "2,000 bytes" in found
    with pytest.raises(InputRefused):
        check_input(root / "pipe.json", [root])
    with pytest.raises(OutsideDataRootError) as info:
        check_input(root / "link.json", [root])
    assert info.value.resolved == tree / "outside" / "secret.json"


@pytest.mark.skipif(os.geteuid() != 0, reason="os.mknod needs root")
def test_refusal_of_a_device_of_our_own(tree: Path) -> None:
    zero = tree / "root" / "zero.json"
    os.mknod(zero, stat.S_IFCHR | 0o444, os.makedev(1, 5))
    assert refusal(zero, [tree / "root"]) == ("a regular file", "a character device")
