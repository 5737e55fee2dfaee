"""How many questions are worked on at once: the one interface the run maps through.

`Executor.map_ordered(function, items)` returns `[function(item) for item in items]`, in
the order of `items` whatever order the calls finish in, so a report is the same at any
concurrency. When calls raise, it raises the exception of the FIRST failing item in that
order, after every earlier item has finished (so the question named is the same on every
run), and need not run the items after it.

Two executors ship: `Sequential` (one item after another, in the calling thread, as the
run always worked) and `Threads(n)` (n daemon threads: enough for a system that waits on a
service, since waiting releases the GIL). A distributed executor (say, Dask) only has to
keep the same contract; `function` and the items are then sent elsewhere.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Protocol, TypeVar

T = TypeVar("T")
R = TypeVar("R")


class Executor(Protocol):
    def map_ordered(self, function: Callable[[T], R], items: Sequence[T]) -> list[R]:
        """`[function(item) for item in items]`; the first failing item's exception (module doc)."""
        ...


class Sequential:
    """One item after another, in the calling thread."""

    def map_ordered(self, function: Callable[[T], R], items: Sequence[T]) -> list[R]:
        return [function(item) for item in items]


class Threads:
    """Up to `workers` items at once, each on one of `workers` daemon threads.

    Daemon threads, not a ThreadPoolExecutor: the interpreter joins a pool's threads at
    exit, so a call the team's code never returns from (no [run] timeout) would keep the
    process alive after the verdict. Each thread runs in a copy of the caller's context, so
    context variables (calls.py's time limit) reach it."""

    def __init__(self, workers: int):
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self.workers = workers

    def map_ordered(self, function: Callable[[T], R], items: Sequence[T]) -> list[R]:
        if self.workers == 1 or len(items) <= 1:
            return Sequential().map_ordered(function, items)
        futures: list[Future[R]] = [Future() for _ in items]
        lock, stop, position = threading.Lock(), threading.Event(), [0]
        context = contextvars.copy_context()

        def work() -> None:
            while not stop.is_set():
                with lock:
                    index = position[0]
                    position[0] += 1
                if index >= len(items):
                    return
                try:
                    futures[index].set_result(function(items[index]))
                except BaseException as error:  # handed to the caller, who raises it in order
                    futures[index].set_exception(error)

        for number in range(min(self.workers, len(items))):
            thread = threading.Thread(target=context.copy().run, args=(work,), name=f"question-{number}")
            thread.daemon = True
            thread.start()
        try:
            return [future.result() for future in futures]  # in order: the first failing item raises
        finally:
            stop.set()  # after a failure, or Ctrl-C, no new item starts


def executor_for(concurrency: int) -> Executor:
    """The executor for `[run] concurrency`: Sequential at 1, else Threads."""
    return Sequential() if concurrency <= 1 else Threads(concurrency)
