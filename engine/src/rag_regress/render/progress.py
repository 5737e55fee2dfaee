"""Progress bars for the long steps of a run (indexing, searching, answering, judging).

Drawn on stderr with tqdm (the raw stream: a bar redraws itself with CR and ESC, which
the command line's inert console would escape), and only when both stdout and stderr are terminals and the
command was not given `--quiet`: in CI logs, pipes and tests a run prints nothing extra.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

from tqdm import tqdm

from .inert import raw_stream

T = TypeVar("T")


class Progress:
    """Shows progress when `enabled` (see terminal.interactive); otherwise does nothing at all."""

    def __init__(self, enabled: bool):
        self.enabled = enabled

    def over(self, items: Sequence[T], what: str) -> Iterator[T]:
        """Yield `items`, advancing a bar labelled `what` (one tick per item)."""
        if not self.enabled:
            yield from items
            return
        with tqdm(
            items, desc=what, unit="q", file=raw_stream(sys.stderr), leave=False, dynamic_ncols=True
        ) as bar:
            yield from bar

    @contextmanager
    def step(self, what: str) -> Iterator[None]:
        """A step that cannot report its own progress (building an index, one batched judge
        call): a bar that shows the step's name and elapsed time until it is done."""
        if not self.enabled:
            yield
            return
        with tqdm(
            total=1, desc=what, file=raw_stream(sys.stderr), leave=False, bar_format="{desc}: {elapsed}"
        ) as bar:
            yield
            bar.update(1)

    @contextmanager
    def tracking(self, total: int, what: str) -> Iterator[_Meter]:
        """A bar over `total` questions that also shows the calls to the team's code in flight
        and the errors so far (retried ones included): the Monitor of calling/caller.py."""
        if not self.enabled:
            yield _Meter(None)
            return
        with tqdm(
            total=total, desc=what, unit="q", file=raw_stream(sys.stderr), leave=False, dynamic_ncols=True
        ) as bar:
            yield _Meter(bar)


class _Meter:
    """Counts calls in flight and errors, from any thread, and shows them on the bar."""

    def __init__(self, bar: Any):
        self.bar = bar
        self.in_flight = 0
        self.errors = 0
        self._lock = threading.Lock()

    def _show(self) -> None:
        if self.bar is not None:
            self.bar.set_postfix_str(f"in flight {self.in_flight}, errors {self.errors}", refresh=False)

    def started(self) -> None:
        with self._lock:
            self.in_flight += 1
            self._show()

    def ended(self, failed: bool) -> None:
        with self._lock:
            self.in_flight -= 1
            self.errors += failed
            self._show()

    def advanced(self) -> None:
        with self._lock:
            if self.bar is not None:
                self.bar.update(1)


QUIET = Progress(enabled=False)
