"""`[retrieval] ties` and `relevance_level` through the command line: which order is evaluated,
the warning naming the questions whose tied scores the retriever ordered otherwise, the two
settings recorded in the report, and the gate refusing (exit 2, never 3) a baseline measured
with other values, while a baseline that predates them reads as the defaults."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import SHIPPED, TINY_CONFIG, TINY_GOLDEN, evaluate_shipped, run_cli, write_project
from rag_regress.api import Document, Hit, System, Tokenizer
from rag_regress.retrieval.ranking import (
    RetrieverOutputError,
    check_hits,
    evaluated_order,
    tie_warning,
    trec_order,
)
from rag_regress.settings.config import load_config

# Every question gets the same two documents, whose scores are one float32 (12.5): listed by
# id ascending, the other order than trec_eval's. q1's relevant document is sso-setup.
TIED = [Hit("2fa-setup", 12.5), Hit("sso-setup", 12.500000001)]


class TiedRetriever:
    def search(self, question: str, depth: int) -> list[Hit]:
        return TIED[:depth]


def build_tied(corpus: list[Document], tokenizer: Tokenizer, options: dict[str, Any]) -> TiedRetriever:
    return TiedRetriever()


TIED_SYSTEM = System(build_tied, SHIPPED.build_generator)


def with_settings(text: str, **settings: object) -> str:
    """TINY_CONFIG's [retrieval] with these settings added."""
    lines = "".join(f"{key} = {json.dumps(value)}\n" for key, value in settings.items())
    return text.replace("[retrieval]\n", f"[retrieval]\n{lines}", 1)


def mrr_of_q1(report: dict[str, Any]) -> float:
    (row,) = [row for row in report["questions"] if row["id"] == "q1"]
    return float(row["metrics"]["mrr"])


def test_tied_scores_follow_trec_eval_by_default_with_a_warning_naming_the_questions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = write_project(tmp_path)
    report = evaluate_shipped(load_config(project), system=TIED_SYSTEM)
    assert [doc_id for doc_id, _ in report["questions"][0]["retrieved"]] == ["sso-setup", "2fa-setup"]
    assert mrr_of_q1(report) == 1.0
    err = capsys.readouterr().err
    ids = [question["id"] for question in TINY_GOLDEN]
    assert f"{len(ids)} question(s) have tied scores" in err
    assert all(qid in err for qid in ids) and 'ties = "retriever"' in err


def test_ties_retriever_evaluates_the_retrievers_own_order_without_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = write_project(tmp_path, config=with_settings(TINY_CONFIG, ties="retriever"))
    report = evaluate_shipped(load_config(project), system=TIED_SYSTEM)
    assert [doc_id for doc_id, _ in report["questions"][0]["retrieved"]] == ["2fa-setup", "sso-setup"]
    assert mrr_of_q1(report) == 0.5
    assert "tied scores" not in capsys.readouterr().err


def test_the_warning_lists_a_few_ids_and_counts_the_rest() -> None:
    ids = [f"q{i}" for i in range(12)]
    in_order = evaluated_order([TIED] * 12, "trec_eval")
    warning = tie_warning(ids, [TIED] * 12, in_order)
    assert warning is not None and "12 question(s)" in warning
    assert "q0, q1, q2, q3, q4 and 7 more" in warning
    assert tie_warning(ids, [trec_order(TIED)] * 12, in_order) is None  # given in trec_eval's order
    assert tie_warning(ids, [TIED] * 12, evaluated_order([TIED] * 12, "retriever")) is None


def test_scores_may_rise_only_within_one_float32() -> None:
    """check_hits compares scores as trec_eval does: a rise within one float32 is a tie the
    tie rule orders; a rise float32 can tell is refused."""
    assert check_hits(TIED, 2, {"2fa-setup", "sso-setup"}) == TIED
    with pytest.raises(RetrieverOutputError, match="hit 2: scores must not increase"):
        check_hits([Hit("2fa-setup", 12.5), Hit("sso-setup", 12.501)], 2, {"2fa-setup", "sso-setup"})


def test_relevance_level_2_ignores_grade_1_documents_in_binary_metrics(tmp_path: Path) -> None:
    """q4's export-data has grade 1: at level 2 recall@5 counts only invoices (grade 3), and
    found/missing list only documents at the level (whatever the retriever finds)."""
    reports = {
        level: evaluate_shipped(
            load_config(
                write_project(tmp_path / str(level), config=with_settings(TINY_CONFIG, relevance_level=level))
            )
        )
        for level in (1, 2)
    }
    rows = {level: {row["id"]: row for row in report["questions"]} for level, report in reports.items()}
    one, two = rows[1]["q4"], rows[2]["q4"]
    assert sorted(one["found"] + one["missing"]) == ["export-data", "invoices"]
    assert two["found"] + two["missing"] == ["invoices"]
    assert one["metrics"]["recall@5"] == len(one["found"]) / 2
    assert two["metrics"]["recall@5"] == len(two["found"]) / 1
    assert reports[2]["settings"]["relevance_level"] == 2


def test_the_report_records_both_settings(tmp_path: Path) -> None:
    report = evaluate_shipped(load_config(write_project(tmp_path)))
    assert report["settings"]["ties"] == "trec_eval" and report["settings"]["relevance_level"] == 1


@pytest.mark.parametrize(
    ("setting", "named"),
    [
        ({"ties": "retriever"}, "ties trec_eval -> retriever"),
        ({"relevance_level": 2}, "relevance_level 1 -> 2"),
    ],
)
def test_the_gate_asks_for_a_new_baseline_when_a_setting_changed(
    tmp_path: Path, setting: dict[str, object], named: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same metric names measured another way: exit 2 naming the setting and the fix,
    never 3 (a regression) and never 0."""
    project = write_project(tmp_path)
    assert run_cli(["--config", str(project), "baseline"]) == 0
    project.write_text(with_settings(TINY_CONFIG, **setting), encoding="utf-8")
    capsys.readouterr()
    assert run_cli(["--config", str(project), "gate"]) == 2
    err = capsys.readouterr().err
    assert named in err and "nox -s baseline" in err and "Traceback" not in err


def test_a_baseline_made_before_the_settings_existed_reads_as_the_defaults(tmp_path: Path) -> None:
    project = write_project(tmp_path)
    assert run_cli(["--config", str(project), "baseline"]) == 0
    baseline = tmp_path / "baseline.json"
    data = json.loads(baseline.read_text(encoding="utf-8"))
    del data["settings"]["ties"], data["settings"]["relevance_level"]
    baseline.write_text(json.dumps(data), encoding="utf-8")
    assert run_cli(["--config", str(project), "gate"]) == 0
    project.write_text(with_settings(TINY_CONFIG, relevance_level=2), encoding="utf-8")
    assert run_cli(["--config", str(project), "gate"]) == 2


@pytest.mark.parametrize(
    ("key", "value"), [("ties", "score"), ("relevance_level", 0), ("relevance_level", 1.5)]
)
def test_bad_values_are_exit_2_naming_the_key(
    tmp_path: Path, key: str, value: object, capsys: pytest.CaptureFixture[str]
) -> None:
    project = write_project(tmp_path, config=with_settings(TINY_CONFIG, **{key: value}))
    assert run_cli(["--config", str(project), "eval"]) == 2
    err = capsys.readouterr().err
    assert f"retrieval.{key}" in err and "Traceback" not in err
