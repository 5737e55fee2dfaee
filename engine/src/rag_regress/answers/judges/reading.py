"""How the offline judge reads a claim and a context: one reading for both sides.

  - Unicode compatibility forms, curly quotes and dashes made plain; "n't" is "not"; a
    possessive "'s" is dropped; hyphens split words ("14-day" is "14 day").
  - Each word is stemmed by Snowball's English stemmer (PyStemmer), so "refunded" and
    "refunds" meet. No domain word lists: only English function words (text/words.py).
  - Numbers are values ("1,000" is 1000, "twelve" is 12, "half" is 0.5), and a number with a
    unit (units.toml: general measurement units) is a quantity in its dimension's base unit,
    so "90 minutes" and "1.5 hours", or "14 days" and "two weeks", are the same quantity.
    A time of day reads the same in either clock ("2 p.m." is "14:00").
The choice is fixed here and never read from the [tokenizer] settings, so tuning the retriever
cannot change a verdict.
"""

from __future__ import annotations

import functools
import re
import tomllib
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from ...text.words import BROAD_STOPWORDS, NUMBER_WORDS, snowball_stemmer

NEGATIONS = frozenset("not no never nor neither none nothing nobody without cannot".split())
STOPWORDS = BROAD_STOPWORDS - NEGATIONS
_stem_words = snowball_stemmer("english")


@functools.lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    return _stem_words([word])[0] if word.isalpha() else word


_PLAIN = str.maketrans(
    {"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2010": "-", "\u2011": "-"}
    | {"\u2013": " - ", "\u2014": " - ", "\u2212": "-", "\u00ad": None, "\u00a0": " "}
)
_CONTRACTIONS = [
    (re.compile(r"\bcan'?t\b|\bcannot\b", re.IGNORECASE), "can not"),
    (re.compile(r"\bwon't\b", re.IGNORECASE), "will not"),
    (re.compile(r"n't\b", re.IGNORECASE), " not"),
    (re.compile(r"'(?:s|re|ll|ve|d|m)\b", re.IGNORECASE), ""),
    (re.compile(r"(?<=s)'(?=\s|$)"), ""),
]
_TWELVE_HOUR = re.compile(r"\b(\d{1,2})(?:[:.](\d{2}))?\s?([ap])\.?m\b\.?", re.IGNORECASE)
# A number glued to a unit ("500MB", "15min", "5kg"): split so the unit is a word of its own.
_GLUED = re.compile(r"(?<=\d)(?=[^\W\d_]{1,4}\b)")
_WORD = re.compile(r"\d{1,2}:\d{2}(?!\d)|\d+(?:,\d{3})+(?:\.\d+)?|\d*\.\d+|\d+|[^\W\d_]+|[$€£%°²³µ]")
_BREAK = re.compile(r"[.,;:!?()\[\]]\s")
_FRACTIONS = {"half": 0.5, "quarter": 0.25, "third": 1 / 3, "dozen": 12.0, "twice": 2.0, "double": 2.0}
_MULTIPLIERS = {"hundred": 100.0, "thousand": 1e3, "million": 1e6, "billion": 1e9}
_NUMBERS = {word: float(value) for word, value in NUMBER_WORDS.items()} | _FRACTIONS


class Token(NamedTuple):
    word: str  # lower case, as written after the plain-text steps
    stem: str
    number: float | None  # the value of a number or number word
    stop: bool  # a function word: never a term of coverage
    capital: bool  # written with a capital letter (not as the text's first word) or digits in it


@dataclass(frozen=True)
class Quantity:
    value: float  # in the base unit of `dimension`, or as written when it has no unit
    dimension: str  # "time", "length", "mass", ... (units.toml), "%", a currency sign, or ""
    number: float  # the number as written, before its unit
    text: str  # as written, for messages

    def same(self, other: Quantity) -> bool:
        """The same quantity; a bare number is the same as any quantity of its value."""
        if not self.dimension or not other.dimension:
            return close(self.number, other.number) or close(self.value, other.value)
        return self.dimension == other.dimension and close(self.value, other.value)


def close(a: float, b: float) -> bool:
    """Equal to the precision a text writes numbers with (2 in 1,000: "33.3%" is a third)."""
    return abs(a - b) <= max(1e-9, 2e-3 * max(abs(a), abs(b)))


@functools.cache
def units() -> dict[str, tuple[str, float, float]]:
    """unit word (lower case, as written, and its stem) -> (dimension, factor, offset)."""
    data = tomllib.loads(Path(__file__).with_name("units.toml").read_text(encoding="utf-8"))
    found: dict[str, tuple[str, float, float]] = {}
    for dimension, table in data.items():
        for names, factor in table.items():
            offset, named = 0.0, dimension
            if isinstance(factor, list) and isinstance(factor[0], str):
                named, factor = factor  # a currency: its sign is its dimension
            elif isinstance(factor, list):
                factor, offset = factor
            for name in names.split("|"):
                found[name] = found[stem(name)] = (named, float(factor), float(offset))
    return found


@functools.lru_cache(maxsize=1 << 15)
def plain(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).translate(_PLAIN)
    for pattern, replacement in _CONTRACTIONS:
        text = pattern.sub(replacement, text)
    text = _TWELVE_HOUR.sub(_twenty_four_hour, text)
    return _GLUED.sub(" ", text.replace("-", " ").replace("/", " / "))


def _twenty_four_hour(match: re.Match[str]) -> str:
    hour, minute = int(match.group(1)), match.group(2) or "00"
    if not 1 <= hour <= 12 or int(minute) > 59:
        return match.group()
    return f"{hour % 12 + (12 if match.group(3).lower() == 'p' else 0)}:{minute}"


def _value(word: str) -> float | None:
    if word in _NUMBERS:
        return _NUMBERS[word]
    if ":" in word:  # a time of day, in minutes after midnight
        hours, minutes = word.split(":")
        return float(int(hours) * 60 + int(minutes))
    if word[:1].isdigit() or (word[:1] == "." and word[1:2].isdigit()):
        return float(word.replace(",", ""))
    return None


@functools.lru_cache(maxsize=1 << 15)
def read(text: str) -> tuple[Token, ...]:
    """The tokens of `text` (module doc)."""
    text = plain(text)
    tokens: list[Token] = []
    for match in _WORD.finditer(text):
        raw = match.group()
        word = raw.lower()
        first = not tokens or _BREAK.search(text[max(0, match.start() - 2) : match.start()]) is not None
        capital = (raw[:1].isupper() and not first and word not in STOPWORDS) or (
            any(c.isdigit() for c in raw) and any(c.isalpha() for c in raw)
        )
        capital = capital or (raw.isupper() and len(raw) > 1)
        tokens.append(Token(word, stem(word), _value(word), word in STOPWORDS, capital))
    return tuple(tokens)


def terms(text: str) -> tuple[str, ...]:
    """The content terms coverage counts: the stems of the words that are not function words
    (a negation is a term: "not refundable" does not read as "refundable")."""
    return tuple(t.stem for t in read(text) if not t.stop and t.number is None and t.word not in units())


_MONTHS = {
    m: i
    for i, m in enumerate(
        "january february march april may june july august september october november december".split(), 1
    )
}
_SHARES = {"half": 50.0, "quarter": 25.0, "third": 100 / 3}
_SEPARATORS = frozenset({"to", "and", "or", "x", "by", "-", "/"})


def _number_at(tokens: tuple[Token, ...], i: int) -> tuple[float, int] | None:
    """The number starting at token `i` and the index after it: digits, or number words read
    together ("one hundred fifty" is 150, "two million" 2e6, "one and a half" 1.5)."""
    token = tokens[i]
    if token.number is None or token.word in ("twice", "double", "third", "quarter"):
        return None
    if token.word == "half" and not (i and tokens[i - 1].word in ("a", "one")):
        return None  # "half the fee" is a fraction of something, not a number on its own
    total, current, end = 0.0, token.number, i + 1
    worded = token.word in NUMBER_WORDS  # ".01" is digits too: "P = .01. Thirteen" is two numbers
    while end < len(tokens):
        word = tokens[end].word
        if word in _MULTIPLIERS:
            if _MULTIPLIERS[word] >= 1000:
                total, current = total + current * _MULTIPLIERS[word], 0.0
            else:
                current *= _MULTIPLIERS[word]
        elif (
            worded
            and (following := tokens[end].number) is not None
            and word in NUMBER_WORDS
            and following < 100
        ):
            current += following
        elif [t.word for t in tokens[end : end + 3]] == ["and", "a", "half"]:
            current, end = current + 0.5, end + 2
        else:
            break
        end += 1
    return total + current, end


@functools.lru_cache(maxsize=1 << 15)
def quantities(text: str) -> tuple[Quantity, ...]:
    """The numbers of `text`, each with the unit after it (or the sign before it), in base
    units. In "5 to 10 days" or "76 x 45 mm" every number takes the unit. A month's name is
    its number ("6 March" reads 6 and 3, as "06/03" does); a lone "one" or "a" is no number."""
    tokens = read(text)
    table = units()
    found: list[Quantity] = []
    pending: list[int] = []  # indexes in `found` of bare numbers a later unit may apply to
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if (token.capital and token.word in _MONTHS) or (
            i == 0 and token.word in _MONTHS and token.word != "may"
        ):
            found.append(Quantity(float(_MONTHS[token.word]), "", float(_MONTHS[token.word]), token.word))
            i += 1
            continue
        parsed = _number_at(tokens, i)
        if token.word in _SHARES and i + 1 < len(tokens) and tokens[i + 1].word in ("of", "the"):
            share = _SHARES[token.word]  # "half of the fare" is 50% of it
            found.append(Quantity(share, "%", share, token.word))
            i += 1
            continue
        if parsed is None and token.word in ("a", "an", "per", "every", "each") and i + 1 < len(tokens):
            unit = _unit_at(tokens, i + 1, table)[0]  # "once a week": a week is one week
            if unit is not None and unit[0] in ("time", "calendar"):
                count, step = 1.0, 2
                if [t.word for t in tokens[i + 2 : i + 5]] == ["and", "a", "half"]:
                    count, step = 1.5, 5  # "an hour and a half"
                written = " ".join(t.word for t in tokens[i : i + step])
                found.append(Quantity(count * unit[1] + unit[2], unit[0], count, written))
                i += step
                continue
        if parsed is None:
            pending = [] if token.word not in _SEPARATORS else pending
            i += 1
            continue
        number, end = parsed
        if number == 1 and end == i + 1 and token.word == "one":
            i += 1
            continue
        dimension, value = "", number
        if i > 0 and tokens[i - 1].word in ("$", "€", "£"):
            dimension = tokens[i - 1].word
        elif end < len(tokens) and tokens[end].word in ("%", "percent"):
            dimension, end = "%", end + 1
        else:
            unit, step = _unit_at(tokens, end, table)
            if unit is None and end + 1 < len(tokens) and not tokens[end].stop and tokens[end].number is None:
                unit, step = _unit_at(tokens, end + 1, table)  # "10 business days", "3 full years"
                step += 1 if unit is not None else 0
            if unit is not None:
                dimension, value, end = unit[0], number * unit[1] + unit[2], end + step
        written = " ".join(t.word for t in tokens[i:end])
        if dimension:
            unit = _last_unit(tokens, end, table) if dimension not in ("$", "€", "£", "%") else None
            for at in pending:  # "5 to 10 days": 5 days too
                bare = found[at].number
                value_of = bare * unit[1] + unit[2] if unit is not None else bare
                found[at] = Quantity(value_of, dimension, bare, found[at].text)
            pending = []
        else:
            pending.append(len(found))
        found.append(Quantity(value, dimension, number, written))
        i = end
    return tuple(found)


def _last_unit(
    tokens: tuple[Token, ...], end: int, table: dict[str, tuple[str, float, float]]
) -> tuple[str, float, float] | None:
    """The unit that ends at token `end` (one or two words)."""
    for back in (2, 1):
        if end - back >= 0 and (found := _unit_at(tokens, end - back, table))[1] == back:
            return found[0]
    return None


def _unit_at(
    tokens: tuple[Token, ...], i: int, table: dict[str, tuple[str, float, float]]
) -> tuple[tuple[str, float, float] | None, int]:
    """The unit starting at token `i` ("°C", "km ²", "days") and how many tokens it takes."""
    if i >= len(tokens):
        return None, 0
    word = tokens[i].word
    if word == "°" and i + 1 < len(tokens):
        return table.get("°" + tokens[i + 1].word), 2
    if i + 1 < len(tokens) and tokens[i + 1].word in ("²", "2") and word + "²" in table:
        return table[word + "²"], 2
    if i + 1 < len(tokens) and f"{word}/{tokens[i + 1].word}" in table:
        return table[f"{word}/{tokens[i + 1].word}"], 2  # "km/h" (the slash is no token)
    if i + 1 < len(tokens) and f"{word} {tokens[i + 1].word}" in table:
        return table[f"{word} {tokens[i + 1].word}"], 2
    found = table.get(word) or table.get(tokens[i].stem)
    return found, 1 if found else 0
