"""Shared by the converter tests: sample data paths, blank images, comparing evaluations."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path
from typing import Any

from cli_inprocess import run_module
from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "convert"
DEMO = ROOT / "assets" / "demo"
ALL = "segmentation,bbox,oriented_bbox"


def blank_images(folder: Path, sizes: dict[str, tuple[int, int]]) -> Path:
    """Write a blank PNG of each ``name -> (width, height)`` into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, size in sizes.items():
        Image.new("L", size).save(folder / name)
    return folder


def differences(a: Any, b: Any, path: str = "") -> list[str]:
    """Where two evaluation outputs differ (floats compared to 1e-9 relative)."""
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            return [f"{path}: keys {sorted(set(a) ^ set(b))}"]
        return [d for k in a for d in differences(a[k], b[k], f"{path}.{k}")]
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} vs {len(b)} items"]
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True))
                for d in differences(x, y, f"{path}[{i}]")]
    if isinstance(a, float) and isinstance(b, float):
        return [] if math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12) else [f"{path}: {a} vs {b}"]
    return [] if a == b else [f"{path}: {a!r} vs {b!r}"]


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """``python -m ovearth_core.convert *args`` in this process (tests/cli_inprocess.py)."""
    return run_module("ovearth_core.convert", *args, cwd=ROOT)


def run_cli_process(*args: str) -> subprocess.CompletedProcess[str]:
    """``python -m ovearth_core.convert *args`` as a real process (the shipped entry point)."""
    return subprocess.run([sys.executable, "-m", "ovearth_core.convert", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
