"""The guard both judges share: numbers, dates and negations must agree with the window.

Entailment models are weak exactly where help-centre answers are most dangerous: "60 days"
for "30 days", "hours" for "minutes", a dropped "not". So after a judge has picked the
window that best supports a claim, the guard checks that window and calls the claim
unsupported when
  - a quantity in the claim (a number, with its unit when it has one: "30 days",
    "14-day", "$20", "20%") is not in the window, or the window has the number with a
    different unit;
  - a date word in the claim (a month or a weekday) is not in the window;
  - the claim negates something the window states plainly, or the window negates
    something the claim states plainly ("not refundable" vs "refundable"), comparing each
    clause of the claim with the clause of the window that is about the same thing.
Whatever a judge's score, a claim the guard rejects is unsupported.
"""

from __future__ import annotations

import re

from ...text.words import number_value, raw_words
from .words import STOPWORDS, content_terms, stem

UNITS = {
    stem(unit): unit
    for unit in """second minute hour day week month year seat user member guest
    request row entry character password code device recipient percent gb mb kb
    credit project client word letter digit page file time""".split()
}
DATE_WORDS = frozenset(
    """january february march april may june july august september october november december
    monday tuesday wednesday thursday friday saturday sunday""".split()
) - {"may"}  # "may" is far more often a verb
_SKIPPED_BEFORE_UNIT = frozenset({"business", "working", "calendar", "full", "more", "additional"})
_CLAUSE_BREAK = re.compile(r"[,;:()]|\bbut\b|\bwhile\b|\bwhereas\b|\balthough\b", re.IGNORECASE)
NEGATIONS = frozenset("not no never cannot nor neither none without".split())
# Words between a negation and what it negates: "not be", "no longer", "cannot be".
_SKIPPED_AFTER_NEGATION = STOPWORDS | {"longer", "able", "yet", "ever", "even", "currently"}


def quantities(text: str) -> set[tuple[str, str]]:
    """(number, unit stem) pairs; unit "" when the number has no unit word right after it.

    "30 days" -> ("30", "day"); "14-day" -> ("14", "day"); "$20" -> ("20", "$");
    "20%" and "20 percent" -> ("20", "%"); "up to 2 business days" -> ("2", "day").
    """
    words = raw_words(text.replace("-", " "))
    found = set()
    for i, word in enumerate(words):
        value = number_value(word)
        if value is None:
            continue
        unit = "$" if word.startswith("$") else "%" if word.endswith("%") else ""
        for following in words[i + 1 : i + 3]:
            if unit:
                break
            if following == "percent":
                unit = "%"
            elif stem(following) in UNITS:
                unit = stem(following)
            elif following not in _SKIPPED_BEFORE_UNIT:  # "2 business days": look past it
                break
        found.add((value, unit))
    return found


def negated(text: str) -> set[str]:
    """Stems of the words that a negation in `text` applies to ("not refundable" -> refund)."""
    words = raw_words(text.replace("-", " "))
    targets = set()
    for i, word in enumerate(words):
        if not (word in NEGATIONS or word.endswith("n't")):
            continue
        for following in words[i + 1 : i + 5]:
            if following not in _SKIPPED_AFTER_NEGATION and not following.endswith("n't"):
                targets.add(stem(following))
                break
    return targets


def clauses(text: str) -> list[tuple[set[str], set[str]]]:
    """(content stems, negated stems) of each clause: pieces between , ; : ( ) and "but"."""
    pieces = _CLAUSE_BREAK.split(text)
    return [(set(content_terms(piece)), negated(piece)) for piece in pieces if piece.strip()]


def _polarity_problem(claim: str, window: str) -> str | None:
    """Each term a clause of the claim negates, or that the window negates somewhere, must
    have the same polarity in the window clause about it (the one containing the term that
    shares the most words with the claim's clause)."""
    window_clauses = clauses(window)
    negated_in_window = set().union(*(negs for _, negs in window_clauses))
    for terms, negs in clauses(claim):
        for term in sorted((terms | negs) & (negs | negated_in_window)):
            about = [(len(terms & t), t, n) for t, n in window_clauses if term in t or term in n]
            if not about:
                if term in negs:
                    return f"negates '{term}', which the context does not mention"
                continue
            _, _, window_negs = max(about, key=lambda entry: entry[0])
            if term in negs and term not in window_negs:
                return f"negates '{term}', the context does not"
            if term not in negs and term in window_negs:
                return f"states '{term}', the context negates it"
    return None


def _show(value: str, unit: str) -> str:
    return {"": value, "$": f"${value}", "%": f"{value}%"}.get(unit, f"{value} {UNITS.get(unit, unit)}")


def guard(claim: str, window: str) -> str | None:
    """Why `window` cannot support `claim` on numbers, dates or negation; None if it can."""
    have = quantities(window)
    numbers = {value for value, _ in have}
    for value, unit in sorted(quantities(claim)):
        if value not in numbers:
            return f"states {_show(value, unit)}, which the context does not"
        if unit and (value, unit) not in have:
            said = " or ".join(sorted(_show(v, u) for v, u in have if v == value))
            return f"states {_show(value, unit)}, the context says {said}"
    window_words = set(raw_words(window))
    for word in sorted(DATE_WORDS & set(raw_words(claim)) - window_words):
        return f"names the date {word}, which the context does not"
    return _polarity_problem(claim, window)
