"""Fuzzing the qrels and run readers: whatever the bytes, they load or raise EvalInputError.

Never a KeyError, TypeError, UnicodeDecodeError or JSONDecodeError traceback; and `compare`
on fuzzed files exits 0, 2 or 3. Examples per test: FUZZ_EXAMPLES (default 60, to keep the
suite fast); for a long run: `FUZZ_EXAMPLES=3000 pytest tests/test_trec_fuzz.py`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from conftest import run_cli
from rag_regress.errors import EvalInputError
from rag_regress.interop.trec import load_qrels, load_runs

FUZZ = settings(
    max_examples=int(os.environ.get("FUZZ_EXAMPLES", "60")),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

ids = st.sampled_from(["q1", "q2", "d1", "d2", "", " ", "a b", "é", "\ud800"]) | st.text(max_size=4)
scalars = st.none() | st.booleans() | st.integers() | st.integers(10**300, 10**400) | st.floats() | ids
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(ids, inner, max_size=4),
    max_leaves=20,
)
# Near-valid shapes reach the checks deep inside the readers: {qid: ranking-like}, {name: {qid: ...}}.
rankings = st.lists(ids | scalars, max_size=5) | st.dictionaries(ids, scalars, max_size=5)
shapes = st.dictionaries(ids, rankings, max_size=4) | st.dictionaries(
    ids, st.dictionaries(ids, rankings, max_size=3) | scalars, max_size=3
)
# ... and mostly valid files reach the checks that follow a successful parse.
safe = st.sampled_from(["q1", "q2", "d1", "d2", "d3"])
numbers = st.integers(-2, 3) | st.floats(-2, 3)
plausible = st.dictionaries(
    safe, st.lists(safe, max_size=4) | st.dictionaries(safe, numbers, max_size=4), max_size=3
) | st.dictionaries(safe, st.dictionaries(safe, st.lists(safe, max_size=4), max_size=3), max_size=2)
fields = st.sampled_from(["q1", "0", "Q0", "d1", "d2", "1", "-2", "2.5", "nan", "inf", "1e999", "x", "run"])
row = (
    st.lists(fields, max_size=7)
    | st.lists(fields, min_size=4, max_size=4)
    | st.lists(fields, min_size=6, max_size=6)
)
trec_lines = st.lists(row.map(" ".join), max_size=6).map("\n".join)


def encode(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8", errors="surrogatepass")


documents = (
    st.binary(max_size=200)
    | json_values.map(encode)
    | shapes.map(encode)
    | plausible.map(encode)
    | trec_lines.map(str.encode)
    | st.text(max_size=100).map(lambda text: text.encode("utf-8", errors="surrogatepass"))
)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


def check_loads_or_refuses(loader, path: Path) -> object | None:
    try:
        loaded = loader(path)
    except EvalInputError as error:
        assert error.path == str(path) and error.problem and error.fix
        str(error).encode("utf-8")  # printable as it will be printed
        event("refused")
        return None
    event("loaded")  # --hypothesis-show-statistics shows how often each happened
    return loaded


@FUZZ
@given(data=documents)
def test_qrels_reader_loads_or_refuses(folder: Path, data: bytes) -> None:
    path = folder / "qrels"
    path.write_bytes(data)
    qrels = check_loads_or_refuses(load_qrels, path)
    if qrels is not None:
        assert qrels and all(
            isinstance(grade, int) and not isinstance(grade, bool)
            for judged in qrels.values()
            for grade in judged.values()
        )


@FUZZ
@given(data=documents)
def test_run_reader_loads_or_refuses(folder: Path, data: bytes) -> None:
    path = folder / "run"
    path.write_bytes(data)
    runs = check_loads_or_refuses(load_runs, path)
    if runs is not None:
        for run in runs.values():
            assert run
            for ranking in run.values():
                assert all(isinstance(doc_id, str) and doc_id for doc_id in ranking)
                assert len(set(ranking)) == len(ranking)


@FUZZ
@given(qrels=documents, runs=documents, k=st.integers(1, 3))
def test_compare_on_fuzzed_files_exits_0_2_or_3(folder: Path, qrels: bytes, runs: bytes, k: int) -> None:
    (folder / "q").write_bytes(qrels)
    (folder / "r.json").write_bytes(runs)
    args = ["compare", "--qrels", str(folder / "q"), "--runs", str(folder / "r.json"), "--k", str(k)]
    code = run_cli([*args, "--baseline", "r", "--candidate", "r"])
    event(f"exit {code}")
    assert code in (0, 2, 3)
