"""Adapters: ready-made retrievers and generators for systems that already run somewhere,
so that a team evaluates its real system without writing a client. Each module has
`build(...)` with the signature of the team's factory it stands for (`http` and `qdrant`:
`build(documents, tokenize, options)`, as `build_retriever`; `openai`: `build(retriever,
documents, options)`, as `build_generator`), so the team's retriever.py or generator.py is
three lines (`from rag_regress.adapters import http` and `build_retriever = http.build`),
and reads its settings from the [retriever] or [generation] table of eval.toml, documented
in the module's docstring and checked strictly: an unknown option, a missing one or one of
the wrong type stops the run with exit 2 naming it and the fix.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from ..errors import EvalInputError

CONFIG = "eval.toml"  # where the options come from, as an error names it


class Options:
    """One table of eval.toml ([retriever] or [generation]) as an adapter reads it: each
    getter checks the option's type (and range) and returns its value or the default; a
    missing required option, an unknown one (checked first) or a wrong value raises
    EvalInputError naming `[table] key`."""

    def __init__(self, table: str, adapter: str, options: dict[str, Any], known: Iterable[str]):
        self.table = table
        self.adapter = adapter
        self.options = dict(options)
        names = list(known)
        for key in self.options:
            if key not in names:
                raise self.error(
                    key,
                    f"is not an option of the {adapter} adapter",
                    f"remove it, or use one of: {', '.join(names)} (the adapter's docstring)",
                )

    def error(self, key: str, problem: str, fix: str) -> EvalInputError:
        return EvalInputError(CONFIG, f"[{self.table}] {key} {problem}", fix)

    def _given(self, key: str, default: Any, example: str) -> Any:
        if key in self.options:
            return self.options[key]
        if default is None:
            raise self.error(key, f"is required by the {self.adapter} adapter", f"set it: {key} = {example}")
        return default

    def text(self, key: str, default: str | None, example: str = '"..."') -> str:
        """A string option; `default` None: required."""
        value = self._given(key, default, example)
        if not isinstance(value, str):
            raise self.error(key, f"must be text, got {value!r}", f"write it in quotes: {key} = {example}")
        return value

    def optional_text(self, key: str) -> str | None:
        """A string option that may be left out (None)."""
        return self.text(key, "") if key in self.options else None

    def number(self, key: str, default: float, low: float = 0.0, high: float = math.inf) -> float:
        """A number from `low` to `high` (an integer is a number)."""
        value = self._given(key, default, f"{default:g}")
        if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
            within = f"from {low:g} to {high:g}" if high != math.inf else f"of {low:g} or more"
            raise self.error(key, f"must be a number {within}, got {value!r}", f"e.g. {key} = {default:g}")
        return float(value)

    def whole(self, key: str, default: int | None, low: int = 0, high: int | None = None) -> int:
        """A whole number from `low` to `high` (None: no limit); `default` None: required."""
        value = self._given(key, default, str(default if default is not None else low))
        if (
            isinstance(value, bool)
            or not isinstance(value, int)
            or value < low
            or (high is not None and value > high)
        ):
            within = f"from {low} to {high}" if high is not None else f"of {low} or more"
            shown = default if default is not None else low
            raise self.error(key, f"must be a whole number {within}, got {value!r}", f"e.g. {key} = {shown}")
        return value

    def optional_whole(self, key: str, low: int = 0, high: int | None = None) -> int | None:
        return self.whole(key, low, low, high) if key in self.options else None

    def flag(self, key: str, default: bool) -> bool:
        value = self._given(key, default, str(default).lower())
        if not isinstance(value, bool):
            raise self.error(
                key, f"must be true or false, got {value!r}", f"e.g. {key} = {str(default).lower()}"
            )
        return value

    def mapping(self, key: str) -> dict[str, Any] | None:
        """A table option ({} when left out is the caller's choice: None here)."""
        if key not in self.options:
            return None
        value = self.options[key]
        if not isinstance(value, dict):
            raise self.error(key, f"must be a table, got {value!r}", f'e.g. {key} = {{ name = "value" }}')
        return value
