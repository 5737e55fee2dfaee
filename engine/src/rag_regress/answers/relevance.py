"""Answer relevance: does the answer address the question it was asked?

The share of the question's key terms the answer says: its content words, by stem, as the
judge reads them (answers/judges/reading.py: function words, numbers and units are not
terms), leaving out the [judge] names (a product's name is in many questions, and few
answers repeat it). Deterministic and offline; it sees words, not meaning, so a right
answer in other words scores low ("kicking me out" answered by "sessions expire"), while an
answer that shares no term with its question is about something else. A per-question signal
to read with correctness, rather than a target on its own.
"""

from __future__ import annotations

from collections.abc import Iterable

from .judges.reading import terms


def key_terms(question: str, names: Iterable[str] = ()) -> set[str]:
    """The question's key terms: its content-word stems less those of `names`."""
    left_out = {term for name in names for term in terms(name)}
    return set(terms(question)) - left_out


def relevance(question: str, answer: str, names: Iterable[str] = ()) -> float | None:
    """The share of the question's key terms (`key_terms`) among the answer's terms; None
    when the question has none (nothing to measure it by)."""
    wanted = key_terms(question, names)
    if not wanted:
        return None
    said = set(terms(answer))
    return len(wanted & said) / len(wanted)
