"""Unjudged documents: the gate's note when a candidate's top k holds clearly more documents
the golden set never judged than the baseline's did.

A golden set judges the documents somebody looked at; every other document counts as not
relevant (trec_eval's convention). A retriever that surfaces documents nobody graded can then
score lower while being better: the pooling bias of test collections. The gate cannot know
which, so it says so, naming the questions, and leaves its verdict to the rules (the exit
code is unchanged): `rag-regress pool` lists those documents, the grading page grades them,
`add-judgments` merges the grades, and a new baseline compares like with like.

Both top k are read against the *current* judgments (the report's), so a document judged
since the baseline was made counts as judged in both.
"""

from __future__ import annotations

import math
from statistics import fmean
from typing import TYPE_CHECKING

from ..inputs.reports import QuestionResult, Report
from ..retrieval.metrics import judged_at_k
from .findings import Findings

if TYPE_CHECKING:
    from .context import GateContext


def clearly_more(k: int) -> int:
    """How many more unjudged documents in a top k make a question worth naming: a quarter
    of k, at least one (2 of 5, 3 of 10); fewer is the ordinary churn of a changed ranking."""
    return max(1, math.ceil(k / 4))


def more_unjudged(report: Report, baseline: Report) -> list[tuple[str, int, int]]:
    """(question id, unjudged in the baseline's top k, unjudged in the report's), for each
    question whose count rose by at least `clearly_more(k)`, in report order."""
    k = report.k
    before = {row.id: row for row in baseline.questions}
    found = []
    for row in report.questions:
        old = before.get(row.id)
        if old is None:
            continue
        then, now = len(old.unjudged(k, row.qrels)), len(row.unjudged(k))
        if now - then >= clearly_more(k):
            found.append((row.id, then, now))
    return found


def judged_shares(report: Report, baseline: Report) -> tuple[float, float, int, int]:
    """judged@k of the baseline's top k and of the report's, both against the report's
    (current) judgments, over the questions both have: (mean then, mean now, unjudged
    documents then, unjudged documents now). Means are 1.0 when no question is shared."""
    k = report.k
    before = {row.id: row for row in baseline.questions}
    pairs = [(before[row.id], row) for row in report.questions if row.id in before]
    if not pairs:
        return 1.0, 1.0, 0, 0

    def share(ranked: QuestionResult, qrels: dict[str, int]) -> float:
        return judged_at_k([doc_id for doc_id, _ in ranked.retrieved], qrels, k)

    return (
        fmean(share(old, row.qrels) for old, row in pairs),
        fmean(share(row, row.qrels) for _, row in pairs),
        sum(len(old.unjudged(k, row.qrels)) for old, row in pairs),
        sum(len(row.unjudged(k)) for _, row in pairs),
    )


def judged_text(report: Report, baseline: Report, named: int) -> str:
    """The gate's line on judged@k, baseline and now, read against the current judgments;
    `named`: the questions the pooling note names."""
    then, now, unjudged_then, unjudged_now = judged_shares(report, baseline)
    k = report.k
    line = (
        f"judged@{k} {then:.3f} -> {now:.3f}: the share of each top {k} the golden set has judged "
        f"({unjudged_then} -> {unjudged_now} unjudged documents, counted as not relevant; both runs "
        "read against today's judgments)"
    )
    return line + (f"; a possible pooling artefact in {named} question(s): see the notes" if named else "")


def pooling_note(found: list[tuple[str, int, int]], k: int, limit: int = 10) -> str:
    """The gate's note naming the questions `more_unjudged` found (at least one)."""
    named = ", ".join(f"{qid} ({then} -> {now} of {k})" for qid, then, now in found[:limit])
    more = f" and {len(found) - limit} more" if len(found) > limit else ""
    return (
        f"possible pooling artefact: the top {k} of {len(found)} question(s) holds clearly more unjudged "
        f"documents than the baseline's (unjudged count): {named}{more}. Unjudged documents count as "
        "not relevant, so a drop there may be documents nobody graded: `rag-regress pool` lists them, "
        "`rag-regress grade` makes a page to grade them, `rag-regress add-judgments` merges the grades"
    )


class Pooling:
    """A note, never a failure, naming the questions whose top k holds clearly more unjudged
    documents than the baseline's (context.pooled: more_unjudged)."""

    name = "pooling"

    def findings(self, context: GateContext) -> Findings:
        return Findings(notes=[pooling_note(context.pooled, context.report.k)] if context.pooled else [])
