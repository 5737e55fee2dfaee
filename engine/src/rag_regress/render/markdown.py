"""The gate's verdict as markdown, for the pull request: GitHub shows $GITHUB_STEP_SUMMARY on
the run's page. Laid out from the same `GateView` as the console and the HTML page.

Text from the data goes through `text` (or `code`, for ids) wherever it meets the layout: no
HTML, link, image, control character or table-breaking `|` or newline in a question, tag,
id, answer or reason can act in the rendered summary.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..errors import EvalInputError
from ..inputs.files import write_atomic
from ..net.redact import redact
from .inert import show_controls
from .view import CheckListing, GateView, MetricProblem, MetricRow, QuestionIssue, cut

_SPECIAL = re.compile(r"([\\`*_\[\]|!#])")
_PLAIN_ID = re.compile(r"[A-Za-z0-9._:/@+-]+")  # an id a code span shows as it is


def text(value: object) -> str:
    """Data as inert markdown on one line, for any cell or sentence of the summary: control
    characters shown as escapes, every run of whitespace (newlines too: a table row stays one
    row) one space, HTML escaped (no tag, entity or autolink `<...>`), and the characters of
    markdown syntax backslash-escaped (no link, image, emphasis, code, heading or `|` cell
    break). A bare `http://` address may still show as a plain link (GitHub links them); it
    shows its own address and loads nothing."""
    flat = " ".join(show_controls(str(value)).split())
    flat = flat.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _SPECIAL.sub(r"\\\1", flat)


def code(value: str) -> str:
    """An id in code style when it is made of plain characters; otherwise as `text` (a code
    span cannot escape a backtick or a `|`, and shows backslashes literally)."""
    return f"`{value}`" if _PLAIN_ID.fullmatch(value) else text(value)


def _issue(issue: QuestionIssue, limit: int) -> list[str]:
    reasons = text("; ".join(issue.reasons))
    head = f"- **{text(issue.label)}** {code(issue.id)} {text(issue.question)}: {reasons}"
    return [head, *(f"  - {text(detail)}" for detail in cut(issue.details, limit))]


def _problem(problem: MetricProblem) -> list[str]:
    """A failing aggregate or slice: its failures, then the questions behind it as sub-items."""
    lines = [f"- **{text(f.kind)}** {text(f.message)}" for f in problem.failures]
    lines.append(f"  - {text(problem.note)}" + (":" if problem.questions else ""))
    lines += [f'    - {code(q.id)} {text(q.numbers)} "{text(q.question)}"' for q in problem.questions]
    if problem.more_text:
        lines.append(f"    - {text(problem.more_text)}")
    return lines


def _check(listing: CheckListing) -> list[str]:
    """A check's flips: its verdict, then both lists of questions as sub-items."""
    mark = "**FAIL** " if listing.fails else ""
    lines = [f"- {mark}{text(listing.verdict)}"]
    for heading, questions, more in listing.lists:
        lines.append(f"  - {text(heading)}:")
        lines += [f'    - {code(q.id)} {text(q.numbers)} "{text(q.question)}"' for q in questions]
        lines += [f"    - {text(more)}"] if more else []
    return lines


def markdown_summary(view: GateView) -> str:
    """Verdict, one table of metrics and answer checks (delta, CI, p), why it failed, the
    questions that changed (each once), notes, slices, holdout and receipt."""
    counts = view.counts
    lines = [
        f"## {'✅ GATE PASSED' if view.passed else '❌ GATE FAILED'}",
        "",
        f"{counts.evaluated} of {counts.questions} questions evaluated "
        f"({counts.left_out} unanswerable left out). {text(view.rule[0].upper() + view.rule[1:])}.",
        "",
        f"Tolerance: {text(view.in_questions)}. {text(view.correction)}.",
        "",
        "| " + " | ".join([*MetricRow.HEADER, "verdict"]) + " |",
        "|---|---:|---:|---:|---|---:|---:|---:|---|",
    ]
    for row in view.metrics:
        verdict = f"**FAIL** ({text(row.failed)})" if row.failed else text(row.verdict)
        lines.append("| " + " | ".join([*(text(cell) for cell in row.cells), verdict]) + " |")
    if view.paired_notes:
        lines += ["", *(f"- {text(note)}" for note in view.paired_notes)]
    lines += [
        "",
        f"{text(view.mde_text[0].upper() + view.mde_text[1:])}.",
        "",
        f"{text(view.judged[0].upper() + view.judged[1:])}.",
        "",
        f"{text(view.judge_trust)}.",
        *(["", f"{text(view.corrected[0].upper() + view.corrected[1:])}."] if view.corrected else []),
    ]
    if view.advisory:
        lines += ["", "### Advisory: below their floor or dropped, not failing the gate", ""]
        lines += [f"- {text(line)}" for line in view.advisory]
    for warning in view.warnings:
        lines += [f"> ⚠️ {text(warning)}", ">"]
    if not view.passed:
        lines += ["", "### Why the gate failed", ""]
        for problem in view.metric_problems:
            lines += _problem(problem)
        lines += [f"- **flips** {text(listing.verdict)}" for listing in view.failing_checks]
        shown, more = view.shown(view.blocking_questions)
        for issue in shown:
            lines += _issue(issue, view.max_listed)
        lines += [f"- {more}"] if more else []
    if view.flip_checks:
        lines += ["", "### Flips per check: newly failing and newly passing questions", ""]
        for listing in view.flip_checks:
            lines += _check(listing)
    if view.listed_questions:
        lines += [
            "",
            "### Newly failing questions for review (within [gate.allowed_flips], of a check the net rule "
            "passed, of stochastic checks, or of advisory ones)",
            "",
        ]
        shown, more = view.shown(view.listed_questions)
        for issue in shown:
            lines += _issue(issue, view.max_listed)
        lines += [f"- {more}"] if more else []
    if view.notes:
        lines += ["", "### Notes", ""] + [f"- {text(note)}" for note in view.notes]
    if view.slices:
        lines += [
            "",
            "### Slices (per tag)",
            "",
            "Each cell: value now (delta, adjusted p). - = too few questions to test.",
            "",
            "| tag | n | " + " | ".join(text(m) for m in view.slice_metrics) + " |",
            "|---|---:|" + "---:|" * len(view.slice_metrics),
        ]
        for srow in view.slices:
            cells = []
            for cell in srow.cells:
                mark = " **↓**" if cell.significant_drop else ""
                cells.append("-" if cell.text is None else text(cell.text) + mark)
            lines.append(f"| {text(srow.tag)} | {srow.n} | " + " | ".join(cells) + " |")
    if view.holdout:
        lines += [
            "",
            f"### Holdout ({view.holdout_evaluated} evaluated questions)",
            "",
            "| metric | dev | holdout | gap |",
            "|---|---:|---:|---:|",
        ]
        for name, dev, held, gap in view.holdout:
            lines.append(f"| {text(name)} | {dev:.3f} | {held:.3f} | {gap:+.3f} |")
    lines += ["", "<details><summary>Receipt</summary>", "", "| what | value |", "|---|---|"]
    lines += [f"| {text(what)} | {text(value)} |" for what, value in view.receipt]
    lines += ["", "</details>"]
    return "\n".join(lines) + "\n"


def write_summary(summary: str, default: Path) -> Path:
    """Append to $GITHUB_STEP_SUMMARY when set (GitHub's convention: steps append), else
    write `default` atomically. Returns where it went."""
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if target:
        try:
            with open(target, "a", encoding="utf-8") as out:
                out.write(redact(summary))  # as write_atomic would: no secret in any file
        except OSError as error:  # a folder, a missing parent, no permission
            raise EvalInputError(
                Path(target),
                f"cannot append the step summary ($GITHUB_STEP_SUMMARY): {error.strerror}",
                "point GITHUB_STEP_SUMMARY at a writable file, or unset it to write " + str(default),
            ) from None
        return Path(target)
    write_atomic(default, summary)
    return default
