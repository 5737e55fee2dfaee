"""The narrow checks: each reads a claim against the window that best supports it and says what
it finds, in the words of both. A finding is a fact about the pair, not a verdict: which
findings fail a claim is the [judge] setting `fail_on`, for every backend alike, and
`calibrate` measures each finding's precision on labelled claims.

  number      a number (with its unit) the claim states that no context states, and that is
              no sum, difference, product, ratio or complement of two the contexts state
  name        a name, code or term written with a capital or digits that no context mentions
  polarity    the claim says the opposite of its sentence: a "not" added or dropped, or a word
              swapped for its opposite (english.toml), an even number of either cancelling out
  hedge       the sentence hedges ("may", "is thought to") and the claim does not
  modality    the claim says "must" (or "always", "required") where the sentence says "may"
  quantifier  the claim says "all", "only", "most"... where the sentence does not, or drops it
  causal      the claim says "causes" (or "leads to") where the sentence reports an association
  condition   the sentence states a condition ("if ...", "unless ...") the claim leaves out
  order       the claim puts two things on the other sides of a word they share with the sentence
              ("A before B" for "B before A", "A acquired B" for "B acquired A")
"""

from __future__ import annotations

import functools
import itertools
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .claims import split_sentences
from .reading import Quantity, Token, close, quantities, read, stem, terms, units

FINDINGS = ("number", "name", "polarity", "hedge", "modality", "quantifier", "causal", "condition", "order")


@dataclass(frozen=True)
class Finding:
    name: str  # one of FINDINGS
    message: str  # in the words of the claim and the context


@dataclass(frozen=True)
class English:
    opposites: dict[str, frozenset[str]]  # by stem
    hedges: frozenset[str]  # the rest as written, lower case
    weak_modals: frozenset[str]
    strong_modals: frozenset[str]
    causal: frozenset[str]
    associative: frozenset[str]
    conditions: frozenset[str]
    relations: frozenset[str]
    quantifiers: dict[str, str]  # word -> what it says: "all", "only", "most", "some", "few"


@functools.cache
def english() -> English:
    data = tomllib.loads(Path(__file__).with_name("english.toml").read_text(encoding="utf-8"))
    opposites: dict[str, set[str]] = {}
    for a, b in data["opposites"]:
        opposites.setdefault(stem(a), set()).add(stem(b))
        opposites.setdefault(stem(b), set()).add(stem(a))
    words = {
        key: frozenset(data[key])
        for key in ("hedges", "weak_modals", "strong_modals", "causal", "associative", "conditions")
    }
    return English(
        {key: frozenset(value) for key, value in opposites.items()},
        **words,
        relations=frozenset(stem(word) for word in data["relations"]),
        quantifiers={word: group for group, members in data["quantifiers"].items() for word in members},
    )


def _words(tokens: tuple[Token, ...]) -> set[str]:
    return {t.stem for t in tokens} | {t.word for t in tokens}


def derivable(claimed: Quantity, stated: tuple[Quantity, ...]) -> bool:
    """Whether the contexts state the claim's number, or it is the sum, difference, product or
    ratio of two numbers they state (in its unit, or as written: 1842 - 1824 is "18 years"),
    a share of 100 less one they state, or one of their ratios as a share ("1 in 1,000" is
    0.1%)."""
    if any(claimed.same(q) for q in stated):
        return True
    # two different numbers of the contexts, none of them 0 (0 times anything is 0)
    pairs = [(a, b) for a, b in itertools.permutations(stated, 2) if a.number and b.number]
    if claimed.dimension == "%":
        shares = [100 - q.value for q in stated if q.dimension == "%"] + [
            a.number / b.number * 100 for a, b in pairs
        ]
        if any(close(v, claimed.value) for v in shares):
            return True
    for a, b in pairs:
        if a.dimension != claimed.dimension:
            continue
        results = [a.value * b.number, a.value / b.number] if not b.dimension and b.number != 1 else []
        if claimed.dimension and b.dimension == claimed.dimension:
            results += [a.value + b.value, a.value - b.value]
        if any(close(v, claimed.value) for v in results):
            return True
    years = [
        q.number for q in stated if not q.dimension and 1000 <= q.number <= 2999 and q.number == int(q.number)
    ]
    if any(close(abs(a - b), claimed.number) for a, b in itertools.combinations(years, 2)):
        return True  # "18 years after" of 1824 and 1842
    spans = [q.value / 12 for q in stated if q.dimension == "calendar"]  # in years
    return any(
        close(year + sign * span, claimed.number) for year in years for span in spans for sign in (1, -1)
    )


def _number(claim: str, window: str, context: str) -> Finding | None:
    stated = quantities(context)
    for claimed in quantities(claim):
        if derivable(claimed, stated):
            continue
        near = [q.text for q in quantities(window) if q.dimension == claimed.dimension]
        said = f" (it says '{near[0]}')" if near else ""
        return Finding("number", f"'{claimed.text}' is not what the context says{said}")
    return None


def _name(claim: str, context: str, names: Sequence[str]) -> Finding | None:
    known = _words(read(context)) | _words(read(" ".join(names)))
    table = units()
    for token in read(claim):
        if len(token.word) == 1 or token.word in table:
            continue  # a unit's symbol ("°F") or a letter is no name
        if token.capital and token.number is None and token.stem not in known and token.word not in known:
            return Finding("name", f"'{token.word}' is not mentioned in the context")
    return None


def sentence_for(claim: str, window: str) -> str:
    """The sentence of the window that shares most terms with the claim."""
    wanted = set(terms(claim))
    sentences = split_sentences(window) or [window]
    return max(sentences, key=lambda s: (len(wanted & set(terms(s))), -len(s)))


_NEGATING = frozenset({"not", "no", "never", "without", "none", "nothing", "nobody", "neither", "nor"})
_PREFIXES = ("un", "in", "im", "il", "ir", "dis", "non")


REACH = 1  # content words a negation governs


def negated(tokens: tuple[Token, ...]) -> dict[str, bool]:
    """Each content word's stem -> whether a negation governs it anywhere in the text. A "not"
    (or "no", "never", "without") governs the first REACH content words after it; "no more
    than" (or "not later than") is a bound, not a negation."""
    found: dict[str, bool] = {}
    reach = 0
    for i, token in enumerate(tokens):
        if token.word in _NEGATING:
            following = [t.word for t in tokens[i + 1 : i + 3]]
            reach = 0 if len(following) == 2 and following[1] == "than" else REACH
            continue
        if token.stop or token.number is not None:
            continue
        found[token.stem] = found.get(token.stem, False) or reach > 0
        reach = max(0, reach - 1)
    return found


def _bare(word: str) -> str | None:
    """The word a negative prefix was added to ("unsafe" -> "safe"), when long enough."""
    for prefix in _PREFIXES:
        if word.startswith(prefix) and len(word) - len(prefix) > 3:
            return stem(word[len(prefix) :])
    return None


def _polarity(claim_tokens: tuple[Token, ...], sentence_tokens: tuple[Token, ...]) -> Finding | None:
    """A word of the claim that the sentence holds with the other polarity: the same word with a
    "not" on one side only, its opposite with a "not" on both sides or none, or the word with a
    negative prefix ("unsafe" for "safe")."""
    lists = english()
    claim, sentence = negated(claim_tokens), negated(sentence_tokens)
    for word, denied in claim.items():
        if word in sentence:
            if denied != sentence[word]:
                said, other = _as_said(claim_tokens, word), _as_said(sentence_tokens, word)
                return Finding("polarity", f"says '{said}' where the context says '{other}'")
            continue
        opposites = [o for o in lists.opposites.get(word, ()) if o in sentence and o not in claim]
        bare = _bare(word)
        if bare in sentence and bare not in claim:
            opposites.append(bare)
        opposites += [w for w in sentence if _bare(w) == word and w not in claim]
        for opposite in opposites:
            if sentence[opposite] == denied:
                said, other = _as_said(claim_tokens, word), _as_said(sentence_tokens, opposite)
                return Finding("polarity", f"says '{said}' where the context says '{other}'")
    return None


def _as_said(tokens: tuple[Token, ...], key: str) -> str:
    """The word of stem `key` as the text says it, with the negation that governs it, if any
    ("never reach")."""
    for i, token in enumerate(tokens):
        if token.stem == key:
            before = [t for t in tokens[max(0, i - 3) : i] if t.word in _NEGATING]
            return f"{before[-1].word} {token.word}" if before and negated(tokens).get(key) else token.word
    return key


def _written(tokens: tuple[Token, ...], key: str) -> str:
    return next((t.word for t in tokens if t.stem == key or t.word == key), key)


def _near(tokens: tuple[Token, ...], at: int, wanted: set[str], reach: int = 4) -> bool:
    """Whether a content word of `wanted` (stems) is within `reach` tokens of token `at`."""
    return any(t.stem in wanted for t in tokens[max(0, at - reach) : at + reach + 1] if not t.stop)


def _said(tokens: tuple[Token, ...], words: frozenset[str], wanted: set[str]) -> list[str]:
    """The words of a closed class in `tokens` that stand near a word of `wanted` (and not
    after "more", "less" or "most": "more likely" compares, it does not hedge)."""
    return [
        t.word
        for i, t in enumerate(tokens)
        if t.word in words
        and _near(tokens, i, wanted)
        and not (i and tokens[i - 1].word in ("more", "less", "most"))
    ]


def _closed(claim_tokens: tuple[Token, ...], sentence_tokens: tuple[Token, ...]) -> list[Finding]:
    """Hedges, modality, quantifiers and causes, each read only next to the words the claim
    and its sentence share: a hedge elsewhere in the sentence hedges something else."""
    lists = english()
    found: list[Finding] = []
    shared = {t.stem for t in claim_tokens if not t.stop} & {t.stem for t in sentence_tokens if not t.stop}
    claim_hedges = _said(claim_tokens, lists.hedges, shared)
    sentence_hedges = _said(sentence_tokens, lists.hedges, shared)
    if sentence_hedges and not claim_hedges:
        found.append(Finding("hedge", f"drops the context's hedge '{sentence_hedges[0]}'"))
    strong = set(_said(claim_tokens, lists.strong_modals, shared)) - {t.word for t in sentence_tokens}
    weak = _said(sentence_tokens, lists.weak_modals, shared) or sentence_hedges
    if strong and weak:
        found.append(Finding("modality", f"says '{min(strong)}' where the context says '{weak[0]}'"))
    quantified = lists.quantifiers
    said = {quantified[w]: w for w in _said(claim_tokens, frozenset(quantified), shared)}
    stated = {quantified[w]: w for w in _said(sentence_tokens, frozenset(quantified), shared)}
    added = [group for group in said if group not in stated and group != "some"]  # "some" claims the least
    if added:
        found.append(Finding("quantifier", f"says '{said[added[0]]}', which the context does not"))
    dropped = [group for group in stated if group in ("most", "some", "few") and group not in said]
    if dropped and not said and not added:
        found.append(Finding("quantifier", f"drops the context's '{stated[dropped[0]]}'"))
    causes = set(_said(claim_tokens, lists.causal, shared)) - {t.word for t in sentence_tokens}
    links = [t.word for t in sentence_tokens if t.word in lists.associative]
    links += [
        f"{a.word} {b.word}"
        for a, b in itertools.pairwise(sentence_tokens)
        if a.word in ("more", "less") and b.word == "likely"
    ]
    if causes and links:
        found.append(Finding("causal", f"says '{min(causes)}' where the context says '{links[0]}'"))
    return found


def _condition(claim_tokens: tuple[Token, ...], sentence_tokens: tuple[Token, ...]) -> Finding | None:
    """The sentence's condition: the words after its "if" (or "unless", ...) up to the next
    comma or the end; dropped when the claim holds none of its content words."""
    lists = english()
    words = [t for t in sentence_tokens]
    claim_terms = {t.stem for t in claim_tokens if not t.stop} | {str(t.number) for t in claim_tokens}
    for i, token in enumerate(words):
        if token.word not in lists.conditions:
            continue
        clause = [t for t in words[i + 1 : i + 8] if not t.stop]
        if not clause:
            continue
        content = {t.stem for t in clause if t.number is None} | {
            str(t.number) for t in clause if t.number is not None
        }
        if (
            content
            and not content & claim_terms
            and not any(t.word in lists.conditions for t in claim_tokens)
        ):
            said = " ".join(t.word for t in words[i : i + 6])
            return Finding("condition", f"leaves out the context's condition '{said} ...'")
    return None


def _order(claim_tokens: tuple[Token, ...], sentence_tokens: tuple[Token, ...]) -> Finding | None:
    """Two shared terms on the other sides of a word both texts hold once."""
    lists = english()

    def content(tokens: tuple[Token, ...]) -> list[str]:
        return [t.stem for t in tokens if not t.stop]

    claim_seq, sentence_seq = [t.stem for t in claim_tokens], [t.stem for t in sentence_tokens]
    shared = set(content(claim_tokens)) & set(content(sentence_tokens))
    pivots = [
        s
        for s in set(claim_seq) & set(sentence_seq)
        if claim_seq.count(s) == 1 and sentence_seq.count(s) == 1 and (s in lists.relations or s in shared)
    ]
    for pivot in pivots:
        at_c, at_s = claim_seq.index(pivot), sentence_seq.index(pivot)
        left_c, right_c = set(claim_seq[:at_c]) & shared, set(claim_seq[at_c + 1 :]) & shared
        left_s, right_s = set(sentence_seq[:at_s]) & shared, set(sentence_seq[at_s + 1 :]) & shared
        moved_right = (left_s & right_c) - left_c - {pivot}
        moved_left = (right_s & left_c) - right_c - {pivot}
        if moved_right and moved_left:
            a = _written(claim_tokens, min(moved_left))
            b = _written(claim_tokens, min(moved_right))
            word = _written(claim_tokens, pivot)
            return Finding("order", f"puts '{a}' and '{b}' on the other sides of '{word}' from the context")
    return None


def findings(claim: str, window: str, context: str, names: Sequence[str] = ()) -> tuple[Finding, ...]:
    """Every finding of the claim against `window` (the window that best supports it) and
    `context` (all the answer's contexts, where numbers and names are looked up; `names`,
    [judge] names, are names any context may use)."""
    sentence = sentence_for(claim, window)
    claim_tokens, sentence_tokens = read(claim), read(sentence)
    found = [
        _number(claim, window, context or window),
        _name(claim, context or window, names),
        _polarity(claim_tokens, sentence_tokens),
        *_closed(claim_tokens, sentence_tokens),
        _condition(claim_tokens, sentence_tokens),
        _order(claim_tokens, sentence_tokens),
    ]
    return tuple(f for f in found if f is not None)
