"""Loaders that cannot be broken: Hypothesis feeds load_corpus, load_golden and load_config
arbitrary bytes, arbitrary JSON values and shapes, and TOML of random structure.

Each input either loads, or raises EvalInputError naming the file and a fix (and the line,
when one line is to blame). Never a bare KeyError, TypeError, ValueError, RecursionError or
UnicodeDecodeError traceback: the command line turns EvalInputError into exit code 2.

The normal suite runs a modest number of examples per test. For a long run:
    FUZZ_EXAMPLES=3000 pytest tests/test_loader_fuzz.py
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from conftest import TINY_CONFIG, TINY_CORPUS, TINY_GOLDEN, run_cli, write_project
from rag_regress.api import Document
from rag_regress.errors import EvalInputError
from rag_regress.inputs.data import load_corpus, load_golden
from rag_regress.settings.config import load_config

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "60"))
fuzz = settings(max_examples=EXAMPLES, suppress_health_check=[HealthCheck.too_slow])

CORPUS = {d["id"]: Document(d["id"], d["text"], d["title"]) for d in TINY_CORPUS}

# -- strategies ---------------------------------------------------------------------------

texts = st.text(max_size=12)  # includes lone surrogates, NUL and other control characters
characters = st.text(st.characters(exclude_categories=["Cs"]), max_size=12)  # any real character
keys = st.one_of(st.sampled_from(["id", "title", "text", "question", "relevant", "tags", "must_pass"]), texts)
json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),  # NaN and +-Infinity: Python's json writes and reads them
    texts,
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4),
    max_leaves=12,
)


def right_keys(required: list[str], optional: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    """Objects with the right keys (some optional ones, sometimes an extra) but any values."""
    return st.fixed_dictionaries(
        {key: json_values for key in required},
        optional={key: json_values for key in [*optional, "extra"]},
    )


def near_valid(rows: list[dict[str, Any]], values: st.SearchStrategy[Any]) -> st.SearchStrategy[list[dict]]:
    """A valid file with one field of one row replaced by (or one row extended with) `values`."""

    @st.composite
    def mutate(draw: st.DrawFn) -> list[dict[str, Any]]:
        copy = [dict(row) for row in rows]
        row = draw(st.sampled_from(copy))
        row[draw(st.sampled_from(sorted({*row, "title", "tags", "answerable", "must_pass"})))] = draw(values)
        return copy

    return mutate()


grades = st.one_of(st.integers(min_value=-2, max_value=4), st.booleans(), st.floats(), texts, st.none())
relevant_maps = st.dictionaries(st.sampled_from([*CORPUS, "ghost"]) | texts, grades, max_size=3)
golden_values = st.one_of(json_values, relevant_maps, st.lists(texts, max_size=3))


def json_line(value: Any, ascii_only: bool) -> str:
    return json.dumps(value, ensure_ascii=ascii_only)


@st.composite
def jsonl_files(draw: st.DrawFn, objects: st.SearchStrategy[Any]) -> bytes:
    """JSON Lines made of `objects`, with blank lines, stray text and odd line endings mixed in."""
    lines = draw(
        st.lists(
            st.one_of(
                objects.map(lambda v: ("json", v)),
                json_values.map(lambda v: ("json", v)),
                st.sampled_from(["", "  ", "{", "[]", "null", '{"id": 1,}', "\ufeff{}"]).map(
                    lambda t: ("raw", t)
                ),
            ),
            max_size=6,
        )
    )
    ascii_only = draw(st.booleans())
    rendered = [json_line(v, ascii_only) if kind == "json" else v for kind, v in lines]
    ending = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    try:
        data = ending.join(rendered).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate in a raw line: write it as Python would
        data = ending.join(rendered).encode("utf-8", "surrogatepass")
    return draw(st.sampled_from([b"", b"\xef\xbb\xbf"])) + data


# Well-formed rows with arbitrary content: these mostly load, so the checks after parsing
# (duplicates, blank strings, lone surrogates, grades, flags) see many examples too.
plausible_documents = st.fixed_dictionaries(
    {"id": st.sampled_from(["a", "b", "c"]) | characters, "text": characters},
    optional={"title": characters},
)
plausible_questions = st.fixed_dictionaries(
    {
        "id": st.sampled_from(["q1", "q2"]) | characters,
        "question": characters,
        "relevant": st.dictionaries(
            st.sampled_from(sorted(CORPUS)), st.integers(1, 3), min_size=1, max_size=3
        ),
    },
    optional={
        "answerable": st.just(True),
        "must_pass": st.booleans(),
        "tags": st.lists(characters, max_size=3),
        "must_include": st.lists(characters, max_size=2),
    },
)
unanswerable_questions = st.fixed_dictionaries(
    {"id": characters, "question": characters, "relevant": st.just({}), "answerable": st.just(False)}
)


def plausible_files(rows: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[bytes]:
    return st.lists(rows, min_size=1, max_size=5).map(
        lambda items: "\n".join(json.dumps(r, ensure_ascii=False) for r in items).encode("utf-8")
    )


corpus_files = st.one_of(
    st.binary(max_size=200),
    plausible_files(plausible_documents),
    jsonl_files(right_keys(["id", "text"], ["title"])),
    near_valid(TINY_CORPUS, json_values).map(
        lambda rows: "\n".join(json.dumps(r, ensure_ascii=False) for r in rows).encode(
            "utf-8", "surrogatepass"
        )
    ),
)
golden_files = st.one_of(
    st.binary(max_size=200),
    plausible_files(plausible_questions | unanswerable_questions),
    jsonl_files(
        right_keys(["id", "question", "relevant"], ["must_include", "answerable", "tags", "must_pass"])
    ),
    jsonl_files(
        st.fixed_dictionaries(
            {"id": texts, "question": texts, "relevant": relevant_maps},
            optional={"answerable": json_scalars, "must_pass": json_scalars, "tags": golden_values},
        )
    ),
    near_valid(TINY_GOLDEN, golden_values).map(
        lambda rows: "\n".join(json.dumps(r, ensure_ascii=False) for r in rows).encode(
            "utf-8", "surrogatepass"
        )
    ),
)

# -- TOML of random structure -------------------------------------------------------------

SETTINGS = {
    "data": ["corpus", "golden", "baseline", "report"],
    "retrieval": ["k", "depth", "metrics"],
    "tokenizer": ["lowercase", "pattern", "min_length", "stopwords"],
    "retriever": ["k1", "b"],
    "gate": ["metrics", "tolerance", "floors", "checks"],
}
metric_names = st.sampled_from(["recall@5", "hit@5", "mrr", "ndcg@3", "map", "recall", "mrr@0", "nope@5"])
toml_scalars = st.one_of(
    st.booleans(),
    st.integers(),
    st.floats(),  # nan and inf are valid TOML
    characters,
    metric_names,
    st.sampled_from([r"\w+", "(a)", "[", "english", "none", "evals/corpus.jsonl", ""]),
)
toml_values = st.recursive(
    toml_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.one_of(metric_names, characters), inner, max_size=3)
    ),
    max_leaves=10,
)


def toml_string(text: str) -> str:
    """A TOML basic string. JSON's escapes are TOML's too, except that TOML has no surrogate
    pairs: characters outside the BMP are written as themselves."""
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def toml_value(value: Any) -> str:
    """Render a value as inline TOML (strings through JSON escapes, which TOML shares)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return (
            "nan"
            if math.isnan(value)
            else ("inf" if value > 0 else "-inf")
            if math.isinf(value)
            else repr(value)
        )
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return "{" + ", ".join(f"{toml_string(k)} = {toml_value(v)}" for k, v in value.items()) + "}"


@st.composite
def toml_documents(draw: st.DrawFn) -> str:
    """Tables named like eval.toml's (or not), holding known or random keys with any values."""
    lines = []
    for table in draw(
        st.lists(st.sampled_from([*SETTINGS, "gate.floors", "gate.checks", "datas"]), max_size=5)
    ):
        lines.append(f"[{table}]")
        known = SETTINGS.get(table, ["recall@5", "mrr"])
        for key in draw(st.lists(st.sampled_from(known) | characters, max_size=4, unique=True)):
            lines.append(f"{toml_string(key)} = {toml_value(draw(toml_values))}")
    return "\n".join(lines) + "\n"


@st.composite
def near_valid_toml(draw: st.DrawFn) -> str:
    """The tiny project's eval.toml with one value replaced by a random one."""
    lines = TINY_CONFIG.splitlines()
    settable = [n for n, line in enumerate(lines) if " = " in line]
    number = draw(st.sampled_from(settable))
    key = lines[number].split(" = ", 1)[0]
    lines[number] = f"{key} = {toml_value(draw(toml_values))}"
    return "\n".join(lines) + "\n"


config_files = st.one_of(
    st.binary(max_size=200),
    toml_documents().map(lambda t: t.encode("utf-8", "surrogatepass")),
    near_valid_toml().map(lambda t: t.encode("utf-8", "surrogatepass")),
)

# -- the property -------------------------------------------------------------------------


def loads_or_refuses_clearly(
    path: Path, data: bytes, load: Callable[[Path], object], line_level: bool
) -> None:
    """`load(path)` returns, or raises EvalInputError naming `path`, with a fix, a line
    within the file when `line_level` errors are expected, and a message that prints."""
    path.write_bytes(data)
    try:
        load(path)
        event("loaded")
    except EvalInputError as error:
        kind = re.sub(r"'.*?'|[0-9]+", "_", error.problem)[:40]  # values left out: counted by kind
        event(f"refused: {kind}")  # shown by --hypothesis-show-statistics
        assert error.path == str(path)
        assert error.fix.strip() and error.problem.strip()
        lines = len(data.splitlines()) or 1
        if error.line is not None:
            assert 1 <= error.line <= lines, (error.line, lines)
        elif line_level:
            assert "empty" in error.problem, f"only a whole-file problem has no line: {error.problem}"
        message = f"error: {error}"
        message.encode("utf-8")  # printable on a UTF-8 terminal: no lone surrogates
        assert f"\n  fix: {error.fix}" in message


@fuzz
@given(corpus_files)
@example(b'{"id": "a", "text": ' + b"[" * 100_000 + b"]" * 100_000 + b"}")  # nested past the recursion limit
@example(b'{"id": "a", "text": "x", "title": ' + b"9" * 5000 + b"}")  # longer than int() accepts
def test_corpus_loader_never_crashes(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        loads_or_refuses_clearly(Path(folder) / "corpus.jsonl", data, load_corpus, line_level=True)


@fuzz
@given(golden_files)
@example(b'{"id": "q", "question": "x", "relevant": {"invoices": ' + b"1" * 5000 + b"}}")
def test_golden_loader_never_crashes(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "golden.jsonl"
        loads_or_refuses_clearly(path, data, lambda p: load_golden(p, CORPUS), line_level=True)


@fuzz
@given(config_files)
@example(b'[data]\ncorpus = "evals/\\u0000corpus.jsonl"\n')  # NUL in a path
@example(b'[tokenizer]\nlowercase = "\xc2\x85"\n""=false')  # U+0085 is no line break in TOML
@example(b"[gate.floors]\nmrr = " + b"9" * 400 + b"\n")  # an integer no float can hold
@example(b'[tokenizer]\nstopwords = ["a", "b"]\n')  # unhashable where a name belongs
@example(b'[tokenizer]\npattern = "' + b"(?:" * 200 + b"a" + b")" * 200 + b'"\n')  # deeply nested pattern
def test_config_loader_never_crashes(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        loads_or_refuses_clearly(Path(folder) / "eval.toml", data, load_config, line_level=False)


# -- through the command line: exit 2, never a traceback -----------------------------------


@settings(max_examples=max(EXAMPLES // 4, 10), suppress_health_check=[HealthCheck.too_slow])
@given(which=st.sampled_from(["corpus.jsonl", "golden.jsonl", "eval.toml"]), data=st.data())
def test_command_line_exits_2_on_any_broken_input(which: str, data: st.DataObject) -> None:
    """Whatever is in one of the three input files, `eval` exits 0 or 2 and never raises; on
    exit 2 stderr names the file and a fix, and no report is written."""
    strategy = {"corpus.jsonl": corpus_files, "golden.jsonl": golden_files, "eval.toml": config_files}[which]
    content = data.draw(strategy)
    with tempfile.TemporaryDirectory() as folder:
        config_path = write_project(Path(folder))
        (Path(folder) / which).write_bytes(content)
        with contextlib.redirect_stderr(io.StringIO()) as err, contextlib.redirect_stdout(io.StringIO()):
            code = run_cli(["--config", str(config_path), "eval", "--quiet"])
        assert code in (0, 2)
        if code == 2:
            assert "fix:" in err.getvalue()
            assert not (Path(folder) / "build" / "report.json").exists()


def test_command_line_refuses_a_broken_golden_file_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A concrete case of the above, readable: invalid UTF-8 on line 2 of the golden set."""
    config_path = write_project(tmp_path)
    (tmp_path / "golden.jsonl").write_bytes(json.dumps(TINY_GOLDEN[0]).encode() + b"\n\xff\xfe\n")
    assert run_cli(["--config", str(config_path), "eval"]) == 2
    err = capsys.readouterr().err
    assert "golden.jsonl:2: line is not valid UTF-8" in err and "fix: save the file as UTF-8" in err
