"""Load: five real browser sessions at once on the bundled demo (see benchmarks/load.py).

Every session must finish its page with its content and no error, sessions that use the
same submission, task and options must share one evaluation (counted in the server's
log), and the server's memory must stay bounded. Time is a reported figure, not a pass
condition: the five sessions share the machine's cores (and a loaded machine's, with other
work), so each step may wait five times the single-session wait, scaled by the machine's
load (``browser_support.wait_scale``); only a session that never finishes fails. Timings
and RSS are printed with the test's result.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from browser_support import MS, REPO, WAIT_SCALE, copy_app, wait_scale

from benchmarks.load import run_load

RSS_GROWTH_LIMIT_MB = 400  # the demo's data is ~10 MB; five sessions must not cost more
SESSIONS = 5
STEP_MS = SESSIONS * MS  # five sessions on the cores one session had


@pytest.mark.slow
@pytest.mark.timeout(int(SESSIONS * 4 * MS / 1000) + 300)
def test_five_concurrent_sessions(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                  record_property: pytest.RecordProperty) -> None:
    app_dir = copy_app(tmp_path / "app")
    shutil.copytree(REPO / "assets" / "demo", app_dir / "assets" / "demo")
    report = run_load(app_dir, tmp_path / "server.log", shots=tmp_path, timeout_ms=STEP_MS)
    with capsys.disabled():
        print(f"\n{report.summary()}\n  (each step may wait {STEP_MS / 1000:.0f} s: wait "
              f"scale {WAIT_SCALE:.2f})")
    for outcome in report.outcomes:
        record_property(f"seconds {outcome.name}", round(outcome.seconds, 1))
    record_property("rss growth MB", round(report.rss_peak_mb - report.rss_before_mb))
    assert len(report.outcomes) == SESSIONS
    assert not report.errors, report.errors
    shared = [k for k in report.evaluations
              if "box_detector.json" in k and "task='vocabulary'" in k and "('auto',)" in k]
    assert len(shared) == 1, report.evaluations  # four sessions use it
    assert set(report.evaluations.values()) == {1}, report.evaluations
    assert len(report.evaluations) == 4  # + referring, weak_baseline, B of the comparison
    assert report.rss_peak_mb - report.rss_before_mb < RSS_GROWTH_LIMIT_MB


@pytest.mark.parametrize(("env", "load", "cores", "expected"), [
    ({}, 0.3, 2, 1.0), ({}, 7.0, 2, 3.5), ({"OVEARTH_WAIT_SCALE": "4"}, 0.1, 2, 4.0),
    ({"OVEARTH_WAIT_SCALE": "x"}, 5.0, 2, 2.5), ({"OVEARTH_WAIT_SCALE": "0"}, 1.0, 4, 1.0)])
def test_waits_scale_with_the_machines_load(env: dict[str, str], load: float, cores: int,
                                            expected: float) -> None:
    assert wait_scale(env, load, cores) == expected
