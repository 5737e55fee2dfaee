"""The judges' word lists (lexicon.toml beside this file), read once into lookup tables.

Nothing is downloaded: the lists ship inside the package. Each word is reduced by the judges'
own stemmer (words.py), so "deleted" finds the group of "delete".
"""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass
from pathlib import Path

from ...text.words import light_stem

PATH = Path(__file__).with_name("lexicon.toml")


def _key(word: str) -> str:
    """How a lexicon word is looked up: its stem, or the words of a phrase joined by "_"."""
    return "_".join(light_stem(part) for part in word.split())


word_key = _key  # for the checks that look a word of the lists up by its key


@dataclass(frozen=True)
class Lexicon:
    phrases: tuple[tuple[str, ...], ...]  # multi-word entries, longest first, as word tuples
    function_phrases: frozenset[str]  # keys of phrases that only say "if", "must", "at least"...: not terms
    canonical: dict[str, str]  # a word's key -> the key of its synonym group's first word
    opposite: dict[str, frozenset[str]]  # canonical key -> canonical keys that say the opposite
    converse: dict[str, frozenset[str]]  # the same, for comparisons that turn around
    quantifier: dict[str, str]  # key -> "all" | "some" | "none" | "only"
    modal: dict[str, str]  # key -> "must" | "can" | "should" | "will"
    condition: dict[str, str]  # key -> "if" | "unless" | "even"
    openers: dict[str, frozenset[str]]  # "time" | "cause" | "earlier" | "later" -> words as written
    bound: dict[str, str]  # key -> "at_most" | "at_least" | "exactly"
    unit: dict[str, tuple[str, float | None]]  # key -> (dimension, factor to its base unit)
    roles: frozenset[str]  # the role nouns as written, singular and plural
    comparative: dict[str, str]  # key -> "more" | "less"
    superlative: dict[str, str]  # key -> "most" | "least"
    prefixes: tuple[str, ...]  # prefixes that make a word's opposite ("un", "dis", "non")
    not_prefixed: frozenset[str]  # keys that only look prefixed ("display", "unique")


@functools.cache
def lexicon() -> Lexicon:
    data = tomllib.loads(PATH.read_text(encoding="utf-8"))
    phrases: set[tuple[str, ...]] = set()
    canonical: dict[str, str] = {}

    def note(word: str) -> str:
        if " " in word:
            phrases.add(tuple(word.split()))
        return _key(word)

    for group in data["synonyms"]:
        head = note(group[0])
        for word in group:
            canonical.setdefault(note(word), head)

    def pairs(name: str) -> dict[str, frozenset[str]]:
        found: dict[str, set[str]] = {}
        for left, right in data[name]:
            a, b = canonical.get(note(left), _key(left)), canonical.get(note(right), _key(right))
            found.setdefault(a, set()).add(b)
            found.setdefault(b, set()).add(a)
        return {key: frozenset(value) for key, value in found.items()}

    def classes(table: dict[str, list[str]]) -> dict[str, str]:
        """Each word's key, and the key of its synonym group as a reading gives it ("several"
        reads "many", and is still "some"), mapped to its class."""
        found: dict[str, str] = {}
        for name, words in table.items():
            for word in words:
                key = note(word)
                found.setdefault(key, name)
                found.setdefault(canonical.get(key, key), name)
        return found

    units: dict[str, tuple[str, float | None]] = {}
    for dimension, table in data["units"].items():
        for word, factor in table.items():
            units[note(word)] = (dimension, None if dimension == "count" else float(factor))
    # Every table is read before the phrases are collected, so "even if", "a few", "as long as"
    # and "no more than" read as one word each, whichever list names them.
    opposite, converse = pairs("antonyms"), pairs("converse")
    for values in data["incompatible"].values():  # every value of a slot against every other value
        keys = [{canonical.get(note(word), _key(word)) for word in value} for value in values]
        for a, left in enumerate(keys):
            for right in keys[a + 1 :]:
                for x in left:
                    opposite.setdefault(x, frozenset())
                    opposite[x] |= right - {x}
                for y in right:
                    opposite[y] = opposite.get(y, frozenset()) | (left - {y})
    quantifier, modal = classes(data["quantifiers"]), classes(data["modals"])
    condition, bound = classes(data["conditions"]), classes(data["bounds"])
    comparative, superlative = classes(data["comparatives"]), classes(data["superlatives"])
    functional = set(quantifier) | set(modal) | set(condition) | set(bound)
    # A bound that opens with a comparison ("more than", "less than") stays two words: the
    # comparison keeps its word ("costs more than Solo"), and the bound is read by joining keys.
    kept = {
        phrase
        for phrase in phrases
        if not (_key(" ".join(phrase)) in bound and _key(phrase[0]) in comparative)
    }
    return Lexicon(
        phrases=tuple(sorted(kept, key=len, reverse=True)),
        function_phrases=frozenset(
            key
            for key in (_key(" ".join(phrase)) for phrase in kept)
            if key in functional and key not in canonical
        ),
        canonical=canonical,
        opposite=opposite,
        converse=converse,
        quantifier=quantifier,
        modal=modal,
        condition=condition,
        openers={name: frozenset(words) for name, words in data["openers"].items()},
        bound=bound,
        unit=units,
        roles=frozenset(form for word in data["roles"] for form in (word, word + "s", word + "es")),
        comparative=comparative,
        superlative=superlative,
        prefixes=tuple(data["negating_prefixes"]),
        not_prefixed=frozenset(_key(word) for word in data["not_negating"]),
    )


@functools.lru_cache(maxsize=1 << 16)
def opposites(key: str) -> frozenset[str]:
    """The keys that say the opposite of `key`: its antonyms in the word lists, and the same
    word with a negating prefix added or taken away ("unencrypt" and "encrypt", "disappear"
    and "appear"); the rest of a prefixed word must be four letters or more."""
    lex = lexicon()
    found = set(lex.opposite.get(key, ()))
    for prefix in lex.prefixes:
        rest = key[len(prefix) :]
        if key.startswith(prefix) and len(rest) >= 4 and key not in lex.not_prefixed:
            found.add(lex.canonical.get(rest, rest))
        if len(key) >= 4 and prefix + key not in lex.not_prefixed:
            found.add(lex.canonical.get(prefix + key, prefix + key))
    found.discard(key)
    return frozenset(found)
