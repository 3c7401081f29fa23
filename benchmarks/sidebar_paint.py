"""What the sidebar's widgets cost a first paint, and what a leaner sidebar would save
(issue 49): ad hoc apps of the sidebar's widgets alone (labels and help texts as the app
draws them, no data, no evaluation) beside the trivial Streamlit page, one new session each
in turn, for a new user (a new browser context) and a returning user (a new tab of a context
that opened the page once).

    .venv/bin/python -m benchmarks.sidebar_paint [--rounds 5]

Variants: the sidebar as it is; without its help texts; the rarely used options (mask cap,
concave boxes, the AP block) in a collapsed expander that is drawn, and in a lazy expander
(``on_change="rerun"``, not built while closed); and the latter with the two uploaders and
the saved-view management lazy too. Medians; nothing asserts time.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from playwright.sync_api import Browser, BrowserContext, Page, sync_playwright

from benchmarks.browser_timing import CHROMIUM, CHROMIUM_ARGS, MS, TRIVIAL, Server, _idle

HELP = {"gt": "Path (relative to the app folder or absolute). Its folder's images and "
              "predictions/*.json come with it.",
        "img": "image_path of every annotation is resolved inside this folder.",
        "auto": "Evaluate the modalities the submission has non-empty predictions for. Turn "
                "off to declare them, as official runs do.",
        "masks": "Take predicted masks of up to 536,870,911 pixels (iSAID-size scenes). The "
                 "reference toolkit refuses them: off for official runs.",
        "concave": "Take concave quadrilaterals (ground truth and predictions), scored as "
                   "their polygons as DOTA_devkit scores them.",
        "hn": "Open vocabulary only: referring and reasoning queries have no negatives.",
        "nms": "Needs hard negatives (open vocabulary): it suppresses the boxes of negative "
               "queries that compete with a positive's for one object.",
        "aitod": "AI-TOD's size ranges and caps, and the optimal LRP (lower is better).",
        "reload": "Forget cached results and read the files again."}

# The sidebar's widgets in the app's order; {h(...)} a help text, {rare} where the rarely
# used options begin, {end} where they end, {up} / {manage} the uploaders and the saved
# views' management.
SIDEBAR = '''import streamlit as st

VARIANT = "{variant}"
H = VARIANT != "nohelp"
def h(text):
    return {{"help": text}} if H else {{}}

def rare():
    st.toggle("Masks beyond the spec's cap (100,000,000 pixels)", key="masks", **h({masks!r}))
    st.toggle("Concave oriented boxes (DOTA_devkit)", key="concave", **h({concave!r}))
    st.markdown("**Average precision** (every box, whatever the score threshold)")
    st.toggle("Hard negatives: boxes on negative queries count as false positives", key="hn",
              **h({hn!r}))
    st.toggle("NMS-AP (OVDEval)", key="nms", disabled=True, **h({nms!r}))
    st.toggle("AI-TOD's protocol: mAP of very tiny and tiny objects", key="aitod",
              **h({aitod!r}))
    st.number_input("COCO detection cap: boxes kept per query", min_value=1,
                    max_value=100000, value=100, step=100, key="cap")

def lazy(label, key):
    return st.expander(label, key=key, on_change="rerun")

with st.sidebar:
    st.subheader("Data")
    st.text_input("Ground truth JSON", "assets/demo/ground_truth.json", **h({gt!r}))
    if VARIANT == "lean":
        with lazy("Upload files", "up") as up:
            if up.open:
                st.file_uploader("…or upload ground truth", type="json", key="u1")
    else:
        st.file_uploader("…or upload ground truth", type="json", key="u1")
    st.text_input("Images folder", "assets/demo", **h({img!r}))
    st.selectbox("Submission", ["strong_localiser", "weak_baseline"])
    st.text_input("Submission path", "assets/demo/predictions/strong_localiser.json")
    if VARIANT != "lean":
        st.file_uploader("…or upload a submission", type="json", key="u2")
    st.subheader("Evaluation options")
    st.radio("Task", ["vocabulary", "referring", "reasoning"], horizontal=True)
    st.toggle("Modalities from the submission (auto)", value=True, **h({auto!r}))
    st.multiselect("Modalities", ["segmentation", "bbox", "oriented_bbox"], disabled=True)
    st.select_slider("IoU threshold (box matching)", [0.5, 0.75, 0.9])
    st.checkbox("Filter boxes by score")
    st.radio("Predicted bbox format", ["xywh", "xyxy"], horizontal=True)
    if VARIANT == "drawn":
        with st.expander("More options"):
            rare()
    elif VARIANT in ("lazy", "lean"):
        with lazy("More options", "more") as more:
            if more.open:
                rare()
    else:
        rare()
    st.button("Reload files", **h({reload!r}))
    st.subheader("Saved views")
    st.text_input("Save this view as", key="name")
    st.button("Save view")
    if VARIANT == "lean":
        with lazy("Manage saved views", "manage") as manage:
            if manage.open:
                st.selectbox("Saved view", ["a", "b"])
    else:
        with st.expander("Manage saved views"):
            st.selectbox("Saved view", ["a", "b"])
            st.text_input("New name")
            a, b = st.columns(2)
            a.button("Rename")
            b.button("Delete")
st.session_state.setdefault("n", 0)
st.session_state["n"] += 1
st.write(f"runs {{st.session_state['n']}}")
'''
VARIANTS = ("as it is", "nohelp", "drawn", "lazy", "lean")


def _ready(page: Page, sidebar: bool) -> None:
    page.get_by_text("runs 1").wait_for(timeout=MS)
    if sidebar:
        page.get_by_text("Save view", exact=True).wait_for(timeout=MS)
    _idle(page)


def _open(target: Browser | BrowserContext, url: str, sidebar: bool) -> tuple[float, float]:
    """Seconds to the page drawn, and the page's main-thread work meanwhile (CDP
    ``TaskDuration``)."""
    page = target.new_page()
    cdp = page.context.new_cdp_session(page)
    cdp.send("Performance.enable")
    start = time.perf_counter()
    page.goto(url)
    _ready(page, sidebar)
    seconds = time.perf_counter() - start
    task = next(m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]
                if m["name"] == "TaskDuration")
    page.close()
    return seconds, task


def measure(rounds: int) -> dict[tuple[str, str], list[tuple[float, float]]]:
    times: dict[tuple[str, str], list[tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="ovearth_sidebar_") as tmp:
        servers = {}
        try:
            for name in ("trivial", *VARIANTS):
                folder = Path(tmp) / name.replace(" ", "_")
                folder.mkdir()
                (folder / "app.py").write_text(TRIVIAL if name == "trivial" else
                                               SIDEBAR.format(variant=name, **HELP))
                servers[name] = Server(folder, Path(tmp) / f"{folder.name}.log")
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                try:
                    contexts = {}
                    for name, server in servers.items():
                        _open(browser, server.url, name != "trivial")
                        contexts[name] = browser.new_context()
                        _open(contexts[name], server.url, name != "trivial")
                    for _ in range(rounds):
                        for user in ("new", "returning"):
                            for name, server in servers.items():
                                target = browser if user == "new" else contexts[name]
                                times.setdefault((user, name), []).append(
                                    _open(target, server.url, name != "trivial"))
                finally:
                    browser.close()
        finally:
            for server in servers.values():
                server.stop()
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    load = os.getloadavg()
    times = measure(args.rounds)
    end = os.getloadavg()
    print(f"{args.rounds} rounds · load average {load[0]:.1f} at the start, {end[0]:.1f} / "
          f"{end[1]:.1f} / {end[2]:.1f} at the end ({os.cpu_count()} cores)")
    for user in ("new", "returning"):
        base = statistics.median(v[0] for v in times[(user, "trivial")])
        base_task = statistics.median(v[1] for v in times[(user, "trivial")])
        print(f"\n{user} user: trivial page {base:.3f} s (main thread {base_task:.3f} s)")
        for name in VARIANTS:
            walls = [v[0] for v in times[(user, name)]]
            median = statistics.median(walls)
            task = statistics.median(v[1] for v in times[(user, name)])
            print(f"  {name:<9} {median:7.3f} s = {median / base:5.2f} x; main thread "
                  f"{task:.3f} s = {task / base_task:5.2f} x   "
                  f"({', '.join(f'{v:.2f}' for v in walls)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
