"""Writes the binary files of the sample data: blank images of the sizes the hand-written
annotations expect, and the label maps below (run from the repository root:
``.venv/bin/python tests/data/convert/make_images.py``). The text files beside them are
hand-written from each format's public description; tests/convert/test_convert_label_maps.py checks
that the committed label maps still hold these grids."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

HERE = Path(__file__).resolve().parent

IMAGES = {
    "coco/images/1.png": (40, 30), "coco/images/2.png": (40, 30), "coco/images/5.png": (48, 32),
    "dota/images/P0001.png": (100, 80), "dota/images/P0002.png": (64, 64),
    "dota/images/P0003.png": (32, 32),
    "rsvg/JPEGImages/00001.jpg": (64, 48), "rsvg/JPEGImages/00002.jpg": (40, 40),
    "label_maps/images/tile_a.jpg": (8, 6), "label_maps/images/tile_b.png": (8, 6),
}

# Class indices per pixel (rows top to bottom): 0 no-data, 1 background, 2 building, 3 water.
GRIDS = {
    "gt/tile_a": """
        1 1 1 2 2 1 1 1
        1 1 1 2 2 1 1 1
        1 1 1 1 1 1 3 3
        0 0 1 1 1 1 3 3
        0 0 1 1 1 1 3 3
        1 1 1 1 1 1 1 1""",
    "gt/tile_b": """
        1 1 1 1 1 1 1 1
        1 2 2 1 1 2 2 1
        1 2 2 1 1 2 2 1
        1 1 1 1 1 1 1 1
        1 1 1 1 1 1 1 1
        1 1 1 1 1 1 1 1""",
    "pred/model_x/tile_a": """
        1 1 2 2 2 1 1 1
        1 1 1 2 2 1 1 1
        1 1 1 1 1 1 3 3
        2 2 1 1 1 1 3 1
        0 0 1 1 1 1 3 3
        1 1 1 1 1 1 1 1""",
    "pred/model_x/tile_b": """
        1 1 1 1 1 1 1 1
        1 2 2 1 1 1 1 1
        1 2 2 1 1 1 1 1
        1 1 1 1 1 1 3 1
        1 1 1 1 1 1 1 1
        1 1 1 1 1 1 1 1""",
}


def grid(text: str) -> np.ndarray:
    return np.array([[int(v) for v in row.split()] for row in text.strip().splitlines()],
                    dtype=np.uint8)


def main() -> None:
    for rel, size in IMAGES.items():
        Image.new("RGB", size, (90, 110, 80)).save(HERE / rel)
    for name, text in GRIDS.items():
        img = Image.fromarray(grid(text), "L")
        if name.endswith("tile_b"):  # a palette image, as VOC-style label maps often are
            img = img.convert("P")
        img.save(HERE / "label_maps" / f"{name}.png")


if __name__ == "__main__":
    main()
