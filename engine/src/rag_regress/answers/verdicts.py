"""A verdict the judge could not give: the model's reply skipped the sentence (twice).

`NotJudged` is a Verdict that is never supported, is counted under `not_judged` with its
check, counts neither way in a check's share, and is never cached (asked again next run);
`judged` tells it from a verdict. A judge backend returns one when it has no verdict to give,
rather than stopping the run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import EvalInputError
from .judges import Item, Judge, Verdict

if TYPE_CHECKING:
    from .settings import JudgeSettings

# The reason a backend gives when there is no text to read a claim against (judges/__init__.py
# says it as written: its bytes are the judges' rules, which a constant here leaves alone).
NO_CONTEXT = "no context to check it against"
ALWAYS_JUDGES = frozenset({"lexical", "nli"})  # built-in backends that give every item a verdict


@dataclass(frozen=True)
class NotJudged(Verdict):
    """No verdict: `reason` says why (module doc)."""


def not_judged(reason: str) -> NotJudged:
    """The verdict of an item the judge did not judge, saying why."""
    return NotJudged(False, 0.0, "", f"not judged: {reason}")


def judged(verdict: Verdict) -> bool:
    """Whether the judge gave `verdict` (module doc)."""
    return not isinstance(verdict, NotJudged)


def asked_of(
    judge: Judge, items: Sequence[Item], settings: JudgeSettings, config_path: Path
) -> list[Verdict]:
    """The judge's verdicts on `items`: one Verdict per item, in order. A judge (a package's,
    or the team's own) that returns another number of them, or something else, breaks its
    contract: exit 2 naming it, never a verdict read against the wrong sentence."""
    given = list(judge.verdicts(items))
    wrong = next((v for v in given if not isinstance(v, Verdict)), None)
    if len(given) != len(items) or wrong is not None:
        count = f"{len(given)} verdicts for {len(items)} items"
        what = count if wrong is None else f"a {type(wrong).__name__} among its verdicts"
        raise EvalInputError(
            config_path,
            f"[judge] backend = {settings.backend!r}: its verdicts() returned {what}",
            "return one rag_regress.parts.Verdict per item, in the order given",
            settings.line,
        )
    return given
