"""The lexical judge: a claim is supported when each of its clauses is covered by one window.

Deterministic, needs no model. Each clause of the claim (claims.clauses: a true sentence with
an invented clause appended must not pass) is scored against every one- or two-sentence window
of the contexts by coverage: the share of its content terms (reading.terms: stems that are not
function words) found in the window, each number counting as found when the contexts state it
or it follows from two they state (findings.derivable). The claim's score is its weakest
clause's best coverage; the narrow checks (findings.py) then read the whole claim against its
best window, and the findings [judge] fail_on names fail it. On long contexts only the windows
that could reach the threshold are scored (`Windows`).
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from . import Item, Verdict, judged_names, settle, versioned
from .claims import clauses, copied, windows
from .findings import derivable
from .reading import quantities, read, terms

# The findings that fail a claim unless [judge] fail_on says otherwise: those whose precision
# on the development split of labels written for other domains is well above chance
# (docs/judges.md); "order" and "condition" are reported, not failing.
FAIL_ON = ("number", "name", "polarity", "hedge", "quantifier", "modality", "causal")


@functools.lru_cache(maxsize=1 << 15)
def _present(window: str) -> frozenset[str]:
    return frozenset(terms(window)) | {token.word for token in read(window)}


def coverage(claim: str, window: str, context: str = "") -> float:
    """Share of the claim's content terms and numbers found in the window (1.0 for a claim
    without any). A term said twice counts twice; a number counts as found when `context` (or
    the window) states it or it follows from two numbers stated there."""
    wanted, numbers = terms(claim), quantities(claim)
    if not wanted and not numbers:
        return 1.0
    have = _present(window)
    stated = quantities(context or window)
    found = sum(term in have for term in wanted) + sum(derivable(q, stated) for q in numbers)
    return found / (len(wanted) + len(numbers))


class Windows:
    """The windows of one answer's contexts, indexed by term, so that a claim is scored only
    against the windows holding most of its rarest terms: linear in the length of the contexts,
    however long."""

    SMALL = 64  # below this many windows, scoring them all is cheaper than choosing
    TOP = 32  # candidates scored in full, the ones holding most of the claim's rarest terms

    def __init__(self, contexts: tuple[str, ...]):
        self.split = windows(contexts)
        self.context = "\n".join(contexts)
        self.postings: dict[str, set[int]] = {}
        if len(self.split) > self.SMALL:
            for i, window in enumerate(self.split):
                for term in set(terms(window)):
                    self.postings.setdefault(term, set()).add(i)

    def candidates(self, text: str) -> list[str]:
        if len(self.split) <= self.SMALL:
            return self.split
        held: dict[int, int] = {}
        for term in set(terms(text)):
            for i in self.postings.get(term, ()):
                held[i] = held.get(i, 0) + 1
        chosen = sorted(held, key=lambda i: (-held[i], i))[: self.TOP]
        return [self.split[i] for i in sorted(chosen)] or self.split[:1]

    def scored(self, text: str) -> list[tuple[float, str]]:
        return [(coverage(text, window, self.context), window) for window in self.candidates(text)]


class LexicalJudge:
    def __init__(self, threshold: float, fail_on: tuple[str, ...] = FAIL_ON, names: tuple[str, ...] = ()):
        self.threshold = threshold
        self.fail_on = fail_on
        self.names = names  # [judge] names: any context may use them
        self.identity: dict[str, Any] = versioned("lexical") | {"model": None, "revision": None}
        self.identity |= {"threshold": threshold, "fail_on": list(fail_on)} | judged_names(names)

    def judge(self, claim: str, found: Windows) -> Verdict:
        scored = found.scored(claim)
        verdict = settle(claim, scored, self.threshold, found.context, self.fail_on, self.names)
        parts = clauses(claim)
        if not verdict.supported or len(parts) == 1 or any(copied(claim, w) for _, w in scored):
            return verdict
        for part in parts:  # each clause on its own best window: an appended clause must be covered too
            score, window = max(found.scored(part), key=lambda pair: (pair[0], -len(pair[1])))
            if score < self.threshold:
                why = f"the clause '{part}' is not in the context (best support {score:.2f})"
                return Verdict(False, score, window, why, verdict.findings)
        return verdict

    KEPT = 256  # answers' windows kept: the same documents come back in many answers

    def verdicts(self, items: Sequence[Item]) -> list[Verdict]:
        """One verdict per item; an item asked again gets the verdict it got the first time."""
        results: list[Verdict] = []
        kept: OrderedDict[tuple[str, ...], Windows] = OrderedDict()
        done: dict[Item, Verdict] = {}
        for item in items:
            if item not in done:
                claim, contexts = item
                found = kept.get(contexts)
                if found is None:
                    found = kept[contexts] = Windows(contexts)
                    if len(kept) > self.KEPT:
                        kept.popitem(last=False)
                else:
                    kept.move_to_end(contexts)
                done[item] = self.judge(claim, found)
            results.append(done[item])
        return results


def build(settings: Any, config_path: Any) -> LexicalJudge:
    return LexicalJudge(settings.threshold, tuple(settings.failing()), tuple(settings.names))
