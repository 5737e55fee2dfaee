"""The lexical judge: a claim is supported when its content words are in one window.

Deterministic, needs no model. For each one- or two-sentence window of the contexts it
computes coverage, the share of the claim's content words (stemmed, stopwords dropped,
numbers as digits) found in the window. The best window then goes through the shared
guard, and every name the claim uses (a capitalised word after its first, an acronym, a
word with letters and digits: "Team", "Okta", "SCIM", "2FA") must be in it too: swapping
"Business plan" for "Team plan" changes one word but the whole meaning.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ...text.words import raw_words
from . import Item, Verdict, decide
from .claims import windows
from .words import content_terms, stem, term_set

_NAME = re.compile(r"\b(?:[A-Z][A-Za-z0-9]*|[A-Za-z]+\d[A-Za-z0-9]*|\d+[A-Za-z][A-Za-z0-9]*)\b")


def names(claim: str) -> set[str]:
    """Stems of the names in a claim: capitalised words other than the first, acronyms,
    and words with digits."""
    found = set()
    for match in _NAME.finditer(claim):
        if match.start() == len(claim) - len(claim.lstrip()):
            continue  # the sentence's first word is capitalised anyway
        found.add(stem(match.group().lower()))
    return found


def coverage(claim: str, window: str) -> float:
    """Share of the claim's content words present in the window (1.0 for an empty claim)."""
    terms = content_terms(claim)
    have = term_set(window)
    if not terms:
        return 1.0
    return sum(term in have for term in terms) / len(terms)


def missing_name(claim: str, window: str) -> str | None:
    """A name the claim uses that the window lacks, as the reason the claim is unsupported."""
    missing = sorted(names(claim) - {stem(word) for word in raw_words(window.replace("-", " "))})
    return f"names '{missing[0]}', which the context does not" if missing else None


class LexicalJudge:
    def __init__(self, threshold: float):
        self.threshold = threshold
        self.identity = {"name": "lexical", "model": None, "revision": None, "threshold": threshold}

    def verdicts(self, items: Sequence[Item]) -> list[Verdict]:
        found, last, split = [], None, []
        for claim, contexts in items:
            if contexts != last:  # an answer's claims come together and share its contexts
                last, split = contexts, windows(contexts)
            found.append(
                decide(claim, [(coverage(claim, w), w) for w in split], self.threshold, missing_name)
            )
        return found


def build(settings: Any, config_path: Any) -> LexicalJudge:
    return LexicalJudge(settings.threshold)
