"""The pieces of [run] on their own: the executor keeps order and names the first failing
item, the rate limit spaces calls on a fake clock, retry_on names resolve (or say why not),
and only declared transient errors are retried, with a deterministic backoff."""

from __future__ import annotations

import itertools
import random
import threading
import time
import urllib.error
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from rag_regress.calling.caller import Caller
from rag_regress.calling.calls import TeamCodeError, time_limit
from rag_regress.calling.executor import Sequential, Threads, executor_for
from rag_regress.calling.outputs import code_digest
from rag_regress.calling.ratelimit import RateLimit
from rag_regress.calling.retries import RetryPolicy, exception_type
from rag_regress.render.progress import Progress


def test_threads_return_results_in_the_order_of_the_items_whatever_order_they_finish_in() -> None:
    delays = random.Random(7).choices([0.0, 0.001, 0.003], k=60)

    def slow_square(i: int) -> int:
        time.sleep(delays[i])
        return i * i

    items = list(range(60))
    assert Threads(8).map_ordered(slow_square, items) == Sequential().map_ordered(slow_square, items)


def test_threads_really_run_items_at_the_same_time() -> None:
    """Eight items that each wait for all eight to have started finish only if run at once."""
    barrier = threading.Barrier(8, timeout=10)
    assert Threads(8).map_ordered(lambda i: barrier.wait() >= 0 and i, list(range(8))) == list(range(8))


def test_the_first_failing_item_in_order_is_raised_even_when_a_later_one_failed_first() -> None:
    later_failed = threading.Event()

    def work(i: int) -> int:
        if i == 5:
            raise ValueError("item 5")
        if i == 2:
            later_failed.wait(5)  # item 5 has failed by now
            raise ValueError("item 2")
        return i

    def watch(i: int) -> int:
        try:
            return work(i)
        except ValueError:
            if i == 5:
                later_failed.set()
            raise

    with pytest.raises(ValueError, match="item 2"):
        Threads(4).map_ordered(watch, list(range(10)))


def test_a_failure_stops_items_from_starting() -> None:
    started: list[int] = []

    def work(i: int) -> int:
        started.append(i)
        if i == 0:
            raise ValueError("first")
        time.sleep(0.01)
        return i

    with pytest.raises(ValueError, match="first"):
        Threads(2).map_ordered(work, list(range(200)))
    time.sleep(0.05)
    assert len(started) < 200


def test_concurrency_1_is_the_sequential_executor() -> None:
    assert isinstance(executor_for(1), Sequential) and isinstance(executor_for(4), Threads)


def test_worker_threads_see_the_run_s_time_limit() -> None:
    """calls.py's [run] timeout is a context variable: each worker thread gets it."""
    caller = Caller(Threads(4))
    with time_limit(0.2), pytest.raises(TeamCodeError, match=r"within the \[run\] timeout of 0\.2 s"):
        caller.map(lambda i: caller.call(time.sleep, 5 if i == 3 else 0), list(range(6)), "test")


def _team_code_threads() -> int:
    return sum(1 for thread in threading.enumerate() if thread.name == "team-code")


def test_the_workers_of_finished_threads_stop_so_threads_do_not_pile_up() -> None:
    """Each thread of a concurrent map gets a worker (calls.py); it ends with its thread."""
    before = _team_code_threads()
    caller = Caller(Threads(8))
    for _ in range(5):
        assert caller.map(lambda i: caller.call(abs, -i), list(range(16)), "test") == list(range(16))
    for _ in range(500):  # the threads end as soon as they are told; give a loaded machine time
        if _team_code_threads() <= before:
            break
        time.sleep(0.01)
    assert _team_code_threads() <= before


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def test_the_rate_limit_spaces_calls_one_interval_apart_on_a_fake_clock() -> None:
    clock = FakeClock()
    limit = RateLimit(4, clock, clock.sleep)
    starts = []
    for _ in range(5):
        limit.acquire()
        starts.append(clock.now)
    assert [round(b - a, 9) for a, b in itertools.pairwise(starts)] == [0.25] * 4


def test_the_rate_limit_does_not_wait_when_calls_are_already_far_apart() -> None:
    clock = FakeClock()
    limit = RateLimit(2, clock, clock.sleep)
    limit.acquire()
    clock.now += 10
    assert limit.acquire() == 0 and clock.slept == []


def test_no_rate_limit_never_waits() -> None:
    clock = FakeClock()
    limit = RateLimit(0, clock, clock.sleep)
    assert [limit.acquire() for _ in range(100)] == [0.0] * 100 and clock.slept == []


def test_the_rate_limit_holds_across_threads() -> None:
    """Slots are handed out under a lock: 20 threads at 10 calls/s take 20 distinct slots."""
    clock = FakeClock()
    lock = threading.Lock()
    waits: list[float] = []
    limit = RateLimit(10, clock, lambda seconds: None)  # the clock stands still: waits pile up

    def take(i: int) -> None:
        waited = limit.acquire()
        with lock:
            waits.append(round(waited, 9))

    Threads(5).map_ordered(take, list(range(20)))
    assert sorted(waits) == [round(0.1 * i, 9) for i in range(20)]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("ConnectionError", ConnectionError),
        ("TimeoutError", TimeoutError),
        ("urllib.error.URLError", urllib.error.URLError),
    ],
)
def test_retry_on_names_resolve_to_their_classes(name: str, expected: type) -> None:
    assert exception_type(name) is expected


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("ConectionError", "is not a builtin exception"),
        ("nosuchmodule.Busy", "cannot import nosuchmodule"),
        ("urllib.error.Nope", "is not a class in urllib.error"),
        ("len", "is not a builtin exception"),
        ("KeyboardInterrupt", "not an Exception"),
    ],
)
def test_a_name_that_is_not_an_exception_says_why(name: str, said: str) -> None:
    with pytest.raises(ValueError, match=said):
        exception_type(name)


def test_retries_wait_a_doubling_backoff_and_then_succeed() -> None:
    slept: list[float] = []
    policy = RetryPolicy(3, 0.5, (ConnectionError,), slept.append)
    attempts = []

    def flaky() -> str:
        attempts.append(1)
        if len(attempts) < 3:
            raise ConnectionError("reset by peer")
        return "ok"

    caller = Caller(retry=policy)
    assert caller.call(flaky) == "ok"
    assert slept == [0.5, 1.0] and caller.counts.calls == 3 and caller.counts.retries == 2


def test_an_undeclared_error_is_not_retried() -> None:
    slept: list[float] = []
    caller = Caller(retry=RetryPolicy(3, 0.5, (ConnectionError,), slept.append))
    with pytest.raises(KeyError):
        caller.call(lambda: {}["missing"])
    assert slept == [] and caller.counts.calls == 1


def test_a_timed_out_call_is_never_retried_even_when_timeouts_are_declared() -> None:
    caller = Caller(retry=RetryPolicy(3, 0, (TimeoutError, Exception), lambda s: None))
    release = threading.Event()
    try:
        with time_limit(0.1), pytest.raises(TeamCodeError):
            caller.call(release.wait)
    finally:
        release.set()
    assert caller.counts.calls == 1


class Recording:
    """A progress display that remembers what it was told."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.in_flight = self.most_in_flight = self.errors = self.done = 0

    def started(self) -> None:
        with self.lock:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)

    def ended(self, failed: bool) -> None:
        with self.lock:
            self.in_flight -= 1
            self.errors += failed

    def advanced(self) -> None:
        with self.lock:
            self.done += 1

    @contextmanager
    def tracking(self, total: int, what: str) -> Iterator[Recording]:
        yield self


def test_progress_is_told_the_calls_in_flight_and_the_errors() -> None:
    """Four calls wait for each other (so four are in flight at once); two fail once and are retried."""
    barrier = threading.Barrier(4, timeout=10)
    failed: set[int] = set()
    lock = threading.Lock()

    def work(i: int) -> int:
        with lock:
            first = i not in failed
            failed.add(i)
        if i < 4 and not first:
            return i
        if i < 4:
            barrier.wait()
        if i in (1, 2) and first:
            raise ConnectionError("dropped")
        return i

    display = Recording()
    caller = Caller(Threads(4), RetryPolicy(1, 0, (ConnectionError,), lambda s: None), monitor=display)
    assert caller.map(lambda i: caller.call(work, i), list(range(8)), "test") == list(range(8))
    assert (display.most_in_flight, display.errors, display.done, display.in_flight) == (4, 2, 8, 0)


def test_the_console_progress_meter_counts_from_any_thread() -> None:
    with Progress(enabled=False).tracking(3, "searching") as meter:
        Threads(3).map_ordered(lambda i: (meter.started(), meter.ended(i == 0), meter.advanced()), [0, 1, 2])
    assert (meter.in_flight, meter.errors) == (0, 1)


def test_the_code_digest_changes_with_any_source_file_and_nothing_else(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "retriever.py").write_text("K1 = 0.9\n", encoding="utf-8")
    (tmp_path / "sub" / "words.txt").write_text("the\n", encoding="utf-8")
    first = code_digest(tmp_path)
    (tmp_path / "notes.log").write_text("not source", encoding="utf-8")
    assert code_digest(tmp_path) == first
    (tmp_path / "retriever.py").write_text("K1 = 1.2\n", encoding="utf-8")
    assert code_digest(tmp_path) != first
    (tmp_path / "retriever.py").write_text("K1 = 0.9\n", encoding="utf-8")
    assert code_digest(tmp_path) == first
    (tmp_path / "sub" / "words.txt").write_text("the\na\n", encoding="utf-8")
    assert code_digest(tmp_path) != first
