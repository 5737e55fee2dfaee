"""Measured flakiness (gate/variation.py): each question's variation over the repeats of a
stochastic run, in the report and the console, and [gate] max_variation leaving the questions
too variable at the baseline out of the per-question comparison, naming them."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from conftest import TINY_CORPUS, run_cli, write_project
from rag_regress.api import ABSTENTION, Answer, Context, Document, Retriever, System
from rag_regress.gate.variation import describe, flaky_at_baseline, most_variable, question_variation
from rag_regress.retrieval.retrievers import bm25

TEXTS = {document["id"]: str(document["text"]) for document in TINY_CORPUS}


def test_a_question_varies_by_the_share_of_runs_that_pass_and_the_spread_of_its_values() -> None:
    entry = question_variation(
        {"faithfulness": [1.0, 0.5, 1.0, 0.5], "hit@5": [1.0] * 4, "mrr": [1.0, 1.0, 0.5, 1.0]},
        {"faithfulness": 1.0, "hit@5": 1.0},
    )
    assert entry is not None
    assert entry["score"] == 1.0 and entry["passes"] == {"faithfulness": 0.5}  # hit@5 never moves
    assert entry["spread"]["faithfulness"] == pytest.approx(0.288675, abs=1e-6)
    assert set(entry["spread"]) == {"faithfulness", "mrr"}
    assert describe(entry, 4).startswith("faithfulness passes in 2 of 4 runs; faithfulness sd 0.289")
    # three of four runs pass: 2 x min(0.75, 0.25)
    assert question_variation({"hit@5": [1, 1, 1, 0]}, {"hit@5": 1.0})["score"] == 0.5  # type: ignore[index]
    assert question_variation({"hit@5": [1.0] * 4, "mrr": [0.5] * 4}, {"hit@5": 1.0}) is None
    assert question_variation({"faithfulness": [1.0, None, 0.5]}, {"faithfulness": 1.0}) == {
        "score": 1.0,
        "passes": {"faithfulness": 0.5},
        "spread": {},  # a run without a value: no spread
    }


def test_the_most_variable_come_first_and_a_limit_picks_the_flaky() -> None:
    stochastic = {
        "repeats": 4,
        "variation": {
            "q1": {"score": 0.5, "passes": {"hit@5": 0.75}, "spread": {}},
            "q2": {"score": 1.0, "passes": {"faithfulness": 0.5}, "spread": {"faithfulness": 0.29}},
            "q3": {"score": 0.0, "passes": {}, "spread": {"mrr": 0.1}},
        },
    }
    assert [line.split(" ")[0] for line in most_variable(stochastic, 10)] == ["q2", "q1", "q3"]
    assert most_variable(stochastic, 1) == [
        "q2 (variation 1.00): faithfulness passes in 2 of 4 runs; faithfulness sd 0.290"
    ]
    assert list(flaky_at_baseline(stochastic, 0.5)) == ["q2"]
    assert flaky_at_baseline(stochastic, None) == {} and flaky_at_baseline(None, 0.1) == {}


class Wavering:
    """Answers each question with its best passage; on every other call of "2FA" (q2) adds a
    sentence no passage says: q2's faithfulness is 1.0 in half the runs, 0.5 in the others."""

    def __init__(self, retriever: Retriever, documents: list[Document], options: dict[str, Any]):
        self.retriever = retriever
        self.calls: Counter[str] = Counter()

    def answer(self, question: str) -> Answer:
        hits = self.retriever.search(question, 1)
        if not hits:
            return Answer(ABSTENTION, [], abstained=True)
        text = TEXTS[hits[0].doc_id]
        self.calls[question] += 1
        said = (
            text + " The company was founded in 1987."
            if question == "2FA" and self.calls[question] % 2
            else text
        )
        return Answer(said, [Context(hits[0].doc_id, text)])


def stochastic_project(tmp_path: Path, extra: str = "") -> Path:
    config = write_project(tmp_path)
    text = config.read_text(encoding="utf-8")
    config.write_text(
        text.replace("[gate]\n", f'[gate]\nstochastic = ["generator"]\nrepeats = 4\n{extra}', 1),
        encoding="utf-8",
    )
    return config


def test_the_report_and_the_console_name_the_questions_that_vary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = stochastic_project(tmp_path)
    assert run_cli(["--config", str(config), "eval"], System(bm25.build, Wavering)) == 0
    out = capsys.readouterr().out
    assert "Questions that vary over the 4 runs: 1" in out
    assert "  q2 (variation 1.00): faithfulness passes in 2 of 4 runs" in out
    report = json.loads((tmp_path / "build" / "report.json").read_text(encoding="utf-8"))
    assert list(report["settings"]["stochastic"]["variation"]) == ["q2"]


def test_max_variation_leaves_the_flaky_questions_out_naming_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = stochastic_project(tmp_path, "max_variation = 0.5\n")
    system = System(bm25.build, Wavering)
    assert run_cli(["--config", str(config), "baseline"], system) == 0
    baseline = json.loads((tmp_path / "baseline.json").read_text(encoding="utf-8"))
    assert list(baseline["settings"]["stochastic"]["variation"]) == ["q2"]
    capsys.readouterr()
    assert run_cli(["--config", str(config), "gate"], system) == 0
    out = capsys.readouterr().out
    assert (
        "1 question(s) left out of the per-question checks and paired tests, too variable at the baseline "
        "([gate] max_variation 0.5): q2 (faithfulness passes in 2 of 4 runs" in out
    )
    report = json.loads((tmp_path / "build" / "report.json").read_text(encoding="utf-8"))
    flips = {entry["check"]: entry for entry in report["comparison"]["flips"]}
    assert flips["faithfulness"]["applicable"] == 4  # q2 left out of the five answered
