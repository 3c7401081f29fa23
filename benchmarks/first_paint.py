"""First paint of chosen pages, interleaved (issue 49): the trivial Streamlit page, the app
at a git revision ("before") and this tree's app ("after"), one new session each in turn,
for a new user (a new browser context: nothing cached) and a returning user (a new tab of a
context that has opened the page once), so load from other work falls on all alike.

    .venv/bin/python -m benchmarks.first_paint --before-dir DIR [--rounds 5]
        [--pages Compare Confusion Overview Query_explorer]

``DIR`` is a checkout of the revision measured as "before" (``git worktree add --detach``).
A page is painted when the script is idle, no skeleton is left, the page's first element
(a metric card, the explorer's picture, a table) is drawn and every plotly chart it sent is
laid out. Demo data (copied). Medians per page, server and kind of user, of the wall time and
of the page's main-thread work (CDP ``TaskDuration``); nothing asserts time.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from playwright.sync_api import Browser, BrowserContext, Page, sync_playwright

from benchmarks.browser_timing import (
    CHROMIUM,
    CHROMIUM_ARGS,
    MS,
    PLOT,
    ROOT,
    TRIVIAL,
    Server,
    _idle,
    _trivial_ready,
)

# Every plotly chart of the main area laid out, every data grid drawn (its canvas) and
# every static table (``st.table``, a script of its own) drawn.
DRAWN = ("() => [...document.querySelectorAll('[data-testid=stMain] .js-plotly-plot')]"
         ".every(g => g._fullLayout) && [...document.querySelectorAll("
         "'[data-testid=stMain] [data-testid=stDataFrame]')].every(d => d.querySelector("
         "'canvas')) && [...document.querySelectorAll('[data-testid=stMain] "
         "[data-testid=stTable]')].every(t => t.querySelector('td'))")
VIEWPORT = {"width": 1500, "height": 1400}


def _ready(text: str, explorer: bool = False) -> Callable[[Page], None]:
    def ready(page: Page) -> None:
        page.get_by_text(text, exact=False).first.wait_for(timeout=MS)
        _idle(page)
        if explorer:
            page.wait_for_function(PLOT, timeout=MS)
        page.wait_for_function(DRAWN, timeout=MS)
    return ready


PAGES = {"Overview": ("", _ready("Key metrics")),
         "Query_explorer": ("Query_explorer", _ready("Query 1 of", explorer=True)),
         "Compare": ("Compare", _ready("Agreement and McNemar")),
         "Confusion": ("Confusion", _ready("counts in row"))}


def _open(target: Browser | BrowserContext, url: str, ready: Callable[[Page], None]
          ) -> tuple[float, float]:
    """Seconds from the request to the page painted, and the page's main-thread work in
    that time (Chromium's ``TaskDuration``, CDP: time the page computed, not waited, so
    less at the mercy of the machine's load than the wall time)."""
    page = target.new_page(viewport=VIEWPORT) if isinstance(target, Browser) else \
        target.new_page()
    cdp = page.context.new_cdp_session(page)
    cdp.send("Performance.enable")
    start = time.perf_counter()
    page.goto(url)
    ready(page)
    seconds = time.perf_counter() - start
    task = next(m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]
                if m["name"] == "TaskDuration")
    page.close()
    return seconds, task


def measure(before_dir: Path, pages: list[str], rounds: int) -> dict[str, dict]:
    times: dict[tuple[str, str, str], list[tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="ovearth_paint_") as tmp:
        tmp_path = Path(tmp)
        trivial = tmp_path / "trivial"
        trivial.mkdir()
        (trivial / "app.py").write_text(TRIVIAL)
        servers = {"trivial": Server(trivial, tmp_path / "trivial.log")}
        try:
            for name, app in (("before", before_dir), ("after", ROOT)):
                data = tmp_path / name / "demo"
                shutil.copytree(ROOT / "assets" / "demo", data)
                servers[name] = Server(app, tmp_path / f"{name}.log", ["--data", str(data)])
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                try:
                    # Each server's evaluations cached and its pages run once.
                    for name in ("before", "after"):
                        for page in pages:
                            _open(browser, f"{servers[name].url}/{PAGES[page][0]}",
                                  PAGES[page][1])
                    contexts = {}
                    for page in pages:
                        for name, server in servers.items():
                            url, ready = _target(server, name, page)
                            context = browser.new_context(viewport=VIEWPORT)
                            _open(context, url, ready)  # the returning user's first visit
                            contexts[(page, name)] = context
                    for _ in range(rounds):
                        for page in pages:
                            for user in ("new", "returning"):
                                for name, server in servers.items():
                                    url, ready = _target(server, name, page)
                                    target = browser if user == "new" else \
                                        contexts[(page, name)]
                                    times.setdefault((page, user, name), []).append(
                                        _open(target, url, ready))
                finally:
                    browser.close()
        finally:
            for server in servers.values():
                server.stop()
    out: dict[str, dict] = {}
    for (page, user, name), values in times.items():
        walls, tasks = [v[0] for v in values], [v[1] for v in values]
        out.setdefault(f"{page}, {user} user", {})[name] = (
            statistics.median(walls), walls, statistics.median(tasks))
    return out


def _target(server: Server, name: str, page: str) -> tuple[str, Callable[[Page], None]]:
    if name == "trivial":
        return server.url, _trivial_ready
    return f"{server.url}/{PAGES[page][0]}", PAGES[page][1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before-dir", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--pages", nargs="+", default=["Compare", "Confusion"],
                        choices=sorted(PAGES))
    args = parser.parse_args(argv)
    load = os.getloadavg()
    got = measure(args.before_dir, args.pages, args.rounds)
    end = os.getloadavg()
    print(f"{args.rounds} rounds · load average {load[0]:.1f} at the start, {end[0]:.1f} / "
          f"{end[1]:.1f} / {end[2]:.1f} at the end ({os.cpu_count()} cores)")
    for label, by_server in got.items():
        base, _, base_task = by_server["trivial"]
        print(f"\n{label}: trivial page {base:.3f} s (main thread {base_task:.3f} s)")
        for name in ("before", "after"):
            median, values, task = by_server[name]
            print(f"  {name:<7} {median:7.3f} s = {median / base:5.2f} x   "
                  f"({', '.join(f'{v:.2f}' for v in values)}); main thread {task:.3f} s = "
                  f"{task / base_task:5.2f} x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
