"""What a run keeps stays out of the cyclic garbage collector's way.

A large run holds millions of small objects from start to end: a 100k-document corpus, its
index, a hundred hits for each of 10k questions, the report's rows. Python's collector walks
every tracked object in each full collection, and starts one each time the objects that
survived grow by a quarter, so a run spent seconds proving that none of them was garbage.

`settling()` wraps a run (run.py): at its start, and wherever `settle()` is called inside
it (after the index is built, after the hits are in), `gc.freeze()` moves the objects alive
at that moment out of the collector's view. They are still freed as soon as nothing refers
to them; only a reference cycle among them waits until the block ends, when `gc.unfreeze()`
hands them all back, so a process that lives on (the sweep, the tests) collects as it did
before. Objects made later, including any cycles the team's code makes in each call, are
collected as usual.

`paused()` goes further, for code of the engine's own that makes many objects and no
garbage cycles (a question's rows, the report's JSON): no collection at all while it runs.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_open = 0  # blocks of `settling` open in this process (they may nest)


@contextmanager
def settling() -> Iterator[None]:
    """Freeze what is alive now; unfreeze everything when the outermost block ends."""
    global _open
    with _lock:
        _open += 1
        gc.freeze()
    try:
        yield
    finally:
        with _lock:
            _open -= 1
            if _open == 0:
                gc.unfreeze()


def settle() -> None:
    """Inside `settling`, freeze what is alive now (a no-op outside it: nothing would unfreeze)."""
    with _lock:
        if _open:
            gc.freeze()


@contextmanager
def paused() -> Iterator[None]:
    """No cyclic collection inside the block (as it was after it). Only for the engine's own
    code that makes no reference cycles: never around a call of the team's code."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()
