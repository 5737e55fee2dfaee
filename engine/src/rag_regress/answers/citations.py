"""Citation markers in an answer: which passages each sentence cites.

A marker is a number in square brackets naming a context by its position in the Answer's
contexts, counted from 1: "[1]", "[2][3]", "[1, 3]". A marker belongs to the sentence it is in;
one written after a sentence's full stop ("... 30 days. [2]") belongs to that sentence. The
judge reads each sentence without its markers, and so do the key facts and the reference
checks. Numbers in brackets of four digits or more ("[2024]") are not markers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .judges.claims import split_sentences

_GROUP = r"\[\s*\d{1,3}(?:\s*,\s*\d{1,3})*\s*\]"
MARKER = re.compile(rf"[ \t]*{_GROUP}")
# markers straight after a sentence's end move before it, so they stay with that sentence
_AFTER_END = re.compile(rf"([.!?])((?:[ \t]*{_GROUP})+)")


@dataclass(frozen=True)
class Sentence:
    text: str  # the sentence without its markers: what is judged
    cites: tuple[int, ...]  # the context positions (from 1) its markers name, in order, once each


def strip_markers(text: str) -> str:
    """`text` without its citation markers."""
    return MARKER.sub("", text)


def cited_sentences(text: str) -> list[Sentence]:
    """The sentences of `text` (judges/claims.split_sentences, after the markers are taken
    out), each with the positions its markers name. Without markers: split_sentences(text)."""
    sentences = []
    for piece in split_sentences(_AFTER_END.sub(r"\2\1", text)):
        numbers = [int(n) for marker in MARKER.findall(piece) for n in re.findall(r"\d+", marker)]
        plain = " ".join(strip_markers(piece).split()) if numbers else piece
        if len(plain) > 3:  # as split_sentences: a fragment is no claim
            sentences.append(Sentence(plain, tuple(dict.fromkeys(numbers))))
    return sentences


def citation_recall(supported: list[bool], cites_support: list[bool]) -> float | None:
    """Citation recall: of the answer's sentences its contexts support (`supported`), the
    share that cite at least one passage that supports them (`cites_support`, one per
    sentence). None when no sentence is supported (nothing there to cite)."""
    wanted = [cites for ok, cites in zip(supported, cites_support, strict=True) if ok]
    return sum(wanted) / len(wanted) if wanted else None
