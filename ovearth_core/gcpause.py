"""Pause Python's cyclic garbage collector while large JSON documents are processed.

Parsing a prediction file creates about a million small dicts and lists, and the
loader and evaluator create tens of thousands more. None of them form reference
cycles (JSON is a tree), yet every 700 allocations the collector walks the young
objects, and the survivors again and again in the older generations: on the
full-scale benchmark that was about 0.2 s of a 1.4 s evaluation. Reference
counting still frees everything as usual while collection is paused.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_depth = 0
_was_enabled = False


@contextmanager
def gc_paused() -> Iterator[None]:
    """Disable cyclic collection inside the block (re-entrant and thread-safe).

    Collection resumes when the outermost block exits, if it was enabled when
    the outermost block entered.
    """
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()
