"""At most `rate` calls a second to the team's system, shared by every thread of a run.

A token bucket holding one token, refilled every 1/rate seconds: each call takes the next
free slot on the clock and waits for it, so calls are never closer than 1/rate seconds
apart, at any concurrency (a bucket holding more would let a burst through at the start,
which a service's own limit may count against the team). 0 means no limit. The clock and
the sleep are injectable so that tests need no real waiting.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class RateLimit:
    def __init__(
        self,
        rate: float,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ):
        if rate < 0:
            raise ValueError(f"rate must be 0 (no limit) or more, got {rate}")
        self.interval = 1.0 / rate if rate else 0.0
        self.clock, self.sleep = clock, sleep
        self._next: float | None = None  # when the next call may start
        self._lock = threading.Lock()

    def acquire(self) -> float:
        """Wait for this call's slot; return how long it waited (0 without a limit)."""
        if not self.interval:
            return 0.0
        with self._lock:
            now = self.clock()
            start = now if self._next is None else max(now, self._next)
            self._next = start + self.interval
        wait = start - now
        if wait > 0:
            self.sleep(wait)
        return wait
