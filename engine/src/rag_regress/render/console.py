"""The console renderings: `eval`'s report (summary first, then every question) and `gate`'s
verdict (laid out from the same `GateView` as the markdown and HTML pages). Everything they
print passes through the command line's inert console (render/inert.py).
"""

from __future__ import annotations

from typing import Any

from ..answers.settings import ANSWER_CHECKS
from ..answers.stand_in import abstention_hint
from ..answers.trust import JUDGE_CHECKS, advisory_checks, corrected_line, trust_line
from ..gate.stats import format_p as p_text
from ..gate.variation import most_variable
from ..inputs.reports import AnswerResult, QuestionResult, Report
from .inert import inert
from .table import aligned
from .view import CheckListing, GateView, MetricProblem, MetricRow, QuestionIssue, cut


def _number(value: float | None) -> str:
    return "   -  " if value is None else f"{value:6.3f}"


def _ids(ids: list[str], relevant: dict[str, int], limit: int, judged: dict[str, int] | None = None) -> str:
    """'*id(3)' marks a relevant document and its grade, 'id?' one the golden set never judged
    (when `judged` is given); long lists end in '... and N more'."""
    marked = [
        f"*{doc_id}({relevant[doc_id]})"
        if doc_id in relevant
        else (f"{doc_id}?" if judged is not None and doc_id not in judged else doc_id)
        for doc_id in ids
    ]
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
    applied = [name for name in ANSWER_CHECKS if name in report.aggregate and _applies(report, name)]
    width = max([12, *map(len, applied)])
    lines += [f"  {name:<{width}} {_number(report.aggregate.get(name))}" for name in names]
    calibration = report.receipt.get("calibration")
    advisory = advisory_checks(calibration)
    lines += [
        f"  {name:<{width}} {_number(report.aggregate.get(name))}   {ANSWER_CHECKS[name]}"
        + (" [advisory]" if name in advisory else "")
        for name in applied
    ]
    passages = report.passages  # only when the golden set names passages (retrieval/passages.py)
    if passages is not None:
        lines.append(f"Passages, over the {passages['evaluated']} questions that name them:")
        lines += [f"  {name:<18} {_number(passages['aggregate'].get(name))}" for name in passages["names"]]
    if report.judged is not None:
        lines.append(judged_line(report.judged))
    if judge:
        model = f", model {judge.get('model')}" + (f"@{judge['revision']}" if judge.get("revision") else "")
        named = model if judge.get("model") else ""
        lines.append(f"Judge {judge.get('name')}{named}, threshold {judge.get('threshold')}")
    if calibration is not None or (judge and any(name in JUDGE_CHECKS for name in applied)):
        lines.append(trust_line(calibration, judge))
        lines += [corrected] if (corrected := corrected_line(calibration)) else []
    slices = {tag: piece for tag, piece in report.slices.items() if piece.evaluated}
    if slices:
        lines += ["", "Slices by tag (n = evaluated questions):"]
        rows: list[list[object]] = [["tag", "n", *names]]
        rows += [
            [tag, piece.evaluated, *(_number((piece.metrics or {}).get(n)).strip() for n in names)]
            for tag, piece in slices.items()
        ]
        lines += aligned(rows, right=range(1, len(names) + 2))
        minimum = report.settings.get("stats", {}).get("min_slice_size", 0)
        small = [tag for tag, piece in slices.items() if piece.evaluated < minimum]
        if small:
            lines.append(
                f"warning: fewer than min_slice_size = {minimum} evaluated questions in "
                f"{', '.join(small)}: too few to tell a change from noise (the gate does not test them)"
            )
    return lines


def judged_line(judged: dict[str, Any]) -> str:
    """judged@k on one line: the mean share of the top k judged, and what nobody judged."""
    k, unjudged = judged["k"], judged["unjudged"]
    line = f"judged@{k} {judged['mean']:.3f}: the share of each top {k} the golden set has judged"
    if not unjudged:
        return line + " (every document in every top k)"
    return (
        line + f"; {unjudged} unjudged document(s) in the top {k} of {judged['questions']} question(s), "
        "counted as not relevant (`rag-regress pool` lists them for grading)"
    )


def _applies(report: Report, name: str) -> bool:
    """Whether answer check `name` has a value for some question (no reference anywhere: the
    reference checks do not apply, and are not shown)."""
    return any(row.answer is not None and row.answer.check(name) is not None for row in report.questions)


def _answer_problems(answer: AnswerResult, why_abstained: str = "") -> list[str]:
    problems = []
    if answer.abstention < 1 and answer.abstained:
        problems.append(
            "abstained on an answerable question" + (f" ({why_abstained})" if why_abstained else "")
        )
    elif answer.abstention < 1:
        problems.append("answered an unanswerable question")
    if answer.key_facts == 0 and not answer.abstained:
        problems.append("missing key facts: " + "; ".join(repr(f) for f in answer.missing_facts))
    problems += [f"unsupported: {_one_line(u.claim)!r} ({u.why})" for u in answer.unsupported]
    return problems + [_one_line(line) for line in answer.wrong()]


def _failed_retrieval(row: QuestionResult) -> bool:
    """An answerable question that missed, or failed one of its per-question checks."""
    return row.metrics is not None and (not row.found or not all((row.checks or {}).values()))


def format_table(report: Report, max_listed: int = 10, *, show_all: bool = False) -> str:
    """`eval`'s output: the summary first, then the questions that failed a retrieval check
    (every question with `show_all`), then the answers that failed a check. Long id lists
    are cut to `max_listed` ids and a count, long passages to one line."""
    settings, k, names = report.settings, report.k, report.metric_names
    retriever = settings.get("retriever") or {}
    shown = [row for row in report.questions if show_all or _failed_retrieval(row)]
    width = max([len(row.id) for row in shown] + [2])
    lines = [f"Retriever {retriever.get('name')} {retriever.get('options')}, k={k}", *_summary(report)]
    which = "every question" if show_all else "questions that missed or failed a per-question check"
    lines += [
        "",
        f"Per question ({which}): top {k} retrieved; *id(g) is a relevant document of grade g, "
        "id? one the golden set never judged.",
        f"{'':5} {'id':{width}}  " + " ".join(f"{n:>{max(6, len(n))}}" for n in names),
    ]
    for row in shown:
        top = [doc_id for doc_id, _ in row.retrieved[:k]]
        if row.metrics is None:
            lines.append(f"{'--':5} {row.id:{width}}  unanswerable: left out of retrieval metrics")
            lines.append(f"{'':5} {'':{width}}  {_one_line(row.question)}")
            lines.append(f"{'':5} {'':{width}}  retrieved: {_ids(top, {}, max_listed, row.qrels)}")
            continue
        status = "HIT" if row.found else "MISS"
        values = " ".join(f"{_number(row.metrics.get(n)):>{max(6, len(n))}}" for n in names)
        lines.append(f"{status:5} {row.id:{width}}  {values}")
        lines.append(f"{'':5} {'':{width}}  {_one_line(row.question)}")
        lines.append(f"{'':5} {'':{width}}  retrieved: {_ids(top, row.relevant, max_listed, row.qrels)}")
        if row.missing:
            lines.append(f"{'':5} {'':{width}}  missing:   {_ids(row.missing, row.relevant, max_listed)}")
    if not show_all:
        hidden = len(report.questions) - len(shown)
        lines.append(f"({hidden} more question(s), none failing a retrieval check: `eval --all` prints them)")
    hint = abstention_hint(report)  # the setting behind abstentions, if the stand-in made them
    troubled = [
        (row.id, problems)
        for row in report.questions
        if row.answer is not None and (problems := _answer_problems(row.answer, hint))
    ]
    lines += ["", f"Answers that did not pass a check: {len(troubled)}"]
    for qid, problems in troubled:
        lines.append(f"  {qid}: " + f"\n  {'':{len(qid)}}  ".join(cut(problems, max_listed)))
    matched = [
        f"  {row.id}: {_one_line(f'{found.text!r} {found.why}')}"
        for row in report.questions
        if row.answer is not None
        for found in row.answer.matched
    ]
    if matched:
        lines += ["", f"Key facts and nuggets found in other words ([judge] match): {len(matched)}"]
        lines += cut(matched, max_listed)
    lines += variation_lines(report.settings.get("stochastic"), max_listed)
    return inert("\n".join(lines))


def variation_lines(stochastic: dict[str, Any] | None, limit: int) -> list[str]:
    """The most variable questions over a stochastic run's repeats (gate/variation.py)."""
    if not stochastic:
        return []
    varied = stochastic.get("variation") or {}
    title = (
        f"Questions that vary over the {stochastic.get('repeats')} runs: {len(varied)} "
        "(variation 1: half the runs pass a check, 0: every run the same)"
    )
    return ["", title, *(f"  {line}" for line in most_variable(stochastic, limit))]


def cache_line(cache: dict[str, int]) -> str:
    """What the verdict cache did this run (printed by eval, baseline and gate)."""
    line = f"Verdict cache: {cache['hits']} hits, {cache['misses']} misses"
    line += f"; sentences judged this run: {cache['judged']}"
    if cache.get("not_judged"):  # a model's replies that skipped them, twice: never a pass
        line += f", {cache['not_judged']} not judged (the judge's replies gave no verdict, twice)"
    if "requests" in cache:  # a backend behind a server: what it was asked
        line += (
            f"; judge requests: {cache['requests']} ({cache.get('retries', 0)} retried, "
            f"{cache.get('failed', 0)} failed), tokens: {cache.get('total_tokens', 0)}"
        )
    if cache.get("rejected"):  # entries that did not verify (edited, or another machine's)
        line += f"; {cache['rejected']} cached verdicts did not verify and were judged again"
    return line


def calls_line(calls: dict[str, object]) -> str:
    """What the run asked of the team's system (printed by eval, baseline and gate)."""
    line = f"System calls this run: {calls['calls']}"
    if calls.get("output_cache", "off") != "off":
        line += f"; outputs from the cache: {calls['cached']}"
    if calls.get("retries"):
        line += f"; {calls['retries']} retried after a transient error"
    if calls.get("rejected"):
        line += f"; {calls['rejected']} cached outputs did not verify and were asked again"
    return line


def _issue_lines(issue: QuestionIssue, limit: int) -> list[str]:
    lines = [f'  [{issue.label}] {issue.id} "{issue.question}": ' + "; ".join(issue.reasons)]
    return lines + [f"      {detail}" for detail in cut(issue.details, limit)]


def _problem_lines(problem: MetricProblem, limit: int) -> list[str]:
    """A failing aggregate or slice: each of its failures, then the questions behind it once."""
    lines = []
    for failure in problem.failures:
        lines.append(f"  [{failure.kind}] {failure.message}")
        lines += [f"      {detail}" for detail in cut(list(failure.details), limit)]
    questions = problem.questions
    lines.append(f"      {problem.note}" + (":" if questions else ""))
    width = max([len(q.id) for q in questions] + [2])
    lines += [f'        {q.id:{width}}  {q.numbers}  "{q.question}"' for q in questions]
    if problem.more_text:
        lines.append(f"        {problem.more_text}")
    return lines


def _check_lines(listing: CheckListing) -> list[str]:
    """A check's flips: its verdict, then the newly failing and the newly passing questions
    (id, baseline -> now, text), each list cut to [display] max_listed."""
    lines = [f"  {listing.verdict}"]
    for heading, questions, more in listing.lists:
        lines.append(f"    {heading}:")
        width = max([len(q.id) for q in questions] + [2])
        lines += [f'      {q.id:{width}}  {q.numbers}  "{q.question}"' for q in questions]
        lines += [f"      {more}"] if more else []
    return lines


def _columns(cells: tuple[str, ...], name_width: int = 12) -> str:
    """The metric table's cells padded to their columns: the name left, numbers right."""
    first, *rest = cells
    widths = (9, 7, 7, 17, 7, 7, 6)
    return " ".join([f"{first:<{name_width}}", *(f"{c:>{w}}" for c, w in zip(rest, widths, strict=True))])


def console_verdict(view: GateView) -> str:
    """What `gate` prints: one table of metrics and answer checks (delta, CI, p, floor), the
    slices, warnings and notes, the questions that changed (each once), and the verdict."""
    width = max([12, *(len(row.cells[0]) for row in view.metrics)])  # "citation_precision"
    lines = ["  " + _columns(MetricRow.HEADER, width)]
    for row in view.metrics:
        lines.append("  " + _columns(row.cells, width) + f"  {row.verdict}")
    lines += [f"  ({note})" for note in view.paired_notes]
    lines.append(f"  ({view.rule})")
    lines.append(f"  (tolerance: {view.in_questions})")
    lines.append(f"  ({view.correction})")
    lines.append(f"  ({view.mde_text})")
    lines.append(f"  ({view.judged})")
    lines.append(f"  ({view.judge_trust})")
    lines += [f"  ({view.corrected})"] if view.corrected else []
    if view.slices:
        lines.append("  Slices: delta (adjusted p; * significant, - too small to test)")
        table: list[list[object]] = [["tag", "n", *view.slice_metrics]]
        for srow in view.slices:
            cells: list[object] = [srow.tag, srow.n]
            for cell in srow.cells:
                star = "*" if cell.significant_drop else " "
                shown = f"{cell.delta:+.3f} ({p_text(cell.p_adjusted)}){star}"
                cells.append("- " if cell.delta is None else shown)  # "- ": aligned with the stars' column
            table.append(cells)
        lines += aligned(table, right=range(1, len(view.slice_metrics) + 2))
    if view.holdout:
        lines.append(
            f"Holdout {view.holdout_file}: {view.holdout_evaluated} evaluated "
            f"(dev: {view.counts.evaluated}); gap = dev - holdout"
        )
        holdout: list[list[object]] = [["metric", "dev", "holdout", "gap"]]
        holdout += [
            [name, f"{dev:.3f}", f"{held:.3f}", f"{gap:+.3f}"] for name, dev, held, gap in view.holdout
        ]
        lines += aligned(holdout, right={1, 2, 3})
    lines += [f"warning: {warning}" for warning in view.warnings]
    lines += [f"note: {note}" for note in view.notes]
    lines += [f"advisory, not failing the gate: {line}" for line in view.advisory]
    if view.flip_checks:
        lines.append("Flips per check against the baseline (newly failing and newly passing questions):")
        for listing in view.flip_checks:
            lines += _check_lines(listing)
    listed = view.listed_questions
    if listed:
        lines.append(
            f"{len(listed)} newly failing question(s) for review (within [gate.allowed_flips], of a check "
            "the net rule passed, of stochastic checks, or of advisory ones):"
        )
        for issue in listed:  # every one: the CI log is where a failure is read
            lines += _issue_lines(issue, view.max_listed)
    if view.passed:
        lines.append("GATE PASSED")
        return inert("\n".join(lines))
    lines.append(f"GATE FAILED: {view.failure_count} problem(s)")
    for problem in view.metric_problems:
        lines += _problem_lines(problem, view.max_listed)
    lines += [f"  [flips] {listing.verdict}" for listing in view.failing_checks]
    for issue in view.blocking_questions:
        lines += _issue_lines(issue, view.max_listed)
    return inert("\n".join(lines))
