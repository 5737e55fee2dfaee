"""execution/forked.py: the parts computed in forked children give exactly the loop's results
and errors, whatever happens to a child, and no child outlives the call."""

from __future__ import annotations

import os
import signal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rag_regress.execution import forked
from rag_regress.execution.forked import map_forked, parts_of

needs_fork = pytest.mark.skipif(not forked.CAN_FORK, reason="forked children run on Linux only")

PARENT = os.getpid()


@pytest.fixture
def forks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The process id of every child os.fork makes during the test, as the parent sees it."""
    made: list[int] = []
    real_fork = os.fork

    def recording_fork() -> int:
        pid = real_fork()
        if pid:
            made.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", recording_fork)
    return made


def reaped(pids: list[int]) -> bool:
    """Every one of these children has ended and been waited for (none left as a zombie)."""
    for pid in pids:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            continue
        return False
    return True


def square_and_where(part: int) -> tuple[int, bool]:
    return part * part, os.getpid() == PARENT


@needs_fork
def test_results_are_the_loops_in_order_and_parts_after_the_first_ran_in_children(forks: list[int]) -> None:
    results = map_forked(square_and_where, [1, 2, 3, 4])
    assert [value for value, _ in results] == [1, 4, 9, 16]
    assert [here for _, here in results] == [True, False, False, False]
    assert map_forked(lambda part: None, [1, 2]) == [None, None]  # None is a result like any other
    assert len(forks) == 4 and reaped(forks)


@needs_fork
def test_a_part_whose_child_dies_or_raises_is_computed_again_here(forks: list[int]) -> None:
    def fragile(part: str) -> str:
        if os.getpid() != PARENT:  # only in a child: killed, exits, raises, or sends junk
            if part == "killed":
                os.kill(os.getpid(), signal.SIGKILL)
            if part == "exits":
                os._exit(0)
            if part == "raises":
                raise MemoryError
            if part == "unpicklable":
                return lambda: None  # type: ignore[return-value]
        return part.upper()

    parts = ["first", "killed", "exits", "raises", "unpicklable"]
    assert map_forked(fragile, parts) == [part.upper() for part in parts]
    assert len(forks) == 4 and reaped(forks)


@needs_fork
def test_the_first_failing_part_in_order_raises_as_the_loop_would(forks: list[int]) -> None:
    def failing(part: int) -> int:
        if part >= 2:
            raise ValueError(f"part {part}")
        return part

    with pytest.raises(ValueError, match="part 2"):
        map_forked(failing, [0, 1, 2, 3])
    with pytest.raises(ValueError, match="part 2"):  # the first part itself fails: children reaped
        map_forked(failing, [2, 0, 3])
    assert len(forks) == 5 and reaped(forks)


def test_without_fork_every_part_is_computed_here(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(forked, "CAN_FORK", False)
    assert map_forked(square_and_where, [1, 2, 3]) == [(1, True), (4, True), (9, True)]


@given(st.lists(st.integers(), max_size=50), st.integers(0, 8))
def test_parts_are_the_items_in_order_at_most_count_of_them_all_as_long_but_the_last(
    items: list[int], count: int
) -> None:
    parts = parts_of(items, count)
    assert [item for part in parts for item in part] == items
    assert 1 <= len(parts) <= max(count, 1)
    sizes = [len(part) for part in parts]
    assert len(set(sizes[:-1])) <= 1 and sizes[-1] <= sizes[0]
