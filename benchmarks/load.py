"""Load: five real browser sessions using the app at once, on the full-scale benchmark.

Usage (from the repository root, after the README's setup, with Debian's chromium):

    .venv/bin/python -m benchmarks.load [--data DIR] [--rounds 2] [--timeout 300]

It generates (or reuses) the full-scale synthetic benchmark with images in
``benchmarks/data/full``, copies the app next to it (the data is linked as the
app's ``assets/demo``, so every session opens on it with no typing), starts
``streamlit run app.py`` and drives five concurrent Chromium sessions (one
browser, one context each, asyncio) over different pages, tasks and submissions,
in ``--rounds`` waves one after the other. It prints the number of sessions and
errors, how many times each evaluation was computed in the server (the
``evaluated ...`` log lines of ``data.evaluate``; sessions sharing a submission,
task and options must share one), the server's RSS before, at its sampled peak
and after each wave, and each session's time. Nothing here asserts time;
``tests/core/test_load.py`` runs one wave on the demo. Exit status 1 on any error.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import orjson
from playwright.async_api import Page, async_playwright, expect

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from browser_support import CHROMIUM, CHROMIUM_ARGS, IDLE, MS, Server, copy_app  # noqa: E402

from benchmarks.common import ensure_data  # noqa: E402

EVALUATED = re.compile(r"ovearth_inspector INFO evaluated (.*)$", re.MULTILINE)
ERROR_TEXTS = ("Traceback", "The evaluator failed unexpectedly")


@dataclass(frozen=True)
class Session:
    """One user: open ``path``, optionally pick a submission in the select box whose
    label starts with ``pick_label``, then wait until every text of ``expect`` is shown
    (and the viewer's heading names ``query``, when given) and the run has ended."""

    name: str
    path: str
    expect: tuple[str, ...]
    pick_label: str = ""
    pick: str = ""
    query: str = ""


@dataclass
class Outcome:
    name: str
    seconds: float
    errors: list[str] = field(default_factory=list)


@dataclass
class LoadReport:
    outcomes: list[Outcome]
    evaluations: Counter[str]
    rss_before_mb: float
    rss_peak_mb: float
    rss_after_mb: list[float]  # after each round

    @property
    def errors(self) -> list[str]:
        return [f"{o.name}: {e}" for o in self.outcomes for e in o.errors]

    def summary(self) -> str:
        lines = [f"sessions: {len(self.outcomes)}  errors: {len(self.errors)}",
                 f"server RSS: before {self.rss_before_mb:.0f} MB, peak "
                 f"{self.rss_peak_mb:.0f} MB, after each round "
                 f"{', '.join(f'{r:.0f}' for r in self.rss_after_mb)} MB",
                 f"evaluations computed: {sum(self.evaluations.values())} "
                 f"({len(self.evaluations)} distinct; most for one key: "
                 f"{max(self.evaluations.values(), default=0)})"]
        lines += [f"  {n} x {key}" for key, n in self.evaluations.items()]
        lines += [f"  session {o.name}: {o.seconds:.1f} s" for o in self.outcomes]
        lines += [f"  ERROR {e}" for e in self.errors]
        return "\n".join(lines)


def sessions_for(gt: Path, submissions: list[str]) -> list[Session]:
    """Five different users of the app in ``gt``'s folder: the overview, a deep link to a
    query, the compare page, another task, another submission (by the sidebar)."""
    tasks = orjson.loads(gt.read_bytes())["tasks"]
    q = tasks["open_vocabulary"][0]["query_id"]
    default, other, third = submissions[0], submissions[-1], submissions[1]
    return [
        Session("overview", "/",
                ("Presence confusion matrix", f"predictions/{default}.json · sha256")),
        Session("explorer deep link", f"/Query_explorer?task=vocabulary&q={q}",
                ("Viewer", "Query explorer"), query=q),
        Session("compare", "/Compare", (f"B = {third}", "Agreement and McNemar"),
                pick_label="Submission B", pick=third),
        Session("referring overview", "/?task=referring", ("Hits and misses",)),
        Session("other submission", "/?task=vocabulary",
                (f"predictions/{other}.json · sha256", "Presence confusion matrix"),
                pick_label="Submission", pick=other),
    ]


async def _idle(page: Page, ms: float) -> None:
    """The script run has ended and every element is drawn."""
    await page.wait_for_selector(IDLE, timeout=ms)
    await expect(page.locator('[data-testid="stSkeleton"]')).to_have_count(0, timeout=ms)


async def _run_session(browser, url: str, session: Session, shots: Path | None,
                       ms: float) -> Outcome:
    context = await browser.new_context(viewport={"width": 1500, "height": 2000})
    page = await context.new_page()
    start = time.perf_counter()
    outcome = Outcome(session.name, 0.0)
    step = f"open {session.path}"
    try:
        await page.goto(url + session.path, timeout=ms)
        if session.pick:
            step = f"pick {session.pick} in {session.pick_label}"
            box = page.locator('[data-testid="stSelectbox"]').filter(
                has=page.get_by_text(re.compile("^" + re.escape(session.pick_label))))
            await expect(box.first).to_be_visible(timeout=ms)
            await _idle(page, ms)
            await box.first.click(timeout=ms)
            await page.get_by_role("option", name=session.pick, exact=True).click(timeout=ms)
        for text in session.expect:
            step = f"wait for {text!r}"
            await expect(page.get_by_text(text, exact=False).first).to_be_visible(timeout=ms)
        if session.query:
            step = f"wait for the viewer of {session.query}"
            heading = page.locator("h3", has_text=session.query)
            await expect(heading).to_be_visible(timeout=ms)
        step = "wait for the run to end"
        await _idle(page, ms)
    except Exception as err:  # a timeout or a missing element is this session's error
        outcome.errors.append(f"{step}: {type(err).__name__}: {str(err).splitlines()[0]}")
    outcome.seconds = time.perf_counter() - start
    shown = await page.locator("body").inner_text()
    outcome.errors += [f"page shows {t!r}" for t in ERROR_TEXTS if t in shown]
    exceptions = await page.locator('[data-testid="stException"]').count()
    if exceptions:
        outcome.errors.append(f"{exceptions} st.exception element(s)")
    if outcome.errors and shots is not None:
        shots.mkdir(parents=True, exist_ok=True)
        await page.screenshot(path=str(shots / f"{session.name.replace(' ', '_')}.png"),
                              full_page=True)
    await context.close()
    return outcome


def rss_mb(pid: int) -> float:
    """Resident set size of process ``pid`` (VmRSS in /proc), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


class _Sampler(threading.Thread):
    def __init__(self, pid: int, every: float = 0.1):
        super().__init__(daemon=True)
        self.pid, self.every, self.peak = pid, every, rss_mb(pid)
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.wait(self.every):
            self.peak = max(self.peak, rss_mb(self.pid))

    def stop(self) -> float:
        self._halt.set()
        self.join()
        return max(self.peak, rss_mb(self.pid))


async def _drive(url: str, sessions: list[Session], shots: Path | None,
                 ms: float) -> list[Outcome]:
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            return list(await asyncio.gather(*(_run_session(browser, url, s, shots, ms)
                                               for s in sessions)))
        finally:
            await browser.close()


def run_load(app_dir: Path, log: Path, shots: Path | None = None, rounds: int = 1,
             timeout_ms: float = MS, settle_seconds: float = 2.0) -> LoadReport:
    """Start the app in ``app_dir`` (data in ``assets/demo``), run the five sessions at
    once (``rounds`` times, one round after the other, to show whether memory keeps
    growing), stop the server and report (a screenshot of each failed session in
    ``shots``)."""
    demo = app_dir / "assets" / "demo"
    submissions = sorted(p.stem for p in (demo / "predictions").glob("*.json"))
    sessions = sessions_for(demo / "ground_truth.json", submissions)
    server = Server(app_dir, log)
    try:
        before = rss_mb(server.pid)
        sampler = _Sampler(server.pid)
        sampler.start()
        outcomes, after = [], []
        for i in range(rounds):
            done = asyncio.run(_drive(server.url, sessions, shots, timeout_ms))
            for o in done:
                o.name += f" (round {i + 1})" if rounds > 1 else ""
            outcomes += done
            time.sleep(settle_seconds)  # let the server drop the closed sessions
            after.append(rss_mb(server.pid))
        peak = sampler.stop()
        evaluations = Counter(EVALUATED.findall(server.log_text()))
    finally:
        server.stop()
    return LoadReport(outcomes, evaluations, before, peak, after)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT / "benchmarks" / "data" / "full")
    parser.add_argument("--rounds", type=int, default=2,
                        help="waves of five concurrent sessions, one after the other")
    parser.add_argument("--timeout", type=float, default=300,
                        help="seconds a session may wait for one step")
    parser.add_argument("--shots", type=Path, default=Path("/tmp/ovearth_shots/load"),
                        help="where screenshots of failed sessions go")
    args = parser.parse_args(argv)
    data = ensure_data(args.data.resolve(), images=True)
    with tempfile.TemporaryDirectory(prefix="ovearth_load_") as tmp:
        app_dir = copy_app(Path(tmp) / "app")
        (app_dir / "assets").mkdir()
        (app_dir / "assets" / "demo").symlink_to(data, target_is_directory=True)
        start = time.perf_counter()
        report = run_load(app_dir, Path(tmp) / "server.log", args.shots, args.rounds,
                          args.timeout * 1000)
        print(f"data: {data}")
        print(report.summary())
        print(f"wall time for all sessions (server start included): "
              f"{time.perf_counter() - start:.1f} s")
    return 1 if report.errors or max(report.evaluations.values(), default=0) > 1 else 0


if __name__ == "__main__":
    sys.exit(main())
