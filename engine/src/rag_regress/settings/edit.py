"""Change a few settings in eval.toml and must-pass flags in the golden set, keeping the rest
of each file as the team wrote it: `baseline --fit-floors` edits files people review.

eval.toml is edited with tomlkit, which keeps comments, blank lines, key order and quoting;
a changed value keeps its end-of-line comment at the same column. A setting not written yet
(a floor eval.toml left to its default, such as `judged`'s from [judge] min_judged) is added
after its table's last key, its table made when missing. An item can be removed from a list
(`names = ["Acme", "Tidemark"]`, [gate] metrics); a list left empty is removed. The golden set is
rewritten line by line: only the lines of the questions whose flag is cleared change, and
in those only `true` becomes `false` (every other byte stays) unless the line is unusual
enough that the JSON must be written again (its key order is kept then).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, MutableMapping, MutableSequence
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.items import Item

from ..inputs.files import write_atomic
from ..retrieval.names import parse_metric

Table = MutableMapping[str, Any]  # a TOML table as tomlkit gives it: a dict that keeps layout
Key = tuple[str, ...]  # a setting or table of eval.toml, e.g. ("gate", "floors", "recall@5")
REMOVE = None  # the value that removes a setting or table


def _canonical(name: str) -> str:
    """A metric key as the engine names it ("R@5" is "recall@5"), anything else as written."""
    try:
        return str(parse_metric(name))
    except ValueError:
        return name


def _written_key(table: Table, wanted: str) -> str | None:
    """The key of `table` written for `wanted`: the same text, else the same metric; None
    when the table does not write it."""
    keys = [str(key) for key in table]
    if wanted in keys:
        return wanted
    return next((key for key in keys if _canonical(key) == _canonical(wanted)), None)


def _raw_key(table: Table, wanted: str) -> str:
    """`_written_key`, which must be there."""
    found = _written_key(table, wanted)
    if found is None:
        raise KeyError(wanted)
    return found


def _added(table: Table, key: str, value: float) -> None:
    """Add `key` = `value` after the last key of `table`: the comments and blank lines after
    that key introduce what follows, so they stay below it."""
    body: Any = getattr(table, "value", None)  # a tomlkit Container: its items, blank lines too
    keys = [i for i, (name, _) in enumerate(getattr(body, "body", ())) if name is not None]
    if keys and hasattr(body, "_insert_at"):  # tomlkit's only way to place a key mid-table
        body._insert_at(keys[-1] + 1, key, tomlkit.item(value))
    else:
        table[key] = value


def _set_keeping_comment(table: Table, key: str, value: float) -> None:
    """Set `key` to `value`; its end-of-line comment stays where it was."""
    old = table[key]
    width = len(old.as_string()) if isinstance(old, Item) else 0
    table[key] = value
    new = table[key]
    if isinstance(new, Item) and isinstance(old, Item) and old.trivia.comment:
        spaces = len(old.trivia.comment_ws) + width - len(new.as_string())
        new.trivia.comment_ws = " " * max(1, spaces)


def _remove_item(table: Table, key: str, item: str) -> None:
    """Remove `item` (the same text, else the same metric) from the list `table[key]`, its
    end-of-line comment kept at its column; remove the key when the list is left empty."""
    array = table[key]
    width = len(array.as_string()) if isinstance(array, Item) else 0
    values = [str(value) for value in array]
    if item in values:
        index = values.index(item)
    else:
        index = next((i for i, value in enumerate(values) if _canonical(value) == _canonical(item)), -1)
        if index < 0:
            raise KeyError(item)
    del array[index]
    if not array:
        del table[key]
    elif isinstance(array, Item) and array.trivia.comment:
        spaces = len(array.trivia.comment_ws) + width - len(array.as_string())
        array.trivia.comment_ws = " " * max(1, spaces)


def edit_toml(path: Path, changes: Mapping[Key, float | None]) -> None:
    """Apply `changes` to the TOML file at `path`: each key set to its value, or removed
    (a setting, or a whole table such as [gate.slices."tag"]) when the value is REMOVE. A key
    whose parent is a list, ("judge", "names", "Acme"), removes that item from the list."""
    document = tomlkit.parse(path.read_text(encoding="utf-8"))
    for key, value in changes.items():
        table: Table = document
        *parents, last = key
        listed: str | None = None  # the key of the list `last` is an item of
        made: tomlkit.items.Table | None = None  # a table this setting needs, made here ([gate.floors])
        for position, part in enumerate(parents):
            if value is not REMOVE and _written_key(table, part) is None:
                made = table[part] = tomlkit.table()
            child = table[_raw_key(table, part)]
            if isinstance(child, MutableSequence) and position == len(parents) - 1 and value is REMOVE:
                listed = _raw_key(table, part)
                break
            if not isinstance(child, MutableMapping):
                raise KeyError(part)
            table = child
        if listed is not None:
            _remove_item(table, listed, last)
            continue
        if value is not REMOVE and _written_key(table, last) is None:
            _added(table, last, value)
            if made is table:
                made.add(tomlkit.nl())  # a blank line before the table that follows
            continue
        name = _raw_key(table, last)
        if value is REMOVE:
            del table[name]
        else:
            _set_keeping_comment(table, name, value)
    write_atomic(path, tomlkit.dumps(document))


_MUST_PASS = re.compile(rb'("must_pass"\s*:\s*)true\b')


def _cleared(line: bytes, item: dict[str, Any]) -> bytes:
    """`line` with "must_pass": true made false: the one word changed when that is
    unambiguous, else the object written again in its key order."""
    body = line.rstrip(b"\r\n")
    ending = line[len(body) :]
    wanted = {**item, "must_pass": False}
    replaced, count = _MUST_PASS.subn(rb"\1false", body)
    if count == 1:
        try:
            if json.loads(replaced.decode("utf-8")) == wanted:
                return replaced + ending
        except ValueError:
            pass
    return json.dumps(wanted, ensure_ascii=False).encode("utf-8") + ending


def clear_must_pass(path: Path, ids: Iterable[str]) -> list[str]:
    """Set "must_pass" to false for the questions `ids` of the golden set at `path`; return
    the ids whose flag was cleared, in file order. Every other line stays byte for byte."""
    wanted = set(ids)
    cleared: list[str] = []
    lines = path.read_bytes().splitlines(keepends=True)
    for number, line in enumerate(lines):
        bom = b"\xef\xbb\xbf" if number == 0 and line.startswith(b"\xef\xbb\xbf") else b""
        try:
            item = json.loads(line[len(bom) :].decode("utf-8"))
        except ValueError:
            continue  # a blank line (or one the loader would refuse): left as it is
        if isinstance(item, dict) and item.get("id") in wanted and item.get("must_pass") is True:
            lines[number] = bom + _cleared(line[len(bom) :], item)
            cleared.append(item["id"])
    if cleared:
        write_atomic(path, b"".join(lines))
    return cleared
