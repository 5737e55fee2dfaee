"""The gate's determinism check (gate/determinism.py, run.check_determinism): a part that
gives other outputs for the same question is exit 2 naming it, since the default rule would
fail it at random; a retriever that ranks otherwise when the generator searches is told apart
from a generator that varies."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from conftest import SHIPPED, run_cli
from rag_regress.answers import stand_in
from rag_regress.api import Answer, Document, Hit, Retriever, System, Tokenizer
from rag_regress.gate.determinism import RunSize, stochastic_fix
from rag_regress.retrieval.retrievers import bm25


def gate(project: Path, system: System, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    assert run_cli(["--config", str(project), "baseline"]) == 0
    capsys.readouterr()
    code = run_cli(["--config", str(project), "gate"], system)
    captured = capsys.readouterr()
    return code, captured.out + captured.err


class DepthDependent:
    """BM25's ranking at the depth the evaluation asks ([retrieval] depth = 10); at a smaller
    depth (the stand-in generator's own searches) the bottom of that ranking, best last: top
    results that change with the depth asked. Each call alone is deterministic."""

    def __init__(self, documents: list[Document], tokenize: Tokenizer, options: dict[str, Any]):
        self.inner = bm25.build(documents, tokenize, options)

    def search(self, question: str, depth: int) -> list[Hit]:
        hits = self.inner.search(question, 10)
        if depth >= 10:
            return hits
        bottom = hits[::-1][:depth]
        return [Hit(hit.doc_id, float(len(bottom) - i)) for i, hit in enumerate(bottom)]


class Drifting:
    """BM25 with scores that grow on every call: another ranking's scores each time."""

    calls = itertools.count()

    def __init__(self, documents: list[Document], tokenize: Tokenizer, options: dict[str, Any]):
        self.inner = bm25.build(documents, tokenize, options)

    def search(self, question: str, depth: int) -> list[Hit]:
        bump = next(self.calls)
        return [Hit(h.doc_id, h.score + bump) for h in self.inner.search(question, depth)]


class Chatty:
    """The stand-in's answer with a call counter appended: a generator that never says the
    same thing twice."""

    calls = itertools.count()

    def __init__(self, retriever: Retriever, documents: list[Document], options: dict[str, Any]):
        self.inner = stand_in.build(retriever, documents, options)

    def answer(self, question: str) -> Answer:
        answer = self.inner.answer(question)
        return Answer(f"{answer.text} ({next(self.calls)})", answer.contexts, answer.abstained)


class SecondTimeOther:
    """The stand-in's answer, but the second time a question is asked something else: a model
    server whose cache state changes one reply (llama.cpp's did) and then agrees again."""

    def __init__(self, retriever: Retriever, documents: list[Document], options: dict[str, Any]):
        self.inner = stand_in.build(retriever, documents, options)
        self.asked: dict[str, int] = {}

    def answer(self, question: str) -> Answer:
        answer = self.inner.answer(question)
        self.asked[question] = self.asked.get(question, 0) + 1
        if self.asked[question] == 2:
            return Answer(f"{answer.text} (again)", answer.contexts, answer.abstained)
        return answer


def test_a_deterministic_system_is_checked_and_passes(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = gate(project, SHIPPED, capsys)
    assert code == 0, out
    assert "determinism: the retriever and generator gave the same rankings and answers" in out


def test_a_generator_that_varies_is_exit_2_naming_it(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = gate(project, System(SHIPPED.build_retriever, Chatty), capsys)
    assert code == 2
    assert "the generator is not deterministic" in out and 'stochastic = ["generator"]' in out
    assert "the retriever answers the generator's searches" not in out


def test_a_retriever_that_varies_is_exit_2_naming_it(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = gate(project, System(Drifting, SHIPPED.build_generator), capsys)
    assert code == 2
    assert "the retriever is not deterministic" in out and "scores differ" in out


def test_a_generator_that_varies_once_is_named_not_the_deterministic_retriever(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Asked again from the retriever's fresh results the answers differ, and asked once more
    from the run's hits they agree: the retriever gave the generator the run's own passages,
    so the generator is what varies, not BM25."""
    code, out = gate(project, System(SHIPPED.build_retriever, SecondTimeOther), capsys)
    assert code == 2
    assert "the generator is not deterministic" in out and 'stochastic = ["generator"]' in out
    assert "the retriever answers the generator's searches" not in out


def test_a_retriever_ranking_otherwise_at_the_generators_depth_is_named_not_the_generator(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = gate(project, System(DepthDependent, SHIPPED.build_generator), capsys)
    assert code == 2
    assert "the retriever answers the generator's searches with another ranking" in out
    assert "the generator is not deterministic" not in out
    assert "return the first `depth` results of one ranking" in out


def test_a_generator_that_varies_is_told_the_exact_lines_and_what_they_cost(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A hosted API varies at temperature 0 with a seed: the first gate says which lines to
    add to eval.toml and what they cost, from this run's numbers (5 questions, repeats 5)."""
    code, out = gate(project, System(SHIPPED.build_retriever, Chatty), capsys)
    assert code == 2
    line = project.read_text(encoding="utf-8").splitlines().index("[gate]") + 1
    assert f"eval.toml:{line}: the generator is not deterministic" in out
    assert f"fix: declare it: put these lines under [gate] in eval.toml (line {line})" in out
    assert '\n      stochastic = ["generator"]\n      repeats = 5\n' in out
    assert "5 questions x 5 repeats = 25 generator calls a run instead of 5" in out
    assert "LLM judge" not in out, "the lexical judge asks no server"


def test_the_cost_counts_the_llm_judge_s_requests_and_the_parts_declared() -> None:
    size = RunSize(
        questions=60, repeats=5, stochastic=("judge",), judge_requests=40, judged=100, cached=20, line=7
    )
    fix = stochastic_fix("generator", size)
    assert 'stochastic = ["generator", "judge"]\n      repeats = 5' in fix and "(line 7)" in fix
    assert "60 questions x 5 repeats = 300 generator calls a run instead of 60" in fix
    assert "plus up to 5 x 48 = 240 LLM judge requests (this run: 40 for 100 sentences judged" in fix
    fix = stochastic_fix("retriever", RunSize(questions=10, repeats=3))
    assert "30 searches and 30 generator calls a run instead of 10 each" in fix and "judge" not in fix
    cached = RunSize(questions=10, repeats=3, judge_requests=0, judged=0, cached=50)
    assert "this run's verdicts all came from the verdict cache" in stochastic_fix("generator", cached)
    unjudged = RunSize(questions=74, repeats=5, judge_requests=195, judged=0, cached=481)
    said = stochastic_fix("generator", unjudged)  # a model that gave none of its asked items a verdict
    assert "this run: 195 requests and no verdict from them, so every run asks them again" in said
    assert "481 verdicts from the verdict cache" in said and "it made none" not in said
