# Engine test (the template's: `cruft update` keeps it current). It runs the shipped retriever
# and the stand-in generator, never your retriever.py or generator.py: see tests/conftest.py.
"""run.evaluate(): per-question rows, averages that leave unanswerable questions out, slices,
and clear errors when the retriever misbehaves."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from conftest import SHIPPED, TINY_GOLDEN, evaluate_shipped, set_min_length, write_project

from {{ cookiecutter.package_name }}.answers.settings import ANSWER_CHECKS
from {{ cookiecutter.package_name }}.api import Hit, System
from {{ cookiecutter.package_name }}.errors import EvalInputError
from {{ cookiecutter.package_name }}.settings.config import load_config


@pytest.fixture
def report(project: Path) -> dict[str, Any]:
    """The report of the tiny project (see conftest for what each question retrieves)."""
    return evaluate_shipped(load_config(project))


def rows_by_id(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {row["id"]: row for row in report["questions"]}


def test_report_header_and_counts(report: dict[str, Any]) -> None:
    """5 questions, 1 unanswerable: 4 evaluated, 1 left out; settings are recorded."""
    assert report["format"] == "rag-eval-report" and report["version"] == 2
    assert report["counts"] == {"questions": 5, "evaluated": 4, "left_out": 1}
    settings = report["settings"]
    assert settings["k"] == 5 and settings["depth"] == 10
    assert settings["metrics"] == ["precision@5", "recall@5", "hit@5", "mrr", "ndcg@5", "map", "rprec"]
    assert settings["tokenizer"]["min_length"] == 1
    assert settings["retriever"]["name"]
    assert isinstance(settings["retriever"]["options"], dict)
    assert json.loads(json.dumps(report)) == report  # plain JSON data


def test_unanswerable_questions_have_no_metrics(report: dict[str, Any]) -> None:
    """q5 is still retrieved for (shown in the table) but scores nothing."""
    q5 = rows_by_id(report)["q5"]
    assert q5["answerable"] is False
    assert q5["metrics"] is None and q5["checks"] is None


@pytest.mark.keyword
def test_aggregate_leaves_unanswerable_questions_out(report: dict[str, Any]) -> None:
    """Means over the 4 answerable questions only.

    recall@5:    q1..q3 find their one relevant doc (1.0 each); q4 finds invoices but not
                 export-data (1/2). Mean (1 + 1 + 1 + 0.5) / 4 = 0.875
                 (averaging q5 in as 0 would give 3.5 / 5 = 0.7).
    precision@5: every question has exactly 1 relevant doc in its top 5 -> 1/5 each -> 0.2.
    hit@5:       all four -> 1.0.
    """
    aggregate = report["aggregate"]
    assert aggregate["recall@5"] == pytest.approx(0.875)
    assert aggregate["precision@5"] == pytest.approx(0.2)
    assert aggregate["hit@5"] == 1.0
    assert set(aggregate) == set(report["settings"]["metrics"]) | set(ANSWER_CHECKS)


@pytest.mark.keyword
def test_rows_follow_the_golden_order_with_found_and_missing(report: dict[str, Any]) -> None:
    """found = relevant ids within the top k, in rank order; missing = the rest by grade."""
    assert [row["id"] for row in report["questions"]] == ["q1", "q2", "q3", "q4", "q5"]
    rows = rows_by_id(report)
    assert rows["q4"]["found"] == ["invoices"]
    assert rows["q4"]["missing"] == ["export-data"]
    assert [doc_id for doc_id, _ in rows["q4"]["retrieved"]] == ["invoices"]
    assert rows["q1"]["found"] == ["sso-setup"] and rows["q1"]["missing"] == []
    assert rows["q4"]["metrics"]["recall@5"] == pytest.approx(0.5)  # 1 of 2 relevant
    assert rows["q4"]["checks"] == {"hit@5": True, "recall@5": False}  # thresholds 1.0


@pytest.mark.keyword
def test_slices_per_tag(report: dict[str, Any]) -> None:
    """One slice per tag: its question count, evaluated count and means over evaluated ones."""
    slices = report["slices"]
    assert sorted(slices) == ["acronym", "billing", "security", "unanswerable"]
    assert slices["acronym"]["questions"] == 3 and slices["acronym"]["evaluated"] == 3
    assert slices["acronym"]["metrics"]["recall@5"] == 1.0
    # billing = q4 (recall 1/2) + q5 (unanswerable, left out) -> mean over q4 alone = 0.5
    assert slices["billing"]["questions"] == 2 and slices["billing"]["evaluated"] == 1
    assert slices["billing"]["metrics"]["recall@5"] == pytest.approx(0.5)
    assert slices["unanswerable"] == {"questions": 1, "evaluated": 0, "metrics": None}


@pytest.mark.keyword
def test_min_length_four_breaks_the_acronym_questions(tmp_path: Path) -> None:
    """q1-q3 retrieve nothing: recall@5 = (0 + 0 + 0 + 0.5) / 4 = 0.125, hit@5 = 1/4."""
    config_path = write_project(tmp_path)
    set_min_length(config_path, 4)
    report = evaluate_shipped(load_config(config_path))
    rows = rows_by_id(report)
    for qid in ["q1", "q2", "q3"]:
        assert rows[qid]["retrieved"] == [] and rows[qid]["found"] == []
    assert report["aggregate"]["recall@5"] == pytest.approx(0.125)
    assert report["aggregate"]["hit@5"] == pytest.approx(0.25)


class _Scripted:
    """A stand-in retriever: fixed answers per question, or an exception."""

    def __init__(self, answers: dict[str, Any]):
        self.answers = answers

    def search(self, question: str, depth: int) -> list[Hit]:
        answer = self.answers.get(question, [])
        if isinstance(answer, Exception):
            raise answer
        return answer


def scripted(answers: dict[str, Any]) -> System:
    """The shipped generator on a retriever that gives each question its scripted answer."""
    return System(lambda documents, tokenize, options: _Scripted(answers), SHIPPED.build_generator)


def test_crashing_retriever_names_the_question_and_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A crash on one question says which question (and golden line) reproduces it."""
    config_path = write_project(tmp_path, golden=[TINY_GOLDEN[0], "", TINY_GOLDEN[1], TINY_GOLDEN[2]])
    system = scripted({"API": RuntimeError("index not loaded")})
    with pytest.raises(EvalInputError) as caught:
        evaluate_shipped(load_config(config_path), system=system)
    message = str(caught.value)
    assert "golden.jsonl:4:" in message  # q3 is on line 4 (line 2 is blank)
    assert "'q3'" in message
    assert "RuntimeError: index not loaded" in message


def test_bad_retriever_output_names_the_question(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A document id outside the corpus is reported against the question that produced it."""
    config_path = write_project(tmp_path)
    system = scripted({"2FA": [Hit("2fa-setup", 2.0), Hit("ghost-doc", 1.0)]})
    with pytest.raises(EvalInputError) as caught:
        evaluate_shipped(load_config(config_path), system=system)
    message = str(caught.value)
    assert "golden.jsonl:2:" in message and "'q2'" in message
    assert "bad retriever output" in message and "'ghost-doc' is not in the corpus" in message


def test_scripted_ranking_is_scored_by_hand(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With a fixed ranking for q4 (export-data at 1, a miss at 2, invoices at 3):
    mrr = 1/1 = 1; map = (1/1 + 2/3) / 2 = 0.8333; ndcg@5 = (1 + 3/log2(4)) / (3 + 1/log2(3))
    = 2.5 / 3.63093 = 0.68853. Other questions get nothing (all 0)."""
    config_path = write_project(tmp_path)
    ranking = [Hit("export-data", 3.0), Hit("api-keys", 2.0), Hit("invoices", 1.0)]
    system = scripted({"download invoices": ranking})
    report = evaluate_shipped(load_config(config_path), system=system)
    q4 = rows_by_id(report)["q4"]["metrics"]
    assert q4["mrr"] == 1.0
    assert q4["map"] == pytest.approx((1 + 2 / 3) / 2)
    assert q4["ndcg@5"] == pytest.approx((1 + 3 / math.log2(4)) / (3 + 1 / math.log2(3)))
    # the mean over 4 evaluated questions: q4's value / 4
    assert report["aggregate"]["map"] == pytest.approx((1 + 2 / 3) / 2 / 4)


def test_found_and_missing_look_at_the_top_k_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With k = 3, invoices at rank 4 is 'missing' (the table's top k) although recall@5
    counts it: recall@5 = 1 of 2 relevant = 0.5, mrr = 1/4, hit@5 = 1."""
    config_path = write_project(tmp_path)
    config_path.write_text(
        config_path.read_text(encoding="utf-8").replace("k = 5", "k = 3"), encoding="utf-8"
    )
    ranking = [Hit("sso-setup", 4.0), Hit("api-keys", 3.0), Hit("2fa-setup", 2.0), Hit("invoices", 1.0)]
    system = scripted({"download invoices": ranking})
    q4 = rows_by_id(evaluate_shipped(load_config(config_path), system=system))["q4"]
    assert q4["found"] == []
    assert q4["missing"] == ["invoices", "export-data"]  # grade 3 before grade 1
    assert q4["metrics"]["recall@5"] == pytest.approx(0.5)
    assert q4["metrics"]["mrr"] == pytest.approx(1 / 4)
    assert q4["metrics"]["hit@5"] == 1.0


def test_all_unanswerable_golden_set_is_refused(tmp_path: Path) -> None:
    """Nothing answerable means no average at all: refused instead of reporting zeros."""
    golden = [
        {"id": "u1", "question": "mobile app?", "relevant": {}, "answerable": False},
        {"id": "u2", "question": "fax support?", "relevant": {}, "answerable": False},
    ]
    with pytest.raises(EvalInputError, match="nothing can be evaluated") as caught:
        evaluate_shipped(load_config(write_project(tmp_path, golden=golden)))
    assert "golden.jsonl" in str(caught.value)
