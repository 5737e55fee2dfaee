"""Where a key of eval.toml is written: the one place that maps a key path to its line.

tomllib returns values without positions, and every settings error names `eval.toml:LINE`.
Rather than a second reading of TOML's syntax, tomllib itself answers: a key is written on
the first line whose prefix of the file, parsed, holds it. A prefix parses exactly when it
ends between two statements (a cut inside a string, array or table header never does), so
quoted keys holding dots (`[gate.slices."v1.2"]`), dotted keys, and values spanning lines are
located as TOML reads them. For a value spanning lines, the line where its statement starts.
"""

from __future__ import annotations

import json
import re
import tomllib
from typing import Any

KeyPath = tuple[str | int, ...]  # ("gate", "slices", "v1.2", "hit@5"); an int is a list index


def line_of(text: str, path: KeyPath) -> int | None:
    """The line (from 1) of `path` in the valid TOML `text`: where it is written, or where the
    first setting inside it is (a table only implied by its subtables); for a key left out,
    the line of its nearest enclosing table or key; None when there is none."""
    ends = [match.end() for match in re.finditer("\n", text)] + [len(text)]
    parsed: dict[int, dict[str, Any] | None] = {}

    def prefix(line: int) -> dict[str, Any] | None:  # lines 1..line parsed; None if cut mid-statement
        if line not in parsed:
            try:
                parsed[line] = tomllib.loads(text[: ends[line - 1]])
            except tomllib.TOMLDecodeError:
                parsed[line] = None
        return parsed[line]

    def holds(line: int, key: KeyPath) -> bool:
        while (document := prefix(line)) is None:  # move to the end of the statement
            line += 1
        return _holds(document, key)

    whole = prefix(len(ends))
    while path and not (whole is not None and _holds(whole, path)):
        path = path[:-1]  # not written: its enclosing table or key
    if not path:
        return None
    low, high = 1, len(ends)  # the first line from which on the prefix holds `path`: where
    while low < high:  # its statement starts, as the line before ends the previous statement
        middle = (low + high) // 2
        low, high = (low, middle) if holds(middle, path) else (middle + 1, high)
    return low


def _holds(document: Any, path: KeyPath) -> bool:
    for part in path:
        if isinstance(document, str):  # a string has indices but holds no settings
            return False
        try:
            document = document[part]  # a table by key, an array by index
        except (KeyError, IndexError, TypeError):
            return False
    return True


def dotted(path: KeyPath) -> str:
    """A key path as TOML spells it: gate.floors.mrr, gate.slices."v1.2" (list indices left out)."""
    parts = [part for part in path if isinstance(part, str)]
    plain = re.compile(r"[^\s.\"'=\[\]#]+")  # readable as is (recall@5), though TOML would quote it
    return ".".join(
        part if plain.fullmatch(part) and part.isprintable() else json.dumps(part, ensure_ascii=False)
        for part in parts
    )
