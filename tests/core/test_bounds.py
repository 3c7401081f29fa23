"""One parser for numbers from users and the environment (issue 35 item 12)."""

from __future__ import annotations

import argparse
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ovearth_core.bounds import MAX_CHARS, float_arg, int_arg, parse_float, parse_int


@pytest.mark.parametrize(("text", "value"), [("0", 0), (" 12 ", 12), ("1_000", 1000),
                                             (7, 7)])
def test_whole_numbers(text: str | int, value: int) -> None:
    assert parse_int(text, name="n", low=0, high=10_000) == value


@pytest.mark.parametrize("text", ["-1", "10001", "1e3", "2.0", "ten", "", "inf", True,
                                  "9" * 401, "9" * 5000])
def test_whole_numbers_out_of_range_or_not_whole(text: object) -> None:
    with pytest.raises(ValueError, match=r"^n: expected a whole number from 0 to 10,000, "):
        parse_int(text, name="n", low=0, high=10_000)


def test_a_long_number_is_refused_by_its_length_not_converted() -> None:
    with pytest.raises(ValueError, match="found a number of 5,000 characters"):
        parse_int("9" * 5000, name="offset", low=0)


@pytest.mark.parametrize("text", ["inf", "-inf", "nan", "1e400", "Infinity", float("inf"),
                                  float("nan"), "0", "-0.5", "11"])
def test_numbers_must_be_finite_and_within(text: object) -> None:
    with pytest.raises(ValueError, match=r"^x: expected a number above 0 and at most 10, "):
        parse_float(text, name="x", low=0, high=10, low_open=True)


def test_closed_lower_bound() -> None:
    assert parse_float("0", name="x", low=0) == 0.0
    assert parse_float(" 2.5e0 ", name="x", low=0, high=10) == 2.5


@given(st.integers(min_value=-10**6, max_value=10**6))
def test_any_integer_text_round_trips_within_bounds(n: int) -> None:
    inside = -1000 <= n <= 1000
    try:
        assert parse_int(str(n), name="n", low=-1000, high=1000) == n
        assert inside
    except ValueError as err:
        assert not inside and str(n) in str(err)


@given(st.text(max_size=60))
def test_any_text_is_a_number_or_a_value_error(text: str) -> None:
    for parse in (parse_int, parse_float):
        try:
            value = parse(text, name="n", low=0, high=100)
        except ValueError as err:
            assert str(err).startswith("n: expected ")
        else:
            assert 0 <= value <= 100 and math.isfinite(value) and len(text.strip()) <= MAX_CHARS


def test_argparse_types_report_the_range() -> None:
    parser = argparse.ArgumentParser(prog="p", exit_on_error=False)
    parser.add_argument("--n", type=int_arg(1, 5))
    parser.add_argument("--x", type=float_arg(0, 1))
    assert parser.parse_args(["--n", "3", "--x", "0.5"]) == argparse.Namespace(n=3, x=0.5)
    with pytest.raises(argparse.ArgumentError, match="expected a whole number from 1 to 5, "
                                                     "found '10'"):
        parser.parse_args(["--n", "10"])
    with pytest.raises(argparse.ArgumentError, match="found 'nan'"):
        parser.parse_args(["--x", "nan"])


@pytest.mark.parametrize(("module", "args", "message"), [
    ("ovearth_core.leaderboard", ["assets/demo", "--subsets", "1e3"],
     "--subsets: expected a whole number from 1 to 100,000, found '1e3'"),
    ("ovearth_core.leaderboard", ["assets/demo", "--workers", "0"],
     "--workers: expected a whole number from 1 to 256, found '0'"),
    ("ovearth_core.leaderboard", ["assets/demo", "--seed", "-1"],
     "--seed: expected a whole number from 0 to 4,294,967,295, found '-1'"),
    ("ovearth_core.analysis", ["--gt", "g.json", "--predictions", "p.json", "--modalities",
                               "bbox", "--slice-resamples", "10**12"],
     "--slice-resamples: expected a whole number from 1 to 100,000, found '10**12'"),
    ("ovearth_core.synth", ["--scale", "tiny", "--out", "x", "--workers", "100000"],
     "--workers: expected a whole number from 1 to 256, found '100000'"),
])
def test_every_command_reads_its_numbers_with_bounds(module: str, args: list[str],
                                                     message: str) -> None:
    # Issue 35 item 12 (the class): a count from the command line is one parser's job.
    import subprocess
    import sys
    from pathlib import Path

    proc = subprocess.run([sys.executable, "-m", module, *args], capture_output=True,
                          text=True, cwd=Path(__file__).parents[2], timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr and "Traceback" not in proc.stderr
