"""Every documented command writes what it wrote before the package was split into layers.

Issue 12 ("behaviour and every output byte stay the same"): the expected files in
tests/golden/layout were produced by tests/golden/make_layout_golden.sh run on commit aa1d4d2,
the last commit of the flat layout, not by the code under test. The same script runs here
against the current code.
"""

from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path

import pytest

from tests.golden.normalise import normalise

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden" / "layout"


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("layout")
    subprocess.run(
        ["bash", str(ROOT / "tests" / "golden" / "make_layout_golden.sh"), str(out)],
        cwd=ROOT, env={"PY": sys.executable, "PATH": "/usr/bin:/bin"}, check=True,
        capture_output=True,
    )
    return out


def test_every_expected_file_is_written(outputs: Path) -> None:
    expected = {p.name.removesuffix(".gz") for p in GOLDEN.glob("*.gz")}
    assert len(expected) == 20
    assert {p.name for p in outputs.iterdir()} == expected


@pytest.mark.parametrize("name", sorted(p.name.removesuffix(".gz") for p in GOLDEN.glob("*.gz")))
def test_output_equals_the_flat_layout(outputs: Path, name: str) -> None:
    want = gzip.decompress((GOLDEN / f"{name}.gz").read_bytes())
    got = normalise((outputs / name).read_bytes())
    assert got == want, f"{name} differs from the output of the flat layout (commit aa1d4d2)"
