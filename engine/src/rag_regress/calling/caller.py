"""How the run calls the team's search and answer for many questions: concurrency
([run] concurrency), retries of declared transient errors ([run] retries, backoff,
retry_on), a rate limit ([run] rate_limit) and the output cache ([run] output_cache).

Every call still goes through calls.call, so each keeps its guarantees (SystemExit and
the like become TeamCodeError, KeyboardInterrupt passes, a call past the [run] timeout is
left behind); the caller of `map` turns an error into exit 2 naming its question, and
the executor makes that the first failing question in golden-set order. Results are in
golden-set order whatever the concurrency (executor.py).

Thread safety, when concurrency > 1: search (or answer) runs on several threads at once,
each thread keeping its own worker (calls.py), so the team's objects must allow that (the
plug-in contract in api.py says so). The engine's own state touched from those threads,
the counters here and the cache, is behind locks.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Protocol, TypeVar

from ..api import Answer
from ..cost import Tally
from .calls import TeamCodeError, call
from .executor import Executor, Sequential
from .outputs import OutputCache
from .ratelimit import RateLimit
from .retries import RetryPolicy

T = TypeVar("T")
R = TypeVar("R")


class Meter(Protocol):
    """What a progress display is told; called from any thread."""

    def started(self) -> None:
        """A call to the team's code began."""

    def ended(self, failed: bool) -> None:
        """That call returned (`failed`: it raised, and may be retried)."""

    def advanced(self) -> None:
        """One item (question) is done."""


class Monitor(Protocol):
    def tracking(self, total: int, what: str) -> AbstractContextManager[Meter]:
        """A display of `total` items labelled `what`, for as long as the block runs."""
        ...


class _Silent:
    def started(self) -> None:
        pass

    def ended(self, failed: bool) -> None:
        pass

    def advanced(self) -> None:
        pass


class _Quiet:
    @contextmanager
    def tracking(self, total: int, what: str) -> Iterator[Meter]:
        yield _Silent()


@dataclasses.dataclass
class CallCounts:
    """What one run asked of the team's system: reported per run, never in a baseline."""

    calls: int = 0  # calls of search, search_many and answer made (each retry is one more)
    retries: int = 0  # of them, calls made again after a declared transient error
    errors: int = 0  # calls that raised (retried or not)


class Caller:
    """Calls the team's code for many items (module doc); `cache` None: the cache is off."""

    def __init__(
        self,
        executor: Executor | None = None,
        retry: RetryPolicy | None = None,
        limit: RateLimit | None = None,
        cache: OutputCache | None = None,
        monitor: Monitor | None = None,
        counts: CallCounts | None = None,
        usage: Tally | None = None,
    ):
        self.executor = executor or Sequential()
        self.retry = retry or RetryPolicy()
        self.limit = limit or RateLimit(0)
        self.cache = cache
        self.monitor: Monitor = monitor or _Quiet()
        self.counts = counts if counts is not None else CallCounts()
        # The usage each Answer returned here reports (never an answer from the cache: it is
        # served without a call); shared with `uncached()`, whose calls count in the same run.
        self.usage = usage if usage is not None else Tally()
        self._lock = threading.Lock()
        self._meter: Meter = _Silent()

    @property
    def concurrency(self) -> int:
        """Calls in flight at once ([run] concurrency)."""
        return getattr(self.executor, "workers", 1)

    def add(self, counts: CallCounts) -> None:
        """Count calls made elsewhere for this run (on a cluster's workers: remote.py)."""
        self._count(**vars(counts))

    def uncached(self) -> Caller:
        """The same caller without the cache (the determinism re-ask, stochastic parts): its
        calls count in the same run."""
        return Caller(self.executor, self.retry, self.limit, None, self.monitor, self.counts, self.usage)

    def _count(self, **more: int) -> None:
        with self._lock:
            for name, value in more.items():
                setattr(self.counts, name, getattr(self.counts, name) + value)

    def call(self, function: Callable[..., T], *args: object) -> T:
        """`function(*args)` through calls.call, after the rate limit, retried on declared
        transient errors; the last error is raised as it is."""
        attempt = 0
        while True:
            self.limit.acquire()
            self._count(calls=1, retries=1 if attempt else 0)
            self._meter.started()
            try:
                result = call(function, *args)
            except Exception as error:
                self._count(errors=1)
                self._meter.ended(True)
                if isinstance(error, TeamCodeError) or not self.retry.retried(error, attempt):
                    raise
                attempt += 1
                self.retry.sleep(self.retry.wait(attempt))
                continue
            self._meter.ended(False)
            if isinstance(result, Answer):
                self.usage.add(result.usage)
            return result

    def map(self, function: Callable[[T], R], items: Sequence[T], what: str) -> list[R]:
        """`[function(item) for item in items]` through the executor, in order, with progress."""
        with self.monitor.tracking(len(items), what) as meter:
            self._meter = meter

            def one(item: T) -> R:
                result = function(item)
                meter.advanced()
                return result

            try:
                return self.executor.map_ordered(one, items)
            finally:
                self._meter = _Silent()
