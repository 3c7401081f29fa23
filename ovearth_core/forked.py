"""Run one independent piece of a computation in a forked child, beside the caller.

Used by ``python -m ovearth_core.suite`` to put a second core to work: once the files are
read, a child evaluates some of the tasks while the caller evaluates the others. The
child inherits everything already loaded (copy-on-write: no input is pickled), and sends
back only its results.

Nothing changes what is computed: a job is a pure function of the state both processes
share, and whenever the child cannot deliver (an exception, a result that does not
pickle, a killed child), the caller runs the job itself, so errors and their messages are
exactly those of the sequential code. A forked run is only tried where it is safe and
worth it: on Linux, with two or more usable cores, in a process without other threads
(a child of a threaded process would inherit locks held by threads it does not have: the
app's server never forks here), inside :func:`enabled` (a command line) and not nested.
``OVEARTH_FORK`` set to ``0``, ``false``, ``no`` or ``off`` (any case) turns it off; any
other value, or none, leaves it on.

Why not ``concurrent.futures.ProcessPoolExecutor`` with a ``fork`` context (issue 47 tried it
against ``tests/core/test_forked.py``; the leaderboard's pool of many jobs does use it, with
:func:`ovearth_core.workers.pool_context`): on Python 3.11 it has no public way to stop a
worker that is running a job (``shutdown(cancel_futures=True)`` cancels only jobs not yet
started; ``terminate_workers`` arrived in 3.14), so when the caller fails (a task's bad
input) the child goes on and the command ends only when the child's job does (a 5 s job:
5.75 s instead of 0.26 s, the child still alive when the block is left). It also pickles
the callable even when forking, so the job (a closure over the parsed documents) would
have to be handed over through a module global; the child's warnings would need a wrapper
of their own; and it runs two threads in the caller while the job runs.
"""

from __future__ import annotations

import os
import pickle
import sys
import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Generic, TypeVar

T = TypeVar("T")

FORK_VAR = "OVEARTH_FORK"
OFF_WORDS = frozenset({"0", "false", "no", "off"})

_enabled = False
_in_child = False


@contextmanager
def enabled() -> Iterator[None]:
    """Allow :func:`alongside` to fork inside the block (a command's evaluation)."""
    global _enabled
    was, _enabled = _enabled, True
    try:
        yield
    finally:
        _enabled = was


def available() -> bool:
    """Whether :func:`alongside` would fork now (see the module's conditions)."""
    return (_enabled and not _in_child and sys.platform.startswith("linux")
            and hasattr(os, "fork") and not switched_off()
            and len(os.sched_getaffinity(0)) >= 2 and threading.active_count() == 1)


def switched_off(environ: dict[str, str] | os._Environ[str] | None = None) -> bool:
    """Whether ``OVEARTH_FORK`` is one of :data:`OFF_WORDS` (case and spaces ignored).

    >>> switched_off({"OVEARTH_FORK": "Off"}), switched_off({})
    (True, False)
    """
    value = (os.environ if environ is None else environ).get(FORK_VAR, "")
    return value.strip().lower() in OFF_WORDS


class Pending(Generic[T]):
    """A job started by :func:`alongside`; :meth:`result` waits for it."""

    def __init__(self, job: Callable[[], T], fork: bool) -> None:
        self._job = job
        self._pid = 0
        self._read = -1
        self.forked = False
        if fork:
            self._start()

    def _start(self) -> None:
        read, write = os.pipe()
        try:
            pid = os.fork()
        except OSError:  # no memory or process slots for a child: run it here later
            os.close(read)
            os.close(write)
            return
        if pid == 0:  # the child: never returns
            os.close(read)
            _child(self._job, write)
        os.close(write)
        self._pid, self._read, self.forked = pid, read, True

    def result(self) -> T:
        """The job's value: from the child when it delivered one, else computed here."""
        if not self.forked:
            return self._job()
        data = self._collect()
        try:
            ok, value, caught = pickle.loads(data) if data else (False, None, [])
        except Exception:  # a truncated or unreadable message: the child did not deliver
            ok, value, caught = False, None, []
        if not ok:
            return self._job()
        for message, category, filename, lineno in caught:
            warnings.warn_explicit(message, category, filename, lineno)
        return value

    def _collect(self) -> bytes:
        chunks = []
        try:
            while chunk := os.read(self._read, 1 << 20):
                chunks.append(chunk)
        finally:
            self._close()
        return b"".join(chunks)

    def _close(self) -> None:
        if self._read >= 0:
            os.close(self._read)
            self._read = -1
        if self._pid:
            os.waitpid(self._pid, 0)
            self._pid = 0

    def cancel(self) -> None:
        """Stop a child whose result is no longer wanted (the caller failed)."""
        if self._pid:
            try:
                os.kill(self._pid, 9)
            except ProcessLookupError:
                pass
        self._close()


@contextmanager
def alongside(job: Callable[[], T], worth_it: bool = True) -> Iterator[Pending[T]]:
    """Start ``job`` in a forked child when :func:`available` and ``worth_it`` (the job is
    large enough to pay for a fork, a few milliseconds); ``pending.result()`` inside the
    block gives its value either way. Leaving the block without the result (an exception)
    stops the child."""
    pending = Pending(job, worth_it and available())
    try:
        yield pending
    finally:
        pending.cancel()


def _child(job: Callable[[], object], write: int) -> None:
    global _in_child
    _in_child = True
    try:
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                value = job()
            payload = pickle.dumps(
                (True, value, [(w.message, w.category, w.filename, w.lineno) for w in caught]),
                protocol=pickle.HIGHEST_PROTOCOL)
        except BaseException:  # the caller runs the job itself and meets the error there
            payload = pickle.dumps((False, None, []))
        view = memoryview(payload)
        while view:
            view = view[os.write(write, view):]
    finally:
        os._exit(0)
