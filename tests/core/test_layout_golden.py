"""Every documented command writes what it wrote before the package was split into layers.

Issue 12 ("behaviour and every output byte stay the same"): the expected files in
tests/golden/layout were produced by tests/golden/make_layout_golden.sh run on commit aa1d4d2,
the last commit of the flat layout, not by the code under test. The same script runs here
against the current code.

JSON outputs may gain keys (later issues add metrics; the spec's keys are never renamed or
dropped): every key of the expected file must be there with the same value, lists element by
element. HTML reports are compared whole; their expected files were rewritten once, when
display names moved to one table (ovearth_core.labels): the normalised diff against the flat
layout's reports was only labels ("mask"/"ma-IoU" -> "Segmentation"/"macro mIoU", "Vocabulary"
-> "Open vocabulary") and the per-category columns, which are sorted by those labels. They,
and the leaderboard's, were rewritten again for "not submitted is not zero" (issue 13): the
diff was a "–" (null) for every modality a submission does not contain, with no interval,
per-query difference or correlation for it, and the coverage warnings above each task.
report_compare.html was rewritten for the AP intervals (issue 25): the diff was the option
row ``ap_bootstrap_resamples``, "Δ B − A (no interval)" becoming "Δ B − A" with a row of
intervals under it ("—" there: B does not submit boxes) and the AP note naming the resamples.
It was rewritten for the corrected tests (issue 37): the diff was a "p (Holm)" column in each
task's McNemar table (its header and one cell per row, nothing else).
Both reports were rewritten for the average-precision table's Markdown and LaTeX (issue 50):
the normalised diff was two ``<details>`` blocks (``ap-markdown-*``, ``ap-latex-*``) after each
AP table, lines added and none removed.
leaderboard.json's top-level keys were renamed once (issue 46: one name per task, the one
the JSON uses): "vocabulary" became "open_vocabulary", its content untouched.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.golden.normalise import normalise

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden" / "layout"


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("layout")
    subprocess.run(
        ["bash", str(ROOT / "tests" / "golden" / "make_layout_golden.sh"), str(out)],
        cwd=ROOT, env={"PY": sys.executable, "PATH": "/usr/bin:/bin"}, check=True,
        capture_output=True,
    )
    return out


def test_every_expected_file_is_written(outputs: Path) -> None:
    expected = {p.name.removesuffix(".gz") for p in GOLDEN.glob("*.gz")}
    assert len(expected) == 20
    assert {p.name for p in outputs.iterdir()} == expected


@pytest.mark.parametrize("name", sorted(p.name.removesuffix(".gz") for p in GOLDEN.glob("*.gz")))
def test_output_equals_the_flat_layout(outputs: Path, name: str) -> None:
    want = gzip.decompress((GOLDEN / f"{name}.gz").read_bytes())
    got = normalise((outputs / name).read_bytes())
    if name.endswith(".json"):
        missing = _not_contained(json.loads(want), json.loads(got), name)
        assert missing == [], f"{name} differs from the flat layout (aa1d4d2): {missing[:5]}"
    else:
        assert got == want, f"{name} differs from the output of the flat layout (commit aa1d4d2)"


def _not_contained(want: object, got: object, where: str) -> list[str]:
    """Paths at which ``want`` is not part of ``got`` (dicts may gain keys, nothing else)."""
    if isinstance(want, dict) and isinstance(got, dict):
        return [p for k, v in want.items()
                for p in (_not_contained(v, got[k], f"{where}.{k}") if k in got
                          else [f"{where}.{k} missing"])]
    if isinstance(want, list) and isinstance(got, list) and len(want) == len(got):
        return [p for i, (a, b) in enumerate(zip(want, got, strict=True))
                for p in _not_contained(a, b, f"{where}[{i}]")]
    return [] if want == got and type(want) is type(got) else [f"{where}: {want!r} != {got!r}"]


def test_containment_sees_a_changed_value_and_allows_a_new_key() -> None:
    assert _not_contained({"a": [1, {"b": 2.5}]}, {"a": [1, {"b": 2.5, "c": 0}], "d": 1}, "x") == []
    assert _not_contained({"a": [1, {"b": 2.5}]}, {"a": [1, {"b": 2.0}]}, "x") == [
        "x.a[1].b: 2.5 != 2.0"]
    assert _not_contained({"a": 1}, {"a": 1.0}, "x") != []
    assert _not_contained({"a": [1]}, {"a": [1, 2]}, "x") != []
