"""Retrievers that ship with the template. `retriever.py` picks the one to evaluate.

Each module here has `build(documents, tokenize, options) -> Retriever`, where `options`
is the `[retriever]` table of eval.toml, checked against the module's `Options`.

A number's range: a field's `metadata={"range": (low, high)}` (inclusive), else 0 and up.
NaN is never a setting; an infinity is one only where the default is infinite
(`min_score = -inf`: never abstain), and then any number is allowed.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from ...api import History

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

T = TypeVar("T", bound="DataclassInstance")  # an Options dataclass


def in_context(question: str, history: History, use: bool) -> str:
    """What a shipped retriever searches for a question that follows earlier turns: the
    user's earlier turns, then the question, one text (the conversational-search baseline of
    TREC CAsT, "all previous utterances": a follow-up like "and on the annual plan?" keeps
    the words of what it follows). The assistant's turns are left out: an answer's words are
    the system's own, and would pull retrieval towards what it already said. `use` false
    ([retriever] history = false): the question alone, blind to the conversation."""
    if not use or not history:
        return question
    return "\n".join([*(message.content for message in history if message.role == "user"), question])


def all_in_context(questions: Sequence[str], histories: Sequence[History] | None, use: bool) -> list[str]:
    """`in_context` for each question of a `search_many` call (no histories: the questions)."""
    if histories is None:
        return list(questions)
    return [in_context(q, h, use) for q, h in zip(questions, histories, strict=True)]


class OptionsError(ValueError):
    """An option in the [retriever] (or [generation]) table of eval.toml is unknown, has the
    wrong type or is out of range; `key` names it, for the line in the error message."""

    def __init__(self, message: str, key: str | None = None):
        super().__init__(message)
        self.key = key


def allowed(field: dataclasses.Field[Any]) -> str:
    """The range of a number option in words ("a number from 0 to 1"), for errors and docs."""
    default = field.default
    kind = "a whole number" if isinstance(default, int) else "a number"
    if isinstance(default, float) and math.isinf(default):
        return f"{kind} ({default} included), not nan"
    low, high = field.metadata.get("range", (0, math.inf))
    return f"{kind} from {low:,g} to {high:,g}" if high != math.inf else f"{kind} of {low:,g} or more"


def _in_range(field: dataclasses.Field[Any], value: float) -> bool:
    if math.isnan(value):
        return False
    default = field.default
    if isinstance(default, float) and math.isinf(default):
        return True
    low, high = field.metadata.get("range", (0, math.inf))
    return math.isfinite(value) and low <= value <= high


def parse_options(options_class: type[T], options: dict[str, Any], part: str = "retriever") -> T:
    """Build an Options dataclass from the [retriever] table (or [generation], `part`
    "generator"); OptionsError names a bad key and the part that refused it."""
    fields = {f.name: f for f in dataclasses.fields(options_class)}
    for key, value in options.items():
        if key not in fields:
            raise OptionsError(
                f"unknown option {key!r}; the shipped {part} takes: {', '.join(fields) or 'none'}", key
            )
        expected = type(fields[key].default)
        numeric = expected is float and isinstance(value, int) and not isinstance(value, bool)
        if type(value) is not expected and not numeric:
            raise OptionsError(f"option {key!r} must be a {expected.__name__}, got {value!r}", key)
        if expected in (int, float) and not _in_range(fields[key], value):
            raise OptionsError(f"option {key!r} must be {allowed(fields[key])}, got {value!r}", key)
    return options_class(**options)


def options_table(options_class: type[DataclassInstance]) -> str:
    """The options of `options_class` as a markdown table (option, default, allowed): the
    tables of docs/settings.md, which a test compares with these declarations."""
    rows = ["| option | default | allowed |", "| --- | --- | --- |"]
    for field in dataclasses.fields(options_class):
        default = field.default
        if isinstance(default, bool):
            allowed_values, shown = "true or false", str(default).lower()
        elif isinstance(default, int | float):
            allowed_values, shown = (
                allowed(field),
                f"{default:g}" if isinstance(default, float) else str(default),
            )
        else:
            allowed_values, shown = "text", f'"{default}"'
        rows.append(f"| `{field.name}` | `{shown}` | {allowed_values} |")
    return "\n".join(rows)
