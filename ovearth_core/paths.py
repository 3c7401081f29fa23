"""Data roots: the folders a user-typed path may point into.

The app reads typed paths (ground truth, submission, images folder) only inside
its data roots: every ``--data DIR`` and ``--data-root DIR`` given after ``--`` on
the command line (``streamlit run app.py -- --data DIR``; the first ``--data`` is the
benchmark folder the app opens on) and every entry of the
``OVEARTH_DATA_ROOT`` environment variable (``os.pathsep``-separated); with
neither, the working directory. The bundled demo folder is always allowed.
A path is inside a root when it *resolves* (symlinks followed, ``..``
collapsed) to the root or below it, so ``..`` escapes and symlinks pointing
elsewhere are refused like any absolute path outside.

An input *file* (:func:`check_input`) must also be a regular file within the size
cap of :mod:`ovearth_core.files` (no pipe, device, socket or folder), checked with
``stat``, which never blocks; the read itself (:func:`ovearth_core.files.read_bounded`)
checks again on the open file.

**The gate** (issue 48): :func:`check_input` is the one function a path from a user
passes before it is read, whoever reads it (a page, a command, the hosted scorer); a
folder's files are listed only by :func:`folder_inputs`, which passes each one through it.
The roots it is given (docs/security.md, "The gate"): in the app the data roots, for
every path (typed, from a link, listed from a folder); in a command a file named on its
command line is read where it is (the user runs the command with their own rights) and a
file *found* in a folder named there (a submissions folder, a converter's sources) has
that folder as its root, so a symbolic link out of it is refused; the hosted scorer's root
is the participant's unpacked archive. Images named by an ``image_path`` stay inside the
images folder (:mod:`ovearth_core.image_paths`). ``tests/core/test_read_gate.py`` walks the
code and fails on a read or a listing that goes round the gate.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .files import InputRefused, check_input_stat

ENV_VAR = "OVEARTH_DATA_ROOT"
FLAG = "--data-root"
DATA_FLAG = "--data"
HOW_TO_ALLOW = (f"To allow another folder, start the app with `streamlit run app.py -- {FLAG} "
                f"DIR` (repeatable) or set {ENV_VAR}.")


class OutsideDataRootError(ValueError):
    """A path that resolves outside every data root (it is not read)."""

    def __init__(self, path: str | Path, roots: Sequence[Path], resolved: Path | None = None):
        self.path, self.roots, self.resolved = str(path), tuple(roots), resolved
        super().__init__(f"{self.path} is outside the data roots "
                         f"({', '.join(map(str, self.roots))}), so it was not read. "
                         f"{HOW_TO_ALLOW}")


def data_roots(argv: Sequence[str], environ: dict[str, str] | os._Environ[str], cwd: Path,
               always: Sequence[Path] = ()) -> tuple[Path, ...]:
    """The resolved data roots, in order, without duplicates.

    ``argv`` is the script's arguments (``sys.argv[1:]``; unknown ones are
    ignored), ``environ`` the environment; with no root from either, ``cwd``
    is the root. ``always`` (the bundled demo) is added in every case.

    >>> data_roots(["--data-root", "/data"], {}, Path("/home/u"), [Path("/app/demo")])
    (PosixPath('/data'), PosixPath('/app/demo'))
    """
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    parser.add_argument(FLAG, action="append", default=[])
    given = [r for r in parser.parse_known_args(list(argv))[0].data_root if r.strip()]
    given += dataset_args(argv)
    given += [r for r in environ.get(ENV_VAR, "").split(os.pathsep) if r.strip()]
    roots = [Path(r.strip()).expanduser() for r in given] or [cwd]
    out: list[Path] = []
    for root in [*roots, *always]:
        resolved = (cwd / root).resolve()
        if resolved not in out:
            out.append(resolved)
    return tuple(out)


def dataset_args(argv: Sequence[str]) -> list[str]:
    """The ``--data DIR`` values of ``argv``, in order (each is also a data root).

    >>> dataset_args(["--data", "/bench", "--data-root", "/x", "--data", "/other"])
    ['/bench', '/other']
    """
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    parser.add_argument(DATA_FLAG, action="append", default=[])
    return [d.strip() for d in parser.parse_known_args(list(argv))[0].data if d.strip()]


def confine(path: str | Path, roots: Sequence[Path]) -> Path:
    """``path`` resolved (symlinks followed), if it lies in one of ``roots``.

    ``roots`` must be resolved (as :func:`data_roots` returns them); ``path``
    must be absolute. Raises :class:`OutsideDataRootError` otherwise, also for
    a path that cannot be resolved (an embedded NUL byte, a symlink loop).
    """
    try:
        resolved = Path(path).resolve()
    except (OSError, RuntimeError, ValueError):
        raise OutsideDataRootError(path, roots) from None
    if not resolved.is_absolute() or not any(resolved.is_relative_to(r) for r in roots):
        raise OutsideDataRootError(path, roots, resolved)
    return resolved


def check_input(path: str | Path, roots: Sequence[Path], max_bytes: int | None = None) -> Path:
    """``path`` resolved, if it is a regular file of at most ``max_bytes`` inside ``roots``.

    Raises :class:`OutsideDataRootError` (see :func:`confine`) or
    :class:`~ovearth_core.files.InputRefused` (missing, not a regular file, too large).
    """
    resolved = confine(path, roots)
    try:
        st = resolved.stat()
    except OSError as err:
        raise InputRefused(path, "a readable file", err.strerror or type(err).__name__) from None
    check_input_stat(path, st, max_bytes)
    return resolved


def refusal(path: str | Path, roots: Sequence[Path],
            max_bytes: int | None = None) -> tuple[str, str] | None:
    """Why :func:`check_input` refuses ``path``, as ``(expected, found)``; ``None`` when
    it accepts it."""
    try:
        check_input(path, roots, max_bytes)
    except OutsideDataRootError as err:
        found = "a path that cannot be resolved" if err.resolved is None else \
            f"a path that resolves to {err.resolved}"
        return f"a file inside {', '.join(map(str, err.roots))} (links may not leave it)", found
    except InputRefused as err:
        return err.expected, err.found
    return None


@dataclass(frozen=True)
class Refused:
    """A file the gate did not let through: where it was found, what a readable input is
    and what was found instead (never any of its content: it is not read)."""

    path: Path
    expected: str
    found: str

    def __str__(self) -> str:
        return f"{self.path}: expected {self.expected}, found {self.found}"


def folder_inputs(folder: str | Path, pattern: str, roots: Sequence[Path],
                  max_bytes: int | None = None) -> tuple[list[Path], list[Refused]]:
    """The files of ``folder`` (not its subfolders) whose names match ``pattern``, sorted,
    split into those :func:`check_input` accepts (as listed: a link inside the roots keeps
    its own name) and those it refuses, with why; nothing is read.

    The folder itself must lie in ``roots`` (:class:`OutsideDataRootError` otherwise:
    not even its names are listed); a missing folder, or a path that is not a folder,
    lists nothing. The one listing of a user's folder (``tests/core/test_read_gate.py``).
    """
    confine(folder, roots)
    base = Path(folder)
    if not base.is_dir():
        return [], []
    accepted, refused = [], []
    for path in sorted(base.glob(pattern)):
        why = refusal(path, roots, max_bytes)
        if why is None:
            accepted.append(path)
        else:
            refused.append(Refused(path, *why))
    return accepted, refused
