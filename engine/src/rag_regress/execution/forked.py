"""The engine's own CPU-bound work on every core of this machine, in forked copies of the process.

Python runs one thread of Python code at a time, so the engine's loops over millions of
words (indexing a corpus) use one core however many there are. `map_forked(function, parts)`
computes `[function(part) for part in parts]` with the first part in this process and each
other part at the same time in a child made by `os.fork()`: the child starts as a copy of
this process (the corpus, the tokenizer) without sending any of it, and sends back only its
result, pickled, through a pipe.

Results and errors are exactly those of the loop: a part whose child fails for any reason
(it raised, was killed, ran out of memory, sent a result that does not unpickle) is computed
again here, in order, so its exception, if any, is raised as the loop would raise it. Where
`os.fork` is not safe or does not exist (anything but Linux: macOS forbids it after some of
its libraries start threads) every part is computed here, one after another.

Only for the engine's own code, never around the team's: `function` must not write files,
print or start threads, since a child shares open files with this process and has only the
thread that forked it. The child leaves with `os._exit`, so it runs no clean-up of this
process's (no atexit handlers, no flushing of this process's buffered output).
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import sys
import warnings
from collections.abc import Callable, Sequence
from typing import TypeVar, cast

T = TypeVar("T")
R = TypeVar("R")

CAN_FORK = sys.platform == "linux" and hasattr(os, "fork")


def usable_cores() -> int:
    """The CPU cores this process may run on (its affinity mask, as `taskset` or a container
    sets it, where the system has one; else every core)."""
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else os.cpu_count() or 1


def parts_of(items: Sequence[T], count: int) -> list[Sequence[T]]:
    """`items` cut into at most `count` parts, in order, all of one length but the last, which
    may be shorter (one part, maybe empty, at least): the parts for `map_forked`."""
    size = max(1, -(-len(items) // max(count, 1)))  # the ceiling of len / count
    return [items[i : i + size] for i in range(0, len(items), size)] or [items]


def map_forked(function: Callable[[T], R], parts: Sequence[T]) -> list[R]:
    """`[function(part) for part in parts]`; parts after the first in forked children (module doc)."""
    if not CAN_FORK or len(parts) <= 1:
        return [function(part) for part in parts]
    children = [_start(function, part) for part in parts[1:]]
    try:
        results = [function(parts[0])]
        for number, part in enumerate(parts[1:]):
            sent = _collect(children[number])
            children[number] = None
            results.append(function(part) if sent is None else cast(R, sent[0]))
    finally:  # after an error here (or Ctrl-C), the children still running are stopped
        for child in children:
            _stop(child)
    return results


_Child = tuple[int, int] | None  # (process id, read end of its pipe); None: it could not start


def _start(function: Callable[[T], R], part: T) -> _Child:
    try:
        read, write = os.pipe()
    except OSError:
        return None
    try:
        # Python 3.12 and later warn of a fork while other threads run (the run's call
        # thread, a progress line): the child only runs `function` and leaves.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
    except OSError:  # no process to spare: this part is computed here instead
        os.close(read)
        os.close(write)
        return None
    if pid == 0:  # the child
        status = 1
        try:
            os.close(read)
            payload = pickle.dumps((function(part),), protocol=pickle.HIGHEST_PROTOCOL)
            with os.fdopen(write, "wb") as out:
                out.write(payload)
            status = 0
        except BaseException:
            pass  # the parent computes this part again and raises what it raises
        finally:
            os._exit(status)
    os.close(write)
    return pid, read


def _collect(child: _Child) -> tuple[object] | None:
    """The child's result, in a 1-tuple; None when it failed (the part is computed again)."""
    if child is None:
        return None
    pid, read = child
    with os.fdopen(read, "rb") as pipe:
        payload = pipe.read()  # read before waiting: a child blocks until its pipe is read
    try:
        _, status = os.waitpid(pid, 0)
    except ChildProcessError:  # reaped by someone else's handler: its result cannot be trusted
        return None
    if status != 0:
        return None
    try:
        result: tuple[object] = pickle.loads(payload)
    except Exception:
        return None
    return result


def _stop(child: _Child) -> None:
    if child is not None:
        with contextlib.suppress(ProcessLookupError):  # it has ended already
            os.kill(child[0], signal.SIGKILL)
        _collect(child)
