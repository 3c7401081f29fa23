"""Helpers for tests/core/test_synth.py: hashing folders, reading generated files, geometry checks.

Geometry checks use pycocotools, shapely and numpy directly (not the generator's own helpers),
so they are an independent reading of the generated files.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import shapely
from pycocotools import mask as cocomask

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "assets" / "demo"
TASKS = ("open_vocabulary", "referring", "reasoning")


def tree_hashes(root: Path) -> dict[str, str]:
    """sha256 of every file under ``root``, keyed by its POSIX path relative to ``root``
    (the review sidecar's folder ``.ovearth`` is the user's, not the generator's: skipped)."""
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*"))
            if p.is_file() and ".ovearth" not in p.relative_to(root).parts}


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def decode(seg: dict[str, Any]) -> npt.NDArray[np.uint8]:
    """Dense ``(h, w)`` mask of a JSON RLE (compressed string counts)."""
    h, w = seg["size"]
    return cocomask.decode({"size": [h, w], "counts": seg["counts"].encode("ascii")})


def pixel_envelope(mask: npt.NDArray[np.uint8]) -> tuple[int, int, int, int]:
    """``(x0, y0, x1, y1)`` of the foreground pixels, ``x1``/``y1`` exclusive."""
    ys, xs = np.nonzero(mask)
    return int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1


def convex_quad(poly: list[list[float]]) -> bool:
    """True for four boundary-ordered vertices forming a convex polygon of positive area."""
    p = np.asarray(poly, dtype=float)
    if p.shape != (4, 2):
        return False
    d = np.roll(p, -1, axis=0) - p
    cross = d[:, 0] * np.roll(d, -1, axis=0)[:, 1] - d[:, 1] * np.roll(d, -1, axis=0)[:, 0]
    return bool(np.all(cross > 1e-9) or np.all(cross < -1e-9))


def covered_by_obbs(mask: npt.NDArray[np.uint8], obbs: list[list[list[float]]],
                    tol: float) -> float:
    """Share of foreground pixel centres inside the union of the OBBs grown by ``tol`` px."""
    ys, xs = np.nonzero(mask)
    union = shapely.union_all([shapely.Polygon(o) for o in obbs]).buffer(tol)
    inside = shapely.contains_xy(union, xs + 0.5, ys + 0.5)
    return float(inside.mean())


def categories_by_image(gt: dict[str, Any]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for a in gt["annotations"]:
        out.setdefault(a["image_path"], set()).add(a["category_name"])
    return out
