"""Run a command's entry point in this process, as ``python -m MODULE ARGS`` would run it.

Starting ``python -m ovearth_core...`` costs 0.5-1 s of CPU (numpy, pycocotools, shapely,
...) for each test that only checks a command's arguments, messages, outputs and exit
status. :func:`run_module` calls the ``main(argv)`` that ``python -m MODULE`` runs instead and
returns a :class:`subprocess.CompletedProcess` like ``subprocess.run(..., capture_output=True)``:

* standard output and error are captured at the descriptor level (descriptors 1 and 2 on
  temporary files, and ``sys.stdout`` / ``sys.stderr`` over them): what the command
  prints, writes to ``/dev/stdout`` or to ``sys.stdout.buffer`` is captured; ``isatty()``
  is false (what a worker process started by the command prints later is not);
* the exit status is what the interpreter would exit with: ``main``'s return value, a
  ``SystemExit`` code (argparse's 2), or 1 with the traceback on stderr for an exception
  that escapes ``main`` (so "no traceback" assertions keep their meaning);
* warnings print to stderr under the interpreter's default filters, not pytest's;
* ``sys.argv``, the environment (``env`` replaces it, as for ``subprocess.run``), the
  working directory, the umask, the logging configuration, the warning filters and the
  signal handlers are restored afterwards.

Tests whose rule is about the process itself (what ``python -m`` imports, the interpreter's
own traceback, signals, environment read at start-up, the shipped entry points) keep a real
subprocess; every command keeps at least one. tests/core/test_cli_inprocess.py checks this
helper.
"""

from __future__ import annotations

import importlib
import importlib.util
import io
import logging
import os
import signal
import subprocess
import sys
import tempfile
import traceback
import warnings
from collections.abc import Callable, Mapping
from typing import Any

# ``python -m ovearth_core`` runs ovearth_core/__main__.py, which calls ``cli.main`` at import
# (no ``__name__`` guard): the one module whose entry point is not its own ``main``.
ENTRY_POINTS = {"ovearth_core": "ovearth_core.cli"}

# The interpreter's default warning filters (no -W, no PYTHONWARNINGS), most recent first as
# ``warnings.filters`` lists them.
_DEFAULT_FILTERS: tuple[tuple[str, type[Warning], str | None], ...] = (
    ("default", DeprecationWarning, "__main__"),
    ("ignore", DeprecationWarning, None),
    ("ignore", PendingDeprecationWarning, None),
    ("ignore", ImportWarning, None),
    ("ignore", ResourceWarning, None),
)

_SIGNALS = tuple(s for s in (signal.SIGINT, signal.SIGTERM, signal.SIGALRM, signal.SIGPIPE,
                             signal.SIGHUP, signal.SIGCHLD))


def entry_point(module: str) -> tuple[Callable[[list[str]], Any], str]:
    """The ``main`` that ``python -m module`` calls, and the ``sys.argv[0]`` it sees."""
    spec = importlib.util.find_spec(module)
    if spec is None:
        raise ModuleNotFoundError(module)
    if spec.submodule_search_locations is not None:  # a package: python -m runs __main__
        main_spec = importlib.util.find_spec(f"{module}.__main__")
        assert main_spec is not None and main_spec.origin is not None, module
        argv0, source = main_spec.origin, ENTRY_POINTS.get(module, f"{module}.__main__")
    else:
        assert spec.origin is not None, module
        argv0, source = spec.origin, ENTRY_POINTS.get(module, module)
    return importlib.import_module(source).main, argv0


class _Capture:
    """Descriptor ``fd`` redirected to an unnamed temporary file until :meth:`close`.

    A file, not a pipe: a process the command starts and leaves running (a forkserver, the
    resource tracker) inherits the descriptor, and a pipe would then never reach its end."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.saved = os.dup(fd)
        self.file = tempfile.TemporaryFile()  # noqa: SIM115 - closed in close()
        os.dup2(self.file.fileno(), fd)

    def close(self) -> bytes:
        os.dup2(self.saved, self.fd)
        os.close(self.saved)
        with self.file:
            self.file.seek(0)
            return self.file.read()


def _exit_status(code: object) -> int:
    """The status ``sys.exit(code)`` ends the interpreter with (text goes to stderr)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _show_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                  file: Any = None, line: str | None = None) -> None:
    sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))


def run_module(module: str, *args: str | os.PathLike[str],
               cwd: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None,
               text: bool = True) -> subprocess.CompletedProcess[Any]:
    """``python -m module *args`` in this process; see the module docstring."""
    main, argv0 = entry_point(module)
    argv = [os.fspath(a) for a in args]
    saved_argv, saved_env, saved_cwd = sys.argv, dict(os.environ), os.getcwd()
    saved_umask = os.umask(0o022)
    os.umask(saved_umask)
    saved_signals = {s: signal.getsignal(s) for s in _SIGNALS}
    root = logging.getLogger()
    saved_logging = (list(root.handlers), root.level, logging.root.manager.disable)
    saved_streams = sys.stdout, sys.stderr
    for stream in saved_streams:
        stream.flush()
    out, err = _Capture(1), _Capture(2)
    sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False,  # noqa: SIM115
                      buffering=1)
    try:
        with warnings.catch_warnings():
            warnings.resetwarnings()
            for action, category, name in reversed(_DEFAULT_FILTERS):
                warnings.filterwarnings(action, category=category, module=name or "")
            warnings.showwarning = _show_warning
            sys.argv = [argv0, *argv]
            if env is not None:
                os.environ.clear()
                os.environ.update(env)
            if cwd is not None:
                os.chdir(cwd)
            try:
                status = _exit_status(main(argv))
            except SystemExit as exit_:
                status = _exit_status(exit_.code)
            except Exception:  # noqa: BLE001 - the interpreter prints it and exits 1
                traceback.print_exc()
                status = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
            stream.close()
        sys.stdout, sys.stderr = saved_streams
        stdout, stderr = out.close(), err.close()
        sys.argv = saved_argv
        os.environ.clear()
        os.environ.update(saved_env)
        os.chdir(saved_cwd)
        os.umask(saved_umask)
        for s, handler in saved_signals.items():
            if handler is not None:
                signal.signal(s, handler)
        root.handlers[:], root.level = saved_logging[0], saved_logging[1]
        logging.disable(saved_logging[2])
    if text:
        return subprocess.CompletedProcess([sys.executable, "-m", module, *argv], status,
                                           _text(stdout), _text(stderr))
    return subprocess.CompletedProcess([sys.executable, "-m", module, *argv], status,
                                       stdout, stderr)


def _text(data: bytes) -> str:
    """As ``subprocess.run(text=True)`` decodes (universal newlines)."""
    return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8").read()

