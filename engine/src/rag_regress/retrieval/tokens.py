"""Tokenisation: how text becomes the terms a keyword retriever matches on.

Set in the `[tokenizer]` table of eval.toml. The defaults keep every word, including short
acronyms such as SSO, 2FA, API and CSV: those are often the only words that tell two
help-centre articles apart. Raising `min_length` to 4 drops them: the regression the README's
"See it catch a regression" walks through.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from pydantic import ConfigDict, Field, StrictBool, StrictInt, StrictStr, ValidationInfo, field_validator
from pydantic.dataclasses import dataclass

from ..text.words import ENGLISH_STOPWORDS, LUCENE_STOPWORDS, SNOWBALL_STEMMERS, StemWords, snowball_stemmer

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


# The default pattern's matches found without the regular expression engine, for speed. In
# ASCII, \w is exactly [A-Za-z0-9_]: in the UTF-8 bytes, every other ASCII byte becomes a
# space and the bytes of other characters stay as they are (a multi-byte character has no
# ASCII byte in it, so the text stays valid UTF-8). Splitting that text on whitespace gives
# pieces that only a character beyond ASCII can still join wrongly (an en dash, a plus-minus
# sign), and those rare pieces go through the pattern itself: the same words as `findall`.
_ASCII_NOT_WORD_TO_SPACE = bytes(
    c if c >= 128 or chr(c).isalnum() or chr(c) == "_" else ord(" ") for c in range(256)
)


def words_finder(pattern: str) -> Callable[[str], list[str]]:
    """`re.compile(pattern).findall`, with a faster path for the default pattern."""
    findall = re.compile(pattern).findall
    if pattern != r"\w+":
        return findall

    def words(text: str) -> list[str]:
        if text.isascii():
            return text.encode("ascii").translate(_ASCII_NOT_WORD_TO_SPACE).decode("ascii").split()
        pieces = text.encode("utf-8").translate(_ASCII_NOT_WORD_TO_SPACE).decode("utf-8").split()
        if all(map(str.isascii, pieces)):  # only the spaces were beyond ASCII
            return pieces
        found: list[str] = []
        for piece in pieces:
            if piece.isascii():
                found.append(piece)
            else:
                found.extend(findall(piece))
        return found

    return words


# Words whose term `make_tokenizer` remembers, per tokenizer: a corpus rarely has more distinct
# words; past it, words are still tokenized, just not remembered.
REMEMBERED_WORDS = 1_000_000


class _Terms(dict[str, str]):
    """word (a match of the pattern, lowercased if asked) -> its term: the word, or its stem,
    or "" when it is dropped (shorter than min_length, a stop word). Computed once per
    distinct word; `stemmed_to_nothing` is set if a kept word ever stems to "" (then "" is
    a term, and the tokenizer stops treating "" as dropped)."""

    def __init__(self, settings: TokenizerSettings) -> None:
        super().__init__()
        self.min_length = settings.min_length
        self.stopwords = STOPWORD_LISTS[settings.stopwords]
        stemmer = settings.stemmer
        self.stem: StemWords | None = None if stemmer == "none" else snowball_stemmer(stemmer)
        self.stemmed_to_nothing = False

    def kept(self, word: str) -> bool:
        return len(word) >= self.min_length and word not in self.stopwords

    def __missing__(self, word: str) -> str:
        if not self.kept(word):
            term = ""
        else:
            term = word if self.stem is None else self.stem([word])[0]
            self.stemmed_to_nothing |= term == ""
        if len(self) < REMEMBERED_WORDS:
            self[word] = term
        return term


class WordTokenizer:
    """The tokenizer of the [tokenizer] settings: called on a text, it returns its tokens, in
    order, repeats kept: the pattern's matches (in the lowercased text, if `lowercase`),
    without those shorter than `min_length` and the stop words, each then stemmed if a
    stemmer is set.

    Each distinct word is filtered and stemmed once (`terms`, a _Terms), so a large corpus
    costs a dictionary look-up per word. A retriever that indexes many texts may take the two
    steps apart: `words(text)` then `terms` (as bm25.py does, to give each word its term's id
    in one pass); the tokens are those of the definition above either way."""

    def __init__(self, settings: TokenizerSettings) -> None:
        self._find_words = words_finder(settings.pattern)
        self._lowercase = settings.lowercase
        self.terms = _Terms(settings)

    def words(self, text: str) -> list[str]:
        """The pattern's matches, in the lowercased text if `lowercase`: each becomes
        `terms[word]` if `terms.kept(word)`, and is dropped otherwise."""
        return self._find_words(text.lower() if self._lowercase else text)

    def __call__(self, text: str) -> list[str]:
        words, terms = self.words(text), self.terms
        if not terms.stemmed_to_nothing:
            tokens = list(filter(None, map(terms.__getitem__, words)))  # "" marks a dropped word
            if not terms.stemmed_to_nothing:
                return tokens
        return [terms[word] for word in words if terms.kept(word)]  # "" is a term: filter on words


def make_tokenizer(settings: TokenizerSettings) -> WordTokenizer:
    """The tokenizer the [tokenizer] settings describe (WordTokenizer)."""
    return WordTokenizer(settings)
