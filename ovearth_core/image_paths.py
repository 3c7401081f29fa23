"""Image paths of annotations, resolved inside the images folder (never outside it)."""

from __future__ import annotations

from pathlib import Path


class ImagePathError(ValueError):
    """An image path that points outside the images folder (or is not a relative path)."""


def resolve_image_path(images_root: str | Path, relative: str) -> Path:
    """Resolve ``relative`` inside ``images_root``; reject escapes.

    Raises:
        ImagePathError: for an absolute path, a ``..`` component, a NUL byte (no file
            system allows one), or a path that (through symlinks) resolves outside the
            folder.
    """
    if "\0" in relative:
        raise ImagePathError(f"image path {relative!r} contains a NUL byte")
    parts = relative.replace("\\", "/").split("/")
    if not relative or Path(relative).is_absolute() or relative.startswith(("/", "\\")) \
            or (len(relative) > 1 and relative[1] == ":"):
        raise ImagePathError(f"image path {relative!r} is not a relative path")
    if ".." in parts:
        raise ImagePathError(f"image path {relative!r} leaves the images folder ('..')")
    rel = Path(*[p for p in parts if p])
    root = Path(images_root).resolve()
    target = (root / rel).resolve()
    if not target.is_relative_to(root):
        raise ImagePathError(f"image path {relative!r} resolves outside the images folder")
    return target
