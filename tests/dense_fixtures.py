"""A dense DOTA-style scene converted with ``from_dota``, for the object-level app views.

``D0001`` (320 x 240): 120 ships packed in a 12 x 10 grid (10 x 10 px every 8 px, so each
ship overlaps its neighbours) and four small vehicles; ``D0002``: three ships, two small
vehicles and a large vehicle. ``model_a`` finds most ships (a few dropped, a few doubled),
boxes two small vehicles of ``D0001`` as large vehicles (class confusion; ``large-vehicle``
is absent from ``D0001``, a negative query) and the rest right. ``model_b`` drops more.
Each model writes Task1 (oriented) and Task2 (upright box) files of the same detections.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

from ovearth_core.convert import from_dota

SHIP_GRID = [(8 * i + 4, 8 * j + 4) for i in range(12) for j in range(10)]
SV_D1 = [(200, 200), (220, 200), (240, 200), (260, 200)]
CONFUSED = SV_D1[:2]  # boxed as large vehicles by model_a


def _quad(x: float, y: float, w: float, h: float) -> list[float]:
    return [x, y, x + w, y, x + w, y + h, x, y + h]


def _line(values: list[float]) -> str:
    return " ".join(f"{v:g}" for v in values)


def write_dense_dota(root: Path) -> Path:
    """Write the DOTA sources under ``root`` and convert them; returns the benchmark."""
    src = root / "dota"
    (src / "labelTxt").mkdir(parents=True)
    (src / "images").mkdir()
    rng = np.random.default_rng(0)
    for stem in ("D0001", "D0002"):
        pixels = rng.integers(0, 255, (240, 320, 3), dtype=np.uint8)
        Image.fromarray(pixels).save(src / "images" / f"{stem}.png")
    d1 = [(_quad(x, y, 10, 10), "ship") for x, y in SHIP_GRID]
    d1 += [(_quad(x, y, 6, 6), "small-vehicle") for x, y in SV_D1]
    d2 = [(_quad(20 + 30 * k, 20, 12, 12), "ship") for k in range(3)]
    d2 += [(_quad(40 + 20 * k, 120, 6, 6), "small-vehicle") for k in range(2)]
    d2 += [(_quad(150, 150, 20, 10), "large-vehicle")]
    for stem, objs in (("D0001", d1), ("D0002", d2)):
        (src / "labelTxt" / f"{stem}.txt").write_text(
            "imagesource:GoogleEarth\ngsd:0.5\n"
            + "".join(f"{_line(q)} {c} 0\n" for q, c in objs))
    results = []
    for name, drop in (("model_a", 0.06), ("model_b", 0.3)):
        folder = src / "results" / name
        folder.mkdir(parents=True)
        rows: dict[str, list[str]] = {"ship": [], "small-vehicle": [], "large-vehicle": []}
        for k, (x, y) in enumerate(SHIP_GRID):
            if rng.random() < drop:
                continue
            dx, dy = rng.uniform(-0.8, 0.8, 2)
            box = _line(_quad(x + dx, y + dy, 10, 10))
            rows["ship"].append(f"D0001 {0.99 - k / 400:.4f} {box}")
            if k % 40 == 7:  # a doubled ship
                rows["ship"].append(f"D0001 0.3000 {_line(_quad(x + 0.5, y, 10, 10))}")
        for x, y in SV_D1:
            cat = "large-vehicle" if name == "model_a" and (x, y) in CONFUSED else "small-vehicle"
            rows[cat].append(f"D0001 0.8000 {_line(_quad(x, y, 6, 6))}")
        for q, c in d2:
            rows[c.replace("_", "-")].append(f"D0002 0.9000 {_line(q)}")
        for cat, lines in rows.items():
            (folder / f"Task1_{cat}.txt").write_text("".join(f"{t}\n" for t in lines))
            # The same detections as DOTA Task2 boxes (boxes come from Task2 files only,
            # issue 46): each is an upright rectangle written from its top-left corner, so
            # its box is vertices 1 and 3: image score x1 y1 x3 y3.
            task2 = [" ".join(t.split()[i] for i in (0, 1, 2, 3, 6, 7)) for t in lines]
            (folder / f"Task2_{cat}.txt").write_text("".join(f"{t}\n" for t in task2))
        results.append(folder)
    out = root / "bench"
    from_dota(src / "labelTxt", src / "images", out, results)
    return out
