"""Notes on the questions only one report holds: new ones are not checked per question, and
those no longer in the golden set are named."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .findings import Findings

if TYPE_CHECKING:
    from .context import GateContext


class Membership:
    name = "membership"

    def findings(self, context: GateContext) -> Findings:
        old_rows = context.old_rows
        questions = context.report.questions
        added = [row.id for row in questions if row.id not in old_rows]
        removed = sorted(set(old_rows) - {row.id for row in questions})
        notes = []
        if added:
            notes.append(
                f"{len(added)} question(s) not in the baseline (not checked per question): {', '.join(added)}"
            )
        if removed:
            notes.append(
                f"{len(removed)} baseline question(s) no longer in the golden set: {', '.join(removed)}"
            )
        return Findings(notes=notes)
