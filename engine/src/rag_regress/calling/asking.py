"""How the engine asks the team's code one question: its text, and the conversation before it.

A golden item with `history` is a later turn of a conversation. The team's `search`,
`search_many` and `answer` receive that history only when they declare it (a `history`
parameter; `histories` for `search_many`, one per question: api.py); code written before
conversations existed is called as it always was, with the question alone, and so answers
blind to the conversation. Which is measured, never refused: the `turn:N` slices show it.

A `Turn` (inputs/conversation.py) is what every cache and map keys on: two items asking the
same words after different conversations are two questions, not one.

While the team's code answers a later turn, that turn is recorded (`being_answered`): the
retriever the engine hands the generator (retrieval/ranking.Remembered) then answers a search for the
turn's words in its conversation, with the evaluated hits, even when the team's generator
(a wrapper written before conversations) does not pass the history on.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any, TypeVar

from ..api import History
from ..inputs.conversation import Turn

T = TypeVar("T")


@functools.lru_cache(maxsize=256)
def _declares(function: Callable[..., Any], name: str) -> bool:
    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError):  # a builtin or C callable without a signature: not declared
        return False
    return name in parameters or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())


def declares(function: Callable[..., Any], name: str = "history") -> bool:
    """Whether `function` (a bound method too) takes the keyword `name` (or any keyword)."""
    underlying = getattr(function, "__func__", function)  # cached per function, not per object
    try:
        return _declares(underlying, name)
    except TypeError:  # unhashable callable: look each time
        return _declares.__wrapped__(underlying, name)


_ANSWERING: ContextVar[Turn | None] = ContextVar("answering", default=None)


def being_answered(question: str) -> History:
    """The history of the turn the team's code is answering, when `question` is its text
    (module doc); () otherwise."""
    turn = _ANSWERING.get()
    return turn.history if turn is not None and turn.text == question else ()


def with_history(function: Callable[..., T], turn: Turn) -> Callable[..., T]:
    """`function` ready to be called with `turn.text` (and its other arguments): given the
    turn's history as `history=` when it has one and `function` declares it, and run with
    the turn recorded as the one being answered (module doc)."""
    if not turn.history:
        return function
    given = functools.partial(function, history=turn.history) if declares(function) else function

    def asked(*arguments: Any) -> T:
        token = _ANSWERING.set(turn)  # set in the thread that runs the call (calls.py)
        try:
            return given(*arguments)
        finally:
            _ANSWERING.reset(token)

    # calls.py names a call that timed out by its __qualname__: the team's method
    asked.__qualname__ = getattr(function, "__qualname__", repr(function))
    return asked


def with_histories(function: Callable[..., T], turns: list[Turn]) -> Callable[..., T]:
    """`search_many` ready to be called with the turns' texts: given their histories as
    `histories=` when any turn has one and `function` declares it."""
    if not any(turn.history for turn in turns) or not declares(function, "histories"):
        return function
    bound = functools.partial(function, histories=[turn.history for turn in turns])
    bound.__qualname__ = getattr(function, "__qualname__", repr(function))  # type: ignore[attr-defined]
    return bound
