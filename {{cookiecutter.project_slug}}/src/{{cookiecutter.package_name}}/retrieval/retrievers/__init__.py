"""Retrievers that ship with the template. `retriever.py` picks the one to evaluate.

Each module here has `build(documents, tokenize, options) -> Retriever`, where `options`
is the `[retriever]` table of eval.toml, checked against the module's `Options`.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

T = TypeVar("T", bound="DataclassInstance")  # an Options dataclass


class OptionsError(ValueError):
    """An option in the [retriever] table of eval.toml is unknown or has the wrong type."""


def parse_options(options_class: type[T], options: dict[str, Any]) -> T:
    """Build an Options dataclass from the [retriever] table; OptionsError names a bad key."""
    fields = {f.name: f for f in dataclasses.fields(options_class)}
    for key, value in options.items():
        if key not in fields:
            raise OptionsError(f"unknown option {key!r}; this retriever takes: {', '.join(fields) or 'none'}")
        expected = type(fields[key].default)
        if expected is float and isinstance(value, int) and not isinstance(value, bool):
            continue
        if type(value) is not expected:
            raise OptionsError(f"option {key!r} must be a {expected.__name__}, got {value!r}")
    return options_class(**options)
