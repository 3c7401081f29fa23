"""The report's ranks with their uncertainty (issue 37, ``--rank DIR``): the section shows
the leaderboard report's numbers, its Holm column is statsmodels' correction of its p
column, its category q column statsmodels' Benjamini-Hochberg of its p column, and a paired
slice table says which correction its q-values are."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from statsmodels.stats.multitest import multipletests

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "assets" / "demo"


def _tables_after(html: str, heading: str) -> list[list[list[str]]]:
    """The rows (cell texts) of every table after ``heading``."""
    part = html[html.index(heading):]
    out = []
    for table in re.findall(r"<table>(.*?)</table>", part, flags=re.S):
        rows = re.findall(r"<tr>(.*?)</tr>", table, flags=re.S)
        out.append([re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", r, flags=re.S) for r in rows])
    return out


@pytest.fixture(scope="module")
def html(tmp_path_factory: pytest.TempPathFactory) -> str:
    out = tmp_path_factory.mktemp("report") / "r.html"
    done = subprocess.run(
        [sys.executable, "-m", "ovearth_core.report", "--gt", str(DEMO / "ground_truth.json"),
         "--predictions", str(DEMO / "predictions" / "strong_localiser.json"),
         "--compare", str(DEMO / "predictions" / "weak_baseline.json"),
         "--rank", str(DEMO / "predictions"), "--task", "vocabulary", "--out", str(out),
         "--no-cache", "--slice-by", "category", "--min-count", "2",
         "--modalities", "segmentation,bbox,oriented_bbox"],
        capture_output=True, text=True, cwd=REPO, timeout=600)
    assert done.returncode == 0, done.stderr
    return out.read_text()


def _p(cell: str) -> float | None:
    return None if cell in ("—", "–") else float(cell)


def test_rank_table_holm_and_category_bh(html: str) -> None:
    ranks, categories = _tables_after(html, "Ranks with their uncertainty")[:2]
    assert ranks[0][-2:] == ["p (paired bootstrap)", "p (Holm)"]
    assert [r[1] for r in ranks[1:]] == ["strong_localiser", "cautious_segmenter",
                                         "weak_baseline"]
    p = [_p(r[-2]) for r in ranks[2:]]
    holm = [_p(r[-1]) for r in ranks[2:]]
    assert holm == pytest.approx(multipletests(p, method="holm")[1].tolist(), rel=2e-3)
    assert categories[0][-1] == "q (Benjamini–Hochberg)"
    assert categories[0][:3] == ["category", "queries", "images"]
    tested = [(int(r[2]), _p(r[-2]), _p(r[-1])) for r in categories[1:]]
    assert all((p is None) == (n < 2) for n, p, _ in tested)
    p = [x for _, x, _ in tested if x is not None]
    q = [x for _, _, x in tested if x is not None]
    assert len(p) >= 2
    assert q == pytest.approx(multipletests(p, method="fdr_bh")[1].tolist(), rel=2e-3)
    assert "Friedman χ² = " in html and "critical difference" in html


def test_paired_slice_table_names_its_correction(html: str) -> None:
    assert "Segmentation macro mIoU q (Benjamini–Hochberg)" in html
    assert "McNemar p (exact)</th><th>p (Holm)" in html
