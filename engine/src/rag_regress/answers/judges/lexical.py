"""The lexical judge: a claim is supported when each of its clauses is covered by one window.

Deterministic, needs no model. Each clause of the claim (claims.clauses: a true sentence with
an invented clause appended must not pass) is scored against every one- or two-sentence window
of the contexts by coverage, the share of its terms (words.content_terms: stemmed, synonyms
merged, quantities in base units) found in the window. The claim's score is its weakest
clause's best coverage; the shared guard then checks each clause against its best window.
On long contexts only the windows that could reach the threshold are scored (`Windows`), so
a reported "best support" below the threshold is the best of those.
"""

from __future__ import annotations

import functools
from collections import Counter, OrderedDict
from collections.abc import Sequence
from typing import Any

from . import Item, Verdict, decide, judged_names, versioned
from .claims import clauses, windows
from .guard import ABSENT, copied, guard, implied_terms, said_otherwise
from .lexicon import opposites
from .words import content_terms, term_set


class _Needs:
    """What a text needs of a window to be covered, worked out once per text: its number of
    terms, each distinct term with its count, and each term's opposites."""

    __slots__ = ("any_opposite", "count", "counts", "keys", "opposite")

    def __init__(self, text: str):
        terms = content_terms(text)
        self.count = len(terms)
        self.counts = dict(Counter(terms))
        self.keys = frozenset(self.counts)
        self.opposite = {term: opposites(term) for term in self.counts}
        self.any_opposite = frozenset().union(*self.opposite.values())


@functools.lru_cache(maxsize=1 << 15)
def _needs(text: str) -> _Needs:
    return _Needs(text)


def coverage(claim: str, window: str) -> float:
    """Share of the claim's content terms present in the window, a term's opposite counting
    as present (1.0 for a claim without any terms). A term said twice counts twice."""
    needs = _needs(claim)
    if not needs.count:
        return 1.0
    have = term_set(window)  # "disabled" covers the slot of "enabled"; the guard compares them
    present = needs.keys & have
    found = sum(needs.counts[term] for term in present)
    if not have.isdisjoint(needs.any_opposite):  # rarely: most windows hold no opposite of the claim's
        found += sum(
            needs.counts[term] for term in needs.keys - present if not have.isdisjoint(needs.opposite[term])
        )
    return found / needs.count


def with_implied(clause: str, window: str, score: float) -> float:
    """A clause's coverage with the numbers the window implies counted as present ("it is 10
    minutes" of "between 5 and 60 minutes, 10 by default"): asked only of a clause that falls
    short, so the common case pays nothing."""
    terms = content_terms(clause)
    implied = implied_terms(clause, window)
    return max(score, coverage(clause, window) + sum(term in implied for term in terms) / max(1, len(terms)))


def contradicted(verdict: Verdict) -> bool:
    """Whether the guard found the window saying otherwise (not merely missing something):
    then only the clauses said apart can support it (LexicalJudge._said_apart)."""
    return (
        not verdict.supported
        and verdict.score == 0.0
        and verdict.window != ""
        and ABSENT not in verdict.reason
    )


class Windows:
    """The windows of one answer's contexts, indexed by term, so that a claim is scored only
    against the windows that could reach the threshold: linear in the length of the
    contexts, however long (a window whose coverage reaches t must hold one of the claim's
    rarest terms whose combined weight exceeds 1 - t of the claim)."""

    SMALL = 64  # below this many windows, scoring them all is cheaper than choosing

    def __init__(self, contexts: tuple[str, ...], threshold: float):
        self.split = windows(contexts)
        self.threshold = threshold
        self.postings: dict[str, set[int]] = {}
        if len(self.split) > self.SMALL:
            for i, window in enumerate(self.split):
                for term in term_set(window):
                    self.postings.setdefault(term, set()).add(i)

    def _with(self, term: str) -> set[int]:
        found = set(self.postings.get(term, ()))
        for opposite in opposites(term):
            found |= self.postings.get(opposite, set())
        return found

    def candidates(self, text: str) -> list[str]:
        """The windows worth scoring for `text`: all of them for a short context, else those
        holding most of its rarest terms."""
        if len(self.split) <= self.SMALL:
            return self.split
        terms = content_terms(text)
        if not terms:
            return self.split  # nothing to look up: every window covers it
        counts = {term: terms.count(term) for term in set(terms)}
        held: dict[int, int] = {}
        weight = 0
        for term in sorted(counts, key=lambda t: (len(self._with(t)), t)):
            for i in self._with(term):
                held[i] = held.get(i, 0) + counts[term]
            weight += counts[term]
            if weight > (1 - self.threshold) * len(terms):
                break
        # A window holding repeats of common sentences can be a candidate many times over:
        # score in full only those that hold most of the rarest terms.
        chosen = sorted(held, key=lambda i: (-held[i], i))[: self.TOP]
        return [self.split[i] for i in sorted(chosen)]

    def scored(self, text: str) -> list[tuple[float, str]]:
        return [(coverage(text, w), w) for w in self.candidates(text)]

    TOP = 32  # candidates scored in full, the ones holding most of the claim's rarest terms


def _best(clause: str, found: Windows) -> tuple[float, str]:
    scored = found.scored(clause)
    if not scored:
        return 0.0, ""
    return max(scored, key=lambda pair: (pair[0], -len(pair[1])))


class LexicalJudge:
    def __init__(self, threshold: float, names: tuple[str, ...] = (), tiers: tuple[str, ...] = ()):
        self.threshold = threshold
        self.names = names  # [judge] names: any context may use them
        self.tiers = tiers  # [judge] tiers, lowest first: what "the Team plan and above" reaches
        self.identity: dict[str, Any] = versioned("lexical") | {"model": None, "revision": None}
        self.identity |= {"threshold": threshold} | judged_names(names, tiers)

    def judge(self, claim: str, found: Windows, context: str) -> Verdict:
        chosen = found.candidates(claim) or found.split[:1]
        if not context or copied(claim, context):  # decide()'s shortcut, before any window is scored
            for window in sorted(chosen, key=len):
                if copied(claim, window):
                    return Verdict(True, 1.0, window, "")
        scored = [(coverage(claim, window), window) for window in chosen]
        verdict = decide(claim, scored, self.threshold, context=context, names=self.names, tiers=self.tiers)
        parts = clauses(claim)
        if len(parts) == 1 or (verdict.supported and verdict.score == 1.0):
            return verdict
        if contradicted(verdict):
            apart = self._said_apart(parts, found, context) if said_otherwise(verdict.reason) else None
            return apart or verdict
        scores = []
        for part in parts:  # each clause on its own best window
            score, window = _best(part, found)
            problem = guard(part, window, context, self.names, self.tiers)
            if problem:
                return Verdict(False, 0.0, window, problem)
            if score < self.threshold and window:
                score = with_implied(part, window, score)
            if score < self.threshold:
                why = f"the clause '{part}' is not in the context (best support {score:.2f})"
                return Verdict(False, score, window, why)
            scores.append(score)
        return Verdict(True, min(scores), verdict.window, "")

    # The share of a clause's terms one window must hold for `_said_apart`: well above the
    # threshold, so that a clause made of words scattered over the context does not count.
    APART = 0.75

    def _said_apart(self, parts: list[str], found: Windows, context: str) -> Verdict | None:
        """A claim that joins two facts of the context that sit in different sentences
        ("archiving keeps its entries in reports, whereas deleting removes them for good"):
        the window that best covers the whole claim can hold one fact's sentence and the
        opposite of the other ("deleting removes ..."), so a word said otherwise there (its
        opposite, another modal or quantifier: `said_otherwise`) is not final when each clause
        has a window of its own that holds most of its terms (APART) and the guard accepts.
        Any other contradiction (a swap, steps in the other order) relates the clauses, so it
        stays."""
        held = [_best(part, found) for part in parts]
        for part, (score, window) in zip(parts, held, strict=True):
            if score < max(self.APART, self.threshold):
                return None
            if guard(part, window, context, self.names, self.tiers):
                return None
        score, window = min(held)  # the weakest clause's, as for any claim judged clause by clause
        return Verdict(True, score, window, "")

    KEPT = 256  # answers' windows kept: the same documents come back in many answers

    def verdicts(self, items: Sequence[Item]) -> list[Verdict]:
        """One verdict per item. An item asked again (the same claim and contexts) gets the
        verdict it got the first time: each depends on nothing else."""
        results: list[Verdict] = []
        kept: OrderedDict[tuple[str, ...], Windows] = OrderedDict()
        done: dict[Item, Verdict] = {}
        for item in items:
            if item in done:
                results.append(done[item])
                continue
            claim, contexts = item
            found = kept.get(contexts)
            if found is None:
                found = kept[contexts] = Windows(contexts, self.threshold)
                if len(kept) > self.KEPT:
                    kept.popitem(last=False)
            else:
                kept.move_to_end(contexts)
            if found.split:
                results.append(self.judge(claim, found, "\n".join(contexts)))
            else:
                results.append(decide(claim, [], self.threshold, names=self.names))
            done[item] = results[-1]
        return results


def build(settings: Any, config_path: Any) -> LexicalJudge:
    return LexicalJudge(settings.threshold, tuple(settings.names), tuple(settings.tiers))
