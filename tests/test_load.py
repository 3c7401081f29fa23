"""Load: five real browser sessions at once on the bundled demo (see benchmarks/load.py).

Every session must finish its page with its content and no error, sessions that use the
same submission, task and options must share one evaluation (counted in the server's
log), and the server's memory must stay bounded. Timings and RSS are printed.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from browser_support import REPO, copy_app

from benchmarks.load import run_load

RSS_GROWTH_LIMIT_MB = 400  # the demo's data is ~10 MB; five sessions must not cost more


def test_five_concurrent_sessions(tmp_path: Path) -> None:
    app_dir = copy_app(tmp_path / "app")
    shutil.copytree(REPO / "assets" / "demo", app_dir / "assets" / "demo")
    report = run_load(app_dir, tmp_path / "server.log", shots=tmp_path)
    print(report.summary())
    assert len(report.outcomes) == 5
    assert not report.errors, report.errors
    shared = [k for k in report.evaluations
              if "box_detector.json" in k and "task='vocabulary'" in k and "('auto',)" in k]
    assert len(shared) == 1, report.evaluations  # four sessions use it
    assert set(report.evaluations.values()) == {1}, report.evaluations
    assert len(report.evaluations) == 4  # + referring, weak_baseline, B of the comparison
    assert report.rss_peak_mb - report.rss_before_mb < RSS_GROWTH_LIMIT_MB
