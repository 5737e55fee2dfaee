"""A verdict the judge could not give: the model's reply skipped the sentence (twice).

`NotJudged` is a Verdict that is never supported, is counted under `not_judged` with its
check, counts neither way in a check's share, and is never cached (asked again next run);
`judged` tells it from a verdict. A judge backend returns one when it has no verdict to give,
rather than stopping the run.
"""

from __future__ import annotations

from dataclasses import dataclass

from .judges import Verdict

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
