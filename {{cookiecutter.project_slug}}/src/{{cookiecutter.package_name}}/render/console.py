"""The console renderings: `eval`'s report (summary first, then every question) and `gate`'s
verdict (laid out from the same `GateView` as the markdown and HTML pages).

Text from the data (questions, ids, tags, answers) is made inert before it is printed: a
control character shows as an escape, and no line can start with `::` (which a CI runner
would read as a workflow command).
"""

from __future__ import annotations

import re

from ..answers.settings import ANSWER_CHECKS
from ..gate.stats import format_p as p_text
from ..inputs.reports import AnswerResult, Report
from .view import GateView, MetricRow, QuestionIssue, cut

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def inert(text: str) -> str:
    """`text` safe to print in a terminal or a CI log (see the module docstring)."""
    text = _CONTROL.sub(lambda match: repr(match.group())[1:-1], text)
    return "\n".join(f" {line}" if line.lstrip().startswith("::") else line for line in text.split("\n"))


def _number(value: float | None) -> str:
    return "   -  " if value is None else f"{value:6.3f}"


def _ids(ids: list[str], relevant: dict[str, int], limit: int) -> str:
    """'*id(3)' marks a relevant document and its grade; long lists end in '... and N more'."""
    marked = [f"*{doc_id}({relevant[doc_id]})" if doc_id in relevant else doc_id for doc_id in ids]
    return " ".join(cut(marked, limit)) or "(nothing)"


def _one_line(text: str, width: int = 100) -> str:
    """A passage on one line, cut to `width` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 3] + "..."


def _summary(report: Report) -> list[str]:
    """Aggregates (retrieval metrics and answer checks), the judge, then per-tag slices."""
    counts, names = report.counts, report.metric_names
    judge = report.settings.get("judge") or {}
    lines = [
        f"Aggregate over {counts.evaluated} of {counts.questions} questions "
        f"({counts.left_out} unanswerable left out: they have no relevant documents):",
    ]
    lines += [f"  {name:<12} {_number(report.aggregate.get(name))}" for name in names]
    lines += [
        f"  {name:<12} {_number(report.aggregate.get(name))}   {meaning}"
        for name, meaning in ANSWER_CHECKS.items()
        if name in report.aggregate
    ]
    if judge:
        model = f", model {judge.get('model')}" + (f"@{judge['revision']}" if judge.get("revision") else "")
        named = model if judge.get("model") else ""
        lines.append(f"Judge {judge.get('name')}{named}, threshold {judge.get('threshold')}")
    slices = {tag: piece for tag, piece in report.slices.items() if piece.evaluated}
    if slices:
        lines += ["", "Slices by tag (n = evaluated questions):"]
        tag_width = max([len(tag) for tag in slices] + [3])
        header = " ".join(f"{n:>{max(6, len(n))}}" for n in names)
        lines.append(f"  {'tag':{tag_width}} {'n':>4}  {header}")
        for tag, piece in slices.items():
            values = " ".join(f"{_number((piece.metrics or {}).get(n)):>{max(6, len(n))}}" for n in names)
            lines.append(f"  {tag:{tag_width}} {piece.evaluated:>4}  {values}")
        minimum = report.settings.get("stats", {}).get("min_slice_size", 0)
        small = [tag for tag, piece in slices.items() if piece.evaluated < minimum]
        if small:
            lines.append(
                f"warning: fewer than min_slice_size = {minimum} evaluated questions in "
                f"{', '.join(small)}: too few to tell a change from noise (the gate does not test them)"
            )
    return lines


def _answer_problems(answer: AnswerResult) -> list[str]:
    problems = []
    if answer.abstention < 1:
        problems.append(
            "abstained on an answerable question" if answer.abstained else "answered an unanswerable question"
        )
    if answer.key_facts == 0 and not answer.abstained:
        problems.append("missing key facts: " + "; ".join(repr(f) for f in answer.missing_facts))
    problems += [f"unsupported: {_one_line(u.claim)!r} ({u.why})" for u in answer.unsupported]
    return problems


def format_table(report: Report, max_listed: int = 10) -> str:
    """`eval`'s output: the summary first, then every question, then the answers that failed a
    check. Long id lists are cut to `max_listed` ids and a count."""
    settings, k, names = report.settings, report.k, report.metric_names
    retriever = settings.get("retriever") or {}
    width = max([len(row.id) for row in report.questions] + [2])
    lines = [f"Retriever {retriever.get('name')} {retriever.get('options')}, k={k}", *_summary(report)]
    lines += [
        "",
        f"Per question: top {k} retrieved; *id(g) is a relevant document of grade g.",
        f"{'':5} {'id':{width}}  " + " ".join(f"{n:>{max(6, len(n))}}" for n in names),
    ]
    for row in report.questions:
        top = [doc_id for doc_id, _ in row.retrieved[:k]]
        if row.metrics is None:
            lines.append(f"{'--':5} {row.id:{width}}  unanswerable: left out of retrieval metrics")
            lines.append(f"{'':5} {'':{width}}  {row.question}")
            lines.append(f"{'':5} {'':{width}}  retrieved: {_ids(top, {}, max_listed)}")
            continue
        status = "HIT" if row.found else "MISS"
        values = " ".join(f"{_number(row.metrics.get(n)):>{max(6, len(n))}}" for n in names)
        lines.append(f"{status:5} {row.id:{width}}  {values}")
        lines.append(f"{'':5} {'':{width}}  {row.question}")
        lines.append(f"{'':5} {'':{width}}  retrieved: {_ids(top, row.relevant, max_listed)}")
        if row.missing:
            lines.append(f"{'':5} {'':{width}}  missing:   {_ids(row.missing, row.relevant, max_listed)}")
    troubled = [
        (row.id, problems)
        for row in report.questions
        if row.answer is not None and (problems := _answer_problems(row.answer))
    ]
    lines += ["", f"Answers that failed a check (abstention, key facts, faithfulness): {len(troubled)}"]
    for qid, problems in troubled:
        lines.append(f"  {qid}: " + f"\n  {'':{len(qid)}}  ".join(cut(problems, max_listed)))
    return inert("\n".join(lines))


def cache_line(cache: dict[str, int]) -> str:
    """What the verdict cache did this run (printed by eval, baseline and gate)."""
    return (
        f"Verdict cache: {cache['hits']} hits, {cache['misses']} misses; "
        f"judge model calls this run: {cache['judge_calls']}"
    )


def _issue_lines(issue: QuestionIssue, limit: int) -> list[str]:
    lines = [f'  [{issue.label}] {issue.id} "{issue.question}": ' + "; ".join(issue.reasons)]
    return lines + [f"      {detail}" for detail in cut(issue.details, limit)]


def _columns(cells: tuple[str, ...], widths: tuple[int, ...] = (12, 9, 7, 7, 17, 7, 7, 6)) -> str:
    """The metric table's cells padded to their columns: the name left, numbers right."""
    first, *rest = cells
    return " ".join([f"{first:<{widths[0]}}", *(f"{c:>{w}}" for c, w in zip(rest, widths[1:], strict=True))])


def console_verdict(view: GateView) -> str:
    """What `gate` prints: one table of metrics and answer checks (delta, CI, p, floor), the
    slices, warnings and notes, the questions that changed (each once), and the verdict."""
    lines = ["  " + _columns(MetricRow.HEADER)]
    for row in view.metrics:
        lines.append("  " + _columns(row.cells) + f"  {'FAIL' if row.failed else 'ok'}")
    lines.append(
        f"  (regression = a drop of more than {view.tolerance:.3f} that is significant: paired sign-flip "
        f"test, Holm p <= {view.alpha:g} across {view.tested} tests of metrics and slices; "
        "each answer check is tested on its own)"
    )
    if view.slices:
        width = max(len(row.tag) for row in [*view.slices]) if view.slices else 3
        width = max(width, 3)
        lines.append("  Slices: delta (Holm p; * significant, - too small to test)")
        lines.append(f"  {'tag':{width}} {'n':>4}  " + " ".join(f"{m:>18}" for m in view.slice_metrics))
        for srow in view.slices:
            cells = []
            for cell in srow.cells:
                if cell.delta is None:
                    cells.append("-".rjust(18))
                    continue
                star = "*" if cell.significant_drop else " "
                cells.append(f"{cell.delta:+.3f} ({p_text(cell.p_holm)}){star}".rjust(18))
            lines.append(f"  {srow.tag:{width}} {srow.n:>4}  " + " ".join(cells))
    if view.holdout:
        lines.append(
            f"Holdout {view.holdout_file}: {view.holdout_evaluated} evaluated "
            f"(dev: {view.counts.evaluated}); gap = dev - holdout"
        )
        lines.append(f"  {'metric':<12} {'dev':>7} {'holdout':>8} {'gap':>7}")
        lines += [f"  {name:<12} {dev:7.3f} {held:8.3f} {gap:+7.3f}" for name, dev, held, gap in view.holdout]
    lines += [f"warning: {warning}" for warning in view.warnings]
    lines += [f"note: {note}" for note in view.notes]
    listed = view.listed_questions
    if listed:
        lines.append(f"{len(listed)} newly failing question(s), not a failure on their own:")
        shown, more = view.shown(listed)
        for issue in shown:
            lines += _issue_lines(issue, view.max_listed)
        lines += [f"  {more}"] if more else []
    if view.passed:
        lines.append("GATE PASSED")
        return inert("\n".join(lines))
    lines.append(f"GATE FAILED: {view.failure_count} problem(s)")
    for failure in view.problems:
        lines.append(f"  [{failure.kind}] {failure.message}")
        lines += [f"      {detail}" for detail in cut(list(failure.details), view.max_listed)]
    shown, more = view.shown(view.blocking_questions)
    for issue in shown:
        lines += _issue_lines(issue, view.max_listed)
    lines += [f"  {more}"] if more else []
    return inert("\n".join(lines))
