"""Light text normalisation shared by the lexical judge and the guard.

Deliberately small and predictable: lower case, words of letters and digits, a short
stopword list and a suffix-stripping stemmer so that "refunded", "refunds" and "refundable"
meet as "refund". Number words up to ninety become digits so "twelve characters" matches
"12 characters".
"""

from __future__ import annotations

import functools
import re

STOPWORDS = frozenset(
    """a about above after again all also am an and any are as at be been before being both but
    by can could did do does doing done each else for from further had has have having he her
    here hers him his how i if in into is it its itself just may me might more most must my
    of off on once only or other our ours out over own same shall she should so some such
    than that the their theirs them then there these they this those through to too under
    until up us very was we were what when where which while who whom why will with would
    you your yours""".split()
)
NUMBER_WORDS = {
    word: str(value)
    for value, word in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
        "fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
} | {
    "thirty": "30",
    "forty": "40",
    "fifty": "50",
    "sixty": "60",
    "seventy": "70",
    "eighty": "80",
    "ninety": "90",
    "hundred": "100",
    "thousand": "1000",
}
# A number ("1,000", "2.0", "$20", "20%"), or a word of letters and digits ("2FA", "can't").
_WORD = re.compile(r"\$?\d+(?:[.,]\d+)*%?(?![a-z])|[a-z0-9]+(?:'[a-z]+)?", re.IGNORECASE)
_SUFFIXES = (
    "ability",
    "ibility",
    "ations",
    "ation",
    "ments",
    "ment",
    "ness",
    "able",
    "ible",
    "ings",
    "ing",
    "ers",
    "er",
    "ed",
    "es",
    "ly",
    "s",
)


def raw_words(text: str) -> list[str]:
    """Lower-cased words and numbers of `text`, in order ("$20" and "20%" keep their sign)."""
    return [w.lower() for w in _WORD.findall(text)]


def stem(word: str) -> str:
    """Strip one common English suffix (keeping a stem of four letters or more), a final "e"
    and a doubled final consonant, so that "minute" and "minutes", "refund" and
    "refundable", "copy" and "copies", "cancel" and "cancelled" meet."""
    if not word.isalpha():
        return word
    if word.endswith(("ies", "ied")) and len(word) > 4:
        return word[:-3] + "y"
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            word = word[: -len(suffix)]
            break
    else:
        if word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) > 3:
            word = word[:-1]  # "rows" -> "row", "days" -> "day"
    if word.endswith("e") and len(word) > 4:
        word = word[:-1]
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiosu":
        word = word[:-1]  # "cancelled" -> "cancel", and "bill" -> "bil" like "billing"
    return word


def number_value(word: str) -> str | None:
    """The canonical digits of a number or number word ("$20" -> "20", "1,000" -> "1000")."""
    if word in NUMBER_WORDS:
        return NUMBER_WORDS[word]
    digits = word.strip("$%")
    if digits and digits[0].isdigit():
        return digits.replace(",", "")
    return None


# Cached: a judge checks every claim of an answer against the same context windows, and the
# same documents come back as context for many questions.
@functools.lru_cache(maxsize=1 << 14)
def content_terms(text: str) -> tuple[str, ...]:
    """Stemmed words that carry meaning: stopwords dropped, numbers in digits, order kept."""
    terms = []
    for word in raw_words(text.replace("-", " ")):
        if word in STOPWORDS:
            continue
        value = number_value(word)
        terms.append(value if value is not None else stem(word.replace("'", "")))
    return tuple(terms)


@functools.lru_cache(maxsize=1 << 14)
def term_set(text: str) -> frozenset[str]:
    """The distinct `content_terms` of `text`."""
    return frozenset(content_terms(text))
