"""How the lexical judge and the guard read text: the content terms of a claim or a window.

Deliberately small and predictable: lower case, words of letters and digits, a broad
stopword list and a light suffix-stripping stemmer so that "refunded", "refunds" and
"refundable" meet as "refund". Number words up to ninety become digits so "twelve
characters" matches "12 characters". The pieces are the engine's shared primitives
(text/words.py); the choice among them is fixed here and never read from the [tokenizer]
settings, so tuning the retriever cannot change a verdict (the verdict cache, whose key
leaves [tokenizer] out, relies on that).
"""

from __future__ import annotations

import functools

from ...text.words import BROAD_STOPWORDS, light_stem, number_value, raw_words

# The judge's reading, one place to change it. Kept on the light stemmer rather than
# PyStemmer's Porter or Snowball: on the demo's labelled claims those move scores and
# reasons ("activ" for "activity"), and flip verdicts on some claim/document pairs.
STOPWORDS = BROAD_STOPWORDS  # keeps "no" and "not": a negation is part of the claim
stem = light_stem


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
