"""Judge trust: a note when the judge's checks gated at the baseline and are advisory now, or
the other way (answers/trust.py). Which checks are advisory, never blocking, is read by every
rule from the context (GateContext.held).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..answers.trust import changed_since
from .findings import Findings

if TYPE_CHECKING:
    from .context import GateContext


class JudgeTrust:
    name = "judge trust"

    def findings(self, context: GateContext) -> Findings:
        moved = changed_since(context.calibration, context.baseline.receipt.get("calibration"))
        return Findings(notes=[moved] if moved else [])
