"""Rule (a), slices: a tag's mean below its slice floor ([gate.slices.TAG]).

A tag no evaluated question carries is a note. A floor missed lists the questions behind the
tag's mean (drops.py); a check resting on an untrusted judge is advisory, never blocking.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .acceptance import not_lower
from .drops import question_moves
from .findings import Failure, Findings

if TYPE_CHECKING:
    from .context import GateContext


class SliceFloors:
    name = "slice floors"

    def findings(self, context: GateContext) -> Findings:
        found = Findings()
        report, baseline = context.report, context.baseline
        for tag, tag_floors in context.gate.slice_floors.items():
            piece = report.slices.get(tag)
            for metric, floor in tag_floors.items():
                value = (piece.metrics or {}).get(str(metric)) if piece is not None else None
                if value is None:
                    found.notes.append(f"slice floor for tag {tag!r}: no evaluated question has that tag")
                elif not not_lower(floor, value):
                    evaluated = piece.evaluated if piece else 0
                    message = (
                        f"{metric} = {value:.3f} on tag {tag!r} "
                        f"({evaluated} questions) is below its slice floor {floor:.3f}"
                    )
                    moves = question_moves(report, baseline, str(metric), tag, floor)
                    held = context.held(str(metric))
                    found.failures.append(
                        Failure("floor", f"{metric} [{tag}]", message, **context.behind(moves), **held)
                    )
        return found
