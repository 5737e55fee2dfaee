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

from ..inputs.reports import QuestionResult, Report


def clearly_more(k: int) -> int:
    """How many more unjudged documents in a top k make a question worth naming: a quarter
    of k, at least one (2 of 5, 3 of 10); fewer is the ordinary churn of a changed ranking."""
    return max(1, math.ceil(k / 4))


def _unjudged(row: QuestionResult, judged: dict[str, int], k: int) -> int:
    return sum(1 for doc_id, _ in row.retrieved[:k] if doc_id not in judged)


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
        judged = row.qrels
        then, now = _unjudged(old, judged, k), _unjudged(row, judged, k)
        if now - then >= clearly_more(k):
            found.append((row.id, then, now))
    return found


def pooling_note(report: Report, baseline: Report, limit: int = 10) -> str | None:
    """The gate's note naming the questions of `more_unjudged`, or None when there are none."""
    found = more_unjudged(report, baseline)
    if not found:
        return None
    k = report.k
    named = ", ".join(f"{qid} ({then} -> {now} of {k})" for qid, then, now in found[:limit])
    more = f" and {len(found) - limit} more" if len(found) > limit else ""
    return (
        f"possible pooling artefact: the top {k} of {len(found)} question(s) holds clearly more unjudged "
        f"documents than the baseline's (unjudged count): {named}{more}. Unjudged documents count as "
        "not relevant, so a drop there may be documents nobody graded: `rag-regress pool` lists them, "
        "`rag-regress grade` makes a page to grade them, `rag-regress add-judgments` merges the grades"
    )
