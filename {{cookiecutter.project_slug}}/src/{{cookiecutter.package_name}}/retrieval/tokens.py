"""Tokenisation: how text becomes the terms a keyword retriever matches on.

Set in the `[tokenizer]` table of eval.toml. The defaults keep every word, including short
acronyms such as SSO, 2FA, API and CSV: those are often the only words that tell two
help-centre articles apart. Raising `min_length` to 4 drops them: the regression the README's
"See it catch a regression" walks through.
"""

from __future__ import annotations

import re

from pydantic import ConfigDict, Field, StrictBool, StrictInt, StrictStr, ValidationInfo, field_validator
from pydantic.dataclasses import dataclass

from ..api import Tokenizer
from ..text.words import ENGLISH_STOPWORDS, LUCENE_STOPWORDS, SNOWBALL_STEMMERS, snowball_stemmer

# What [tokenizer] can choose from, by name. The lists and stemmers themselves are the
# engine's shared primitives (text/words.py); which of them the retriever uses is decided
# here alone, and the judges never read these settings.
STOPWORD_LISTS = {"english": ENGLISH_STOPWORDS, "lucene": LUCENE_STOPWORDS, "none": frozenset()}
STEMMERS = ("none", *SNOWBALL_STEMMERS)  # "none", or a Snowball stemmer of PyStemmer


@dataclass(frozen=True, config=ConfigDict(extra="forbid"))
class TokenizerSettings:
    """[tokenizer] in eval.toml: how text becomes the terms a keyword retriever matches on.
    Part of eval.toml's one schema (settings/schema.py); the judges never read it."""

    lowercase: StrictBool = Field(default=True, description="lowercase text before matching")
    pattern: StrictStr = Field(default=r"\w+", description="a regular expression; each match is one token")
    min_length: StrictInt = Field(
        default=1, ge=1, le=1000, description="tokens shorter than this are dropped"
    )
    stopwords: StrictStr = Field(
        default="english", description="stop word list: `english`, `lucene` or `none`"
    )
    stemmer: StrictStr = Field(
        default="none", description="`none`, `porter` or `english` (Snowball); applied after stop words"
    )

    @field_validator("stopwords", "stemmer")
    @classmethod
    def _known(cls, name: str, info: ValidationInfo) -> str:
        choices = STOPWORD_LISTS if info.field_name == "stopwords" else STEMMERS
        if name not in choices:
            what = "list" if info.field_name == "stopwords" else "stemmer"
            raise ValueError(f"unknown {what} {name!r}; one of: {', '.join(choices)}")
        return name

    @field_validator("pattern")
    @classmethod
    def _usable(cls, pattern: str) -> str:
        try:  # re.findall returns groups, not whole matches, for a pattern that has them
            if re.compile(pattern).groups:
                raise re.error("use a pattern without capturing groups, e.g. (?:...) instead of (...)")
        except (re.error, RecursionError, OverflowError) as error:
            raise ValueError(f"not a usable regular expression: {error}") from None
        return pattern


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
    stem_words = snowball_stemmer(settings.stemmer)

    def tokenize_and_stem(text: str) -> list[str]:
        return stem_words(tokenize(text))

    return tokenize_and_stem
