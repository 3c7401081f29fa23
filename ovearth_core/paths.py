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
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path

ENV_VAR = "OVEARTH_DATA_ROOT"
FLAG = "--data-root"
DATA_FLAG = "--data"
HOW_TO_ALLOW = (f"To allow another folder, start the app with `streamlit run app.py -- {FLAG} "
                f"DIR` (repeatable) or set {ENV_VAR}.")


class OutsideDataRootError(ValueError):
    """A path that resolves outside every data root (it is not read)."""

    def __init__(self, path: str | Path, roots: Sequence[Path]):
        self.path, self.roots = str(path), tuple(roots)
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
        raise OutsideDataRootError(path, roots)
    return resolved
