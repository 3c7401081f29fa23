"""``ovearth_core.forked``: a job run in a forked child gives the value the caller would have
computed, and whenever the child cannot deliver, the caller computes it itself (so errors
are raised here, as in sequential code). Forking needs a process without other threads:
each case runs in a fresh interpreter, as the command line does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]


def _run(body: str, **env: str) -> dict[str, Any]:
    code = "import json, os, sys, threading, time, warnings\n" \
           "from ovearth_core import forked\n" + textwrap.dedent(body)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=REPO, env={**os.environ, "OVEARTH_FORK": "1", **env},
                          timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_the_child_computes_the_value() -> None:
    got = _run("""
        with forked.enabled(), forked.alongside(lambda: (os.getpid(), [1.5, "x"])) as p:
            pid, value = p.result()
        print(json.dumps({"forked": p.forked, "elsewhere": pid != os.getpid(), "value": value}))
    """)
    assert got == {"forked": True, "elsewhere": True, "value": [1.5, "x"]}


def test_a_failing_child_leaves_the_job_to_the_caller() -> None:
    """The child's exception is not shipped: the caller runs the job and raises it itself."""
    got = _run("""
        calls = []
        def job():
            calls.append(os.getpid())
            raise ValueError("bad row 7")
        try:
            with forked.enabled(), forked.alongside(job) as p:
                p.result()
        except ValueError as err:
            print(json.dumps({"forked": p.forked, "error": str(err),
                              "here": calls == [os.getpid()]}))
    """)
    assert got == {"forked": True, "error": "bad row 7", "here": True}


def test_a_result_that_does_not_pickle_is_computed_here() -> None:
    got = _run("""
        def job():
            return (lambda: os.getpid())
        with forked.enabled(), forked.alongside(job) as p:
            fn = p.result()
        print(json.dumps({"forked": p.forked, "here": fn() == os.getpid()}))
    """)
    assert got == {"forked": True, "here": True}


def test_a_killed_child_is_replaced_by_the_caller() -> None:
    got = _run("""
        def job():
            if os.getpid() != parent:
                os.kill(os.getpid(), 9)
            return "computed here"
        parent = os.getpid()
        with forked.enabled(), forked.alongside(job) as p:
            value = p.result()
        print(json.dumps({"forked": p.forked, "value": value}))
    """)
    assert got == {"forked": True, "value": "computed here"}


def test_no_fork_outside_enabled_with_threads_when_turned_off_or_nested() -> None:
    got = _run("""
        out = {}
        with forked.alongside(os.getpid) as p:
            out["outside"] = (p.forked, p.result() == os.getpid())
        with forked.enabled():
            with forked.alongside(os.getpid, worth_it=False) as p:
                out["not worth it"] = (p.forked, p.result() == os.getpid())
            with forked.alongside(forked.available) as p:
                out["nested"] = (p.forked, p.result())
            stop = threading.Event()
            t = threading.Thread(target=stop.wait)
            t.start()
            with forked.alongside(os.getpid) as p:
                out["thread"] = (p.forked, p.result() == os.getpid())
            stop.set()
            t.join()
        print(json.dumps(out))
    """)
    assert got == {"outside": [False, True], "not worth it": [False, True],
                   "nested": [True, False], "thread": [False, True]}
    off = _run("""
        with forked.enabled(), forked.alongside(os.getpid) as p:
            print(json.dumps({"forked": p.forked, "here": p.result() == os.getpid()}))
    """, OVEARTH_FORK="0")
    assert off == {"forked": False, "here": True}


def test_leaving_the_block_stops_the_child() -> None:
    """The caller fails while the child works: the child is killed and reaped at once."""
    got = _run("""
        start = time.monotonic()
        try:
            with forked.enabled(), forked.alongside(lambda: time.sleep(60)) as p:
                raise KeyError("caller failed")
        except KeyError:
            pass
        try:
            os.waitpid(-1, os.WNOHANG)
            left = True
        except ChildProcessError:
            left = False
        print(json.dumps({"forked": p.forked, "seconds": time.monotonic() - start,
                          "child left": left}))
    """)
    assert got["forked"] is True and got["child left"] is False
    assert got["seconds"] < 30


def test_the_childs_warnings_are_shown_by_the_caller() -> None:
    got = _run("""
        def job():
            warnings.warn("three boxes ignored", UserWarning)
            return 1
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            with forked.enabled(), forked.alongside(job) as p:
                p.result()
        print(json.dumps({"forked": p.forked, "seen": [str(w.message) for w in seen]}))
    """)
    assert got == {"forked": True, "seen": ["three boxes ignored"]}


def test_input_errors_survive_the_trip_from_a_child() -> None:
    """A task's ``OVEarthInputError`` comes back from a child (the suite's tasks) with its
    problems, count and message; ValueError's default pickling rebuilt it from the
    message's characters."""
    import pickle

    from ovearth_core.errors import OVEarthInputError, Problem

    problems = [Problem("pred.json", f"tasks.referring[{i}].bbox", "a list", "3", f"ref_{i}")
                for i in range(25)]
    err = OVEarthInputError(problems, 40)
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is OVEarthInputError
    assert back.problems == problems and back.total == 40 and str(back) == str(err)
    assert "40 problems found" in str(back) and "ref_0" in str(back)


@pytest.mark.parametrize("word", ["0", "off", "OFF", "false", "False", "no", "No", " off "])
def test_the_usual_false_words_turn_forking_off(word: str) -> None:
    """Issue 26 item 15: ``OVEARTH_FORK=off`` (or false, no, 0; any case) keeps one process."""
    got = _run("""
        with forked.enabled(), forked.alongside(os.getpid) as p:
            print(json.dumps({"forked": p.forked, "here": p.result() == os.getpid()}))
    """, OVEARTH_FORK=word)
    assert got == {"forked": False, "here": True}


@pytest.mark.parametrize("word", ["1", "on", "true", "YES", ""])
def test_other_values_leave_forking_on(word: str) -> None:
    got = _run("""
        with forked.enabled(), forked.alongside(os.getpid) as p:
            print(json.dumps({"forked": p.forked, "elsewhere": p.result() != os.getpid()}))
    """, OVEARTH_FORK=word)
    assert got == {"forked": True, "elsewhere": True}
