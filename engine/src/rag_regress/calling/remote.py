"""The team's search and answer calls on a cluster's workers ([executor] backend = "dask").

Only the calls travel. The built retriever (or generator) is sent to every worker once; the
questions go in pieces (about four per worker); each worker calls the team's code for its
piece exactly as this process would (caller.py: `[run] concurrency` calls in flight, retries
of the declared errors, the worker's share of `[run] rate_limit`, and calls.py's guarantees
within `[run] timeout`), and sends back what each call returned or raised. Everything else
stays where the command runs: the output cache, the contract checks (retrieval/search.py,
answers/checks.py) and the error that names the first failing question in golden-set order,
so a report and an exit code do not depend on where the calls ran.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .. import execution
from ..inputs.conversation import Turn
from .asking import with_history
from .caller import Caller
from .calls import current_time_limit, time_limit
from .executor import executor_for
from .ratelimit import RateLimit
from .retries import RetryPolicy


@dataclass(frozen=True)
class Plan:
    """How a worker calls the team's code: the run's caller, in a form that can be sent."""

    concurrency: int
    retry: RetryPolicy
    rate_limit: float  # calls a second for this worker (0: no limit)
    timeout: float  # [run] timeout, seconds per call (0: no limit)

    def caller(self) -> Caller:
        return Caller(executor_for(self.concurrency), self.retry, RateLimit(self.rate_limit))


def plan_for(caller: Caller, workers: int) -> Plan:
    """The worker's plan from the run's caller: the rate limit split evenly between workers."""
    rate = 1.0 / caller.limit.interval if caller.limit.interval else 0.0
    return Plan(caller.concurrency, caller.retry, rate / workers, current_time_limit())


def _calls(team: Any, method: str, plan: Plan, arguments: tuple[Any, ...], questions: Sequence[Turn]) -> Any:
    """On a worker: `team.<method>(question, *arguments)` for each question of the piece (with
    its history, asking.py); each result, or the exception it raised as `execution.Raised`,
    and the calls it took."""
    caller = plan.caller()
    function = getattr(team, method)

    def one(question: Turn) -> object:
        try:
            return caller.call(with_history(function, question), question.text, *arguments)
        except Exception as error:  # reported where the command runs, naming the question
            return execution.Raised(error)

    with time_limit(plan.timeout):
        results = caller.executor.map_ordered(one, questions)
    return results, caller.counts


def on_cluster() -> bool:
    """Whether the run's calls go to a cluster's workers."""
    return execution.current().name != "local"


def call_everywhere(
    team: Any, method: str, questions: Sequence[Turn], arguments: tuple[Any, ...], caller: Caller
) -> list[object] | None:
    """Each question's raw output of `team.<method>`, or its `execution.Raised`, computed on
    the run's cluster; None when the run is local (the caller then calls as usual)."""
    executor = execution.current()
    if not on_cluster() or not questions:
        return None
    shared = executor.share(team)
    pieces = execution.spread(questions, executor)
    answered = executor.map(_calls, pieces, shared, method, plan_for(caller, executor.workers), arguments)
    results: list[object] = []
    for outputs, counts in answered:
        results.extend(outputs)
        caller.add(counts)
    return results
