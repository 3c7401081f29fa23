"""What a command reads: the one list its output paths are checked against (issue 35).

A command's output is refused when it is, or links to (a symbolic or hard link: same
``st_dev`` and ``st_ino``), any file the command reads (:func:`ovearth_core.files.write_output`):
not only the ground truth and predictions named on its command line but the files it finds
from them, above all the scenes. A report draws every image its queries name, the GeoJSON
export reads each image's georeference, slicing by GSD reads each annotation's image; an
``--out`` onto ``images/1.tif`` would otherwise replace the scene with the output.

:class:`Reads` gathers them: the named files first (checked before any work), then, as the
command learns them, the images (resolved inside the images folder as every reader resolves
them, :func:`ovearth_core.image_paths.resolve_image_path`) and the side files (taxonomy,
review sidecar). The command checks its output against :meth:`Reads.files` once more just
before writing, so nothing read is ever written over.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from .image_paths import ImagePathError, resolve_image_path

PathLike = str | os.PathLike[str]


@dataclass
class Reads:
    """The files one command reads, in the order it learns them (duplicates kept once).

    ``named``: the files on its command line (ground truth, predictions...);
    ``images_root``: the folder the ground truth's ``image_path`` values are relative to.
    """

    named: list[PathLike]
    images_root: Path | None = None
    _more: dict[str, PathLike] = field(default_factory=dict)

    def add(self, *paths: PathLike | None) -> Reads:
        """Add side files the command reads (``None`` skipped)."""
        for path in paths:
            if path is not None:
                self._more.setdefault(os.fspath(path), path)
        return self

    def add_images(self, image_paths: Iterable[str]) -> Reads:
        """Add the images the ground truth names (``image_path`` values), resolved inside
        :attr:`images_root`; one that escapes it is never read, so it is not added."""
        if self.images_root is None:
            raise ValueError("Reads.add_images needs images_root")
        for relative in image_paths:
            try:
                self.add(resolve_image_path(self.images_root, relative))
            except (ImagePathError, OSError, ValueError):
                continue
        return self

    def files(self) -> list[PathLike]:
        """Every file read so far: the named ones, then the others."""
        named = {os.fspath(p) for p in self.named}
        return [*self.named, *(p for k, p in self._more.items() if k not in named)]


def images_of(gt_root: PathLike, images: PathLike | None) -> Path:
    """The images folder a command reads: ``images`` (``--images``), else the ground
    truth's folder."""
    return Path(images) if images is not None else Path(gt_root).resolve().parent


def image_paths_of(gt_doc: object) -> list[str]:
    """The ``image_path`` strings of a ground-truth document's annotations (as read, before
    validation: whatever a reader of the images would open)."""
    anns = gt_doc.get("annotations") if isinstance(gt_doc, dict) else None
    return list(dict.fromkeys(a["image_path"] for a in anns if isinstance(a, dict)
                              and isinstance(a.get("image_path"), str))) if isinstance(
        anns, list) else []
