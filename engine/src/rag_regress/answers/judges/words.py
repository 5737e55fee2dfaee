"""How the judges read a claim and a context: one reading for both sides.

Whatever a claim copies from its context must read the same in both, so every check works on
the tokens `read` returns, never on raw text. Reading:
  - Unicode compatibility forms, curly quotes and dashes made plain; hyphens split words
    ("14-day" is "14 day"); contractions spelled out ("can't" is "can not"); a possessive
    "'s" dropped ("Baltimore's" is "Baltimore"); a number glued to a unit split off
    ("500MB" is "500 MB"); letters of any script are letters ("café", "β-cells").
  - Words of letters and digits stay whole ("1960s", "53BP1", "2FA"); numbers are canonical
    digits ("1,000" is 1000, "twelve" is 12, "twenty-five" is 25, "half" is 0.5), but a
    number word hyphenated to a word is a word ("two-factor", "one-click"). A time of day
    reads the same in either clock ("5 p.m." is "17:00").
  - Each word is stemmed (the light stemmer: "refunded", "refunds", "refundable" meet) and
    mapped to the first word of its synonym group in lexicon.toml ("delete" reads "remove");
    multi-word entries ("turn on", "sign in") read as one word.
  - "keep" before a verb in -ing reads "continue" ("keeps counting").
  - A number with a unit is one quantity in its dimension's base unit, so "90 minutes" and
    "an hour and a half" are the same term, and so are "48 hours" and "two days". "A minute"
    after a count is a rate ("30 requests a minute", as "per minute" is), and "a second
    time" is no duration.
The choice is fixed here and never read from the [tokenizer] settings, so tuning the retriever
cannot change a verdict (the verdict cache, whose key leaves [tokenizer] out, relies on that).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from ...text.words import BROAD_STOPWORDS, NUMBER_WORDS, light_stem
from .lexicon import lexicon

STOPWORDS = BROAD_STOPWORDS  # keeps "no" and "not": a negation is part of the claim
stem = functools.lru_cache(maxsize=1 << 16)(light_stem)  # the same words come back in every text
NEGATIONS = frozenset("not no never nor neither none nothing nobody without unable".split())

_PLAIN = str.maketrans(
    {"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2010": "-", "\u2011": "-"}
    | {"\u2013": " - ", "\u2014": " - ", "\u2212": "-", "\u00ad": None}
)
_CONTRACTIONS = [
    (re.compile(r"\bcan'?t\b|\bcannot\b", re.IGNORECASE), "can not"),
    (re.compile(r"\bwon't\b", re.IGNORECASE), "will not"),
    (re.compile(r"\bshan't\b", re.IGNORECASE), "shall not"),
    (re.compile(r"n't\b", re.IGNORECASE), " not"),
    (re.compile(r"'(?:s|re|ll|ve|d|m)\b", re.IGNORECASE), ""),
    (re.compile(r"(?<=s)'(?=\s|$)"), ""),  # plural possessive: "users' data"
]
# A time of day in the 12-hour clock ("5 p.m.", "9am", "11:30 PM"): read as the 24-hour "17:00".
_TWELVE_HOUR = re.compile(r"\b(\d{1,2})(?::(\d{2}))?\s?([ap])\.?m\b\.?", re.IGNORECASE)
# A number glued to a unit abbreviation ("500MB", "15min"); "1960s" and "2FA" stay whole.
_GLUED_UNIT = re.compile(r"(?<=\d)(?=(?:kb|mb|gb|tb|ms|min|mins|hrs?|sec|secs|km|cm|mm|px)\b)", re.IGNORECASE)
# A number ("1,000", "2.5", "$20", "20%") or a word of letters and digits of any script.
_WORD = re.compile(r"\d{1,2}:\d{2}(?!\d)|\$?\d+(?:[.,]\d+)*%?(?![^\W_])|[^\W_]+")
_NUMBER_WORDS = {word: float(value) for word, value in NUMBER_WORDS.items()} | {"half": 0.5, "dozen": 12.0}
_BREAK = re.compile(r"[.,;:!?()\[\]]")
_ORDINAL = re.compile(r"^(\d+)(?:st|nd|rd|th)$")
_MULTIPLIERS = {"hundred": 100.0, "thousand": 1000.0, "million": 1e6, "billion": 1e9}
MEASURED = frozenset({"time", "workdays", "calendar", "data", "length", "$", "%", "clock"})


class Token(NamedTuple):  # a tuple: texts of thousands of words are read, so it is cheap to make
    word: str  # lower case, as written (after the plain-text steps above)
    stem: str  # its stem (a phrase: the stems joined by "_")
    key: str  # the stem (a phrase: its stems joined by "_") mapped to its synonym group
    number: float | None  # the value of a number or number word, else None
    stop: bool  # a function word: never a term, but may still say "all", "must" or "not"
    joined: bool = True  # False when punctuation (. , ; : ! ? brackets) stands before it

    @property
    def negation(self) -> bool:
        return self.word in NEGATIONS


@dataclass(frozen=True)
class Quantity:
    value: float  # in the base unit of `dimension` (seconds, months, bytes, metres), or as written
    dimension: str  # "time", "calendar", "data", "length", "$", "%", a count noun's key, or ""
    bound: str  # "at_most", "at_least", "exactly" or "" (the word before it)
    start: int  # index of its first token
    end: int  # index after its last token
    text: str  # as written, for messages

    @property
    def measured(self) -> bool:
        """A value in a unit that converts ("90 minutes"), money or a share, rather than a
        count of something ("12 characters") or a bare number."""
        return self.dimension in MEASURED

    @property
    def term(self) -> str:
        value = canonical_number(self.value)
        return f"{self.dimension}:{value}" if self.measured else value


def canonical_number(value: float) -> str:
    return str(int(value)) if value == int(value) else repr(value)


@functools.lru_cache(maxsize=1 << 15)
def plain(text: str) -> str:
    """The text the words are read from: see the module docstring."""
    text = unicodedata.normalize("NFKC", text).translate(_PLAIN)
    for pattern, replacement in _CONTRACTIONS:
        text = pattern.sub(replacement, text)
    text = _TWELVE_HOUR.sub(_twenty_four_hour, text)
    text = _NUMBER_COMPOUND.sub(_compound, text)
    return _GLUED_UNIT.sub(" ", text.replace("-", " "))


# A number word hyphenated to a word: "two-factor" and "one-click" are words of their own (read
# "twofactor", "oneclick"), but "twenty-five" is a number and "three-day" a quantity.
_NUMBER_COMPOUND = re.compile(r"\b([^\W\d_]+)-([^\W\d_]+)\b")


def _compound(match: re.Match[str]) -> str:
    number, word = match.group(1).lower(), match.group(2).lower()
    if number not in NUMBER_WORDS or word in NUMBER_WORDS or stem(word) in lexicon().unit:
        return match.group()
    return match.group(1) + match.group(2)


def _twenty_four_hour(match: re.Match[str]) -> str:
    hour, minute = int(match.group(1)), match.group(2) or "00"
    if not 1 <= hour <= 12 or int(minute) > 59:
        return match.group()  # not a time of day
    hour %= 12
    if match.group(3).lower() == "p":
        hour += 12
    return f"{hour}:{minute}"


def _number(word: str) -> float | None:
    if word in _NUMBER_WORDS:
        return _NUMBER_WORDS[word]
    if ":" in word:  # a time of day, in minutes after midnight ("17:00" is 1020)
        hours, minutes = word.split(":")
        return float(int(hours) * 60 + int(minutes))
    ordinal = _ORDINAL.match(word)
    digits = ordinal.group(1) if ordinal else word.strip("$%").replace(",", "")
    try:
        return float(digits) if digits[:1].isdigit() else None
    except ValueError:
        return None


@functools.cache
def _phrases() -> dict[str, list[tuple[str, ...]]]:
    """The lexicon's multi-word entries as stem tuples, longest first, by their first stem."""
    found: dict[str, list[tuple[str, ...]]] = {}
    for phrase in lexicon().phrases:
        stems = tuple(stem(word) for word in phrase)
        found.setdefault(stems[0], []).append(stems)
    return found


@functools.lru_cache(maxsize=1 << 15)
def read(text: str) -> tuple[Token, ...]:
    """The tokens of `text`, in order (see the module docstring)."""
    text = plain(text)
    matches = list(_WORD.finditer(text))
    words = [match.group().lower() for match in matches]
    gaps = [text[a.end() : b.start()] for a, b in itertools.pairwise(matches)]
    joined = [True] + [gap.isspace() or not _BREAK.search(gap) for gap in gaps]
    stems = [stem(word) for word in words]
    lex = lexicon()
    canonical, functional = lex.canonical, lex.function_phrases
    phrases = _phrases()
    tokens: list[Token] = []
    i = 0
    while i < len(words):
        size = 1
        for phrase in phrases.get(stems[i], ()):
            if tuple(stems[i : i + len(phrase)]) == phrase and not _bound_starts(stems, i + len(phrase) - 1):
                size = len(phrase)
                break
        if size == 1:
            word, key = words[i], stems[i]
            if word == "no" and i == 0 and gaps and gaps[0].strip() == ",":
                word = key = "no,"  # "No, cancelling won't remove it": an answer, denying no word
            number = _number(word) if word[0].isdigit() or word[0] == "$" or word in _NUMBER_WORDS else None
            stop = word in STOPWORDS or word == "no,"
        else:
            word, key = " ".join(words[i : i + size]), "_".join(stems[i : i + size])
            number, stop = None, key in functional  # "as long as" says "if"; it is not a term
        tokens.append(Token(word, key, canonical.get(key, key), number, stop, joined[i]))
        i += size
    return tuple(_aspect(tokens, canonical))


def _bound_starts(stems: list[str], i: int) -> bool:
    """Whether a bound of several words ("up to", "at least") starts at stems[i]: the last word
    of a phrase is left to it ("takes up to 2 days" is "takes" + "up to 2 days", not "take up")."""
    bound = lexicon().bound
    return any(
        tuple(stems[i : i + len(phrase)]) == phrase and "_".join(phrase) in bound
        for phrase in _phrases().get(stems[i], ())
        if len(phrase) > 1
    )


def _aspect(tokens: list[Token], canonical: dict[str, str]) -> list[Token]:
    """ "keep" before a verb in -ing says "continue" ("the app keeps tracking"), not "retain"."""
    go_on = canonical.get("keep_on")
    for i, token in enumerate(tokens[:-1]):
        after = tokens[i + 1]
        gerund = after.word.endswith("ing") and len(after.word) > 5 and after.joined
        if go_on and token.key == "keep" and gerund:
            tokens[i] = token._replace(key=go_on)
    return tokens


_QUARTERS = {("a", "quarter"): 0.25, ("one", "quarter"): 0.25, ("three", "quarters"): 0.75}
_FRACTIONS = {("a", "half"): 0.5, ("an", "half"): 0.5, ("a", "quarter"): 0.25, ("three", "quarters"): 0.75}


def _fraction(words: list[str]) -> float:
    """What "and a half", "and a quarter" or "and three quarters" (these three words) adds, or 0."""
    return _FRACTIONS.get((words[1], words[2]), 0.0) if len(words) == 3 and words[0] == "and" else 0.0


_WORKDAY = frozenset({"business", "working", "work"})
_BEFORE_UNIT = frozenset({"business", "working", "calendar", "full", "more", "additional", "free", "extra"})


def phrase_end(tokens: Sequence[Token], i: int) -> int:
    """The index of the first token after tokens[i] that punctuation stands before, or the
    length of the reading: where a phrase that runs on from tokens[i] ends."""
    return next((j for j in range(i + 1, len(tokens)) if not tokens[j].joined), len(tokens))


def quantities(tokens: tuple[Token, ...]) -> list[Quantity]:
    """The numbers of a reading with their units and bounds: "30 days" (time, 2592000 s),
    "an hour and a half" (time, 5400 s), "$20", "20%", "12 characters" (a count of
    "character"), "up to 2 business days" (at most 172800 s). A number without a unit has
    dimension "" and its value as written. A quantity never spans punctuation ("... 7. Time"
    is the number 7, then a word)."""
    lex = lexicon()
    found: list[Quantity] = []
    ends = [len(tokens)] * len(tokens)  # phrase_end of each token, in one pass from the end
    for k in range(len(tokens) - 2, -1, -1):
        ends[k] = k + 1 if not tokens[k + 1].joined else ends[k + 1]
    i = 0
    while i < len(tokens):
        token = tokens[i]
        stop = ends[i]

        def words(a: int, b: int, stop: int = stop) -> list[str]:
            return [t.word for t in tokens[a : min(b, stop)]]  # never past the next punctuation

        value = token.number
        pair = words(i, i + 2)
        part = _QUARTERS.get((pair[0], pair[1])) if len(pair) == 2 else None
        if part and words(i + 2, i + 4) in (["of", "a"], ["of", "an"]) and i + 4 < stop:
            of_unit = lex.unit.get(tokens[i + 4].stem)
            if of_unit and of_unit[1] is not None:  # "a quarter of an hour" is 15 minutes
                text = " ".join(words(i, i + 5))
                bound = _bound(tokens, i, i + 5)
                found.append(Quantity(part * of_unit[1], of_unit[0], bound, i, i + 5, text))
                i += 5
                continue
        if token.word in {"a", "an", "one"}:  # "an hour", "one seat"; not "one click", "a monthly plan"
            n = i + 1
            while n < min(i + 3, stop - 1) and tokens[n].word in _BEFORE_UNIT:
                n += 1  # "a full day", "a business day"
            following = tokens[n] if n < stop else None
            unit = following is not None and following.stem in lex.unit and not following.word.endswith("ly")
            if unit and token.word != "one" and following is not None:
                unit = lex.unit[following.stem][1] is not None  # "an hour", but not "a member"
                unit = unit and not _per_or_ordinal(tokens, i, found, stop)
            if token.word == "one" and _fraction(words(i + 1, i + 4)):
                unit = True  # "one and a half hours"
            value = 1.0 if unit else None
        measured = token.stem in lex.unit and lex.unit[token.stem][1] is not None
        if value is None and measured and _fraction(words(i + 1, i + 4)):  # "every hour and a half": 1.5 h
            dimension, factor = lex.unit[token.stem]
            text = " ".join(words(i, i + 4))
            amount = 1 + _fraction(words(i + 1, i + 4))
            found.append(
                Quantity(amount * (factor or 1.0), dimension, _bound(tokens, i, i + 4), i, i + 4, text)
            )
            i += 4
            continue
        if value is None:
            i += 1
            continue
        j = i + 1
        if token.word in _TENS and j < stop and (tokens[j].number or 0) in _DIGITS:
            value, j = value + (tokens[j].number or 0), j + 1  # "twenty-five" (read "twenty five")
        while j < stop and tokens[j].word in _MULTIPLIERS:  # "five hundred", "2 million"
            value, j = value * _MULTIPLIERS[tokens[j].word], j + 1
        if words(j, j + 2) and words(j, j + 1)[0] == "times" and words(j + 1, j + 2) in _RATIO_AFTER:
            i = j + 1  # "three times as many requests": a ratio, not a count of three
            continue
        if _fraction(words(j, j + 3)):
            value, j = value + _fraction(words(j, j + 3)), j + 3  # "one and a half hours"
        if value == 0.5 and words(j, j + 1) in (["a"], ["an"]):
            j += 1  # "half an hour"
        dimension, factor = "", 1.0
        if ":" in token.word:
            dimension = "clock"  # "17:00", "5 p.m."
        elif token.word.startswith("$") or words(j, j + 1) in (["dollars"], ["dollar"]):
            dimension, j = "$", j + (0 if token.word.startswith("$") else 1)  # "twelve dollars" is $12
        elif token.word.endswith("%") or words(j, j + 1) == ["percent"]:
            dimension, j = "%", j + (0 if token.word.endswith("%") else 1)
        else:
            k = j
            while k < min(j + 2, stop) and (
                tokens[k].word in _BEFORE_UNIT or _describes(tokens[k], lex.unit)
            ):
                k += 1  # "2 business days", "12 idle hours"
            if k < stop and tokens[k].stem in lex.unit:
                unit_dimension, unit_factor = lex.unit[tokens[k].stem]
                dimension = tokens[k].stem if unit_factor is None else unit_dimension
                factor, j = unit_factor or 1.0, k + 1
                if dimension == "time" and any(t.word in _WORKDAY for t in tokens[i + 1 : k]):
                    dimension = "workdays"  # "2 business days" are not 48 hours, but are 2 working days
                if _fraction(words(j, j + 3)):
                    value, j = value + _fraction(words(j, j + 3)), j + 3  # "an hour and three quarters"
        text = " ".join(words(i, j))
        found.append(Quantity(value * factor, dimension, _bound(tokens, i, j), i, j, text))
        i = j
    return _between(tokens, found)


_TENS = frozenset("twenty thirty forty fifty sixty seventy eighty ninety".split())
_DIGITS = frozenset(float(n) for n in range(1, 10))
_RATE_WORDS = frozenset("once twice thrice times per of through throughout during".split())
_RATIO_AFTER = [[word] for word in "as the more larger longer faster fewer less".split()]


def _per_or_ordinal(tokens: tuple[Token, ...], i: int, found: list[Quantity], stop: int) -> bool:
    """Whether "a"/"an" + unit at tokens[i] is not one of the unit: a rate after a count
    ("30 requests a minute", "twice a day", "$9 a month", "part of a month"), or "a second"
    before a noun ("a second time", "a second device")."""
    after = tokens[i + 2] if i + 2 < stop else None
    if tokens[i + 1].stem == "second" and after is not None and not after.stop:
        return True
    if i == 0 or not tokens[i].joined:
        return False
    before = tokens[i - 1]
    last = before.word.split()[-1]  # "part of" reads as one word
    return bool(found and found[-1].end == i) or last in _RATE_WORDS or before.number is not None


def _describes(token: Token, units: dict[str, tuple[str, float | None]]) -> bool:
    """Whether a word can stand between a number and its unit ("12 idle hours"): a word of
    meaning, neither a number nor a unit itself (the unit must still follow)."""
    if token.stop or token.negation or token.number is not None or token.word in _RATE_WORDS:
        return False  # "300 per minute" is a rate, not 300 minutes
    return token.stem not in units


def _between(tokens: tuple[Token, ...], found: list[Quantity]) -> list[Quantity]:
    """A range: "between 15 minutes and 24 hours", "(within) 5 to 10 business days", "from 5
    to 60 minutes": the first is a lower bound, the second an upper one, and a bare first
    number has the second one's unit."""
    for n, (low, high) in enumerate(itertools.pairwise(found)):
        if high.start != low.end + 1 or high.bound or not tokens[high.start].joined:
            continue
        joining = tokens[low.end].word
        opened = low.start > 0 and tokens[low.start - 1].word == "between" and not low.bound
        if (joining == "and" and opened) or (joining == "to" and low.bound != "exactly"):
            written = tokens[high.start].number
            if not low.dimension and high.dimension and written:  # "between 5 and 60 minutes": 5 minutes
                low = dataclasses.replace(
                    low, value=low.value * high.value / written, dimension=high.dimension
                )
            found[n] = dataclasses.replace(low, bound="at_least")
            found[n + 1] = dataclasses.replace(high, bound="at_most")
    return found


def _bound(tokens: tuple[Token, ...], start: int, end: int) -> str:
    """The bound the words around a number put on it: up to three words before ("within",
    "up to", "at least") or two after ("or more")."""
    lex = lexicon()
    first = start
    while first > max(0, start - 3) and tokens[first].joined:
        first -= 1  # never past punctuation
    before = [t.key for t in tokens[first:start]]
    for size in (3, 2, 1):
        if len(before) >= size and "_".join(before[-size:]) in lex.bound:
            bound = lex.bound["_".join(before[-size:])]
            return _turned(bound) if _denied_comparison(tokens, start - size, before[-size:]) else bound
    after = [t.key for t in itertools.takewhile(lambda t: t.joined, tokens[end : end + 2])]
    if after and "_" in after[0] and after[0] in lex.bound:
        return lex.bound[after[0]]  # "or more", read as one word
    return lex.bound.get("_".join(after), "")


_COMPARING = frozenset({"over", "under", "above", "below", "exceeding"})


def _turned(bound: str) -> str:
    return {"at_least": "at_most", "at_most": "at_least"}.get(bound, bound)


def _denied_comparison(tokens: tuple[Token, ...], at: int, words: list[str]) -> bool:
    """Whether a comparison bounding a number ("more than 20", "over 20") is denied by a
    negation before it in its stretch of text ("can't export more than 100,000 rows" is at
    most 100,000). Only comparisons turn: "isn't deleted until after 30 days" is still after."""
    if words[-1] != "than" and words[-1] not in _COMPARING:
        return False
    first = at
    while first > 0 and tokens[first].joined:
        first -= 1
    return any(t.negation for t in tokens[first:at])


@functools.lru_cache(maxsize=1 << 15)
def quantities_of(text: str) -> tuple[Quantity, ...]:
    """`quantities` of the reading of `text`, remembered: a window is checked against many claims."""
    return tuple(quantities(read(text)))


@functools.lru_cache(maxsize=1 << 15)
def content_terms(text: str) -> tuple[str, ...]:
    """The terms that carry meaning, in order: stopwords and negations dropped, synonyms
    merged, and each number with its unit one quantity term ("time:5400")."""
    tokens = read(text)
    numbers = {q.start: q for q in quantities_of(text)}
    terms: list[str] = []
    i = 0
    while i < len(tokens):
        if i in numbers:
            quantity = numbers[i]
            terms.append(quantity.term)
            if quantity.dimension and not quantity.measured:
                terms.append(quantity.dimension)  # a count keeps its noun: "12 characters"
            i = quantity.end
            continue
        token = tokens[i]
        if not (token.stop or token.negation):  # a negation is the guard's to compare, not a term
            terms.append(token.key)
        i += 1
    return tuple(terms)


@functools.lru_cache(maxsize=1 << 15)
def term_set(text: str) -> frozenset[str]:
    """The distinct `content_terms` of `text`."""
    return frozenset(content_terms(text))
