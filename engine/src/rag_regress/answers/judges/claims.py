"""Cut answers into claims and contexts into short windows for the judge.

A claim is one sentence of the answer. Judges score each claim against one- and
two-sentence windows of each context, never the whole passage: NLI models are trained on
short premises and often call a claim copied word for word from a long passage "neutral",
and a short window keeps the lexical judge from collecting its words all over a passage.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

# A sentence ends at . ! or ? followed by space and an upper-case letter, digit or quote.
# "Settings > Security" does not end a sentence, and "v2.0" has no space after the dot.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[A-Z0-9])")


_ABBREVIATION = re.compile(r"\b(?:e\.g|i\.e|etc|vs|approx|incl|no)\.$", re.IGNORECASE)


def split_sentences(text: str) -> list[str]:
    """The sentences of `text`, stripped; fragments of three characters or fewer are dropped.
    A piece ending in an abbreviation ("e.g.", "i.e.", "etc.") joins the next one."""
    return list(_sentences(text))


@functools.lru_cache(maxsize=1 << 14)  # the same documents come back in many answers
def _sentences(text: str) -> tuple[str, ...]:
    sentences: list[str] = []
    for part in _SENTENCE_END.split(text.strip()):
        if sentences and _ABBREVIATION.search(sentences[-1]):
            sentences[-1] = f"{sentences[-1]} {part.strip()}"
        else:
            sentences.append(part.strip())
    return tuple(sentence for sentence in sentences if len(sentence) > 3)


# Where a sentence joins two statements: a semicolon, a dash, or a comma before a word that
# starts a new statement (or a verb in -ing: ", sending a notification when it is done").
# "Export to CSV, PDF, or XLSX" is one statement (a list), but "Refunds take 10 days, and
# they are paid by card" is two.
_JOIN = re.compile(
    r"\s*;\s*|\s+-\s+|,\s+(?=(?:and|but|so|while|whereas|which|because|although|though|since|then|"
    r"unless|except|plus|meaning|allowing|so that|whenever)\b|[^\W\d_]+ing\b)"
    r"|\s+(?=(?:because|whereas|although|unless|so that)\b)",
    re.IGNORECASE,
)


def clauses(sentence: str, min_words: int = 3) -> list[str]:
    """The statements a sentence makes, judged one by one: a true sentence with an invented
    clause appended is not supported. A piece of fewer than `min_words` words joins the one
    before it (a fragment such as "so try again" is not a statement on its own)."""
    found: list[str] = []
    for piece in _JOIN.split(sentence):
        piece = piece.strip(" ,")
        if not piece:
            continue
        opener = len(found) == 1 and len(found[0].split()) <= 4 and piece.split()[0].lower().endswith("ing")
        if found and (len(piece.split()) < min_words or opener):  # "Just so you know, cancelling ..."
            found[-1] = f"{found[-1]}, {piece}"
        else:
            found.append(piece)
    if len(found) > 1 and len(found[0].split()) < min_words:
        found[1] = f"{found[0]}, {found[1]}"
        found.pop(0)
    return found or [sentence]


def windows(contexts: list[str] | tuple[str, ...], size: int = 2) -> list[str]:
    """Every run of 1..`size` consecutive sentences within each context (never across two
    contexts), shortest first, in reading order, without repeats."""
    found: dict[str, None] = {}
    for context in contexts:
        found.update(dict.fromkeys(_windows_of(context, size)))
    return list(found)


@functools.lru_cache(maxsize=1 << 12)
def _windows_of(context: str, size: int) -> tuple[str, ...]:
    """The windows of one context, shortest first, in reading order (repeats kept: `windows`
    drops them)."""
    sentences = _sentences(context)
    return tuple(
        " ".join(sentences[start : start + n])
        for n in range(1, size + 1)
        for start in range(len(sentences) - n + 1)
    )


def copied(claim: str, window: str) -> bool:
    """Whether the claim is the window's own words: its text (after the plain-text steps of
    reading, with case folded and its end marks . ! ? aside) found in the window, starting
    and ending between words. A verbatim sentence is always supported; "The fee is 5" is not
    copied from "The fee is 50 euros", nor "3" from "3.5" or "1,000", nor "free" from
    "freezing": an answer cut at max_tokens inside a number or a word is judged as any
    claim is."""
    wanted = _folded(claim).strip(" .!?")
    if not wanted:
        return False
    text = _folded(window)
    start = text.find(wanted)
    while start >= 0:
        if not (_inside(text, start) or _inside(text, start + len(wanted))):
            return True
        start = text.find(wanted, start + 1)
    return False


def _inside(text: str, i: int) -> bool:
    """Whether position `i` of `text` (between text[i - 1] and text[i]) is inside a word or a
    number: between two letters or digits, or beside a decimal point or thousands separator
    that has digits on both sides."""
    if i <= 0 or i >= len(text):
        return False
    before, after = text[i - 1], text[i]
    if before.isalnum() and after.isalnum():
        return True
    if after in ".," and before.isdigit():
        return i + 1 < len(text) and text[i + 1].isdigit()
    return before in ".," and after.isdigit() and i >= 2 and text[i - 2].isdigit()


def copied_from(claim: str, candidates: Iterable[str]) -> str | None:
    """The window a copied claim is supported on, its scores unread (settle): the shortest of
    `candidates` the claim is `copied` from (the first among equals), or None."""
    return next((window for window in sorted(candidates, key=len) if copied(claim, window)), None)


@functools.lru_cache(maxsize=1 << 15)  # a context is looked in for every claim of its answer
def _folded(text: str) -> str:
    from .reading import plain

    return " ".join(plain(text).casefold().split())
