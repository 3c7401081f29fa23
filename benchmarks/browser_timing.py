"""What a user waits for in a real browser (issue 14): headless Chromium against
``streamlit run``, each figure beside a trivial Streamlit app measured in the same run.

    .venv/bin/python -m benchmarks.browser_timing [--data DIR] [--repeats 20]
        [--before REV] [--next-only] [--dense]

``DIR`` (default: the bundled demo, copied) is opened with ``--data``. Figures (seconds,
median of ``--repeats`` for the interactions, of 3 fresh sessions for the pages):

- trivial app: first paint of a new session, and a rerun (a button that bumps a counter);
- "Next ▶" in the explorer until the rerun it starts has sent its card and the script is
  idle, the next query's pictures drawn (and, separately, until the card names the next
  query with its pictures loaded, which comes before the rerun ends: at the click itself
  when the card the button opens was sent ahead; timed by Playwright, and in the page from
  the click event to the first frame showing it, as the trivial rerun is too),
  with the websocket bytes received per click and the page's main-thread time per click
  (Chromium's ``TaskDuration`` and ``ScriptDuration`` counters, CDP). The trivial rerun
  and every app's "Next" are clicked in turn (one of each per round, all servers up at
  once), so load from other work on the machine falls on all of them alike;
- Overview: a new session until its metric cards are drawn;
- explorer: a new session until its viewer's plot is drawn;
- Gallery: a new session until 48 tile images are loaded;
- Compare: a new session until the script is idle.

With ``--dense`` (issue 25), the data are the scenes of :mod:`benchmarks.dense_scene`: the
mosaic (3,333 x 3,546 px; queries of ~8,000 GT + predicted boxes and of 10) and the sparse
single tiles, each app served on both; "Next" is split by the query it lands on (dense or
sparse, read from the viewer), and the Gallery page is timed on both, with the two issue
ratios (Gallery mosaic / single tile, Next onto dense / onto sparse) printed. Each
Gallery session opens a page not shown before (pages 1 to 5, the servers in turn for each
page): tiles are cached across sessions, so a page seen once costs no drawing.

Ratios: interactions over the trivial rerun, pages over the trivial first paint. With
``--before REV``, the app of that git revision (``git archive``, into a temporary folder)
is measured too, in the same run, on the same server settings. Nothing asserts time: the
figures depend on the machine and what else runs on it.
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, Page, sync_playwright

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from browser_support import (  # noqa: E402
    CARD_SENT,
    CHROMIUM,
    CHROMIUM_ARGS,
    IDLE,
    MS,
    Server,
    copy_app,
)

from benchmarks import dense_scene  # noqa: E402

TRIVIAL = '''import streamlit as st

st.session_state.setdefault("n", 0)
st.session_state["n"] += 1
st.button("Rerun")
st.write(f"runs {st.session_state['n']}")
'''
# The viewer is drawn: its plotly figure laid out (the interactive view, and the app before
# the static view), or every picture of the page loaded (the static view and thumbnail).
PLOT = ("() => { const m = document.querySelector('[data-testid=stMain]'); "
        "if (m.querySelector('.js-plotly-plot')?._fullLayout) return true; "
        "const i = [...m.querySelectorAll('img')]; "
        "return i.length >= 2 && i.every(x => x.complete && x.naturalWidth > 0); }")
# The click's switch is drawn: the card names another query than before the click and its
# pictures are loaded (the rerun may still be running).
SWITCHED = ("prev => { const c = document.querySelector('[data-testid=stMain] .ov-card h3 code');"
            " if (!c || c.innerText === prev) return false; "
            "return [...document.querySelectorAll('[data-testid=stMain] .ov-card img')]"
            ".every(x => x.complete && x.naturalWidth > 0); }")
# In the page (no Playwright round trip in it): from the click event to the first animation
# frame whose DOM shows the click's result (a frame callback runs just before that frame is
# painted). ``shown`` is the condition, as a function body over ``arg``; the trivial app and
# the explorer are timed the same way. The clock starts at the event's own time stamp (the
# input), not when this listener runs: listeners on the document registered before it (the
# card's own, up to issue 39) would otherwise do their work before the clock starts.
FRAME_WATCH = ("([body, arg]) => { const shown = new Function('arg', body); "
               "window.__ovFrame = null; document.addEventListener('click', (e) => { "
               "const t0 = e.timeStamp; const tick = () => { if (shown(arg)) "
               "window.__ovFrame = performance.now() - t0; else requestAnimationFrame(tick); };"
               " requestAnimationFrame(tick); }, {capture: true, once: true}); }")
CARD_SHOWN = ("const c = document.querySelector('[data-testid=stMain] .ov-card h3 code'); "
              "if (!c || c.innerText === arg) return false; return [...document."
              "querySelectorAll('[data-testid=stMain] .ov-card img')].every(x => x.complete "
              "&& x.naturalWidth > 0);")
TEXT_SHOWN = "return document.querySelector('[data-testid=stMain]').innerText.includes(arg);"
TILES = ("() => { const i = [...document.querySelectorAll('[data-testid=stMain] "
         "[data-testid=stImage] img')]; return i.length >= 48 && i.every(x => x.complete && "
         "x.naturalWidth > 0); }")


def _idle(page: Page) -> None:
    page.wait_for_selector(IDLE, timeout=MS)
    page.locator('[data-testid="stSkeleton"]').first.wait_for(state="detached", timeout=MS)


def _timed(action: Callable[[], None]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def _trivial_ready(page: Page) -> None:
    page.get_by_text("runs 1").wait_for(timeout=MS)
    _idle(page)


def _trivial(browser: Browser, url: str) -> dict[str, float]:
    return {"first paint": _page_open(browser, url, _trivial_ready),
            "first paint, cached": _page_open(browser, url, _trivial_ready, cached=True)}


def _page_open(browser: Browser, url: str, ready: Callable[[Page], None],
               cached: bool = False) -> float:
    """Median of 3 new sessions opening ``url`` until ``ready``: each in a new browser
    context (a new user: nothing cached), or, ``cached``, each a new tab of one context that
    has opened the page once (a returning user: the page's scripts in the browser's cache)."""
    viewport = {"width": 1500, "height": 1400}
    context = browser.new_context(viewport=viewport) if cached else None
    if context is not None:
        warm = context.new_page()
        warm.goto(url)
        ready(warm)
        warm.close()
    times = []
    for _ in range(3):
        page = context.new_page() if context is not None else browser.new_page(
            viewport=viewport)

        def go(p: Page = page) -> None:
            p.goto(url)
            ready(p)
        times.append(_timed(go))
        page.close()
    if context is not None:
        context.close()
    return statistics.median(times)


class _Stepper:
    """One open page and the interaction timed on it: the trivial app's button, or the
    explorer's "Next ▶"; ``step()`` times one more click."""

    def __init__(self, browser: Browser, url: str, explorer: bool, frames: bool = False):
        self.page = browser.new_page(viewport={"width": 1500, "height": 1400})
        self.explorer, self.n, self.times = explorer, 1, []
        self.received: list[int] = []  # bytes received per click (websocket and media)
        self.landed: list[str] = []  # the query id each click landed on (static view)
        # Chromium's own counters per click (CDP Performance.getMetrics): the page's
        # main-thread task time and, of it, JavaScript, in seconds.
        self.drawn: list[float] = []  # click to the next query's card drawn (explorer)
        self.frame: list[float] = []  # click to the frame showing it, timed in the page
        self.main_thread: list[float] = []
        self.script: list[float] = []
        self._bytes = 0
        if frames:
            self.page.on("websocket", lambda ws: ws.on(
                "framereceived", lambda f: self._count(len(f))))
            # Pictures come over HTTP from the media endpoint, not the websocket.
            self.page.on("response", lambda r: self._count(
                int(r.headers.get("content-length", 0)) if "/media/" in r.url else 0))
        self._cdp = self.page.context.new_cdp_session(self.page)
        self._cdp.send("Performance.enable")
        self.page.goto(url)
        self.page.get_by_text("Query 1 of" if explorer else "runs 1").wait_for(timeout=MS)
        _idle(self.page)
        if explorer:
            self.page.wait_for_function(PLOT, timeout=MS)

    def _count(self, n: int) -> None:
        self._bytes += n

    def _metrics(self) -> dict[str, float]:
        return {m["name"]: m["value"]
                for m in self._cdp.send("Performance.getMetrics")["metrics"]}

    def step(self) -> None:
        p, self.n = self.page, self.n + 1
        self._bytes = 0
        before = self._metrics()
        start = time.perf_counter()
        if self.explorer:
            card = p.locator(".ov-card h3 code")
            shown = card.first.inner_text() if card.count() else ""
            p.evaluate(FRAME_WATCH, [CARD_SHOWN, shown])
            sent = p.evaluate(CARD_SENT)
            start = time.perf_counter()
            p.get_by_role("button", name="Next ▶").click()
            if shown:  # the static view (an app before it had no card)
                p.wait_for_function(SWITCHED, arg=shown, timeout=MS)
                self.drawn.append(time.perf_counter() - start)
            if sent is not None:  # the card the click put in place is not the rerun's end
                p.wait_for_function(f"prev => ({CARD_SENT})() !== prev", arg=sent,
                                    timeout=MS)
            p.get_by_text(f"Query {self.n} of").wait_for(timeout=MS)
            _idle(p)
            p.wait_for_function(PLOT, timeout=MS)
            card = p.locator(".ov-card h3 code")
            self.landed.append(card.first.inner_text() if card.count() else "")
        else:
            p.evaluate(FRAME_WATCH, [TEXT_SHOWN, f"runs {self.n}"])
            start = time.perf_counter()
            p.get_by_role("button", name="Rerun").click()
            p.get_by_text(f"runs {self.n}").wait_for(timeout=MS)
            _idle(p)
        self.times.append(time.perf_counter() - start)
        framed = p.evaluate("() => window.__ovFrame")
        if framed is not None:
            self.frame.append(framed / 1000)
        self.received.append(self._bytes)
        after = self._metrics()
        self.main_thread.append(after["TaskDuration"] - before["TaskDuration"])
        self.script.append(after["ScriptDuration"] - before["ScriptDuration"])


def interleaved(steppers: dict[str, _Stepper], repeats: int) -> None:
    """``repeats`` clicks on every page in turn (trivial rerun, then each app's "Next"):
    load from other work on the machine falls on all of them alike."""
    for _ in range(repeats):
        for stepper in steppers.values():
            stepper.step()


def _explorer_ready(page: Page) -> None:
    page.get_by_text("Query 1 of").wait_for(timeout=MS)
    _idle(page)
    page.wait_for_function(PLOT, timeout=MS)


def _overview_ready(page: Page) -> None:
    page.locator('[data-testid="stMetric"]').first.wait_for(timeout=MS)
    _idle(page)


def _gallery_ready(page: Page) -> None:
    _idle(page)
    page.wait_for_function(TILES, timeout=MS)


GALLERY_PAGES = 5


def _gallery_rounds(browser: Browser, urls: dict[str, str]) -> dict[str, float]:
    """Median per server of new sessions on Gallery pages 1 to ``GALLERY_PAGES``, the
    servers in turn for each page (load falls on all alike): each page's tiles are drawn
    for the first time (the tile cache is shared by sessions), as when turning pages. Each
    server's Overview is opened first (the evaluation cached, as in the explorer)."""
    for url in urls.values():
        page = browser.new_page()
        page.goto(url)
        _overview_ready(page)
        page.close()
    times: dict[str, list[float]] = {label: [] for label in urls}
    for number in range(1, GALLERY_PAGES + 1):
        for label, url in urls.items():
            page = browser.new_page(viewport={"width": 1500, "height": 1400})

            def go(p: Page = page, n: int = number, u: str = url) -> None:
                p.goto(f"{u}/Gallery?gpage={n}")
                _gallery_ready(p)
            times[label].append(_timed(go))
            page.close()
    return {label: statistics.median(t) for label, t in times.items()}


def _split_next(stepper: _Stepper) -> dict[str, float]:
    """Median "Next" by the kind of query it landed on (``dense_*`` / ``sparse_*``)."""
    out = {}
    for kind in ("dense", "sparse"):
        times = [t for t, q in zip(stepper.times, stepper.landed, strict=True)
                 if q.startswith(kind)]
        if times:
            out[f"Next ▶ onto {kind} (n={len(times)})"] = statistics.median(times)
    return out


def _pages(browser: Browser, url: str, gallery: bool) -> dict[str, float]:
    """Each page's first paint in a new session: a new user's (nothing cached), and a
    returning user's new tab (``cached``: against the trivial page's, also cached)."""
    pages = [("Overview", url, _overview_ready),
             ("explorer", f"{url}/Query_explorer", _explorer_ready)]
    if gallery:
        pages.append(("Gallery", f"{url}/Gallery", _gallery_ready))
    pages.append(("Compare", f"{url}/Compare", _idle))
    out = {}
    for cached in (False, True):
        for name, address, ready in pages:
            label = f"{name} (new session{', cached' if cached else ''})"
            out[label] = _page_open(browser, address, ready, cached=cached)
    return out


def _before_app(rev: str, root: Path) -> Path:
    """The app of git revision ``rev`` (app.py, pages/, .streamlit/, ovearth_core/)."""
    root.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", rev, "app.py", "pages", ".streamlit",
                              "ovearth_core"], cwd=ROOT, check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(root)], input=archive.stdout, check=True)
    return root


def measure(data_dir: Path, repeats: int, before: str | None = None,
            next_only: bool = False, dense: bool = False) -> dict[str, Any]:
    """Serve the trivial app and this tree's app (and ``before``'s) on ``data_dir`` (or the
    dense scenes), click in turn, and return ``base`` (the trivial app's rerun and first
    paint), ``results`` (per app: figure -> seconds), ``threads`` (per app: main-thread and
    JavaScript seconds per click), ``sent`` (bytes per click) and ``load_before``."""
    sent: dict[str, float] = {}
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="ovearth_browser_") as tmp:
        tmp_path = Path(tmp)
        data = tmp_path / "data" / "bench"
        sparse = tmp_path / "data" / "sparse"
        if dense:
            dense_scene.write_mosaic(data)
            dense_scene.write_sparse(sparse)
        else:
            shutil.copytree(data_dir, data, symlinks=True)
        trivial_dir = tmp_path / "trivial"
        trivial_dir.mkdir()
        (trivial_dir / "app.py").write_text(TRIVIAL)
        apps = {"after": copy_app(tmp_path / "after")}
        # The copied app imports ovearth_core from this checkout (cwd is not on the path
        # for the package), except the revision measured as "before", which brings its own.
        if before:
            apps[f"before ({before})"] = _before_app(before, tmp_path / "before")
        servers: dict[str, Server] = {}
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                servers["trivial"] = Server(trivial_dir, tmp_path / "trivial.log")
                for i, (name, app_dir) in enumerate(apps.items()):
                    servers[name] = Server(app_dir, tmp_path / f"{i}.log", ["--data", str(data)])
                    if dense:
                        servers[f"{name} sparse"] = Server(app_dir, tmp_path / f"{i}s.log",
                                                           ["--data", str(sparse)])
                base = {} if next_only else _trivial(browser, servers["trivial"].url)
                steppers = {"trivial": _Stepper(browser, servers["trivial"].url, False)}
                steppers.update({name: _Stepper(browser, f"{servers[name].url}/Query_explorer",
                                                True, frames=True) for name in apps})
                interleaved(steppers, repeats)
                base["rerun"] = statistics.median(steppers["trivial"].times)
                base["rerun, in the page"] = statistics.median(steppers["trivial"].frame)
                threads = {name: (statistics.median(st.main_thread), statistics.median(st.script))
                           for name, st in steppers.items()}
                results = {}
                galleries = {} if not dense or next_only else _gallery_rounds(
                    browser, {(name, kind): servers[f"{name}{suffix}"].url for name in apps
                              for kind, suffix in (("mosaic", ""), ("single tile", " sparse"))})
                for name, app_dir in apps.items():
                    figures = {"Next ▶": statistics.median(steppers[name].times)}
                    if steppers[name].drawn:
                        figures["Next ▶, the card drawn"] = statistics.median(
                            steppers[name].drawn)
                    if steppers[name].frame:
                        figures["Next ▶, shown, in the page"] = statistics.median(
                            steppers[name].frame)
                    sent[name] = statistics.median(steppers[name].received)
                    if dense:
                        figures.update(_split_next(steppers[name]))
                        for (app, kind), seconds in galleries.items():
                            if app == name:
                                figures[f"Gallery, {kind} (new page)"] = seconds
                    elif not next_only:
                        figures.update(_pages(browser, servers[name].url,
                                              any((app_dir / "pages" / f).exists() for f in
                                                  ("Gallery.py", "2_Gallery.py"))))
                    results[name] = figures
            finally:
                browser.close()
                for server in servers.values():
                    server.stop()
    return {"base": base, "results": results, "threads": threads, "sent": sent,
            "load_before": load_before}


def next_figures(repeats: int = 20, data_dir: Path = ROOT / "assets" / "demo"
                 ) -> dict[str, float]:
    """Issue 28's figure: the explorer's Next against a trivial rerun, clicked in turn
    (seconds, medians; main-thread seconds per click): until the rerun ends (``Next ▶``)
    and until the next query's card is shown (``Next ▶ shown``, and in the page)."""
    got = measure(data_dir, repeats, next_only=True)
    after = got["results"]["after"]
    return {"trivial rerun": got["base"]["rerun"], "Next ▶": after["Next ▶"],
            "Next ▶ shown": after["Next ▶, the card drawn"],
            "trivial rerun in the page": got["base"]["rerun, in the page"],
            "Next ▶ shown in the page": after["Next ▶, shown, in the page"],
            "main thread trivial": got["threads"]["trivial"][0],
            "main thread Next": got["threads"]["after"][0],
            "KiB per Next": got["sent"]["after"] / 1024}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=ROOT / "assets" / "demo")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--before", help="also measure the app of this git revision")
    parser.add_argument("--next-only", action="store_true",
                        help="only the trivial rerun and the explorer's Next (no new sessions)")
    parser.add_argument("--dense", action="store_true",
                        help="issue 25: the dense mosaic and the sparse single tiles "
                             "(benchmarks.dense_scene) instead of --data")
    args = parser.parse_args(argv)
    got = measure(args.data, args.repeats, args.before, args.next_only, args.dense)
    base, results, threads, sent = got["base"], got["results"], got["threads"], got["sent"]
    load_before = got["load_before"]
    load = os.getloadavg()
    source = "benchmarks.dense_scene (mosaic, single tiles)" if args.dense else args.data
    print(f"data: {source} · Chromium {CHROMIUM} · {args.repeats} repeats · load average "
          f"{load_before[0]:.1f} before, {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} after "
          f"({os.cpu_count()} cores)")
    paint = (f"first paint {base['first paint']:.3f} s (cached: a new tab of a browser that "
             f"opened it {base['first paint, cached']:.3f} s), " if "first paint" in base
             else "")
    print(f"trivial Streamlit app: {paint}rerun {base['rerun']:.3f} s (reruns interleaved "
          "with every app's Next)")
    print(f"  in the page, from the click to the frame that shows it: "
          f"{base['rerun, in the page']:.3f} s")
    task, script = threads["trivial"]
    print(f"  its main thread per rerun (CDP TaskDuration): {task * 1000:.0f} ms, of it "
          f"JavaScript {script * 1000:.0f} ms")
    for name, figures in results.items():
        print(f"\n{name}")
        task_n, script_n = threads[name]
        print(f"  main thread per Next (CDP TaskDuration) {task_n * 1000:7.0f} ms "
              f"({task_n / task:5.2f} x the trivial rerun's), of it JavaScript "
              f"{script_n * 1000:.0f} ms ({script_n / script:5.2f} x)")
        for label, seconds in figures.items():
            nxt = label.startswith("Next ▶")
            in_page = label.endswith("in the page")
            cached = label.endswith(", cached)")
            ref = (base["rerun, in the page"] if in_page else base["rerun"]) if nxt else \
                base.get("first paint, cached" if cached else "first paint", math.nan)
            what = ("trivial rerun, in the page" if in_page else "trivial rerun") if nxt \
                else ("trivial first paint, cached" if cached else "trivial first paint")
            extra = (f"   ({sent[name] / 1024:,.0f} KiB received per click, median)"
                     if label == "Next ▶" else "")
            print(f"  {label:<34} {seconds:7.3f} s   {seconds / ref:5.2f} x {what}{extra}")
        for label, top, bottom in (
                ("Gallery: mosaic / single tile (target <= 1.5)",
                 "Gallery, mosaic (new page)", "Gallery, single tile (new page)"),
                ("Next: onto dense / onto sparse (target <= 3)",
                 "Next ▶ onto dense", "Next ▶ onto sparse")):
            a = next((v for k, v in figures.items() if k.startswith(top)), None)
            b = next((v for k, v in figures.items() if k.startswith(bottom)), None)
            if a is not None and b is not None:
                print(f"  {label:<46} {a / b:5.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
