"""Rule (a), aggregates: a metric or answer check below its absolute floor ([gate.floors]).

A floor holds whatever the baseline says. Faithfulness corrected by the team's labels
(answers/trust.py) is held by its interval's lower end. A floor missed lists the questions
behind the mean (drops.py); a check resting on an untrusted judge is advisory, never blocking.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .acceptance import not_lower
from .drops import question_moves
from .findings import Failure, Findings
from .significance import OVERALL

if TYPE_CHECKING:
    from .context import GateContext


class Floors:
    name = "floors"

    def findings(self, context: GateContext) -> Findings:
        found = Findings()
        now = context.report.aggregate
        corrected = (context.calibration or {}).get("faithfulness")
        for name, floor in context.floors.items():
            # faithfulness corrected by the team's labels is held by its interval's lower end
            by = corrected if name == "faithfulness" and isinstance(corrected, dict) else None
            if not_lower(floor, by["low"] if by is not None else now[name]):
                continue
            message = (
                f"faithfulness corrected by {by['labelled']} labels of your answers is {by['estimate']:.3f} "
                f"(95% {by['low']:.3f} to {by['high']:.3f}; the judge alone {now[name]:.3f}): its lower "
                f"end is below the floor {floor:.3f}"
                if by is not None
                else f"{name} = {now[name]:.3f} is below its floor {floor:.3f}"
            )
            moves = question_moves(context.report, context.baseline, name, OVERALL, floor)
            found.failures.append(
                Failure("floor", name, message, **context.behind(moves), **context.held(name))
            )
        return found
