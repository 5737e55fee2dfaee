"""Every rendering (console, markdown summary, HTML page) lists, per per-question check, both the
questions that newly fail it and those that newly pass it (id, baseline -> now, text shortened),
each list cut to [display] max_listed with "... and N more"; and every figure of a metric is one
figure, or names the questions it is over."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

import flip_reports
from conftest import as_report
from flip_reports import report
from rag_regress.gate.rules import GateResult, compare
from rag_regress.render.console import console_verdict
from rag_regress.render.html import html_report
from rag_regress.render.markdown import markdown_summary
from rag_regress.render.view import GateView, gate_view
from rag_regress.retrieval.names import parse_metric
from rag_regress.settings.config import GateSettings

LONG = "How do I move every project of a workspace to another region without losing its history " * 2


def row(qid: str, recall: float = 1.0, question: str = "") -> dict[str, Any]:
    """flip_reports' row with mrr (and hit@5) at recall's value."""
    return flip_reports.row(qid, recall, mrr=recall, question=question)


def settings(
    rule: str = "strict", metrics: tuple[str, ...] = ("mrr",), tolerance: float = 1.0
) -> GateSettings:
    return GateSettings(
        metrics=[parse_metric(m) for m in metrics],
        tolerance=tolerance,
        checks={parse_metric("recall@5"): 1.0},
        flip_rule=rule,  # type: ignore[arg-type]  # validated as a Literal
    )


def view_of(now: dict[str, Any], before: dict[str, Any], gate: GateSettings, max_listed: int) -> GateView:
    result: GateResult = compare(as_report(now), as_report(before), gate, Path("baseline.json"))
    return gate_view(as_report(now), result, as_report(before), max_listed)


def traded(rule: str) -> GateView:
    """30 questions: q00-q03 newly fail recall@5, q10-q14 newly pass (q10's text is long);
    at most 2 listed per side."""
    before = [row(f"q{i:02d}", 0.0 if 10 <= i < 15 else 1.0, LONG if i == 10 else "") for i in range(30)]
    after = [row(f"q{i:02d}", 0.0 if i < 4 else 1.0, LONG if i == 10 else "") for i in range(30)]
    return view_of(report(*after), report(*before), settings(rule), max_listed=2)


def test_console_lists_newly_failing_and_newly_passing_per_check() -> None:
    out = console_verdict(traded("net"))
    listing = out.split("Flips per check against the baseline")[1].split(
        "newly failing question(s) for review"
    )[0]
    assert (
        "recall@5: 4 newly failing, 5 newly passing of 30; net rule: net loss b - c = 4 - 5 = -1" in listing
    )
    failing, passing = listing.split("newly failing (4):")[1].split("newly passing (5):")
    assert (
        'q00  1.000 -> 0.000  "question q00"' in failing and 'q01  1.000 -> 0.000  "question q01"' in failing
    )
    assert "q02" not in failing and "... and 2 more" in failing
    shortened = " ".join(LONG.split())[:77] + "..."
    assert (
        f'q10  0.000 -> 1.000  "{shortened}"' in passing and 'q11  0.000 -> 1.000  "question q11"' in passing
    )
    assert "q12" not in passing and "... and 3 more" in passing
    assert "GATE PASSED" in out


def test_markdown_lists_newly_failing_and_newly_passing_per_check() -> None:
    summary = markdown_summary(traded("net"))
    listing = summary.split("### Flips per check: newly failing and newly passing questions")[1].split("###")[
        0
    ]
    assert "- recall@5: 4 newly failing, 5 newly passing of 30; net rule:" in listing
    failing, passing = listing.split("  - newly failing (4):")[1].split("  - newly passing (5):")
    assert '    - `q00` 1.000 -&gt; 0.000 "question q00"' in failing and "    - ... and 2 more" in failing
    assert '    - `q10` 0.000 -&gt; 1.000 "How do I move' in passing and "    - ... and 3 more" in passing


def test_html_lists_newly_failing_and_newly_passing_per_check() -> None:
    page = html_report(traded("net"))
    listing = page.split("<h2>Flips per check: newly failing and newly passing questions</h2>")[1].split(
        "<h2>"
    )[0]
    failing, passing = listing.split("newly failing (4):")[1].split("newly passing (5):")
    assert "<code>q00</code> 1.000 -&gt; 0.000 &ldquo;question q00&rdquo;" in failing
    assert "... and 2 more" in failing and "q02" not in failing
    assert "<code>q11</code> 0.000 -&gt; 1.000 &ldquo;question q11&rdquo;" in passing
    assert "... and 3 more" in html.unescape(passing)


def test_a_failing_check_is_marked_and_said_under_why_the_gate_failed() -> None:
    """The strict rule fails the same trade: every rendering marks the check and says its
    verdict among the reasons, beside the questions."""
    view = traded("strict")
    assert not view.passed and [c.check for c in view.failing_checks] == ["recall@5"]
    verdict = "recall@5: 4 newly failing, 5 newly passing of 30 (over the 0 allowed)"
    assert f"  [flips] {verdict}" in console_verdict(view).split("GATE FAILED")[1]
    why = markdown_summary(view).split("### Why the gate failed")[1]
    assert f"- **flips** {verdict}" in why and "- **FAIL** recall@5: 4 newly failing" in why
    page = html_report(view)
    assert f"<li><b>flips</b> {verdict}</li>" in page.split("<h2>Why the gate failed</h2>")[1]


def test_a_mean_over_the_paired_questions_names_them() -> None:
    """q09 left the golden set (recall 0) and q10 joined it (recall 1): recall@5 is 0.900 ->
    0.800 over each report's questions, 1.000 -> 0.778 over the 9 in both. The regression
    line and the note under the table name the 9; the table keeps the reports' figures."""
    before = [row(f"q{i:02d}", 0.0 if i == 9 else 1.0) for i in range(10)]
    after = [row(f"q{i:02d}", 0.0 if i < 2 else 1.0) for i in [*range(9), 10]]
    view = view_of(report(*after), report(*before), settings(metrics=("recall@5",), tolerance=0.02), 10)
    (row_,) = view.metrics
    assert (f"{row_.baseline:.3f}", f"{row_.now:.3f}") == ("0.900", "0.800")
    said = "over the 9 questions with a recall@5 value in both runs"
    (failure,) = [f for f in view.problems if f.kind == "regression"]
    assert f"recall@5 1.000 -> 0.778 {said} (-0.222" in failure.message
    note = f"recall@5: its CI and p are {said}: 1.000 -> 0.778 (-0.222)"
    assert view.paired_notes == [note]
    assert f"  ({note})" in console_verdict(view)
    assert f"- {note.replace('>', '&gt;')}" in markdown_summary(view)
    assert f'<p class="detail">{html.escape(note)}</p>' in html_report(view)


def test_a_mean_over_the_same_questions_is_one_figure() -> None:
    """Same questions in both reports: the regression line shows the table's figures, alone."""
    before = [row(f"q{i:02d}") for i in range(10)]
    after = [row(f"q{i:02d}", 0.0 if i < 2 else 1.0) for i in range(10)]
    view = view_of(report(*after), report(*before), settings(metrics=("recall@5",), tolerance=0.02), 10)
    (failure,) = [f for f in view.problems if f.kind == "regression"]
    assert "recall@5 1.000 -> 0.800 (-0.200" in failure.message and "both runs" not in failure.message
    assert view.paired_notes == []


def tagged(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """A report of `rows`, every one tagged "billing", with that slice's means."""
    for r in rows:
        r["tags"] = ["billing"]
    data = report(*rows)
    data["slices"] = {
        "billing": {"questions": len(rows), "evaluated": len(rows), "metrics": dict(data["aggregate"])}
    }
    return data


def test_a_slice_delta_over_other_questions_than_its_value_names_them() -> None:
    """The billing tag's recall@5 is 0.800 now over its 10 questions, but its delta is over the
    9 in both runs: the slice cell says so. The same questions in both: the plain cell."""
    before = tagged([row(f"q{i:02d}", 0.0 if i == 9 else 1.0) for i in range(10)])
    after = tagged([row(f"q{i:02d}", 0.0 if i < 2 else 1.0) for i in [*range(9), 10]])
    view = view_of(after, before, settings(metrics=("recall@5",)), 10)
    recall = view.slice_metrics.index("recall@5")
    assert view.slices[0].cells[recall].text == "0.800 (-0.222 over 9 in both runs, 0.2500)"
    assert "0.800 (-0.222 over 9 in both runs, 0.2500)" in markdown_summary(view)
    assert "0.800 (-0.222 over 9 in both runs, 0.2500)" in html_report(view)

    before = tagged([row(f"q{i:02d}") for i in range(10)])
    after = tagged([row(f"q{i:02d}", 0.0 if i < 2 else 1.0) for i in range(10)])
    view = view_of(after, before, settings(metrics=("recall@5",)), 10)
    assert view.slices[0].cells[recall].text == "0.800 (-0.200, 0.2500)"
