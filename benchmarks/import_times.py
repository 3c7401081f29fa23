"""Import cost of the analysis commands (issue 28): fresh processes, this tree against a git
revision in the same run (alternating), with hotcoco's import as the peer's figure.

Usage (from the repository root):

    .venv/bin/python -m benchmarks.import_times [--repeats 9] [--before REV]

Figures (medians of ``--repeats`` new processes; bytecode compiled first, as in
``benchmarks.cli_start``): ``python -m ovearth_core.analysis --help``, ``python -m
ovearth_core.leaderboard --help``, ``python -c "import ovearth_core.analysis.ap"``, ``python
-m ovearth_core --help``, ``python -c "import hotcoco"`` and ``python -c pass`` (the floor);
then which of scipy, pycocotools, shapely, plotly and numpy each one loads.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.cli_start import _CPU, _env, _git_tree, _wall, compile_tree

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("scipy", "pycocotools", "shapely", "plotly", "numpy")
COMMANDS = {
    "python -c pass": ["-c", "pass"],
    "analysis --help": ["-m", "ovearth_core.analysis", "--help"],
    "leaderboard --help": ["-m", "ovearth_core.leaderboard", "--help"],
    "import ovearth_core.analysis.ap": ["-c", "import ovearth_core.analysis.ap"],
    "ovearth_core --help": ["-m", "ovearth_core", "--help"],
    "import hotcoco (peer)": ["-c", "import hotcoco"],
}
_LOADED = ("import runpy, sys\n{call}\n"
           "print('LOADED=' + ','.join(sorted({{m.split('.')[0] for m in sys.modules}}\n"
           "                                 & set({heavy!r}))))")


def loaded(tree: Path, args: list[str]) -> str:
    """The heavy libraries the command has imported when it ends."""
    if args[0] == "-c":
        call = args[1]
    else:
        call = (f"sys.argv = [{args[1]!r}, *{args[2:]!r}]\n"
                f"try:\n    runpy.run_module({args[1]!r}, run_name='__main__', alter_sys=True)\n"
                "except SystemExit:\n    pass")
    proc = subprocess.run([sys.executable, "-c", _LOADED.format(call=call, heavy=HEAVY)],
                          cwd=tree, env=_env(tree), capture_output=True, text=True, check=True)
    return [x for x in proc.stdout.splitlines() if x.startswith("LOADED=")][0][7:]


def measure(tree: Path, repeats: int) -> dict[str, float]:
    """Median wall time of each of :data:`COMMANDS` in ``tree``, new processes, the bytecode
    compiled (``import hotcoco`` left out when hotcoco is not installed)."""
    compile_tree(tree)
    commands = {k: v for k, v in COMMANDS.items()
                if "hotcoco" not in k or importlib.util.find_spec("hotcoco") is not None}
    times: dict[str, list[float]] = {c: [] for c in commands}
    for _ in range(repeats):
        for label, cmd in commands.items():
            times[label].append(_wall([sys.executable, *cmd], tree, _env(tree)))
    return {label: statistics.median(v) for label, v in times.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--before", default=None, help="git revision to measure as well")
    args = parser.parse_args(argv)
    load = os.getloadavg()
    print(f"\n== Imports (medians of {args.repeats}; load average {load[0]:.1f}) ==")
    with tempfile.TemporaryDirectory(prefix="ovearth_import_bench_") as tmp:
        trees = {"now": ROOT}
        if args.before:
            trees[args.before] = _git_tree(args.before, Path(tmp))
        for tree in trees.values():
            compile_tree(tree)
        times: dict[str, dict[str, list[float]]] = {n: {c: [] for c in COMMANDS} for n in trees}
        cpu: dict[str, dict[str, list[float]]] = {n: {c: [] for c in COMMANDS} for n in trees}
        for _ in range(args.repeats):
            for name, tree in trees.items():
                for label, cmd in COMMANDS.items():
                    times[name][label].append(_wall([sys.executable, *cmd], tree, _env(tree)))
                    cpu[name][label].append(_CPU[0])
        print(f"  {'command (wall, CPU)':<34}" + "".join(f"{n:>22}" for n in trees)
              + ("   now / before (CPU)" if args.before else ""))
        for label in COMMANDS:
            med = {n: statistics.median(times[n][label]) for n in trees}
            cmed = {n: statistics.median(cpu[n][label]) for n in trees}
            row = f"  {label:<34}" + "".join(f"{med[n]:>12.3f} s {cmed[n]:.3f} s"
                                             for n in trees)
            if args.before:
                row += (f"   {med['now'] / med[args.before]:.2f}x"
                        f" ({cmed['now'] / cmed[args.before]:.2f}x)")
            print(row)
        for name, tree in trees.items():
            print(f"  [{name}] heavy libraries loaded:")
            for label, cmd in COMMANDS.items():
                if "hotcoco" not in label and "pass" not in label:
                    print(f"    {label:<34} {loaded(tree, cmd) or '-'}")
    print(f"  load average after {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
