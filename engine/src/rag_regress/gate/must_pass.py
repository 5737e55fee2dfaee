"""Rule (d), retrieval: a must-pass question that retrieves no relevant document in the top k
fails the gate, whatever the baseline says (acceptance.must_pass_missed, the rule `compare`
shares). A must-pass question that newly fails a check is the flips rule's (flips.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .acceptance import must_pass_missed
from .findings import RETRIEVAL, Failure, Findings, question_failure, question_where

if TYPE_CHECKING:
    from .context import GateContext


class MustPass:
    name = "must-pass"

    def findings(self, context: GateContext) -> Findings:
        report, k = context.report, context.report.k
        found = {r.id: r.found for r in report.questions}
        missed = set(must_pass_missed([r.id for r in report.questions if r.must_pass], found))
        old_rows = context.old_rows
        failures: list[Failure] = []
        for row in report.questions:
            if row.id in missed and row.metrics is not None:
                reason = f"must-pass question found no relevant document in the top {k}"
                details = question_where(row, old_rows.get(row.id), k)
                failures.append(question_failure("must-pass", row, [reason], details, True, RETRIEVAL))
        return Findings(failures)
