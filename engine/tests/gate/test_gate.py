"""gate.compare(): the rules (floor, significant regression, newly failing, must-pass), on
small hand-built reports in the report format, plus one real evaluate-vs-evaluate comparison."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from conftest import TINY_CONFIG, as_report, evaluate_shipped, set_min_length, write_project
from rag_regress.errors import EvalInputError
from rag_regress.gate.rules import GateResult
from rag_regress.gate.rules import compare as compare_reports
from rag_regress.render.console import console_verdict
from rag_regress.render.view import gate_view
from rag_regress.retrieval.names import parse_metric
from rag_regress.settings.config import GateSettings, load_config

BASELINE_PATH = Path("evals/baseline.json")


def gate_settings(
    metrics: tuple[str, ...] = ("recall@5", "mrr"),
    tolerance: float = 0.02,
    floors: dict[str, float] | None = None,
    checks: dict[str, float] | None = None,
    allowed_flips: dict[str, int | float] | None = None,
) -> GateSettings:
    return GateSettings(
        metrics=[parse_metric(m) for m in metrics],
        tolerance=tolerance,
        floors={parse_metric(m): v for m, v in (floors or {}).items()},
        checks={parse_metric(m): v for m, v in ({"recall@5": 1.0} if checks is None else checks).items()},
        allowed_flips={parse_metric(m): v for m, v in (allowed_flips or {}).items()},
    )


def row(
    qid: str,
    recall: float | None = 1.0,
    *,
    must_pass: bool = False,
    retrieved: tuple[str, ...] = ("doc-a",),
    mrr: float | None = None,
) -> dict[str, Any]:
    """One question row; its only relevant document is doc-a (grade 3). mrr defaults to recall."""
    top = list(retrieved[:5])
    return {
        "id": qid,
        "question": f"question {qid}",
        "tags": [],
        "answerable": recall is not None,
        "must_pass": must_pass,
        "relevant": {} if recall is None else {"doc-a": 3},
        "retrieved": [[doc_id, 1.0 / rank] for rank, doc_id in enumerate(retrieved, start=1)],
        "found": [d for d in top if d == "doc-a"] if recall is not None else [],
        "missing": [],
        "metrics": None
        if recall is None
        else {"recall@5": recall, "mrr": recall if mrr is None else mrr, "hit@5": recall},
        "checks": None,
    }


def compare(
    now: dict[str, Any], before: dict[str, Any], gate: GateSettings, path: Path, *args: Any
) -> GateResult:
    """The gate's compare() on two reports given as their JSON objects."""
    return compare_reports(as_report(now), as_report(before), gate, path, *args)


def verdict_text(result: GateResult, now: dict[str, Any], before: dict[str, Any]) -> str:
    """What `gate` prints for `result`."""
    return console_verdict(gate_view(as_report(now), result, as_report(before)))


def report(aggregate: dict[str, float], *rows: dict[str, Any]) -> dict[str, Any]:
    evaluated = sum(1 for r in rows if r["metrics"] is not None)
    return {
        "format": "rag-eval-report",
        "version": 1,
        "settings": {"k": 5},
        "counts": {"questions": len(rows), "evaluated": evaluated, "left_out": len(rows) - evaluated},
        "aggregate": aggregate,
        "slices": {},
        "questions": list(rows),
    }


GOOD = {"recall@5": 0.90, "mrr": 0.90, "hit@5": 0.95}


def kinds(result: GateResult) -> list[tuple[str, str]]:
    return [(failure.kind, failure.subject) for failure in result.failures]


def test_identical_report_passes(project: Path) -> None:
    """A fresh evaluation compared with itself passes with no failures and no notes."""
    config = load_config(project)
    now = evaluate_shipped(config)
    result = compare(now, copy.deepcopy(now), config.gate, BASELINE_PATH)
    assert result.passed and result.failures == [] and result.notes == []
    assert "GATE PASSED" in verdict_text(result, now, now)


def test_aggregate_below_its_floor_fails() -> None:
    """recall@5 = 0.70 < floor 0.80 fails even though the baseline was just as low."""
    low = {**GOOD, "recall@5": 0.70}
    result = compare(report(low), report(low), gate_settings(floors={"recall@5": 0.8}), BASELINE_PATH)
    assert kinds(result) == [("floor", "recall@5")]
    assert "0.700 is below its floor 0.800" in result.failures[0].message


@pytest.mark.parametrize("recall", [0.80, 0.7 + 0.1], ids=["exact", "float-noise"])
def test_aggregate_at_its_floor_passes(recall: float) -> None:
    """The floor is a minimum: 0.80 >= 0.80 passes, and so does 0.7 + 0.1 =
    0.7999999999999999 (the same number computed in another order)."""
    at = {**GOOD, "recall@5": recall}
    assert compare(report(at), report(at), gate_settings(floors={"recall@5": 0.8}), BASELINE_PATH).passed


def test_drop_beyond_tolerance_is_a_regression_with_its_p_printed() -> None:
    """12 questions; 8 of them move their relevant document from rank 1 to rank 2, so mrr
    1.000 -> 0.667 (drop 0.333 > tolerance 0.02). One-sided exact sign-flip p = 1 / 2**8 =
    0.0039; the max-T adjustment over the two gated metrics leaves it there (recall@5 did not
    move, so it never competes)."""
    before = [row(f"q{i}") for i in range(12)]
    after = [row(f"q{i}", 1.0, mrr=0.5 if i < 8 else 1.0, retrieved=("doc-x", "doc-a")) for i in range(12)]
    now = report({**GOOD, "mrr": 2 / 3}, *after)
    result = compare(now, report(GOOD, *before), gate_settings(), BASELINE_PATH)
    assert kinds(result) == [("regression", "mrr")]
    message = result.failures[0].message
    assert "1.000 -> 0.667" in message and "one-sided p=0.0039, adjusted p=0.0039" in message
    (test,) = [t for t in result.comparison.tests if t.metric == "mrr"]
    assert test.ci_high < 0  # the whole interval is a drop
    assert "FAIL" in verdict_text(result, now, report(GOOD, *before))


def test_drop_beyond_tolerance_fails_whatever_its_p() -> None:
    """The same rank-1 -> rank-2 move on 2 of 12 questions: mrr drops 0.083 (> tolerance) with
    one-sided p = 1 / 2**2 = 0.25. A deterministic system's drop is a real change on the golden
    set, so it is a regression; p is printed, not used."""
    before = [row(f"q{i}") for i in range(12)]
    after = [row(f"q{i}", 1.0, mrr=0.5 if i < 2 else 1.0, retrieved=("doc-x", "doc-a")) for i in range(12)]
    result = compare(report(GOOD, *after), report(GOOD, *before), gate_settings(), BASELINE_PATH)
    assert kinds(result) == [("regression", "mrr")]
    assert "one-sided p=0.2500" in result.failures[0].message
    assert "beyond the tolerance 0.02: about 1.0 question(s)' worth" in result.failures[0].message


def test_drop_of_one_question_in_fifty_stays_within_a_tolerance_of_one_question() -> None:
    """On 50 questions one flipped hit is a drop of 0.020 = the tolerance: within it. The
    tolerance is also said in questions."""
    before = [row(f"q{i}") for i in range(50)]
    after = [row("q0", 0.0, retrieved=("doc-x",)), *before[1:]]
    gate = gate_settings(checks={}, tolerance=0.02)
    result = compare(report(GOOD, *after), report(GOOD, *before), gate, BASELINE_PATH)
    assert result.passed
    assert result.comparison is not None
    assert result.comparison.in_questions.startswith("a drop of 0.02 on 50 questions is 1.0 question(s)")


def test_tolerance_in_questions_counts_each_metric_over_its_own_questions(tmp_path: Path) -> None:
    """Abstention is a mean over all 5 tiny questions, retrieval metrics over the 4 answerable
    ones: the tolerance in questions says both, not 0.02 of 4 for every metric."""
    text = TINY_CONFIG.replace(
        'metrics = ["recall@5", "hit@5", "mrr"]', 'metrics = ["recall@5", "abstention"]'
    )
    config = load_config(write_project(tmp_path, config=text))
    now = evaluate_shipped(config)
    result = compare(now, copy.deepcopy(now), config.gate, BASELINE_PATH)
    assert result.comparison is not None
    assert "on the 4 questions of recall@5 (" in result.comparison.in_questions
    assert "on the 5 questions of abstention (" in result.comparison.in_questions


@pytest.mark.parametrize("mrr", [0.89, 0.88, 0.95])
def test_drop_within_tolerance_or_a_gain_passes(mrr: float) -> None:
    """mrr 0.90 -> 0.89 (drop 0.01), -> 0.88 (drop exactly 0.02 = tolerance), -> 0.95 (gain)."""
    now = {**GOOD, "mrr": mrr}
    assert compare(report(now), report(GOOD), gate_settings(), BASELINE_PATH).passed


def test_only_gated_metrics_are_compared_with_the_baseline() -> None:
    """hit@5 is not in [gate] metrics: its drop 0.95 -> 0.50 is not a regression."""
    now = {**GOOD, "hit@5": 0.50}
    assert compare(report(now), report(GOOD), gate_settings(), BASELINE_PATH).passed


def test_question_that_newly_fails_a_check_is_named_with_before_and_after() -> None:
    """q2 had recall@5 = 1.0 (passes >= 1.0); now 0.0 and doc-a is no longer retrieved."""
    baseline = report(GOOD, row("q1"), row("q2"))
    now = report(GOOD, row("q1"), row("q2", 0.0, retrieved=("doc-x", "doc-y")))
    result = compare(now, baseline, gate_settings(tolerance=1.0), BASELINE_PATH)  # only the flip
    assert kinds(result) == [("newly failing", "q2")]
    failure = result.failures[0]
    assert 'q2 "question q2"' in failure.message
    assert "recall@5 1.000 -> 0.000 (passes at >= 1)" in failure.message
    assert "relevant doc-a (grade 3): rank 1 -> not retrieved" in failure.details
    assert "top 5 now: doc-x doc-y" in failure.details
    # A check that passed and now fails breaks the gate by default (no flips allowed).
    assert failure.blocking and not result.passed
    text = verdict_text(result, now, baseline)
    assert "[newly failing] q2" in text and "GATE FAILED" in text


def test_allowed_flips_let_a_number_or_a_share_of_questions_newly_fail() -> None:
    """[gate.allowed_flips]: 1 (a count) or 0.1 (a share of 10 questions = 1) lets one
    newly failing question through, listed for review; a second one fails the gate."""
    baseline = report(GOOD, *[row(f"q{i}") for i in range(10)])
    one = report(GOOD, row("q0", 0.0, retrieved=("doc-x",)), *[row(f"q{i}") for i in range(1, 10)])
    broken = [row(f"q{i}", 0.0, retrieved=("doc-x",)) for i in range(2)]
    two = report(GOOD, *broken, *[row(f"q{i}") for i in range(2, 10)])
    for allowed in (1, 0.1):
        gate = gate_settings(metrics=("hit@5",), tolerance=1.0, allowed_flips={"recall@5": allowed})
        within = compare(one, baseline, gate, BASELINE_PATH)
        assert within.passed and kinds(within) == [("newly failing", "q0")]
        assert "within [gate.allowed_flips]" in verdict_text(within, one, baseline)
        over = compare(two, baseline, gate, BASELINE_PATH)
        assert not over.passed and {f.subject for f in over.problems} == {"q0", "q1"}


def test_flips_are_listed_both_ways() -> None:
    """q1 newly fails and q2 newly passes: both are in the verdict and its JSON."""
    baseline = report(GOOD, row("q1"), row("q2", 0.0, retrieved=("doc-x",)))
    now = report(GOOD, row("q1", 0.0, retrieved=("doc-x",)), row("q2"))
    gate = gate_settings(tolerance=1.0)
    result = compare(now, baseline, gate, BASELINE_PATH)
    (flips,) = result.to_dict()["flips"]
    assert flips["newly_failing"] == ["q1"] and flips["newly_passing"] == ["q2"]
    text = verdict_text(result, now, baseline)
    listing = text.split("Flips per check against the baseline")[1].split("GATE FAILED")[0]
    assert "recall@5: 1 newly failing, 1 newly passing of 2 (over the 0 allowed)" in listing
    assert 'newly failing (1):\n      q1  1.000 -> 0.000  "question q1"' in listing
    assert 'newly passing (1):\n      q2  0.000 -> 1.000  "question q2"' in listing
    assert "[newly failing] q1" in text


def test_question_that_already_failed_in_the_baseline_is_not_newly_failing() -> None:
    """q2 failed the check before (0.5) and still does (0.5): not a new failure."""
    baseline = report(GOOD, row("q2", 0.5))
    assert compare(report(GOOD, row("q2", 0.5)), baseline, gate_settings(), BASELINE_PATH).passed


def test_must_pass_question_without_a_relevant_hit_fails_whatever_the_baseline() -> None:
    """q1 is must-pass and finds nothing in the top 5, now and in the baseline: still a failure."""
    broken = row("q1", 0.0, must_pass=True, retrieved=("doc-x",))
    result = compare(
        report(GOOD, broken), report(GOOD, copy.deepcopy(broken)), gate_settings(), BASELINE_PATH
    )
    assert kinds(result) == [("must-pass", "q1")]
    assert "no relevant document in the top 5" in result.failures[0].message


def test_must_pass_and_newly_failing_are_reported_together() -> None:
    """A must-pass question that also newly fails a check is one failure with both kinds."""
    baseline = report(GOOD, row("q1", must_pass=True))
    now = report(GOOD, row("q1", 0.0, must_pass=True, retrieved=()))
    result = compare(now, baseline, gate_settings(), BASELINE_PATH)
    assert ("must-pass, newly failing", "q1") in kinds(result)
    (question,) = [failure for failure in result.failures if failure.subject == "q1"]
    assert "top 5 now: (nothing)" in question.details and question.blocking


def test_baseline_missing_a_gated_metric_cannot_be_compared() -> None:
    """A baseline made with other settings (no mrr) is refused, naming the file and the metric."""
    old = report({"recall@5": 0.9}, row("q1"))
    with pytest.raises(EvalInputError, match="no value for mrr") as caught:
        compare(report(GOOD, row("q1")), old, gate_settings(), BASELINE_PATH)
    assert "baseline.json" in str(caught.value)
    assert "nox -s baseline" in str(caught.value)


def test_added_and_removed_questions_are_notes_not_failures() -> None:
    """A new question (even a failing one) and a dropped one are reported as notes."""
    baseline = report(GOOD, row("q1"), row("q-old"))
    now = report(GOOD, row("q1"), row("q-new", 0.0, retrieved=("doc-x",)))
    result = compare(now, baseline, gate_settings(), BASELINE_PATH)
    assert result.passed
    assert any("q-new" in note and "not in the baseline" in note for note in result.notes)
    assert any("q-old" in note and "no longer in the golden set" in note for note in result.notes)


def test_unanswerable_questions_are_not_checked() -> None:
    """Rows without metrics (unanswerable) never fail a per-question check."""
    baseline = report(GOOD, row("q1"), row("u1", None))
    assert compare(report(GOOD, row("q1"), row("u1", None)), baseline, gate_settings(), BASELINE_PATH).passed


@pytest.mark.keyword
def test_broken_tokenizer_fails_the_gate_against_a_real_baseline(tmp_path: Path) -> None:
    """min_length = 4 on the tiny project: q1-q3 newly fail (q1 also must-pass), hit@5 falls
    to 0.25 below its 0.5 floor, and recall@5 0.875 -> 0.125 is a regression although 3
    questions cannot make it significant (one-sided p = 1 / 2**3 = 0.125): the system is
    deterministic, so the drop is real. q4 is unchanged and not named."""
    config_path = write_project(tmp_path)
    baseline = evaluate_shipped(load_config(config_path))
    set_min_length(config_path, 4)
    config = load_config(config_path)
    result = compare(evaluate_shipped(config), baseline, config.gate, BASELINE_PATH)
    assert set(kinds(result)) >= {
        ("floor", "hit@5"),
        ("regression", "recall@5"),
        ("must-pass, newly failing", "q1"),
        ("newly failing", "q2"),
        ("newly failing", "q3"),
        # with nothing retrieved, the stand-in generator abstains: answer checks break too
        ("newly failing answer", "q1"),
        ("newly failing answer", "q2"),
        ("newly failing answer", "q3"),
    }
    assert not result.passed
    assert {"hit@5", "recall@5", "q1", "q2", "q3"} <= {failure.subject for failure in result.problems}
    (recall,) = [f for f in result.failures if f.subject == "recall@5"]
    assert "recall@5 0.875 -> 0.125" in recall.message and "one-sided p=0.1250" in recall.message
    assert "q4" not in {failure.subject for failure in result.failures}
