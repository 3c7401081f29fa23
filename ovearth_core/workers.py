"""Worker processes for a pool of jobs, started safely from any caller (the CLI, the app's
threaded server): how many, by which start method, and without re-running the caller's main
script. Generic (issue 39): the leaderboard's jobs, their results and their cache live in
:mod:`ovearth_core.analysis.leaderboard`."""

from __future__ import annotations

import importlib.machinery
import multiprocessing
import multiprocessing.context
import os
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

# The most worker processes a command starts (--workers): each holds its own copy of the
# parsed inputs, so a typo must not start thousands.
MAX_WORKERS = 256


def worker_count() -> int:
    """One worker per core this process may use."""
    count = getattr(os, "process_cpu_count", None)
    if count is not None:
        return max(1, count() or 1)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def pool_context(preload: Sequence[str] = ()) -> multiprocessing.context.BaseContext:
    """``fork`` from a single-threaded process (the CLI: workers inherit the parsed ground
    truth); else ``forkserver`` (a process with threads, such as the app's server or one
    whose GEOS thread pool is running, must not fork: a child would inherit locks held by
    threads it does not have; it imports ``preload`` once, so workers start warm), else
    ``spawn`` (Windows)."""
    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    if "forkserver" in methods:
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(list(preload))
        return context
    return multiprocessing.get_context("spawn")


@contextmanager
def skip_main(context: multiprocessing.context.BaseContext) -> Iterator[None]:
    """Workers started inside the block do not run this process's main script again.

    A ``forkserver`` or ``spawn`` worker first re-runs the parent's ``__main__`` file (as
    ``__mp_main__``) unless the main module was imported by name: in the app's server that
    file is Streamlit's launcher, so every worker of every Leaderboard run imported
    Streamlit (0.8-0.9 s a worker) for a job that lives in an importable module. The
    main module is shown to the workers under the name ``__main__``, which
    :mod:`multiprocessing` does not import again; it is restored when the block ends.
    """
    main = sys.modules.get("__main__")
    if (context.get_start_method() == "fork" or main is None
            or getattr(main, "__spec__", None) is not None):
        yield  # forked workers need no import; a main imported by name is cheap
        return
    main.__spec__ = importlib.machinery.ModuleSpec("__main__", None)
    try:
        yield
    finally:
        main.__spec__ = None
