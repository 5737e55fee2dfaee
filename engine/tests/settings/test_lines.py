"""settings/lines.py: the one map from a key path of eval.toml to its line, read the way TOML
reads keys (quoted keys may hold dots; strings and arrays may span lines)."""

from __future__ import annotations

import json
import tomllib
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from rag_regress.settings.lines import dotted, line_of

TEXT = '''# [gate] in a comment is no table
[data]
notes = """
[gate]
mrr = 0.1
"""
corpus = "a.jsonl"  # a comment "with quotes"

[gate.slices."v1.2"]
"recall@5" = 0.8
'hit@5' = 0.7

[ gate . floors ]
mrr=0.5
"a.b".c = { d = 1, "e.f" = [1,
  2] }

[retrieval]
metrics = [
  "recall@5",  # first
  "mrr",
]
'''


def test_quoted_keys_with_dots_are_one_key() -> None:
    assert line_of(TEXT, ("gate", "slices", "v1.2")) == 9
    assert line_of(TEXT, ("gate", "slices", "v1.2", "recall@5")) == 10
    assert line_of(TEXT, ("gate", "slices", "v1.2", "hit@5")) == 11
    assert line_of(TEXT, ("gate", "floors", "a.b", "c", "e.f")) == 15


def test_strings_and_comments_hide_what_looks_like_keys() -> None:
    assert line_of(TEXT, ("data", "notes")) == 3
    assert line_of(TEXT, ("data", "corpus")) == 7
    assert line_of(TEXT, ("gate", "mrr")) == 9  # only inside the string: left out
    assert line_of(TEXT, ("gate", "floors", "mrr")) == 14


def test_a_value_spanning_lines_is_located_where_its_statement_starts() -> None:
    assert line_of(TEXT, ("retrieval", "metrics")) == 19
    assert line_of(TEXT, ("retrieval", "metrics", 1)) == 19
    assert line_of(TEXT, ("gate", "floors", "a.b", "c", "e.f", 1)) == 15


def test_a_missing_key_falls_back_to_its_table_and_an_implied_table_to_its_first_line() -> None:
    assert line_of(TEXT, ("gate", "floors", "ndcg@5")) == 13  # left out: its table
    assert line_of(TEXT, ("gate",)) == 9  # never written as [gate]: its first subtable
    assert line_of(TEXT, ("stats", "alpha")) is None


def test_windows_line_endings_count_the_same() -> None:
    assert line_of(TEXT.replace("\n", "\r\n"), ("gate", "slices", "v1.2", "hit@5")) == 11


def test_dotted_quotes_only_what_needs_it() -> None:
    assert dotted(("gate", "floors", "recall@5")) == "gate.floors.recall@5"
    assert dotted(("gate", "slices", "v1.2", "hit@5")) == 'gate.slices."v1.2".hit@5'
    assert dotted(("retrieval", "metrics", 3)) == "retrieval.metrics"
    assert dotted(("tokenizer", "")) == 'tokenizer.""'


# -- any document: every key tomllib reads is found on a line that writes it ----------------

keys = st.text(st.characters(codec="utf-8", exclude_categories=["Cs", "Cc"]), max_size=6)
scalars = st.one_of(
    st.integers(),
    st.booleans(),
    st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=8),  # with line breaks
)
values = st.one_of(scalars, st.lists(scalars, max_size=3))
tables = st.recursive(
    st.dictionaries(keys, values, max_size=3),
    lambda inner: st.dictionaries(keys, st.one_of(values, inner), max_size=3),
    max_leaves=10,
)


def quoted(key: str) -> str:
    return json.dumps(key, ensure_ascii=False).replace("\x7f", "\\u007f")


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[\n  " + ",\n  ".join(toml_value(item) for item in value) + "\n]"  # one element a line
    if isinstance(value, str) and "\n" in value:  # a multi-line string; its first line break is dropped
        return '"""\n' + "".join("\n" if char == "\n" else quoted(char)[1:-1] for char in value) + '"""'

    return quoted(value) if isinstance(value, str) else str(value)


def toml_document(table: dict[str, Any], path: tuple[str, ...] = ()) -> str:
    """Values first, then each subtable under its own [header]."""
    out = [
        f"{quoted(key)} = {toml_value(value)}" for key, value in table.items() if not isinstance(value, dict)
    ]
    for key, value in table.items():
        if isinstance(value, dict):
            header = ".".join(quoted(part) for part in (*path, key))
            out += [f"[{header}]", toml_document(value, (*path, key))]
    return "\n".join(out)


def paths(table: dict[str, Any], prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every key path of `table`: its keys, and those of its subtables."""
    found: list[tuple[str, ...]] = []
    for key, value in table.items():
        found.append((*prefix, key))
        if isinstance(value, dict):
            found += paths(value, (*prefix, key))
    return found


@settings(max_examples=150)
@given(tables)
def test_every_key_is_found_on_the_line_that_writes_it(table: dict[str, Any]) -> None:
    text = toml_document(table)
    assert tomllib.loads(text) == table  # the generator writes valid TOML
    rows = text.split("\n")
    for path in paths(table):
        line = line_of(text, path)
        assert line is not None, path
        assert quoted(path[-1]) in rows[line - 1], (path, rows[line - 1])
