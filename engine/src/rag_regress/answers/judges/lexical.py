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
import itertools
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from . import Item, Verdict, judged_names, settle, versioned
from .claims import clauses, copied_from, split_sentences, windows
from .findings import derivable
from .reading import Quantity, quantities, read, terms

# The findings that fail a claim unless [judge] fail_on says otherwise: those whose precision
# on the development split of labels written for other domains is well above chance
# (docs/judges.md); "order" and "condition" are reported, not failing.
FAIL_ON = ("number", "name", "polarity", "hedge", "quantifier", "modality", "causal")


@functools.lru_cache(maxsize=1 << 15)
def _read(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """The distinct terms of `text`, and every word it holds (its terms and each word as
    written): what choosing a window and scoring it look up."""
    found = frozenset(terms(text))
    return found, found | {token.word for token in read(text)}


def _present(window: str) -> frozenset[str]:
    """Every word the window holds (`_read`)."""
    return _read(window)[1]


def _readings(contexts: tuple[str, ...]) -> dict[str, tuple[frozenset[str], frozenset[str]]]:
    """`_read` of each window of the contexts, each sentence read once: a two-sentence window
    "A. B" holds what A and B hold, because A ends in . ! or ? and B begins with a capital, a
    digit or a quote (claims.split_sentences), so no step of reading joins a word or a
    pattern across the space between them. So a sentence is read once, not once per window
    holding it."""
    found: dict[str, tuple[frozenset[str], frozenset[str]]] = {}
    for context in contexts:
        sentences = split_sentences(context)
        found.update((sentence, _read(sentence)) for sentence in sentences)
        for first, second in itertools.pairwise(sentences):
            (terms_a, words_a), (terms_b, words_b) = _read(first), _read(second)
            found[f"{first} {second}"] = (terms_a | terms_b, words_a | words_b)
    return found


def coverage(claim: str, window: str, context: str = "") -> float:
    """Share of the claim's content terms and numbers found in the window (1.0 for a claim
    without any). A term said twice counts twice; a number counts as found when `context` (or
    the window) states it or it follows from two numbers stated there."""
    wanted, numbers = terms(claim), quantities(claim)
    if not wanted and not numbers:
        return 1.0
    derived = _derived(numbers, quantities(context or window))
    return (_held(wanted, window) + derived) / (len(wanted) + len(numbers))


def _held(wanted: tuple[str, ...], window: str) -> int:
    """How many of the claim's terms (`wanted`, repeats counted) the window holds."""
    have = _present(window)
    return sum(term in have for term in wanted)


def _derived(numbers: tuple[Quantity, ...], stated: tuple[Quantity, ...]) -> int:
    """How many of the claim's numbers the `stated` ones give (findings.derivable)."""
    return sum(derivable(q, stated) for q in numbers)


class Windows:
    """The windows of one answer's contexts, indexed by term, so that a claim is scored only
    against the windows holding most of its rarest terms: linear in the length of the contexts,
    however long. What is read of them is read when first needed: a claim copied from a window
    needs neither the windows' words nor the contexts' numbers."""

    SMALL = 64  # below this many windows, scoring them all is cheaper than choosing
    TOP = 32  # candidates scored in full, the ones holding most of the claim's rarest terms

    def __init__(self, contexts: tuple[str, ...]):
        self.contexts = contexts
        self.split = windows(contexts)
        self.context = "\n".join(contexts)

    @functools.cached_property
    def stated(self) -> tuple[Quantity, ...]:
        """The numbers the contexts state: every claim's numbers are looked up in them."""
        return quantities(self.context)

    @functools.cached_property
    def readings(self) -> list[tuple[frozenset[str], frozenset[str]]]:
        """`_read` of each window, in the order of `split`."""
        readings = _readings(self.contexts)
        return [readings.get(window) or _read(window) for window in self.split]

    @functools.cached_property
    def postings(self) -> dict[str, set[int]]:
        """term -> the indexes of the windows holding it."""
        postings: dict[str, set[int]] = {}
        for i, (found, _) in enumerate(self.readings):
            for term in found:
                postings.setdefault(term, set()).add(i)
        return postings

    def candidates(self, text: str) -> list[str]:
        """The windows `text` is scored against, in reading order (all of them when few)."""
        return [self.split[i] for i in self._chosen(text)]

    def _chosen(self, text: str) -> list[int]:
        """The indexes of the windows `text` is scored against, in reading order."""
        if len(self.split) <= self.SMALL:
            return list(range(len(self.split)))
        held: dict[int, int] = {}
        for term in set(terms(text)):
            for i in self.postings.get(term, ()):
                held[i] = held.get(i, 0) + 1
        chosen = sorted(held, key=lambda i: (-held[i], i))[: self.TOP]
        return sorted(chosen) or [0]

    def copied(self, text: str) -> str | None:
        """The window settle() supports `text` on, its scores unread, when `text` is copied from
        a candidate: the shortest such (the first among equals)."""
        return copied_from(text, self.candidates(text))

    def scored(self, text: str) -> list[tuple[float, str]]:
        """`coverage` of each candidate window. The claim's terms, and which of its numbers the
        contexts give, are the same for every window: worked out once per claim, not per window."""
        chosen = self._chosen(text)
        wanted, numbers = terms(text), quantities(text)
        if (not wanted and not numbers) or not self.context:  # no text of contexts: coverage() alone
            return [(coverage(text, self.split[i], self.context), self.split[i]) for i in chosen]
        derived, total = _derived(numbers, self.stated), len(wanted) + len(numbers)
        return [
            ((sum(term in self.readings[i][1] for term in wanted) + derived) / total, self.split[i])
            for i in chosen
        ]


class LexicalJudge:
    def __init__(self, threshold: float, fail_on: tuple[str, ...] = FAIL_ON, names: tuple[str, ...] = ()):
        self.threshold = threshold
        self.fail_on = fail_on
        self.names = names  # [judge] names: any context may use them
        self.identity: dict[str, Any] = versioned("lexical") | {"model": None, "revision": None}
        self.identity |= {"threshold": threshold, "fail_on": list(fail_on)} | judged_names(names)

    def judge(self, claim: str, found: Windows) -> Verdict:
        window = found.copied(claim)
        if window is not None:  # what settle() gives a copied claim (and its clauses are not asked)
            return Verdict(True, 1.0, window, "")
        scored = found.scored(claim)
        verdict = settle(claim, scored, self.threshold, found.context, self.fail_on, self.names)
        parts = clauses(claim)
        if not verdict.supported or len(parts) == 1:  # (no candidate is copied: found.copied said so)
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
