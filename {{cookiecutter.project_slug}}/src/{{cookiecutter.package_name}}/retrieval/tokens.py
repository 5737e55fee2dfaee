"""Tokenisation: how text becomes the terms a keyword retriever matches on.

Set in the `[tokenizer]` table of eval.toml. The defaults keep every word, including short
acronyms such as SSO, 2FA, API and CSV: those are often the only words that tell two
help-centre articles apart. Raising `min_length` to 4 drops them: the regression the README's
"See it catch a regression" walks through.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ..api import Tokenizer

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
STOPWORD_LISTS = {"english": ENGLISH_STOPWORDS, "lucene": LUCENE_STOPWORDS, "none": frozenset()}
# Stemmers of the PyStemmer package (Snowball's C implementation): "porter" is the classic
# Porter stemmer (Lucene's PorterStemFilter, Anserini's default), "english" is Snowball's
# improved English stemmer. Stemming merges "regulate", "regulates", "regulated".
STEMMERS = ("none", "porter", "english")


@dataclass(frozen=True)
class TokenizerSettings:
    lowercase: bool = True
    pattern: str = r"\w+"  # a regular expression; each match is one token
    min_length: int = 1  # tokens shorter than this are dropped
    stopwords: str = "english"  # one of STOPWORD_LISTS
    stemmer: str = "none"  # one of STEMMERS; applied after stopword removal


def make_tokenizer(settings: TokenizerSettings) -> Tokenizer:
    """Return a function from text to the list of its tokens, in order, repeats kept."""
    pattern = re.compile(settings.pattern)
    stopwords = STOPWORD_LISTS[settings.stopwords]

    def tokenize(text: str) -> list[str]:
        if settings.lowercase:
            text = text.lower()
        return [
            token
            for token in pattern.findall(text)
            if len(token) >= settings.min_length and token not in stopwords
        ]

    if settings.stemmer == "none":
        return tokenize
    import Stemmer  # PyStemmer; imported only when a stemmer is chosen

    stem_words: Callable[[list[str]], list[str]] = Stemmer.Stemmer(settings.stemmer).stemWords

    def tokenize_and_stem(text: str) -> list[str]:
        return stem_words(tokenize(text))

    return tokenize_and_stem
