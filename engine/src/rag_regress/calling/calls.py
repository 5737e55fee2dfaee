"""The one place the team's code is called: build_retriever, build_generator, search,
search_many and answer all go through `call`.

Why one place: whatever the team's code does, the gate must give a verdict it can stand by.
An exception is the ordinary case (the caller names the question and the file to fix); this
module adds the two ways out that an `except Exception` misses:
- `sys.exit()`, `raise SystemExit(0)` or any other BaseException from the team's code would
  otherwise end the gate with the team's exit code (0: a pass with nothing evaluated and
  nothing written). It becomes `TeamCodeError`, an ordinary exception, so the caller turns it
  into exit 2 naming the question. KeyboardInterrupt is the one exception: Ctrl-C stays Ctrl-C.
- a call that never returns (a hung connection) would hang CI until its own time limit. Each
  timed call gets `[run] timeout` seconds (`time_limit`); past that it is `TeamCodeError` too.

How: every call runs on one worker thread per calling thread, and the caller waits on its
future with the timeout. One worker, not one per call, so code that ties state to a thread
(an SQLite connection, a model on a device) sees the same thread from build to the last
search. The worker is a daemon: a call that timed out cannot be stopped (Python cannot kill a
thread), so it is left behind and cannot keep the process alive after the verdict; the next
call gets a new worker. A worker whose calling thread has ended (a thread of a concurrent
run, executor.py) stops once its last call returns, so threads do not pile up.

Concurrent work (caller.py) calls `call` from several threads at once: each of
them gets a worker of its own, with every guarantee above.
"""

from __future__ import annotations

import queue
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

T = TypeVar("T")

DEFAULT_TIMEOUT = 300.0  # seconds per call of search/search_many/answer; [run] timeout; 0: no limit


class TeamCodeError(Exception):
    """The team's code did not return: it exited (SystemExit and the like) or ran past the
    timeout. `description` completes "the retriever ..." in the caller's message."""

    def __init__(self, description: str, cause: BaseException | None = None):
        super().__init__(description)
        self.description, self.cause = description, cause


def failure(error: BaseException) -> str:
    """What went wrong in the team's code, to follow "the retriever" or "the generator"."""
    if isinstance(error, TeamCodeError):
        return error.description
    return f"raised {type(error).__name__}: {error}"


_timeout: ContextVar[float] = ContextVar("team_call_timeout", default=DEFAULT_TIMEOUT)


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Timed calls made inside the block get `seconds` each (0: no limit). The orchestrator
    sets it from `[run] timeout` around a run; code that is not told uses DEFAULT_TIMEOUT."""
    token = _timeout.set(seconds)
    try:
        yield
    finally:
        _timeout.reset(token)


def current_time_limit() -> float:
    """The time limit timed calls get here (`time_limit`'s, or DEFAULT_TIMEOUT)."""
    return _timeout.get()


class _Job:
    """One call handed to a worker: the function, then when it started and its outcome. The
    worker releases `done` when the call returns: one lock handed over per call, the cheapest
    hand-off threads have (a call of the team's code costs under 0.1 ms more than a direct one)."""

    __slots__ = ("done", "error", "function", "result", "started")

    def __init__(self, function: Callable[[], Any]) -> None:
        self.function = function
        self.done = threading.Lock()
        self.done.acquire()
        self.started: float | None = None
        self.result: Any = None
        self.error: BaseException | None = None


class _Worker:
    """A daemon thread running the team's code, one call at a time, in order."""

    def __init__(self) -> None:
        self.jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()  # None: stop
        self.thread = threading.Thread(target=self._serve, name="team-code", daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            job = self.jobs.get()
            if job is None:  # the calling thread has ended, or left this worker behind
                return
            job.started = time.monotonic()
            try:
                job.result = job.function()
            except BaseException as error:
                job.error = error
            job.done.release()

    def run(self, function: Callable[[], T], timeout: float) -> T:
        """`function()`'s result or exception, raised here; _TimedOut after `timeout` seconds
        of running (0: wait as long as it takes). The clock starts when the call does."""
        job = _Job(function)
        self.jobs.put(job)
        wait = timeout or -1  # Lock.acquire: -1 waits as long as it takes
        while not job.done.acquire(timeout=wait):
            started = job.started
            wait = timeout if started is None else started + timeout - time.monotonic()
            if wait <= 0:
                raise _TimedOut
        if job.error is not None:
            error, job.error = job.error, None  # no cycle through the traceback's frames
            raise error
        result: T = job.result
        return result

    def stop(self) -> None:
        """End the thread once the call it runs (if any) returns."""
        self.jobs.put(None)


class _Owner:
    """Held only by the calling thread's thread-local: collected when that thread ends (or
    drops its worker), which stops the worker (weakref.finalize)."""


class _TimedOut(Exception):
    """The call is still running after its time limit."""


_workers = threading.local()  # each calling thread's worker


def _worker() -> _Worker:
    worker: _Worker | None = getattr(_workers, "worker", None)
    if worker is None:
        worker = _workers.worker = _Worker()
        owner = _workers.owner = _Owner()
        weakref.finalize(owner, worker.stop)
    return worker


def call(function: Callable[..., T], *args: object, timed: bool = True) -> T:
    """`function(*args)` run as the team's code: its result, or its exception (an Exception
    is raised as it is), or TeamCodeError when it exited or, `timed`, took longer than the
    current time limit. KeyboardInterrupt passes through. The factories are not `timed`:
    building an index or loading a model may take long, once.

    A call made from the team's own code (a generator calling a retriever) runs directly: it
    is already inside a call and its time limit."""
    if getattr(_workers, "inside", False):  # set only on a worker thread: already inside a call
        return function(*args)
    timeout = _timeout.get() if timed else 0.0
    worker = _worker()

    def job() -> T:
        _workers.inside = True  # the worker thread's own thread-local: nested calls run inline
        return function(*args)

    try:
        result = worker.run(job, timeout)
    except _TimedOut:
        _workers.worker = _workers.owner = None  # stuck in the team's code: left behind, stops if it returns
        name = getattr(function, "__qualname__", repr(function))
        raise TeamCodeError(
            f"did not return from {name} within the [run] timeout of {timeout:g} s "
            "(raise `timeout` in [run] of eval.toml, or set it to 0 for no limit)"
        ) from None
    except (KeyboardInterrupt, Exception):
        raise
    except SystemExit as error:
        raise TeamCodeError(f"called sys.exit({error.code!r}) instead of returning", error) from None
    except BaseException as error:
        raise TeamCodeError(f"raised {type(error).__name__} instead of returning", error) from None
    return result
