"""CLI start benchmark (issue 17): ``python -m ovearth_core --help`` and the three tasks on
the full data, interpreter start included, against ``python -c pass`` measured in the same
run; then the import profile (``-X importtime``) of both.

Usage (from the repository root):

    .venv/bin/python -m benchmarks.cli_start [--data DIR] [--repeats 7] [--before REV]

Figures (medians of ``--repeats`` runs, each a new process):

- ``--help``: target <= 0.35 s;
- three tasks (vocabulary, referring, reasoning; one process each, all modalities, output
  to a file; the persona of ``benchmarks/run.py``): target <= 3 s for the sum;
- the same three tasks in one process (``python -m ovearth_core.suite``: the files read
  and validated once, the same three output files): target <= 3 s;
- the bare interpreter (``python -c pass``): the floor, printed as the baseline of the ratios.

``--before REV`` also measures a git revision (``git archive`` into a temporary folder, run
with it first on ``sys.path``) in the same run, alternating with this tree, for before/after
figures. Both trees' ``ovearth_core`` bytecode is compiled first (``compileall``; an
installed copy has it, and Python writes it on first import unless
``PYTHONDONTWRITEBYTECODE`` is set, as on the development machine); ``--no-bytecode``
skips that.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TASKS = ("vocabulary", "referring", "reasoning")
ALL = "segmentation,bbox,oriented_bbox"
PERSONA = "strong_localiser"


_CPU: list[float] = []  # CPU seconds (user + system) of the last command run by _wall


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _wall(cmd: list[str], cwd: Path, env: dict[str, str]) -> float:
    cpu = _children_cpu()
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, check=False)
    took = time.perf_counter() - start
    _CPU[:] = [_children_cpu() - cpu]
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stderr.decode()}")
    return took


def _env(tree: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(tree) + (os.pathsep + env["PYTHONPATH"]
                                     if env.get("PYTHONPATH") else "")
    return env


def measure(trees: dict[str, Path], gt: Path, pred: Path, repeats: int, out: Path
            ) -> dict[str, dict[str, float]]:
    """Median wall times of the bare interpreter, ``--help`` and the three tasks, per tree;
    the trees alternate within each repeat (a change of load hits them alike)."""
    py = sys.executable
    runs: dict[str, dict[str, list[float]]] = {
        name: {k: [] for k in ("bare", "help", "three", "three_cpu", "suite", "suite_cpu",
                               *TASKS)}
        for name in trees}
    # A tree from before the suite command (--before) has no main() in ovearth_core/suite.py.
    has_suite = {name: "def main(" in (tree / "ovearth_core" / "suite.py").read_text()
                 for name, tree in trees.items()}
    for _ in range(repeats):
        for name, tree in trees.items():
            env, got = _env(tree), runs[name]
            got["bare"].append(_wall([py, "-c", "pass"], tree, env))
            got["help"].append(_wall([py, "-m", "ovearth_core", "--help"], tree, env))
            total = cpu = 0.0
            for task in TASKS:
                t = _wall([py, "-m", "ovearth_core", "--gt", str(gt), "--predictions",
                           str(pred), "--task", task, "--modalities", ALL, "--output",
                           str(out / f"{task}.json")], tree, env)
                got[task].append(t)
                total += t
                cpu += _CPU[0]
            got["three"].append(total)
            got["three_cpu"].append(cpu)
            if has_suite[name]:
                got["suite"].append(_wall(
                    [py, "-m", "ovearth_core.suite", "--gt", str(gt), "--predictions",
                     str(pred), "--modalities", ALL, "--output-dir", str(out / "suite")],
                    tree, env))
                got["suite_cpu"].append(_CPU[0])
    return {name: {k: statistics.median(v) for k, v in got.items() if v}
            for name, got in runs.items()}


def compile_tree(tree: Path) -> None:
    """Write the bytecode of ``tree/ovearth_core`` (``__pycache__``), as any installed copy
    has it (pip compiles at install; Python writes it on first import by default). Without
    it, under ``PYTHONDONTWRITEBYTECODE=1`` (set on the development machine), every process
    compiles the evaluator's modules again: about 85 ms a process."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "ovearth_core")],
                   check=True, capture_output=True)


def import_profile(tree: Path, args: list[str], top: int = 12) -> list[tuple[float, str]]:
    """The ``top`` modules by cumulative import time (seconds), from ``-X importtime``."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "ovearth_core", *args],
                          cwd=tree, env=_env(tree), capture_output=True, text=True,
                          check=False)
    rows = []
    for line in proc.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)", line)
        if m and len(m.group(3)) <= 3:  # top-level imports and their first level
            rows.append((int(m.group(2)) / 1e6, m.group(3)[1:] + m.group(4)))
    rows.sort(reverse=True)
    return rows[:top]


def _git_tree(rev: str, into: Path) -> Path:
    archive = subprocess.run(["git", "archive", rev], cwd=ROOT, capture_output=True,
                             check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def _line(figure: str, target: str, measured: str, ratio: str) -> None:
    print(f"  {figure:<40} {target:>9} {measured:>10} {ratio:>16}")


def report(name: str, m: dict[str, float]) -> None:
    _line(f"[{name}] figure", "target", "measured", "ratio")
    _line("python -c pass (the floor)", "—", f"{m['bare']:.3f} s", "1.00x floor")
    _line("python -m ovearth_core --help", "<= 0.35 s", f"{m['help']:.3f} s",
          f"{m['help'] / 0.35:.2f}x target")
    _line("three tasks, one process each", "<= 3 s", f"{m['three']:.3f} s",
          f"{m['three'] / 3:.2f}x target")
    _line("  the same, CPU (user + system)", "—", f"{m['three_cpu']:.3f} s",
          "(less shared)")
    print("    per task: " + ", ".join(f"{t} {m[t]:.3f} s" for t in TASKS)
          + f"; --help = {m['help'] / m['bare']:.2f}x the bare interpreter")
    if "suite" in m:
        _line("three tasks, one process (.suite)", "<= 3 s", f"{m['suite']:.3f} s",
              f"{m['suite'] / 3:.2f}x target")
        _line("  the same, CPU (user + system)", "—", f"{m['suite_cpu']:.3f} s",
              f"{m['suite_cpu'] / m['three_cpu']:.2f}x 3 runs")
        print(f"    wall: {m['suite'] / m['three']:.2f}x the three separate runs")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT / "benchmarks" / "data" / "full")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--before", default=None, help="git revision to measure as well")
    parser.add_argument("--quick", action="store_true", help="3 repeats")
    parser.add_argument("--no-bytecode", action="store_true",
                        help="do not compile ovearth_core's bytecode first (measure what "
                             "PYTHONDONTWRITEBYTECODE=1 costs)")
    args = parser.parse_args(argv)
    if not (args.data / "ground_truth.json").exists():
        from benchmarks.common import ensure_data

        ensure_data(args.data, images=False)
    repeats = 3 if args.quick else args.repeats
    gt = args.data / "ground_truth.json"
    pred = args.data / "predictions" / f"{PERSONA}.json"
    load = os.getloadavg()
    print(f"\n== CLI start (medians of {repeats}; load average {load[0]:.1f} {load[1]:.1f} "
          f"{load[2]:.1f}) ==")
    with tempfile.TemporaryDirectory(prefix="ovearth_cli_bench_") as tmp:
        out = Path(tmp) / "out"
        out.mkdir()
        trees = {"this tree": ROOT}
        if args.before:
            trees[f"before {args.before}"] = _git_tree(args.before, Path(tmp))
        if args.no_bytecode:
            print("  without bytecode caches of ovearth_core (--no-bytecode)")
        else:
            for tree in trees.values():
                compile_tree(tree)
            print("  bytecode of ovearth_core compiled first (python -m compileall), as an "
                  "installed copy has it")
        results = measure(trees, gt, pred, repeats, out)
        for name, m in results.items():
            report(name, m)
        if args.before:
            now, then = results["this tree"], results[f"before {args.before}"]
            print(f"  after / before: --help {now['help'] / then['help']:.2f}x, three tasks "
                  f"{now['three'] / then['three']:.2f}x (CPU "
                  f"{now['three_cpu'] / then['three_cpu']:.2f}x)")
        for label, cli_args in (("--help", ["--help"]),
                                ("vocabulary, all modalities",
                                 ["--gt", str(gt), "--predictions", str(pred), "--modalities",
                                  ALL, "--output", str(out / "p.json")])):
            print(f"  import profile, {label} (cumulative, top entries):")
            for seconds, module in import_profile(ROOT, cli_args):
                print(f"    {seconds * 1000:7.1f} ms  {module}")
    print(f"  load average after {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
