"""Time and peak memory of the VOC and DIOR-RSVG XML readers on one large file (issue 48).

Usage (from the repository root, after the README's setup):

    .venv/bin/python -m benchmarks.xml_reader [--mb 50] [--reader voc,rsvg] [--data DIR]

Writes (once, into ``benchmarks/data/xml_reader``, git-ignored) a VOC ``<annotation>`` of
about ``--mb`` megabytes: a ``<size>`` and ``<object>`` after ``<object>`` (a name, a
difficult flag, a ``<bndbox>`` and a ``<description>``, so both readers accept it), then reads
it in a fresh child process with ``ovearth_core.convert.voc.read_voc`` or
``ovearth_core.convert.rsvg.read_annotation`` and prints the reader's wall and CPU time, the child's
peak resident set (``ru_maxrss``) and the objects read. ``PYTHONPATH`` chooses the code
measured (an export of another commit, to compare: the child runs outside the checkout).
Nothing here asserts time.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_CHILD = """
import json, resource, sys, time
from pathlib import Path
from ovearth_core.convert.common import Problems
reader, path = sys.argv[1], Path(sys.argv[2])
bad = Problems()
start, cpu = time.perf_counter(), time.process_time()
if reader == "voc":
    from ovearth_core.convert.voc import read_voc
    entry = read_voc(path, {}, None, {}, bad)
else:
    from ovearth_core.convert.rsvg import read_annotation
    entry = read_annotation(path, {}, None, bad)
seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
print(json.dumps({"seconds": round(seconds, 2), "cpu": round(cpu, 2),
                  "objects": len(entry.objects) if entry else None,
                  "problems": len(bad.items),
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}))
"""


def make_xml(path: Path, megabytes: float) -> int:
    """A VOC annotation of about ``megabytes`` MB; the number of objects written."""
    head = ("<annotation>\n  <filename>big.jpg</filename>\n  <size><width>100000</width>"
            "<height>100000</height><depth>3</depth></size>\n")
    target = int(megabytes * 1_000_000)
    n = 0
    size = len(head)
    with path.open("w", encoding="utf-8") as out:
        out.write(head)
        while size < target:
            x, y = (n * 37) % 99_000, (n * 101) % 99_000
            obj = (f"  <object>\n    <name>{('vehicle', 'ship', 'airplane')[n % 3]}</name>\n"
                   f"    <difficult>{int(n % 20 == 0)}</difficult>\n    <bndbox><xmin>{x}</xmin>"
                   f"<ymin>{y}</ymin><xmax>{x + 40}</xmax><ymax>{y + 25}</ymax></bndbox>\n"
                   f"    <description>the object number {n} near the grey roof</description>\n"
                   "  </object>\n")
            out.write(obj)
            size += len(obj)
            n += 1
        out.write("</annotation>\n")
    return n


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=50.0, help="size of the XML file (MB)")
    parser.add_argument("--reader", default="voc,rsvg", help="voc, rsvg or both")
    parser.add_argument("--data", type=Path, default=ROOT / "benchmarks" / "data" / "xml_reader")
    args = parser.parse_args(argv)
    args.data.mkdir(parents=True, exist_ok=True)
    path = args.data / f"big_{args.mb:g}mb.xml"
    if not path.exists():
        n = make_xml(path, args.mb)
        print(f"wrote {path}: {path.stat().st_size / 1e6:.1f} MB, {n:,} objects")
    for reader in args.reader.split(","):
        proc = subprocess.run([sys.executable, "-c", _CHILD, reader, str(path)],
                              capture_output=True, text=True, cwd=args.data)
        if proc.returncode:
            print(f"{reader}: failed ({proc.returncode}): {proc.stderr.strip()[-300:]}")
            continue
        result = json.loads(proc.stdout.strip().splitlines()[-1])
        print(f"{reader}: {path.stat().st_size / 1e6:.1f} MB read in {result['seconds']} s "
              f"({result['cpu']} s CPU), "
              f"peak RSS {result['peak_rss_mb']:,} MB, {result['objects']} objects, "
              f"{result['problems']} problems")
    return 0


if __name__ == "__main__":
    sys.exit(main())
