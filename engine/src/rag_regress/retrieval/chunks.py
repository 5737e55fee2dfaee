"""Chunking for the shipped retrievers (retrievers/): the `chunk_size` and `chunk_overlap` options.

Sizes are in words (runs of non-whitespace), so a chunk never cuts a word in half and a
size reads the same whatever the language's word length; the hits carry character
offsets into the document's text, as api.Hit defines them.

  chunk_size = 0      whole documents (the default): nothing changes.
  chunk_size = n      each document's text is cut into windows of n words; a window starts
                      n - chunk_overlap words after the previous one, and the last window
                      ends at the text's last word (it may be shorter). A text of n words or
                      fewer is one chunk; an empty text stays one whole-document unit.
  chunk_overlap = m   words shared by consecutive windows, 0 <= m < n (0 when n is 0).

Each chunk is indexed with its document's title in front, as a whole document is indexed
as title + text, so a title still matches from every chunk. A search ranks chunks; ties
are broken as `ranking.top_hits` breaks them for documents (scores compared in float32,
then document id, descending), then by position in the document, so the first chunk of a
document in the ranking is its best. A search returns the `depth` best chunks (`depth`
counts hits, whole documents or chunks, as api.Retriever says); passages.py collapses them
to documents for the document metrics, so a chunked ranking names `depth` documents or
fewer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ..api import Document, Hit
from ..options import OptionsError
from .ranking import best_positions

_WORD = re.compile(r"\S+")


def windows(text: str, size: int, overlap: int) -> list[tuple[int, int]]:
    """(start, end) character offsets of each chunk of `text` (module docstring); [] for a
    text without words."""
    words = [(match.start(), match.end()) for match in _WORD.finditer(text)]
    if not words:
        return []
    step = size - overlap
    spans = []
    first = 0
    while True:
        last = min(first + size, len(words)) - 1
        spans.append((words[first][0], words[last][1]))
        if last == len(words) - 1:
            return spans
        first += step


def check(size: int, overlap: int) -> None:
    """OptionsError naming the option when the two do not fit together."""
    if size == 0 and overlap:
        raise OptionsError(
            "option 'chunk_overlap' needs chunking: set chunk_size too (in words)", "chunk_overlap"
        )
    if size and overlap >= size:
        raise OptionsError(
            f"option 'chunk_overlap' must be less than chunk_size ({size} words), got {overlap}",
            "chunk_overlap",
        )


@dataclass(frozen=True)
class Chunks:
    """A corpus cut into chunks: `units` are what a retriever indexes (one Document per chunk,
    with its document's id and title), `spans[i]` is unit i's offsets (None: a whole
    document, for a text without words)."""

    units: list[Document]
    spans: list[tuple[int, int] | None]
    tiebreak: np.ndarray  # unit i's position in (document id, position in it descending) order

    def hit(self, i: int, score: float) -> Hit:
        unit, span = self.units[i], self.spans[i]
        if span is None:
            return Hit(unit.id, score)
        return Hit(unit.id, score, span[0], span[1])

    def top(self, scores: np.ndarray, depth: int, *, positive_only: bool = True) -> list[Hit]:
        """The `depth` best chunks, best first (ties: module docstring); chunks with a
        positive score only, unless `positive_only` is False (a cosine can be negative)."""
        order = best_positions(scores, self.tiebreak, depth, positive_only=positive_only)
        return [self.hit(i, float(scores[i])) for i in order.tolist()]


def chunk_corpus(documents: list[Document], size: int, overlap: int) -> Chunks | None:
    """The corpus cut into chunks; None for chunk_size 0 (whole documents, the default)."""
    check(size, overlap)
    if size == 0:
        return None
    units: list[Document] = []
    spans: list[tuple[int, int] | None] = []
    order: list[tuple[str, int]] = []
    for document in documents:
        pieces = windows(document.text, size, overlap)
        for number, (start, end) in enumerate(pieces):
            units.append(Document(document.id, document.text[start:end], document.title))
            spans.append((start, end))
            order.append((document.id, -number))
        if not pieces:
            units.append(document)
            spans.append(None)
            order.append((document.id, 0))
    tiebreak = np.empty(len(units), dtype=np.int64)
    tiebreak[sorted(range(len(units)), key=order.__getitem__)] = np.arange(len(units))
    return Chunks(units, spans, tiebreak)
