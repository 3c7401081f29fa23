"""Small files that decode huge (issue 35, item 5): the memory a display read takes, under
address-space limits.

Usage (from the repository root):

    .venv/bin/python -m benchmarks.read_budget [--code DIR]

Writes (into a temporary folder) four files of at most 1.1 MB, each a legal TIFF:

- ``row.tif``: 10^8 x 1 pixels, 8-bit, deflate, one strip (the whole row);
- ``tile.tif``: 80 x 64 stored as one 32,768 x 32,768 tile (GDAL's sparse tile: 158 bytes);
- ``bands.tif``: 80 x 64 with 65,535 pixel-interleaved 8-bit bands in one deflated strip
  (335 MB decoded), written by hand (GDAL takes minutes to write 65,535 bands);
- ``scene.tif``: an ordinary 3,000 x 2,000 RGB scene in 512 x 512 tiles (the control).

Then, each in its own child process, ``ovearth_core.viz.images.read_rgb8`` (what every page
and the report call to display an image) under ``RLIMIT_AS`` of 512 MiB, 1 GiB, 2 GiB and
4 GiB: the outcome (displayed, refused by the read budget, or the error) and the peak RSS
(``VmHWM``) the read added. ``--code DIR`` imports ``ovearth_core`` from another checkout
(e.g. the commit before the budget) for the before figures. Nothing here asserts.
"""

from __future__ import annotations

import argparse
import json
import struct
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIMITS_MIB = (512, 1024, 2048, 4096)

CHILD = '''
import json, resource, sys, time
sys.path.insert(0, {code!r})
import warnings
warnings.simplefilter("ignore")
from ovearth_core.viz import images
def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1]) / 1024
if {limit}:
    resource.setrlimit(resource.RLIMIT_AS, ({limit} << 20, {limit} << 20))
before = status("VmRSS")
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")
start = time.perf_counter()
try:
    rgb, _ = images.read_rgb8({path!r})
    outcome = f"displayed {{rgb.shape[1]}} x {{rgb.shape[0]}}"
except Exception as err:
    outcome = f"{{type(err).__name__}}: {{str(err)[:90]}}"
print(json.dumps({{"outcome": outcome, "added_mb": status("VmHWM") - before,
                  "seconds": time.perf_counter() - start}}))
'''


def _row(path: Path) -> None:
    import numpy as np
    import rasterio

    with rasterio.open(path, "w", driver="GTiff", width=100_000_000, height=1, count=1,
                       dtype="uint8", compress="deflate") as dst:
        dst.write(np.zeros((1, 1, 100_000_000), np.uint8))


def _tile(path: Path) -> None:
    import rasterio

    with rasterio.open(path, "w", driver="GTiff", width=80, height=64, count=1, dtype="uint8",
                       tiled=True, blockxsize=32768, blockysize=32768, sparse_ok=True):
        pass


def _bands(path: Path, width: int = 80, height: int = 64, bands: int = 65535) -> None:
    """A classic little-endian TIFF: one deflated, pixel-interleaved strip of zeros."""
    deflate = zlib.compressobj(6)
    row = bytes(width * bands)
    strip = b"".join(deflate.compress(row) for _ in range(height)) + deflate.flush()
    bits = struct.pack(f"<{bands}H", *([8] * bands))
    extra = struct.pack(f"<{bands - 1}H", *([0] * (bands - 1)))
    entries = 11
    ifd = 8
    data = ifd + 2 + 12 * entries + 4
    bits_at, extra_at = data, data + len(bits)
    strip_at = extra_at + len(extra)
    short, long_ = 3, 4
    tags = [(256, long_, 1, width), (257, long_, 1, height), (258, short, bands, bits_at),
            (259, short, 1, 8), (262, short, 1, 1), (273, long_, 1, strip_at),
            (277, short, 1, bands), (278, long_, 1, height), (279, long_, 1, len(strip)),
            (284, short, 1, 1), (338, short, bands - 1, extra_at)]
    out = bytearray(b"II" + struct.pack("<HL", 42, ifd) + struct.pack("<H", entries))
    for tag, kind, count, value in tags:
        out += struct.pack("<HHLL", tag, kind, count, value)
    out += struct.pack("<L", 0) + bits + extra + strip
    path.write_bytes(bytes(out))


def _scene(path: Path) -> None:
    import numpy as np
    import rasterio

    data = (np.arange(3 * 2000 * 3000) % 251).astype(np.uint8).reshape(3, 2000, 3000)
    with rasterio.open(path, "w", driver="GTiff", width=3000, height=2000, count=3,
                       dtype="uint8", compress="deflate", tiled=True, blockxsize=512,
                       blockysize=512) as dst:
        dst.write(data)


FILES = {"row.tif": _row, "tile.tif": _tile, "bands.tif": _bands, "scene.tif": _scene}


def measure(code: Path, path: Path, limit_mib: int) -> dict[str, object]:
    child = CHILD.format(code=str(code), limit=limit_mib, path=str(path))
    run = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True,
                         timeout=600, check=False)
    lines = [ln for ln in run.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        tail = (run.stderr.strip().splitlines() or ["(no output)"])[-1]
        return {"outcome": f"child died (status {run.returncode}): {tail[:90]}",
                "added_mb": None, "seconds": None}
    return json.loads(lines[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--code", type=Path, default=ROOT,
                        help="checkout whose ovearth_core is measured (default: this one)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ovearth_budget_") as tmp:
        print(f"code: {args.code}")
        print("| file | size | RLIMIT_AS | outcome | peak RSS added |")
        print("| --- | ---: | ---: | --- | ---: |")
        for name, make in FILES.items():
            path = Path(tmp) / name
            make(path)
            for limit in LIMITS_MIB:
                got = measure(args.code, path, limit)
                added = "—" if got["added_mb"] is None else f"{got['added_mb']:.0f} MB"
                print(f"| {name} | {path.stat().st_size / 1e6:.2f} MB | {limit} MiB | "
                      f"{str(got['outcome']).replace('|', '/')} | {added} |", flush=True)


if __name__ == "__main__":
    main()
