"""Words: the stop-word lists, stemmers, word pattern and number words the engine reads with.

Each is written once, here, and none reads a setting. The retriever's tokenizer chooses among
them by the [tokenizer] table (retrieval/tokens.py); the judges make a fixed choice of their
own (answers/judges/reading.py). So tuning how the retriever tokenizes never changes how a
judge reads.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TypeAlias

# -- stop words -----------------------------------------------------------------------------

# A short list of English function words. They carry no topic, and BM25's idf already
# discounts them; removing them mostly keeps scores and debugging output readable.
ENGLISH_STOPWORDS = frozenset(
    """a about an and are as at be been but by can could did do does for from had has have
    how i if in into is it its me my no not of on or our so than that the their them then
    there these they this to was we were what when where which who why will with would you
    your""".split()
)
# Lucene's English stop set (EnglishAnalyzer.ENGLISH_STOP_WORDS_SET), which Anserini's BEIR
# baselines use: choose it to compare with published BM25 numbers.
LUCENE_STOPWORDS = frozenset(
    """a an and are as at be but by for if in into is it no not of on or such that the their
    then there these they this to was will with""".split()
)
# A broader list (pronouns, auxiliaries, quantifiers) for reading what a sentence claims: a
# function word left in would count as a claimed fact. Negations (no, not, nor, never) are
# deliberately absent: "not refundable" must not read as "refundable".
BROAD_STOPWORDS = frozenset(
    """a about above after again all also am an and any are as at be been before being both but
    by can could did do does doing done each else for from further had has have having he her
    here hers him his how i if in into is it its itself just may me might more most must my
    of off on once only or other our ours out over own same shall she should so some such
    than that the their theirs them then there these they this those through to too under
    until up us very was we were what when where which while who whom why will with would
    you your yours""".split()
)

# -- words and numbers ----------------------------------------------------------------------

# A number ("1,000", "2.0", "$20", "20%"), or a word of letters and digits ("2FA", "can't").
WORD = re.compile(r"\$?\d+(?:[.,]\d+)*%?(?![a-z])|[a-z0-9]+(?:'[a-z]+)?", re.IGNORECASE)

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


def raw_words(text: str) -> list[str]:
    """Lower-cased words and numbers of `text`, by `WORD`, in order ("$20" and "20%" keep
    their sign)."""
    return [w.lower() for w in WORD.findall(text)]


def number_value(word: str) -> str | None:
    """The canonical digits of a number or number word ("$20" -> "20", "1,000" -> "1000",
    "twelve" -> "12"); None for any other word."""
    if word in NUMBER_WORDS:
        return NUMBER_WORDS[word]
    digits = word.strip("$%")
    if digits and digits[0].isdigit():
        return digits.replace(",", "")
    return None


# -- stemmers -------------------------------------------------------------------------------

# A stemmer over a list of words: their stems, in order (one call per text, not per word).
StemWords: TypeAlias = Callable[[Sequence[str]], list[str]]

# Stemmers of the PyStemmer package (Snowball's C implementation): "porter" is the classic
# Porter stemmer (Lucene's PorterStemFilter, Anserini's default), "english" is Snowball's
# improved English stemmer. Stemming merges "regulate", "regulates", "regulated".
SNOWBALL_STEMMERS = ("porter", "english")


def snowball_stemmer(name: str) -> StemWords:
    """The Snowball stemmer `name` (one of SNOWBALL_STEMMERS), as a function from words to
    their stems. PyStemmer is imported only here, when a stemmer is asked for."""
    if name not in SNOWBALL_STEMMERS:
        raise ValueError(f"unknown stemmer {name!r}: one of {', '.join(SNOWBALL_STEMMERS)}")
    import Stemmer  # PyStemmer: no type information, so the bound method is typed here

    stem_words: StemWords = Stemmer.Stemmer(name).stemWords
    return stem_words


_LIGHT_SUFFIXES = (
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


def light_stem(word: str) -> str:
    """The light stemmer, one lower-case word at a time: strip one common English suffix
    (keeping a stem of four letters or more), a final "e" and a doubled final consonant, so
    that "minute" and "minutes", "refund" and "refundable", "copy" and "copies", "cancel"
    and "cancelled" meet. Words with digits or signs ("2fa", "$20") are left as they are."""
    if not word.isalpha():
        return word
    if word.endswith(("ies", "ied")) and len(word) > 4:
        return word[:-3] + "y"
    for suffix in _LIGHT_SUFFIXES:
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
