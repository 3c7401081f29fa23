"""App timings of OVEarth Inspector with Streamlit's AppTest on the full-scale benchmark.

Called by ``benchmarks/run.py`` (unless ``--skip-app``); on its own:

    .venv/bin/python -m benchmarks.app_timing [DATA_DIR] [--no-profile]

``DATA_DIR`` (default ``benchmarks/data/full``) must hold ``ground_truth.json``,
``images/`` and ``predictions/*.json`` as written by ``python -m ovearth_core.synth``.
Each figure is printed with its target from issue 6: first overview cold and warm, switching
the explorer's query (a real switch: the viewer's overlay is redrawn for the new query), and
the Compare page cold and warm. Two times per figure:

- ``run``: the whole ``AppTest.run()`` (what the targets are compared with): the script,
  element serialisation, and AppTest's own work (compiling the page for each new session,
  parsing the messages back into an element tree);
- ``script``: the script thread alone, i.e. what a server spends before the browser
  renders (no network, no browser here), and ``cpu``: that thread's CPU time, which other
  processes on a busy machine inflate far less than wall-clock times.

Profiles of the slow runs follow (cProfile inside the script thread; its wall clock, as a
CPU clock per call would inflate call-heavy code such as plotly's many times over).
Times depend on the machine and its load (printed); nothing here asserts time.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import logging
import os
import pstats
import random
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import streamlit as st
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.local_script_runner import LocalScriptRunner

from pages.common import data, state

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from app_fixtures import press, viewer_cards  # noqa: E402 (the card's data, its buttons)

APP = str(ROOT / "app.py")
COMPARE_PAGE = "pages/Compare.py"
PERSONA = "strong_localiser"
PERSONA_B = "weak_baseline"  # all three modalities, like A, so every comparison is drawn
# The app reads typed paths only inside its data roots (``ovearth_core.paths``).
DATA_ROOT_ENV = "OVEARTH_DATA_ROOT"
TIMEOUT = 900
SWITCHES = 10
PROJECT_CODE = r"app\.py|pages/|ovearth_core/"
PROFILE_LINES = 20

TARGET_OVERVIEW_COLD = 4.0
TARGET_OVERVIEW_WARM = 0.5
TARGET_SWITCH = 0.3
TARGET_COMPARE_COLD = 4.0


@dataclass(frozen=True)
class Paths:
    """The session-state values that point the app at a benchmark folder."""

    gt_path: str
    images_dir: str
    pred_path: str
    b_path: str


@dataclass
class Probe:
    """(wall, CPU) seconds of each AppTest script run, and the profiler to run them under."""

    script_seconds: list[tuple[float, float]] = field(default_factory=list)
    profile: cProfile.Profile | None = None


@dataclass(frozen=True)
class Timing:
    """Seconds of ``AppTest.run()``, of its script thread, and that thread's CPU time."""

    run: float
    script: float
    cpu: float


def paths_for(data_dir: Path) -> Paths:
    """Ground truth, images folder (image_path is relative to it), submissions A and B."""
    gt = str(data_dir.resolve() / "ground_truth.json")
    found = state.submissions(gt)
    if len(found) < 2:
        raise SystemExit(f"the Compare page needs two predictions/*.json next to {gt}")
    a = next((p for p in found if Path(p).stem == PERSONA), found[0])
    rest = [p for p in found if p != a]
    b = next((p for p in rest if Path(p).stem == PERSONA_B), rest[0])
    return Paths(gt, str(data_dir.resolve()), a, b)


def clear_all_caches() -> None:
    data.clear_caches()
    st.cache_data.clear()
    st.cache_resource.clear()


def new_session(paths: Paths, page: str | None = None, task: str = "vocabulary") -> AppTest:
    """A fresh AppTest session whose state points at ``paths`` (on ``page`` when given)."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["gt_path"] = paths.gt_path
    at.session_state["images_dir"] = paths.images_dir
    at.session_state["pred_path"] = paths.pred_path
    at.session_state["cmp_b_path"] = paths.b_path
    at.session_state["task"] = task
    if page is not None:
        at.switch_page(page)
    return at


@contextmanager
def instrumented() -> Iterator[Probe]:
    """Time (and optionally profile) AppTest script runs: they execute in a thread of their
    own, which a clock or profiler in the calling thread would not isolate."""
    probe = Probe()
    original = LocalScriptRunner._run_script_thread

    def run(self: LocalScriptRunner) -> None:
        profile = probe.profile
        if profile is not None:
            profile.enable()
        start, cpu = time.perf_counter(), time.thread_time()
        try:
            original(self)
        finally:
            probe.script_seconds.append((time.perf_counter() - start,
                                         time.thread_time() - cpu))
            if profile is not None:
                profile.disable()

    LocalScriptRunner._run_script_thread = run
    try:
        yield probe
    finally:
        LocalScriptRunner._run_script_thread = original


def _check(at: AppTest, what: str) -> None:
    """Stop the benchmark when a run failed: a fast error page is no measurement."""
    problems = [e.value for e in at.exception] + [e.value for e in at.error]
    if problems:
        raise RuntimeError(f"{what}: the app showed {problems[:3]}")


def timed(probe: Probe, at: AppTest, what: str,
          action: Callable[[], object] | None = None) -> Timing:
    """Time ``action`` (default ``at.run``) and its script runs; check the page afterwards."""
    done = len(probe.script_seconds)
    start = time.perf_counter()
    (action or at.run)()
    seconds = time.perf_counter() - start
    _check(at, what)
    runs = probe.script_seconds[done:]
    return Timing(seconds, sum(w for w, _ in runs), sum(c for _, c in runs))


def _verdict(seconds: float, target: float) -> str:
    return "within target" if seconds <= target else f"{seconds / target:.1f}x the target"


def _line(label: str, t: Timing, target: float | None = None) -> None:
    tail = f"   target <= {target:g} s: {_verdict(t.run, target)}" if target else ""
    print(f"  {label:<48} run {t.run:6.3f} s  script {t.script:6.3f} s  cpu {t.cpu:6.3f} s"
          f"{tail}", flush=True)


def _ms(values: list[float]) -> str:
    return (f"mean {statistics.mean(values) * 1000:5.0f}  median "
            f"{statistics.median(values) * 1000:5.0f}  max {max(values) * 1000:5.0f} ms")


def _switch_stats(label: str, times: list[Timing]) -> None:
    runs = [t.run for t in times]
    print(f"  {label:<48} run {_ms(runs)}   target <= {TARGET_SWITCH * 1000:.0f} ms: "
          f"{_verdict(statistics.mean(runs), TARGET_SWITCH)}")
    print(f"  {'':<48} script {_ms([t.script for t in times])}")
    print(f"  {'':<48} cpu {_ms([t.cpu for t in times])}", flush=True)


def _overlay_spec(at: AppTest) -> str:
    charts = [e for e in at.get("plotly_chart") if e.key == "overlay"]
    return charts[0].proto.spec if charts else ""


def _query(at: AppTest) -> str:
    return at.session_state["selected"][at.session_state["task"]]


def _drawn_query(at: AppTest, query_id: str) -> bool:
    """The viewer shows ``query_id``: its card (the static view) or its overlay."""
    cards = [c["html"] for c in viewer_cards(at)]
    return any(f"<h3><code>{query_id}</code></h3>" in c for c in cards) or \
        f'"uirevision":"{query_id}:' in _overlay_spec(at).replace(" ", "")


def _switch(probe: Probe, at: AppTest, action: Callable[[], object], what: str) -> Timing:
    """Time one change of the selected query; check that the viewer now draws the new one."""
    before = _query(at)
    t = timed(probe, at, what, action)
    after = _query(at)
    if after == before or not _drawn_query(at, after):
        raise RuntimeError(f"{what}: {before} -> {after} did not redraw the viewer")
    return t


def _press(at: AppTest, go: str) -> Callable[[], object]:
    """A click on the viewer card's "Next ▶" (``go="next"``) or "◀ Previous" (``"prev"``).
    Deferred: a click evaluated before :func:`_switch` reads the current query would be
    read as no switch at all."""
    return lambda: press(at, go)


def _pick(at: AppTest, query_id: str) -> Callable[[], object]:
    return lambda: at.selectbox(key="_w_jump").set_value(query_id).run()


def _query_id_at(at: AppTest, index: int) -> str:
    """The query id of the jump box's option ``index`` (its labels start with the id)."""
    return at.selectbox(key="_w_jump").options[index].split(" — ", 1)[0]


def open_explorer(probe: Probe, paths: Paths, task: str) -> tuple[AppTest, Timing]:
    at = new_session(paths, task=task)
    timed(probe, at, "overview before the explorer")
    at.switch_page(state.EXPLORER_PAGE)
    return at, timed(probe, at, "explorer")


def bench_overview(probe: Probe, paths: Paths) -> None:
    print(f"\n== App: first overview (target: cold <= {TARGET_OVERVIEW_COLD:g} s, warm <= "
          f"{TARGET_OVERVIEW_WARM:g} s) ==")
    clear_all_caches()
    _line("first run in this process (imports, cold caches)",
          timed(probe, new_session(paths), "first overview"))
    clear_all_caches()
    at = new_session(paths)
    _line("cold: caches cleared, new session", timed(probe, at, "cold overview"),
          TARGET_OVERVIEW_COLD)
    caption = at.caption[0].value if at.caption else ""
    print(f"    of which evaluation (the page's caption): {caption.rsplit('evaluated in', 1)[-1]}")
    _line("warm: second session, same data", timed(probe, new_session(paths), "warm overview"),
          TARGET_OVERVIEW_WARM)
    _line("rerun of the warm session (no change)", timed(probe, at, "overview rerun"))


def bench_switch(probe: Probe, paths: Paths, task: str, seed: int = 0) -> None:
    print(f"\n== App: switching the explorer's query, task {task} (target: <= "
          f"{TARGET_SWITCH * 1000:.0f} ms per switch, mean of {SWITCHES}) ==")
    at, opened = open_explorer(probe, paths, task)
    _line("open the explorer (evaluation cached)", opened)
    forward = [_switch(probe, at, _press(at, "next"), "next") for _ in range(SWITCHES)]
    _switch_stats(f"'Next ▶' x{SWITCHES} (new queries)", forward)
    back = [_switch(probe, at, _press(at, "prev"), "previous") for _ in range(SWITCHES)]
    _switch_stats(f"'◀ Previous' x{SWITCHES} (revisits, images cached)", back)
    count = len(at.selectbox(key="_w_jump").options)
    jumps = []
    for i in random.Random(seed).sample(range(count), SWITCHES):
        query_id = _query_id_at(at, i)
        if query_id != _query(at):
            jumps.append(_switch(probe, at, _pick(at, query_id), "jump"))
    _switch_stats(f"selectbox jumps x{len(jumps)} (random queries)", jumps)


def bench_compare(probe: Probe, paths: Paths) -> None:
    print(f"\n== App: Compare page, A = {Path(paths.pred_path).stem}, B = "
          f"{Path(paths.b_path).stem} (target: cold <= {TARGET_COMPARE_COLD:g} s) ==")
    clear_all_caches()
    _line("cold: caches cleared, compare page opened directly",
          timed(probe, new_session(paths, COMPARE_PAGE), "cold compare"), TARGET_COMPARE_COLD)
    _line("warm: second session, same data",
          timed(probe, new_session(paths, COMPARE_PAGE), "warm compare"))
    clear_all_caches()
    at = new_session(paths)
    timed(probe, at, "overview before compare")
    at.switch_page(COMPARE_PAGE)
    _line("after the overview (A's evaluation cached)",
          timed(probe, at, "compare after overview"), TARGET_COMPARE_COLD)


def _trim(text: str) -> str:
    """pstats output from its header row on, paths shortened to the package."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if "ncalls" in line), 0)
    body = "\n".join(line for line in lines[start:] if line.strip())
    for prefix in sorted({str(Path(p).resolve()) for p in sys.path if p}, key=len,
                         reverse=True):
        body = body.replace(prefix + "/", "")
    return body


def _print_profile(title: str, profile: cProfile.Profile, runs: int) -> None:
    total = pstats.Stats(profile).total_tt
    print(f"\n-- {title}: {runs} script run(s), {total:.3f} s profiled --")
    for order, restrict, what in (
            ("cumulative", (PROJECT_CODE, PROFILE_LINES), "project code, cumulative"),
            ("tottime", (PROFILE_LINES // 2,), "everything, own time")):
        out = io.StringIO()
        pstats.Stats(profile, stream=out).sort_stats(order).print_stats(*restrict)
        print(f"   [{what}]")
        print(_trim(out.getvalue()))


def _profiled(probe: Probe, title: str, work: Callable[[], object]) -> None:
    probe.profile = cProfile.Profile()
    done = len(probe.script_seconds)
    try:
        work()
    finally:
        profile, probe.profile = probe.profile, None
    _print_profile(title, profile, len(probe.script_seconds) - done)


def profile_slow_parts(probe: Probe, paths: Paths, task: str) -> None:
    print("\n== Profiles (cProfile inside the script thread; profiling slows the runs) ==")
    clear_all_caches()
    _profiled(probe, "cold overview", lambda: timed(probe, new_session(paths), "cold overview"))
    _profiled(probe, "warm overview", lambda: timed(probe, new_session(paths), "warm overview"))
    at, _ = open_explorer(probe, paths, task)
    _profiled(probe, f"{SWITCHES} query switches ('Next ▶', task {task})",
              lambda: [_switch(probe, at, _press(at, "next"), "next") for _ in range(SWITCHES)])
    clear_all_caches()
    _profiled(probe, "cold compare page",
              lambda: timed(probe, new_session(paths, COMPARE_PAGE), "cold compare"))


@contextmanager
def quiet_logs() -> Iterator[None]:
    """Silence warnings and below (Streamlit's bare-mode notices from the benchmark's own
    thread, the app's per-evaluation lines) for the duration; errors still show."""
    previous = logging.root.manager.disable
    logging.disable(logging.WARNING)
    try:
        yield
    finally:
        logging.disable(previous)


@contextmanager
def data_root(folder: Path) -> Iterator[None]:
    """Let the app read ``folder`` (wherever it is) for the duration."""
    previous = os.environ.get(DATA_ROOT_ENV)
    os.environ[DATA_ROOT_ENV] = os.pathsep.join(filter(None, [previous, str(folder)]))
    try:
        yield
    finally:
        if previous is None:
            del os.environ[DATA_ROOT_ENV]
        else:
            os.environ[DATA_ROOT_ENV] = previous


def report(data_dir: Path, profile: bool = True) -> None:
    """Print the app timings (and, with ``profile``, where the time goes) for ``data_dir``."""
    folder = Path(data_dir).resolve()
    with quiet_logs(), data_root(folder), instrumented() as probe:
        paths = paths_for(folder)
        load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
        print(f"\n== App timings via AppTest: {paths.gt_path}, images in {paths.images_dir} "
              f"(machine: {os.cpu_count()} cores, load average {load}) ==")
        bench_overview(probe, paths)
        bench_switch(probe, paths, "vocabulary")
        bench_switch(probe, paths, "referring")
        bench_compare(probe, paths)
        if profile:
            profile_slow_parts(probe, paths, "vocabulary")
        clear_all_caches()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, nargs="?",
                        default=ROOT / "benchmarks" / "data" / "full")
    parser.add_argument("--no-profile", action="store_true", help="timings only")
    args = parser.parse_args(argv)
    report(args.data, profile=not args.no_profile)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
