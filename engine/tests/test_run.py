"""run.evaluate(): per-question rows, averages that leave unanswerable questions out, slices,
and clear errors when the retriever misbehaves; the gate's verdict is 0 only when every
configured check ran on evaluated data (team code that exits or hangs, non-finite metrics,
checks that cannot be made, too few questions, a bootstrap too large for memory: exit 2)."""

from __future__ import annotations

import dataclasses
import json
import math
import sys
import threading
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from conftest import (
    SHIPPED,
    TINY_CONFIG,
    TINY_GOLDEN,
    evaluate_shipped,
    run_cli,
    set_min_length,
    write_project,
)
from rag_regress import commands, run
from rag_regress.answers.settings import ANSWER_CHECKS
from rag_regress.api import Hit, System
from rag_regress.errors import EvalInputError
from rag_regress.inputs.reports import Report
from rag_regress.settings.config import Config, load_config
from rag_regress.settings.schema import MAX_RESAMPLED_CELLS


@pytest.fixture
def report(project: Path) -> dict[str, Any]:
    """The report of the tiny project (see conftest for what each question retrieves)."""
    return evaluate_shipped(load_config(project))


def rows_by_id(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {row["id"]: row for row in report["questions"]}


def test_report_header_and_counts(report: dict[str, Any]) -> None:
    """5 questions, 1 unanswerable: 4 evaluated, 1 left out; settings are recorded."""
    assert report["format"] == "rag-eval-report" and report["version"] == 3
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
    # `judged` only for a judge that may give no verdict: the lexical one judges every item
    assert set(aggregate) == set(report["settings"]["metrics"]) | (set(ANSWER_CHECKS) - {"judged"})


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


# -- the gate's verdict: 0 only when every configured check ran on evaluated data --------------


def leaving(where: str, leave: Callable[[], object]) -> System:
    """The shipped system, with `leave()` called in one place of the team's code: a factory
    (build_retriever, build_generator) or a method (search, search_many, answer) on q3."""

    class Retriever:
        def __init__(self, inner: Any):
            self.inner = inner

        def search(self, question: str, depth: int) -> Any:
            if where == "search" and question == "API":
                leave()
            return self.inner.search(question, depth)

    class Batched(Retriever):
        def search_many(self, questions: list[str], depth: int) -> Any:
            leave()

    class Generator:
        def __init__(self, inner: Any):
            self.inner = inner

        def answer(self, question: str) -> Any:
            if where == "answer" and question == "API":
                leave()
            return self.inner.answer(question)

    def build_retriever(documents: Any, tokenize: Any, options: Any) -> Retriever:
        if where == "build_retriever":
            leave()
        inner = SHIPPED.build_retriever(documents, tokenize, options)
        return Batched(inner) if where == "search_many" else Retriever(inner)

    def build_generator(retriever: Any, documents: Any, options: Any) -> Generator:
        if where == "build_generator":
            leave()
        return Generator(SHIPPED.build_generator(retriever, documents, options))

    return System(build_retriever, build_generator)


def outputs(folder: Path) -> dict[str, bytes]:
    build = folder / "build"
    return {p.name: p.read_bytes() for p in sorted(build.iterdir())} if build.is_dir() else {}


def throw(error: BaseException) -> None:
    raise error


EXITS = {
    "sys.exit()": lambda: sys.exit(),
    "SystemExit(0)": partial(throw, SystemExit(0)),
    "RuntimeError": partial(throw, RuntimeError("model not loaded")),
}
PLACES = {  # where the team's code left -> (what the message names, the file to fix)
    "build_retriever": ("build_retriever", "retriever.py"),
    "build_generator": ("build_generator", "generator.py"),
    "search": ("question 'q3'", "retriever.py"),
    "search_many": ("search_many", "retriever.py"),
    "answer": ("question 'q3'", "generator.py"),
}


@pytest.mark.parametrize("leave", list(EXITS), ids=list(EXITS))
@pytest.mark.parametrize("where", list(PLACES))
def test_team_code_that_exits_or_raises_is_exit_2_naming_where_and_writes_nothing(
    project: Path, capsys: pytest.CaptureFixture[str], where: str, leave: str
) -> None:
    """`sys.exit()` in the team's search once ended the gate with 0, nothing evaluated and
    nothing written. Now any way out of the team's code is exit 2 naming the question (or the
    factory) and the file to fix, nothing of this run is written, and the last run's reports
    are removed: none of them describes this run."""
    assert run_cli(["--config", str(project), "baseline", "--quiet"]) == 0
    assert run_cli(["--config", str(project), "gate", "--quiet"]) == 0
    assert sorted(outputs(project.parent)) == ["report.html", "report.json", "summary.md"]
    capsys.readouterr()
    assert run_cli(["--config", str(project), "gate", "--quiet"], leaving(where, EXITS[leave])) == 2
    err = capsys.readouterr().err
    named, fix = PLACES[where]
    assert named in err and fix in err and "Traceback" not in err
    assert outputs(project.parent) == {}


def test_a_call_past_the_run_timeout_is_exit_2_naming_the_question_and_the_setting(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A retriever that never returns no longer hangs the gate: [run] timeout ends the call."""
    text = project.read_text(encoding="utf-8")
    # Long enough for the questions before q3 on a busy machine: an embedding retriever's first
    # search encodes the corpus (0.5 s seen on 2 loaded cores, past the 0.3 s this once used).
    project.write_text(text + "\n[run]\ntimeout = 2.5\n", encoding="utf-8")
    release = threading.Event()
    try:
        started = time.monotonic()
        code = run_cli(["--config", str(project), "eval", "--quiet"], leaving("search", release.wait))
        waited = time.monotonic() - started
    finally:
        release.set()
    err = capsys.readouterr().err
    assert code == 2 and waited < 10
    assert "question 'q3'" in err and "golden.jsonl:3" in err and "[run] timeout of 2.5 s" in err
    assert not (project.parent / "build" / "report.json").exists()


def test_ctrl_c_in_the_team_s_code_stops_the_run_with_130(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupted() -> None:
        raise KeyboardInterrupt

    assert run_cli(["--config", str(project), "eval", "--quiet"], leaving("search", interrupted)) == 130
    assert "interrupted" in capsys.readouterr().err
    assert not (project.parent / "build" / "report.json").exists()


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf], ids=["nan", "inf", "-inf"])
def test_a_metric_that_is_not_a_finite_number_is_refused_before_anything_is_written(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], bad: float
) -> None:
    """NaN passes no comparison: a NaN mrr was written into the baseline and a floor on it
    printed "ok". Whatever produced it (a metric bug, a grade too large), the report naming
    the question is exit 2 and no baseline is written."""
    compute = run.compute

    def poisoned(*args: Any, **kwargs: Any) -> Any:
        values = compute(*args, **kwargs)
        values["mrr"] = values["mrr"].copy()
        values["mrr"][1] = bad  # q2
        return values

    monkeypatch.setattr(run, "compute", poisoned)
    assert run_cli(["--config", str(project), "baseline", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "question 'q2': mrr is" in err and "golden.jsonl" in err
    assert not (project.parent / "baseline.json").exists()


def test_every_metric_of_a_fresh_report_is_checked_for_being_finite(project: Path) -> None:
    """Rows, answer checks, aggregates and slices: the first non-finite value is named."""
    config = load_config(project)
    report = run.evaluate(config, SHIPPED)
    run.require_finite(report, config.golden)  # the tiny project's numbers are all finite
    billing = report.slices["billing"]
    poisoned = dataclasses.replace(billing, metrics={**(billing.metrics or {}), "map": math.nan})
    report = dataclasses.replace(report, slices={**report.slices, "billing": poisoned})
    with pytest.raises(EvalInputError, match="map: the mean is not a finite number"):
        run.require_finite(report, config.golden)


@pytest.mark.keyword  # the drop comes from min_length = 4
def test_a_floor_on_a_dotted_tag_is_checked_like_any_other(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Tag names are data: with the acronym questions tagged v1.2 instead of v12, the same
    regression fails the gate (exit 3) through the same slice floor."""
    codes = {}
    for tag in ("v12", "v1.2"):
        golden = [{**q, "tags": [tag if t == "acronym" else t for t in q["tags"]]} for q in TINY_GOLDEN]
        config = TINY_CONFIG + f'\n[gate.slices."{tag}"]\n"hit@5" = 0.9\n'
        config_path = write_project(tmp_path / tag.replace(".", "-"), config=config, golden=golden)
        assert run_cli(["--config", str(config_path), "baseline", "--quiet"]) == 0
        set_min_length(config_path, 4)
        codes[tag] = run_cli(["--config", str(config_path), "gate", "--quiet"])
        assert f"on tag {tag!r}" in capsys.readouterr().out
    assert codes == {"v12": 3, "v1.2": 3}


def unchecked(config: Config, report: Report) -> str:
    with pytest.raises(EvalInputError) as caught:
        commands.require_checkable(config, report)
    return str(caught.value)


def test_a_check_that_cannot_be_made_is_exit_2_not_a_silent_skip(tmp_path: Path) -> None:
    """A slice floor whose tag has no evaluated question, a floor or slice metric the report
    lacks, a must-pass question not evaluated: each is an error with the reason, where the
    gate once added a note and passed."""
    config_path = write_project(tmp_path, config=TINY_CONFIG + '\n[gate.slices.acronym]\n"hit@5" = 0.5\n')
    config = load_config(config_path)
    report = run.evaluate(config, SHIPPED)
    commands.require_checkable(config, report)  # everything configured can be checked

    without_slice = dataclasses.replace(
        report, slices={k: v for k, v in report.slices.items() if k != "acronym"}
    )
    assert "'acronym': no evaluated question has this tag" in unchecked(config, without_slice)
    no_evaluated = dataclasses.replace(
        report,
        slices={**report.slices, "acronym": dataclasses.replace(report.slices["acronym"], evaluated=0)},
    )
    assert "'acronym': no evaluated question" in unchecked(config, no_evaluated)
    metrics = {k: v for k, v in (report.slices["acronym"].metrics or {}).items() if k != "hit@5"}
    no_metric = dataclasses.replace(
        report,
        slices={**report.slices, "acronym": dataclasses.replace(report.slices["acronym"], metrics=metrics)},
    )
    assert "'acronym': the report has no value for hit@5" in unchecked(config, no_metric)
    no_floor = dataclasses.replace(
        report, aggregate={k: v for k, v in report.aggregate.items() if k != "hit@5"}
    )
    assert "[gate.floors] hit@5: the report has no value" in unchecked(config, no_floor)
    rows = [dataclasses.replace(row, metrics=None) if row.must_pass else row for row in report.questions]
    assert "must-pass question(s) q1 were not evaluated" in unchecked(
        config, dataclasses.replace(report, questions=rows)
    )


def test_a_one_question_golden_set_cannot_pass_the_gate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One evaluated question has no spread: the gate refuses (exit 2), it used to pass
    with only a warning. `eval` and `baseline` still work, to look at it."""
    config_path = write_project(tmp_path, golden=TINY_GOLDEN[:1])
    assert run_cli(["--config", str(config_path), "baseline", "--quiet"]) == 0
    capsys.readouterr()
    assert run_cli(["--config", str(config_path), "gate", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"only 1 question(s) evaluated; the gate compares at least {commands.MIN_GATED_QUESTIONS}" in err
    assert not (tmp_path / "build" / "report.json").exists()


def test_two_questions_are_enough_for_the_gate(tmp_path: Path) -> None:
    config_path = write_project(
        tmp_path, config=TINY_CONFIG.replace("min_score = 0.0", ""), golden=TINY_GOLDEN[1:3]
    )
    assert run_cli(["--config", str(config_path), "baseline", "--quiet"]) == 0
    assert run_cli(["--config", str(config_path), "gate", "--quiet"]) == 0


def test_resamples_times_questions_over_the_memory_cap_is_refused_before_evaluating(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """100,000 resamples of 5,000 questions took 7.5 GB: the gate refuses such a product at
    [stats] resamples' line and says how many resamples fit."""
    golden = [{**TINY_GOLDEN[3], "id": f"q{i}"} for i in range(1001)]
    config = TINY_CONFIG + "\n[stats]\nresamples = 100000\n"
    config_path = write_project(tmp_path, golden=golden)
    assert run_cli(["--config", str(config_path), "baseline", "--quiet"]) == 0
    config_path.write_text(config, encoding="utf-8")
    capsys.readouterr()
    assert run_cli(["--config", str(config_path), "gate", "--quiet"]) == 2
    err = capsys.readouterr().err
    line = config.split("\n").index("resamples = 100000") + 1
    assert f"eval.toml:{line}: stats.resamples: 100,000 resamples x 1,001 questions" in err
    assert f"set resamples = {MAX_RESAMPLED_CELLS // 1001} or fewer" in err
