"""Issue 28: the analysis and leaderboard commands import nothing heavy before it is needed.

Each case runs in a fresh interpreter (what a user's process really loads): ``--help`` of
``python -m ovearth_core.analysis`` and ``python -m ovearth_core.leaderboard``, and ``import
ovearth_core.analysis.ap`` (what a COCO-AP user imports), must not load scipy, pycocotools,
shapely or plotly; the work itself still loads them where it uses them.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# msgspec (issue 49): only a boxes-only load from files decodes with it.
HEAVY = ("scipy", "pycocotools", "shapely", "plotly", "streamlit", "msgspec")

_PROBE = """
import runpy, sys
{call}
print("HEAVY=" + ",".join(sorted({{m.split(".")[0] for m in sys.modules}} & set({heavy!r}))))
"""
_HELP = """sys.argv = [{module!r}, "--help"]
try:
    runpy.run_module({module!r}, run_name="__main__", alter_sys=True)
except SystemExit:
    pass"""


def _heavy_loaded(call: str) -> tuple[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", _PROBE.format(call=call, heavy=HEAVY)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    line = [x for x in proc.stdout.splitlines() if x.startswith("HEAVY=")]
    assert len(line) == 1, proc.stdout
    return line[0].removeprefix("HEAVY="), proc.stdout


@pytest.mark.parametrize("module", ["ovearth_core.analysis", "ovearth_core.leaderboard"])
def test_command_help_loads_no_heavy_library(module: str) -> None:
    heavy, out = _heavy_loaded(_HELP.format(module=module))
    assert "usage:" in out
    assert heavy == ""


@pytest.mark.parametrize("module", ["ovearth_core.analysis.ap", "ovearth_core.analysis",
                                    "ovearth_core.analysis.leaderboard", "ovearth_core.io"])
def test_import_loads_no_heavy_library(module: str) -> None:
    heavy, _ = _heavy_loaded(f"import {module}")
    assert heavy == ""


def test_the_work_still_loads_what_it_uses() -> None:
    """The lazy modules really are pycocotools and shapely once used (not a stand-in)."""
    call = ("import numpy as np\n"
            "from ovearth_core import geometry, masks\n"
            "rle = masks.encode(np.ones((4, 5), dtype=bool))\n"
            "assert masks.area(rle) == 20\n"
            "box = np.array([[[0, 0], [2, 0], [2, 2], [0, 2]]], dtype=float)\n"
            "assert geometry.obb_iou_matrix(box, box)[0, 0] == 1.0\n"
            "import pycocotools.mask, shapely\n"
            "assert masks.cocomask is pycocotools.mask and geometry.shapely is shapely")
    heavy, _ = _heavy_loaded(call)
    assert heavy == "pycocotools,shapely"


@pytest.mark.parametrize("modalities", ["segmentation", "bbox,oriented_bbox", "auto", "bbox"])
def test_msgspec_is_imported_by_a_boxes_only_load_only(modalities: str) -> None:
    """Issue 49: the typed decode's library loads when a boxes-only load decodes, not for
    another load (nor on importing the loader, above)."""
    call = ("from pathlib import Path\n"
            "from ovearth_core.io import load_samples\n"
            f"demo = Path({str(ROOT / 'assets' / 'demo')!r})\n"
            "pred = sorted((demo / 'predictions').glob('*.json'))[0]\n"
            f"load_samples(demo / 'ground_truth.json', pred, 'vocabulary', "
            f"modalities={modalities!r})")
    heavy, _ = _heavy_loaded(call)
    assert ("msgspec" in heavy.split(",")) == (modalities == "bbox")


def test_the_forkserver_still_preloads_what_workers_use() -> None:
    """The app's leaderboard workers start warm: their forkserver imports pycocotools and
    shapely itself, now that importing the evaluator no longer does."""
    from ovearth_core.analysis import leaderboard

    names = "\n".join(f"import importlib; importlib.import_module({n!r})"
                      for n in leaderboard._PRELOAD)
    heavy, _ = _heavy_loaded(names)
    assert heavy == "pycocotools,shapely"


def test_lazy_module_imports_on_first_attribute_and_rebinds() -> None:
    import copy

    from ovearth_core.lazymodule import LazyModule

    namespace: dict[str, object] = {}
    stand_in = LazyModule("colorsys", namespace, "colorsys")
    namespace["colorsys"] = stand_in
    assert "colorsys" in repr(stand_in)
    copied = copy.copy(stand_in)  # no recursion through __getattr__ on a bare instance
    assert isinstance(copied, LazyModule)
    assert stand_in.rgb_to_hsv(1.0, 0.0, 0.0) == (0.0, 1.0, 1.0)
    import colorsys

    assert namespace["colorsys"] is colorsys


@pytest.mark.parametrize(("module", "option"), [("ovearth_core.analysis", "--slice-by ATTR"),
                                                ("ovearth_core.leaderboard", "--workers")])
def test_command_help_loads_not_even_numpy(module: str, option: str) -> None:
    """``--help`` of the analysis and leaderboard commands costs the interpreter and
    argparse only, as the spec command's does (their parsers import no numpy)."""
    call = _HELP.format(module=module) + "\nprint('NUMPY=' + str('numpy' in sys.modules))"
    _, out = _heavy_loaded(call)
    assert option in out and "NUMPY=False" in out


def test_first_use_from_many_threads_at_once() -> None:
    """The app's server and its decoder pool are threads: eight of them using masks and
    oriented boxes for the first time at the same moment all get the real libraries. (A
    stand-in built on ``importlib.util.LazyLoader``, as ``lazy_loader.load`` is, fails here
    on Python 3.11: the module's class is switched before its body has run, CPython issue
    114763, fixed in 3.12's importlib; six of the eight threads met an ``AttributeError``.)"""
    call = ("import threading\n"
            "import numpy as np\n"
            "from ovearth_core import geometry, masks\n"
            "box = np.array([[[0, 0], [2, 0], [2, 2], [0, 2]]], dtype=float)\n"
            "start, errors = threading.Barrier(8), []\n"
            "def use(i):\n"
            "    start.wait()\n"
            "    try:\n"
            "        if i % 2:\n"
            "            assert masks.area(masks.encode(np.ones((4, 5), dtype=bool))) == 20\n"
            "        else:\n"
            "            assert geometry.obb_iou_matrix(box, box)[0, 0] == 1.0\n"
            "    except Exception as err:\n"
            "        errors.append(repr(err))\n"
            "threads = [threading.Thread(target=use, args=(i,)) for i in range(8)]\n"
            "for t in threads: t.start()\n"
            "for t in threads: t.join()\n"
            "print('ERRORS=' + str(errors))")
    heavy, out = _heavy_loaded(call)
    assert "ERRORS=[]" in out
    assert heavy == "pycocotools,shapely"
