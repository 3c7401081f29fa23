"""Confinement of ``ovearth_core.files``: no ``..`` anywhere, however the path is written.

Issue 47: a planted bug that checked ``..`` only in relative paths survived the suite,
because every hostile path in it was relative. The rule: a path with a ``..`` component is
refused by every confined writer whether it is relative, absolute through the root as
given, or absolute through the resolved root, and nothing is written anywhere.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from ovearth_core import files

WRITERS: dict[str, Callable[[Path, str], object]] = {
    "write_confined": lambda root, path: files.write_confined(root, path, b"x"),
    "check_confined": lambda root, path: files.check_confined(root, path),
    "write_files": lambda root, path: files.write_files(root, {path: b"x"}),
    "append_line": lambda root, path: files.append_line(root, path, b"x\n"),
}


def _tree(top: Path) -> set[str]:
    return {str(p.relative_to(top)) for p in top.rglob("*")}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """``tmp_path/real/root`` (holding ``sub/``) reached through the link ``tmp_path/alias``,
    so a path can name the root as given or as resolved."""
    real = tmp_path / "real" / "root"
    (real / "sub").mkdir(parents=True)
    os.symlink(real, tmp_path / "alias")
    return tmp_path / "alias"


def _hostile(root: Path) -> list[str]:
    real = os.path.realpath(root)
    return [
        f"{root}/sub/../../escape.json",          # absolute through the root as given
        f"{real}/sub/../../escape.json",          # absolute through the resolved root
        f"{real}/../escape.json",                 # straight out of the resolved root
        f"{real}/sub/../inside.json",             # a .. that would stay inside: refused too
        f"{root}/..",                             # the root's parent itself
        "sub/../../escape.json",                  # relative, for comparison
    ]


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_a_dotdot_component_is_refused_in_absolute_paths_too(root: Path, writer: str) -> None:
    top = root.parent
    before = _tree(top)
    for path in _hostile(root):
        with pytest.raises(files.OutputRefused, match=r"\.\. component"):
            WRITERS[writer](root, path)
    assert _tree(top) == before


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_absolute_paths_inside_the_root_are_still_written(root: Path, writer: str) -> None:
    """The other half of the rule, so refusing everything absolute cannot pass."""
    real = os.path.realpath(root)
    for path in (f"{root}/sub/a.json", f"{real}/sub/b.json"):
        WRITERS[writer](root, path)
    if writer != "check_confined":
        assert {"sub/a.json", "sub/b.json"} <= _tree(Path(real))
