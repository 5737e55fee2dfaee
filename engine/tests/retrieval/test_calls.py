"""calling/calls.py, the one place the team's code is called: its result or its exception
comes back as it was; an exit or a call past the time limit becomes TeamCodeError; Ctrl-C
stays Ctrl-C; every call of one run happens on the same thread."""

from __future__ import annotations

import sys
import threading
import time
from functools import partial

import pytest

from rag_regress.calling.calls import TeamCodeError, call, failure, time_limit


def throw(error: BaseException) -> None:
    raise error


def test_the_result_comes_back() -> None:
    assert call(sorted, [3, 1, 2]) == [1, 2, 3]


def test_an_exception_comes_back_as_it_was() -> None:
    """The callers name the question and the exception's type: it must not be wrapped."""

    def broken() -> None:
        raise ValueError("index is empty")

    with pytest.raises(ValueError, match="index is empty") as caught:
        call(broken)
    assert failure(caught.value) == "raised ValueError: index is empty"


def test_the_team_s_own_timeout_error_is_not_taken_for_the_time_limit() -> None:
    """A socket's TimeoutError raised at once is the team's error, not a call that ran out."""

    def slow_service() -> None:
        raise TimeoutError("vector store did not answer")

    with pytest.raises(TimeoutError, match="vector store"):
        call(slow_service)


@pytest.mark.parametrize(
    ("leave", "said"),
    [
        (lambda: sys.exit(), "called sys.exit(None)"),
        (lambda: sys.exit(0), "called sys.exit(0)"),
        (lambda: sys.exit("bye"), "called sys.exit('bye')"),
        (partial(throw, GeneratorExit()), "raised GeneratorExit"),
    ],
    ids=["sys.exit()", "SystemExit(0)", "SystemExit(text)", "GeneratorExit"],
)
def test_an_exit_becomes_an_error_not_the_process_exit_code(leave: object, said: str) -> None:
    """`sys.exit(0)` in the team's search once ended the gate with 0 and nothing written."""
    with pytest.raises(TeamCodeError) as caught:
        call(leave)  # type: ignore[arg-type]  # a lambda typed as object by the parametrize
    assert said in failure(caught.value)


def test_ctrl_c_stays_ctrl_c() -> None:
    def interrupted() -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        call(interrupted)


def test_a_call_past_the_time_limit_names_the_setting_and_returns_at_once() -> None:
    release = threading.Event()
    started = time.monotonic()
    with time_limit(0.2), pytest.raises(TeamCodeError) as caught:
        call(release.wait)
    waited = time.monotonic() - started
    release.set()  # let the abandoned call end
    assert 0.2 <= waited < 5
    assert "[run] timeout of 0.2 s" in failure(caught.value)


def test_after_a_timeout_the_next_call_runs_on_a_fresh_worker() -> None:
    release = threading.Event()
    with time_limit(0.1), pytest.raises(TeamCodeError):
        call(release.wait)
    assert call(lambda: 42) == 42  # not queued behind the stuck call
    release.set()


def test_factories_are_not_timed() -> None:
    """Building an index may take long, once: `timed=False` waits as long as it takes."""
    with time_limit(0.05):
        assert call(lambda: time.sleep(0.2) or "built", timed=False) == "built"


def test_zero_means_no_limit() -> None:
    with time_limit(0):
        assert call(lambda: time.sleep(0.1) or "done") == "done"


def test_every_call_runs_on_one_thread_that_is_not_the_caller_s() -> None:
    """Code that ties state to its thread (an SQLite connection made in build) keeps working."""
    threads = {call(threading.get_ident) for _ in range(5)}
    assert len(threads) == 1 and threading.get_ident() not in threads


def test_a_call_from_inside_a_call_runs_directly() -> None:
    """A generator calling a retriever through the helper must not wait for itself."""
    assert call(lambda: call(lambda: "inner")) == "inner"
