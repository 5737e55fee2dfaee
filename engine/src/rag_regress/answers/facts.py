"""Finding a key fact (`must_include`) or a nugget in an answer, by [judge] match:

  literal     the fact's text is in the answer's, both lower-cased with runs of whitespace
              made one space
  normalised  literal, or one sentence of the answer holds the fact's content words in the
              fact's order (by stem: "plans" holds "plan"; other words may come between)
              and its quantities as values, so "48 hours" is held by "two days" and "1,000"
              by "one thousand" (the judge's reading of numbers and units,
              answers/judges/reading.py)
  judge       normalised, or the configured judge finds the fact supported by the answer (a
              paraphrase: checks.py asks it, for the facts not found otherwise)

A fact found other than literally is shown with the span of the answer that holds it.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from .judges.claims import split_sentences
from .judges.reading import quantities, terms

MATCHES = ("literal", "normalised", "judge")


@dataclass(frozen=True)
class Found:
    span: str  # the answer's text that holds the fact (the fact itself when literal)
    how: str  # one of MATCHES
    sentence: str = ""  # the answer's sentence it is in (normalised), or the judge's window


@functools.lru_cache(maxsize=1 << 12)  # answers and key facts come back in many questions
def normalise(text: str) -> str:
    """Lower case, every run of whitespace one space, trimmed: how facts compare literally."""
    return re.sub(r"\s+", " ", text).strip().lower()


def find(fact: str, answer: str, match: str) -> Found | None:
    """Where `answer` holds `fact`, literally or (unless `match` is "literal") normalised;
    None when it does not (the judge, for match = "judge", is asked by the caller)."""
    if normalise(fact) in normalise(answer):
        return Found(fact, "literal")
    if match == "literal":
        return None
    wanted_terms, wanted_amounts = terms(fact), quantities(fact)
    if not wanted_terms and not wanted_amounts:
        return None  # only function words: nothing to hold but the literal text
    for sentence in split_sentences(answer) or [answer]:
        amounts = quantities(sentence)
        held = [next((q for q in amounts if wanted.same(q)), None) for wanted in wanted_amounts]
        if _in_order(wanted_terms, terms(sentence)) and all(held):
            said = " ... ".join(q.text for q in held if q is not None)  # "two days"
            return Found(said or sentence, "normalised", sentence)
    return None


def _in_order(wanted: tuple[str, ...], words: tuple[str, ...]) -> bool:
    """Whether `wanted` is a subsequence of `words`."""
    remaining = iter(words)
    return all(word in remaining for word in wanted)
