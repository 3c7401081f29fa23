"""Issue 28's figures in one run, each beside its target and its ratio to the peers measured
in the same run: COCO-style AP against hotcoco, faster-coco-eval and pycocotools; the
analysis commands' imports against ``python -c pass`` and ``import hotcoco``; the
leaderboard (cold and warm, ``--subsets`` and all modalities) against sequential
evaluation; the explorer's Next in Chromium against a trivial Streamlit rerun; the spec's
command (three tasks, one process each) against the bare interpreter.

    .venv/bin/python -m benchmarks.run --round3 [--data DIR] [--quick]
    .venv/bin/python -m benchmarks.round3 [--data DIR] [--quick] [--only SECTION ...]

Each section is measured by its own module (:mod:`benchmarks.coco_peers`,
:mod:`benchmarks.import_times`, :mod:`benchmarks.leaderboard`,
:mod:`benchmarks.browser_timing`, :mod:`benchmarks.cli_start`), which prints its details;
this module collects what each returns and prints one table at the end. A section that
cannot run here (no Chromium, a peer not installed) is listed as not measured, with the
reason: never a figure left out silently. Nothing asserts time.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SECTIONS = ("coco", "imports", "leaderboard", "next", "spec")


@dataclass(frozen=True)
class Figure:
    """One printed row: what, the target, the figure, and its ratios to the peers."""

    section: str
    figure: str
    target: str
    measured: str
    ratios: str
    met: bool | None = None  # None: the target is not a yes/no one


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b > 0 else "—"


def coco_figures(data: Path, repeats: int) -> list[Figure]:
    """Files to numbers, ours against each peer (medians of new processes, CPU seconds: the
    machine is shared). Ours' *same work* is the load plus the by-phrase call, which gives
    every number a peer's two runs (useCats 0 and 1) give."""
    from benchmarks import coco_peers

    got = coco_peers.peer_figures(data, repeats=repeats)
    tools = got["tools"]
    peers = [t for t in coco_peers.TOOLS if t != "ours" and t in tools]
    rows = []
    for name, label in (("ours", "the benchmark's own files (every task, masks)"),
                        (coco_peers.BOXES_ONLY, "files holding what the COCO export holds")):
        if name not in tools:
            continue
        mine = tools[name]["same_work_cpu"]
        hot = tools.get("hotcoco", {}).get("total_cpu")
        rows.append(Figure(
            "coco", f"COCO-style AP, load + pooled + per-category, CPU: ours on {label}",
            "<= hotcoco", f"{mine:.3f} s",
            ", ".join(f"{t} {tools[t]['total_cpu']:.3f} s (ours/{t} "
                      f"{_ratio(mine, tools[t]['total_cpu'])})" for t in peers),
            None if hot is None else mine <= hot))
    ours = tools["ours"]
    rows.append(Figure("coco", "  ours, of it: load / pooled / per-category (CPU)", "",
                       f"{ours['load_cpu']:.3f} / {ours['pooled_cpu']:.3f} / "
                       f"{ours['per_category_cpu']:.3f} s",
                       ", ".join(f"{t} {tools[t]['load_cpu']:.3f} / {tools[t]['pooled_cpu']:.3f}"
                                 f" / {tools[t]['per_category_cpu']:.3f} s" for t in peers)))
    worst = max(m["max_diff"] for m in tools.values())
    rows.append(Figure("coco", f"  every number equal to {got['reference']}'s (pooled AP "
                               f"{got['pooled_ap']:.6f}, mAP {got['map']:.6f}, "
                               f"{got['num_categories']} categories)", "to 1e-12",
                       f"largest difference {worst:.1e}", "",
                       all(m["equal"] for m in tools.values()) and worst <= 1e-12))
    return rows


def import_figures(repeats: int) -> list[Figure]:
    """Fresh processes, this tree: the analysis commands' start against the floor and hotcoco."""
    from benchmarks import import_times

    times = import_times.measure(ROOT, repeats)
    floor, peer = times["python -c pass"], times.get("import hotcoco (peer)")
    rows = []
    for label in ("analysis --help", "leaderboard --help", "import ovearth_core.analysis.ap"):
        heavy = import_times.loaded(ROOT, import_times.COMMANDS[label])
        # The --help of both commands must load nothing heavy (the item); the AP
        # module needs numpy, as hotcoco does: reported beside hotcoco, no yes/no target.
        target = "loads nothing heavy" if "help" in label else "numpy only (as hotcoco)"
        met = not heavy if "help" in label else heavy == "numpy"
        ratios = f"{_ratio(times[label], floor)} python -c pass"
        if peer is not None:
            ratios += f", {_ratio(times[label], peer)} import hotcoco ({peer:.3f} s)"
        rows.append(Figure("imports", f"{label} (loads: {heavy or 'nothing heavy'})", target,
                           f"{times[label]:.3f} s", ratios, met))
    return rows


def leaderboard_figures(data: Path, n: int) -> list[Figure]:
    """The whole leaderboard (evaluations and ``--subsets 20``), all modalities, against
    ``n`` sequential in-process evaluations; cold and warm, in process and as the command."""
    from benchmarks import leaderboard

    f = leaderboard.figures(data, n, subsets=20, modalities="segmentation,bbox,oriented_bbox")
    seq, seq_cpu = f["sequential_s"], f["sequential_cpu_s"]
    rows = [Figure("leaderboard", f"{n} sequential in-process evaluations (baseline)", "",
                   f"{seq:.2f} s (CPU {seq_cpu:.2f} s)", "1.00x")]
    for key, label, target in (
            ("cold_fork", "cold, forked workers (as the CLI)", 0.6),
            ("cold_forkserver", "cold, forkserver workers (as the app)", 0.6),
            ("warm", "warm: every result from the cache", 0.1),
            ("command_cold", "the command, cold (new process)", 0.6),
            ("command_warm", "the command, warm (new process)", 0.1)):
        if f"{key}_s" not in f:
            continue
        # A forkserver's workers are its children, not this process's: no CPU figure.
        cpu = None if key == "cold_forkserver" else f.get(f"{key}_cpu_s")
        ratios = f"{_ratio(f[key + '_s'], seq)} sequential (wall)"
        if cpu is not None:
            ratios += f", {_ratio(cpu, seq_cpu)} (CPU)"
        rows.append(Figure("leaderboard", f"leaderboard --subsets 20, all modalities, {label}",
                           f"<= {target:.2f}x", f"{f[key + '_s']:.2f} s", ratios,
                           f[key + "_s"] / seq <= target))
    rows.append(Figure("leaderboard", "  cold, CPU critical path (caller + workers / "
                       f"{f['workers']}: the ratio on dedicated cores)", "<= 0.60x",
                       f"{f['cold_fork_critical_path_s']:.2f} s",
                       f"{f['cold_fork_critical_path_ratio']:.3f}x sequential CPU",
                       f["cold_fork_critical_path_ratio"] <= 0.6))
    rows.append(Figure("leaderboard", "  parallel headroom of the machine in this run", "",
                       f"{f['headroom_before']:.2f} / {f['headroom_after']:.2f} of "
                       f"{f['workers']}", ""))
    return rows


def next_figures(repeats: int) -> list[Figure]:
    """Headless Chromium, the demo: Next in the explorer and a trivial Streamlit app's rerun
    clicked in turn (medians), with the page's main-thread time per click."""
    from benchmarks import browser_timing

    got = browser_timing.next_figures(repeats=repeats)
    rerun, nxt, shown = got["trivial rerun"], got["Next ▶"], got["Next ▶ shown"]
    rerun_in, shown_in = got["trivial rerun in the page"], got["Next ▶ shown in the page"]
    main_r, main_n = got["main thread trivial"], got["main thread Next"]
    return [Figure("next", "explorer Next ▶ in Chromium until the next query's card is "
                           f"shown (demo, median of {repeats})", "<= 1.50x", f"{shown:.3f} s",
                   f"{_ratio(shown, rerun)} trivial rerun ({rerun:.3f} s)",
                   shown / rerun <= 1.5),
            Figure("next", "  the same in the page (click event to the frame showing it)",
                   "<= 1.50x", f"{shown_in:.3f} s",
                   f"{_ratio(shown_in, rerun_in)} trivial rerun ({rerun_in:.3f} s)",
                   shown_in / rerun_in <= 1.5),
            Figure("next", "  until the rerun it starts ends (every panel of the query)",
                   "<= 1.50x", f"{nxt:.3f} s", f"{_ratio(nxt, rerun)} trivial rerun",
                   nxt / rerun <= 1.5),
            Figure("next", "  the page's main thread per click (CDP TaskDuration)", "",
                   f"{main_n * 1000:.0f} ms", f"{_ratio(main_n, main_r)} trivial rerun's "
                   f"({main_r * 1000:.0f} ms); {got['KiB per Next']:.0f} KiB received")]


def spec_figures(data: Path, repeats: int) -> list[Figure]:
    """The spec's command, one process per task, all modalities, the bytecode compiled."""
    from benchmarks import cli_start

    gt, pred = data / "ground_truth.json", _prediction_file(data)
    cli_start.compile_tree(ROOT)
    with tempfile.TemporaryDirectory(prefix="ovearth_round3_") as tmp:
        got = cli_start.measure({"now": ROOT}, gt, pred, repeats, Path(tmp))["now"]
    rows = [Figure("spec", "spec command, three tasks (three processes, all modalities)",
                   "<= 3 s", f"{got['three']:.2f} s (CPU {got['three_cpu']:.2f} s)",
                   f"{_ratio(got['three'], 3 * got['bare'])} three bare interpreters "
                   f"({3 * got['bare']:.2f} s)", got["three"] <= 3.0)]
    if "suite" in got:
        rows.append(Figure("spec", "  the same in one process (python -m ovearth_core.suite)",
                           "", f"{got['suite']:.2f} s", _ratio(got["suite"], got["three"])
                           + " the three processes"))
    return rows


def _prediction_file(data: Path) -> Path:
    from benchmarks.common import prediction_file

    return prediction_file(data)


def collect(data: Path, sections: tuple[str, ...], quick: bool) -> list[Figure]:
    """Every section's figures; a section that fails is one 'not measured' row."""
    repeats = 3 if quick else 7
    runs: dict[str, Callable[[], list[Figure]]] = {
        "coco": lambda: coco_figures(data, 1 if quick else 5),
        "imports": lambda: import_figures(5 if quick else 9),
        "leaderboard": lambda: leaderboard_figures(data, 12 if quick else 49),
        "next": lambda: next_figures(8 if quick else 20),
        "spec": lambda: spec_figures(data, repeats),
    }
    rows: list[Figure] = []
    for name in sections:
        print(f"\n## issue 28: {name} (load average {os.getloadavg()[0]:.1f})", flush=True)
        try:
            rows.extend(runs[name]())
        except Exception as err:  # noqa: BLE001 - reported as a row, the others still run
            traceback.print_exc()
            rows.append(Figure(name, f"{name}: not measured", "", f"{type(err).__name__}: "
                               f"{err}".splitlines()[0][:90], "", False))
    return rows


def print_table(rows: list[Figure]) -> None:
    load = os.getloadavg()
    print(f"\n# Issue 28: every figure, its target and its ratio to the peers (this run; "
          f"{os.cpu_count()} cores, load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f})")
    print("| figure | target | measured | ratio to the peers | met |\n| --- | --- | --- | "
          "--- | --- |")
    for r in rows:
        met = {True: "yes", False: "**no**", None: ""}[r.met]
        print(f"| {r.figure} | {r.target} | {r.measured} | {r.ratios} | {met} |")
    scored = [r.met for r in rows if r.met is not None]
    print(f"\n{sum(scored)} of {len(scored)} targets met in this run.")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT / "benchmarks" / "data" / "full")
    parser.add_argument("--quick", action="store_true", help="fewer repeats and submissions")
    parser.add_argument("--only", nargs="+", choices=SECTIONS, default=list(SECTIONS))
    args = parser.parse_args(argv)
    if not (args.data / "ground_truth.json").exists():
        from benchmarks.common import ensure_data

        ensure_data(args.data, images=False)
    rows = collect(args.data, tuple(args.only), args.quick)
    print_table(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
