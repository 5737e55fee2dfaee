"""A team's own retriever that misbehaves, through the command line: a clear error naming the
question (and its golden-set line), exit 2 and nothing written. An empty answer is valid."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import SHIPPED, run_cli, write_project
from rag_regress.api import Document, Hit, System
from rag_regress.inputs.data import Question
from rag_regress.retrieval.search import depth_warning, retrieve_all

TARGET = "2FA"  # question q2, on line 2 of the tiny golden set


class OneBadQuestion:
    """The shipped retriever, except that question TARGET gets `answer(depth)`."""

    def __init__(self, inner: Any, answer: Callable[[int], Any]):
        self.inner = inner
        self.answer = answer

    def search(self, question: str, depth: int) -> Any:
        return self.answer(depth) if question == TARGET else self.inner.search(question, depth)


def use(answer: Callable[[int], Any]) -> System:
    """The shipped system, its retriever wrapped in OneBadQuestion."""

    def build(documents: Any, tokenize: Any, options: Any) -> OneBadQuestion:
        return OneBadQuestion(SHIPPED.build_retriever(documents, tokenize, options), answer)

    return System(build, SHIPPED.build_generator)


def crash(depth: int) -> list[Hit]:
    raise TimeoutError("vector store did not answer in 30 s")


MISBEHAVIOURS: dict[str, tuple[Callable[[int], Any], str]] = {
    "raises": (crash, "the retriever raised TimeoutError: vector store did not answer in 30 s"),
    "nan score": (lambda depth: [Hit("2fa-setup", math.nan)], "score of '2fa-setup' is nan, not a finite"),
    "infinite score": (
        lambda depth: [Hit("2fa-setup", math.inf)],
        "score of '2fa-setup' is inf, not a finite",
    ),
    "duplicate id": (
        lambda depth: [Hit("2fa-setup", 2.0), Hit("sso-setup", 1.5), Hit("2fa-setup", 1.0)],
        "hit 3: document '2fa-setup' appears twice",
    ),
    "id not in corpus": (
        lambda depth: [Hit("2fa-setup", 2.0), Hit("2fa-setup-v2", 1.0)],
        "hit 2: document '2fa-setup-v2' is not in the corpus",
    ),
    "more than asked": (
        lambda depth: [Hit("2fa-setup", 1.0)] * (depth + 1),
        "asked for at most 10 hits, got 11",
    ),
    "not a list": (lambda depth: None, "search() must return a list of Hit(doc_id, score), got NoneType"),
    "scores increase": (
        lambda depth: [Hit("sso-setup", 0.1), Hit("2fa-setup", 0.9)],
        "scores must not increase down the ranking",
    ),
}


@pytest.mark.parametrize("command", ["eval", "baseline", "gate"])
@pytest.mark.parametrize("case", MISBEHAVIOURS)
def test_misbehaving_retriever_names_the_question_and_exits_2(
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    command: str,
    case: str,
) -> None:
    """Each misbehaviour stops every command with exit 2, a message naming q2 and its line
    in golden.jsonl and what was wrong, and leaves report and baseline untouched."""
    assert run_cli(["--config", str(project), "baseline"]) == 0  # a good baseline, for `gate`
    baseline = project.parent / "baseline.json"
    before = baseline.read_bytes()
    answer, problem = MISBEHAVIOURS[case]
    system = use(answer)
    capsys.readouterr()
    assert run_cli(["--config", str(project), command], system) == 2
    err = capsys.readouterr().err
    assert "golden.jsonl:2: question 'q2':" in err
    assert problem in err
    assert "fix: fix search() in retriever.py" in err
    assert baseline.read_bytes() == before
    assert not (project.parent / "build").exists()


def test_empty_answer_is_valid_and_scores_zero(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """[] for one question: eval exits 0, that question scores 0 on every metric and lists
    its relevant document as missing; the others keep their scores."""
    system = use(lambda depth: [])
    assert run_cli(["--config", str(project), "eval", "--quiet"], system) == 0
    report = json.loads((project.parent / "build" / "report.json").read_text(encoding="utf-8"))
    rows = {row["id"]: row for row in report["questions"]}
    assert rows["q2"]["retrieved"] == [] and rows["q2"]["found"] == []
    assert rows["q2"]["missing"] == ["2fa-setup"]
    assert set(rows["q2"]["metrics"].values()) == {0.0}
    assert rows["q1"]["metrics"]["hit@5"] == 1.0
    assert report["counts"]["evaluated"] == 4


def test_gate_fails_when_an_empty_answer_loses_a_question(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An empty answer is valid input, so it is judged, not refused: q2 passed its checks in
    the baseline and now finds nothing, so the gate names it as newly failing, which fails
    it (exit 3: no flip is allowed by default); the same empty answer for must-pass q1 fails
    it as must-pass too."""
    assert run_cli(["--config", str(project), "baseline"]) == 0
    system = use(lambda depth: [])
    capsys.readouterr()
    assert run_cli(["--config", str(project), "gate"], system) == 3
    out = capsys.readouterr().out
    assert re.search(r"\[newly failing[^\]]*\] q2 ", out) and "GATE FAILED" in out
    monkeypatch.setitem(globals(), "TARGET", "SSO")  # q1, must-pass
    assert run_cli(["--config", str(project), "gate"], system) == 3
    out = capsys.readouterr().out
    assert re.search(r"\[must-pass, newly failing[^\]]*\] q1 ", out) and "GATE FAILED" in out


def test_gate_never_passes_when_no_question_was_evaluated(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A golden set with only unanswerable questions evaluates nothing: the gate refuses
    (exit 2) instead of passing against the baseline, and writes no report."""
    assert run_cli(["--config", str(project), "baseline"]) == 0
    write_project(
        project.parent,
        golden=[{"id": "u1", "question": "Is there a fax line?", "relevant": {}, "answerable": False}],
    )
    capsys.readouterr()
    assert run_cli(["--config", str(project), "gate"]) == 2  # the golden set changed: refused first
    assert "golden sha256" in capsys.readouterr().err
    assert run_cli(["--config", str(project), "gate", "--accept-changed-data"]) == 2
    err = capsys.readouterr().err
    assert "golden.jsonl" in err and "nothing can be evaluated" in err
    assert not (project.parent / "build").exists()


def test_a_crash_while_building_the_retriever_exits_2_and_names_the_fix(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """build_retriever itself raising (say, an index that cannot be opened) is a clear
    error with exit 2 naming retriever.py, not a traceback; nothing is written."""

    def build(documents: Any, tokenize: Any, options: Any) -> None:
        raise FileNotFoundError("index/faiss.bin")

    system = System(build, SHIPPED.build_generator)  # type: ignore[arg-type]  # it never returns
    assert run_cli(["--config", str(project), "eval"], system) == 2
    err = capsys.readouterr().err
    assert "build_retriever raised FileNotFoundError: index/faiss.bin" in err
    assert "fix: fix build_retriever in retriever.py" in err
    assert not (project.parent / "build").exists()


Answer = Callable[[list[str], int], Any]


class Batched:
    """The shipped retriever behind `search_many` only, counting calls; `search` must not be used."""

    def __init__(self, inner: Any, answer: Answer | None):
        self.inner, self.answer, self.calls = inner, answer, []

    def search(self, question: str, depth: int) -> list[Hit]:
        raise AssertionError("search() called although search_many() exists")

    def search_many(self, questions: list[str], depth: int) -> Any:
        self.calls.append(list(questions))
        if self.answer is not None:
            return self.answer(questions, depth)
        return [self.inner.search(question, depth) for question in questions]


def use_batched(answer: Answer | None = None) -> tuple[System, list[Batched]]:
    """The shipped system, its retriever behind Batched; and the list of what it built."""
    made: list[Batched] = []

    def build(documents: Any, tokenize: Any, options: Any) -> Batched:
        made.append(Batched(SHIPPED.build_retriever(documents, tokenize, options), answer))
        return made[-1]

    return System(build, SHIPPED.build_generator), made


def test_search_many_answers_every_question_in_one_call_with_the_same_report(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A retriever with search_many is asked once, for all questions in golden-set order;
    search() is never called, not even by the generator (it reuses the evaluated hits), and
    the report is the one the same hits give through search()."""
    assert run_cli(["--config", str(project), "eval", "--quiet"]) == 0
    report_path = project.parent / "build" / "report.json"
    plain = json.loads(report_path.read_text(encoding="utf-8"))
    system, made = use_batched()
    assert run_cli(["--config", str(project), "eval", "--quiet"], system) == 0
    batched = json.loads(report_path.read_text(encoding="utf-8"))
    (retriever,) = made
    assert retriever.calls == [[row["question"] for row in plain["questions"]]]
    assert batched["questions"] == plain["questions"] and batched["aggregate"] == plain["aggregate"]


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        (lambda questions, depth: crash(depth), "search_many raised TimeoutError: vector store did not"),
        (lambda questions, depth: [[]] * (len(questions) - 1), "one list of hits per question (5), got 4"),
        (lambda questions, depth: None, "one list of hits per question (5), got NoneType"),
    ],
    ids=["raises", "one answer short", "not a list"],
)
def test_a_broken_search_many_exits_2_and_names_the_fix(
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    answer: Answer,
    problem: str,
) -> None:
    """A crash in search_many, or not one list per question: exit 2, the fix, nothing written."""
    system, _ = use_batched(answer)
    assert run_cli(["--config", str(project), "eval"], system) == 2
    err = capsys.readouterr().err
    assert "golden.jsonl" in err and problem in err
    assert "fix: fix search_many() in retriever.py" in err
    assert not (project.parent / "build").exists()


def test_a_bad_answer_from_search_many_names_its_question(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each list search_many returns is checked like one from search(): q2's bad list names q2."""

    def answer(questions: list[str], depth: int) -> list[list[Hit]]:
        return [[Hit("2fa-setup", math.nan)] if q == TARGET else [] for q in questions]

    system, _ = use_batched(answer)
    assert run_cli(["--config", str(project), "eval"], system) == 2
    err = capsys.readouterr().err
    assert "golden.jsonl:2: question 'q2':" in err and "score of '2fa-setup' is nan" in err
    assert "fix: fix search_many() in retriever.py" in err


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["a", "b", "c", "d", "e", "zz", 7, None]),
            st.one_of(st.floats(allow_nan=True), st.integers(-3, 3), st.sampled_from(["1.5", "x", True])),
        ),
        max_size=6,
    ),
    st.booleans(),
)
def test_the_fast_check_of_hits_agrees_with_the_hit_by_hit_one(
    pairs: list[tuple[Any, Any]], as_hits: bool
) -> None:
    """check_hits takes whole-list shortcuts for well-formed rankings (ranking._well_formed):
    on any input it returns the same hits, or raises the same error, as the walk hit by hit."""
    from rag_regress.retrieval import ranking

    hits: list[Any] = [Hit(d, s) if as_hits and isinstance(d, str) else (d, s) for d, s in pairs]
    known = {"a", "b", "c", "d", "e"}

    def outcome() -> object:
        try:
            return ranking.check_hits(hits, 5, known)
        except ranking.RetrieverOutputError as error:
            return str(error)

    fast = outcome()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ranking, "_well_formed", lambda *args: None)
        assert outcome() == fast


class StopsAt:
    """A retriever with a limit of its own: every document scored, but never more than `limit`."""

    def __init__(self, ids: list[str], limit: int):
        self.ids, self.limit = ids, limit

    def search(self, question: str, depth: int) -> list[Hit]:
        return [Hit(doc_id, 1.0 / rank) for rank, doc_id in enumerate(self.ids[: min(depth, self.limit)], 1)]


def _shallow(limit: int, depth: int, capsys: pytest.CaptureFixture[str]) -> str:
    corpus = {f"d{i:02d}": Document(f"d{i:02d}", f"text {i}") for i in range(40)}
    questions = [Question(f"q{i}", f"question {i}", {"d00": 1}) for i in range(6)]
    ranked = retrieve_all(StopsAt(list(corpus), limit), questions, corpus, depth, Path("golden.jsonl"))
    assert all(len(hits) == min(limit, depth) for hits in ranked)
    return capsys.readouterr().err


def test_a_retriever_that_stops_short_of_depth_is_a_warning(capsys: pytest.CaptureFixture[str]) -> None:
    """Depth 30 of a 40-document corpus, but every question gets exactly 20 hits: a limit of the
    retriever's own, which every metric looking deeper than 20 would take for misses."""
    err = _shallow(20, 30, capsys)
    assert "warning: 6 of 6 questions got exactly 20 hits, fewer than [retrieval] depth = 30" in err
    assert "the corpus has 40 documents" in err and "raise that limit to at least 30" in err
    assert _shallow(30, 30, capsys) == ""  # depth filled: nothing to say
    assert _shallow(50, 30, capsys) == ""


def test_short_rankings_of_different_lengths_are_no_limit() -> None:
    """A lexical retriever returns only the documents sharing a word: short lists of many
    lengths, and lists of a few documents, are not a limit."""

    def ranking(n: int) -> list[Hit]:
        return [Hit(f"d{i}", 1.0) for i in range(n)]

    assert depth_warning([ranking(n) for n in (11, 12, 13, 14, 15, 16)], 100, 1000) is None
    assert depth_warning([ranking(3)] * 6, 100, 1000) is None  # a few: not a limit
    assert depth_warning([ranking(12)] * 6, 100, 12) is None  # the whole corpus came back
    assert depth_warning([ranking(12)] * 6, 100, 1000) is not None
