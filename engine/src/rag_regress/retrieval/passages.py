"""Chunks and passages: how a ranking of chunks counts for document metrics, and the
passage metrics beside them.

A retriever may return chunks (api.Hit with `start`/`end` offsets or a `chunk_id`), so one
document can appear several times in its ranking.

Collapse rule (document metrics): a document counts once, at the rank of its first (best)
chunk; its later chunks are dropped, and every document below moves up. The document
ranking is the chunk ranking with repeats removed, each document keeping its first
chunk's score. Why this is trec_eval's rule: trec_eval refuses a run that lists a document
twice for one query, and pytrec_eval's run (a dict per query) cannot hold it twice, so the
only run either can evaluate is the collapsed one. Chunks come best first (scores never
increase, compared in float32 as trec_eval compares them), so the first chunk of a
document holds its best score and the collapsed run is a ranking like any other (`[retrieval]
ties` applies to it): `export-run` writes it, and trec_eval gives the same numbers.
The retriever's `depth` counts hits, chunks or not (api.Retriever), so a chunk ranking
names `depth` documents or fewer. A ranking without chunks is checked and used exactly as
before (a document twice is an error there, as it always was).

Coverage rule (passage metrics): a retrieved chunk covers a relevant passage (inputs/data.py,
"passages" of a golden question) when it is in the passage's document and overlaps at
least COVER_SHARE (half) of the passage's characters. Half, not all: a chunk boundary
that cuts a sentence off a passage still hands the generator most of it, while a chunk
that shares a few words with a passage does not count. A hit without offsets is the whole
document and covers every passage in it, so a whole-document retriever's passage metrics
equal its document hit and recall over the passages' documents.

Passage metrics rank chunks, not documents: rank r is the r-th hit as the retriever
returned it (repeats of a document included), since each chunk is a separate piece of
text handed on. With k the report's cutoff:
  passage_recall@k  share of the question's relevant passages covered by a hit in the first k
  passage_hit@k     1 when a hit in the first k covers a relevant passage, else 0
  passage_mrr       1 / rank of the first hit that covers a relevant passage (0: none does)
Only questions whose golden entry names passages get them; the means are over those
questions, and a golden set without passages reports none (`PassageResults` is None).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import fmean
from typing import Any, TypeGuard

from ..api import Document, Hit
from ..inputs.data import Passage, Question
from .ranking import RetrieverOutputError, check_hits, chunk_of, require_non_increasing

COVER_SHARE = 0.5  # a chunk covers a passage when it overlaps at least this share of it

Span = tuple[str, int, int]  # (document id, start, end): the text a hit hands on


def has_chunks(found: object) -> bool:
    """Does this retriever answer carry chunks (any hit with offsets or a chunk id)?"""
    if not isinstance(found, list | tuple):
        return False
    if set(map(type, found)) == {Hit}:  # the common case, in one pass that runs in C
        return any(map(chunk_of, found))
    return any(isinstance(hit, Hit) and hit.chunk is not None for hit in found)


def _offset(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def check_chunks(found: list[Any] | tuple[Any, ...], depth: int, corpus: dict[str, Document]) -> list[Hit]:
    """Validate a ranking of chunks; RetrieverOutputError says what is wrong and where.

    At most `depth` hits; each is a (doc_id, score) pair of a corpus document with a finite
    score, scores never increase (compared in float32, as ranking.check_hits compares them),
    and a chunk's offsets are both given or both left out, with 0 <= start < end <=
    len(document text). The same chunk twice is an error."""
    if len(found) > depth:
        raise RetrieverOutputError(f"asked for at most {depth} hits, got {len(found)}")
    checked: list[Hit] = []
    seen: set[tuple[Any, ...]] = set()
    for position, hit in enumerate(found, start=1):
        try:
            doc_id, score = hit
            score = float(score)
        except (TypeError, ValueError):
            raise RetrieverOutputError(f"hit {position} is not a (doc_id, score) pair: {hit!r}") from None
        if not isinstance(doc_id, str) or doc_id not in corpus:
            raise RetrieverOutputError(f"hit {position}: document {doc_id!r} is not in the corpus")
        if not math.isfinite(score):
            raise RetrieverOutputError(f"hit {position}: score of {doc_id!r} is {score}, not a finite number")
        start, end, chunk_id = (hit.start, hit.end, hit.chunk_id) if isinstance(hit, Hit) else (None,) * 3
        length = len(corpus[doc_id].text)
        whole = start is None and end is None
        if not whole and not (_offset(start) and _offset(end) and 0 <= start < end <= length):
            raise RetrieverOutputError(
                f"hit {position}: chunk of {doc_id!r} has start={start!r}, end={end!r}; give both or "
                f"neither, whole numbers with 0 <= start < end <= {length} (its text's length)"
            )
        if chunk_id is not None and not isinstance(chunk_id, str):
            raise RetrieverOutputError(f"hit {position}: chunk_id must be a string, got {chunk_id!r}")
        key = (doc_id, start, end, chunk_id)
        if key in seen:
            raise RetrieverOutputError(f"hit {position}: the same chunk of {doc_id!r} appears twice")
        seen.add(key)
        checked.append(Hit(doc_id, score, start, end, chunk_id))
    return require_non_increasing(checked)


def collapse(hits: Sequence[Hit]) -> list[Hit]:
    """The document ranking of a chunk ranking: each document once, at its first chunk,
    with that chunk's score and offsets (module docstring, collapse rule)."""
    seen: set[str] = set()
    documents = []
    for hit in hits:
        if hit.doc_id not in seen:
            seen.add(hit.doc_id)
            documents.append(hit)
    return documents


def collect(found: object, depth: int, corpus: dict[str, Document]) -> tuple[list[Hit], list[Hit]]:
    """A retriever's answer checked: (document ranking, chunk ranking). Without chunks both
    are the hits as ranking.check_hits returns them, exactly as before chunks existed; with
    chunks the document ranking is the collapsed one, checked by the same rules, each hit
    keeping its first chunk's offsets."""
    if not has_chunks(found):
        checked = check_hits(found, depth, corpus)
        return checked, checked
    assert isinstance(found, list | tuple)  # has_chunks says so
    chunks = check_chunks(found, depth, corpus)
    documents = collapse(chunks)
    checked = check_hits(documents, depth, corpus)
    kept = [
        Hit(c.doc_id, c.score, d.start, d.end, d.chunk_id) for c, d in zip(checked, documents, strict=True)
    ]
    return kept, chunks


def spans(hits: Sequence[Hit], corpus: dict[str, Document]) -> list[Span]:
    """The text each hit hands on: its chunk, or the whole document's text."""
    return [
        (hit.doc_id, 0, len(corpus[hit.doc_id].text))
        if hit.start is None or hit.end is None
        else (hit.doc_id, hit.start, hit.end)
        for hit in hits
    ]


def covers(span: Span, passage: Passage) -> bool:
    """Does the retrieved `span` cover `passage` (module docstring, coverage rule)?"""
    doc_id, start, end = span
    if doc_id != passage.doc:
        return False
    overlap = min(end, passage.end) - max(start, passage.start)
    return overlap >= COVER_SHARE * (passage.end - passage.start)


def _covered(ranking: Sequence[Span], passages: Sequence[Passage], k: int | None) -> list[set[int]]:
    """For each of the first k spans (all, k None): which passages (by index) it covers."""
    return [{i for i, p in enumerate(passages) if covers(span, p)} for span in ranking[:k]]


def passage_recall_at_k(ranking: Sequence[Span], passages: Sequence[Passage], k: int) -> float:
    """Share of the relevant passages covered by at least one of the first k spans; 0.0
    without passages."""
    if not passages:
        return 0.0
    return len(set().union(*_covered(ranking, passages, k))) / len(passages)


def passage_hit_at_k(ranking: Sequence[Span], passages: Sequence[Passage], k: int) -> float:
    """1.0 when one of the first k spans covers a relevant passage, else 0.0."""
    return 1.0 if any(_covered(ranking, passages, k)) else 0.0


def passage_mrr(ranking: Sequence[Span], passages: Sequence[Passage]) -> float:
    """1 / rank of the first span covering a relevant passage, ranks from 1; 0.0 when none does."""
    for rank, covered in enumerate(_covered(ranking, passages, None), start=1):
        if covered:
            return 1.0 / rank
    return 0.0


def passage_names(k: int) -> list[str]:
    """The passage metrics' names at cutoff k, in report order."""
    return [f"passage_recall@{k}", f"passage_hit@{k}", "passage_mrr"]


@dataclass(frozen=True)
class PassageResults:
    """Passage metrics of one run: per question (None: it names no passages) and the means
    over the questions that name passages."""

    names: list[str]
    questions: list[dict[str, float] | None]
    aggregate: dict[str, float]
    evaluated: int  # questions with passages


def passage_metrics(
    questions: Sequence[Question], chunks: Sequence[Sequence[Hit]], corpus: dict[str, Document], k: int
) -> PassageResults | None:
    """Every question's passage metrics from its chunk ranking; None when no question names
    a passage (the report then has no passage metrics at all)."""
    if not any(question.passages for question in questions):
        return None
    names = passage_names(k)
    rows: list[dict[str, float] | None] = []
    for question, hits in zip(questions, chunks, strict=True):
        if not question.passages:
            rows.append(None)
            continue
        ranking = spans(hits, corpus)
        values = (
            passage_recall_at_k(ranking, question.passages, k),
            passage_hit_at_k(ranking, question.passages, k),
            passage_mrr(ranking, question.passages),
        )
        rows.append(dict(zip(names, values, strict=True)))
    scored = [row for row in rows if row is not None]
    aggregate = {name: fmean(row[name] for row in scored) for name in names}
    return PassageResults(names, rows, aggregate, len(scored))


def report_section(
    questions: Sequence[Question], chunks: Sequence[Sequence[Hit]], corpus: dict[str, Document], k: int
) -> dict[str, Any] | None:
    """The report's "passages" section (inputs/reports.py): names, evaluated, aggregate and
    each question's values (null: it names no passages); None without passage labels."""
    results = passage_metrics(questions, chunks, corpus, k)
    if results is None:
        return None
    return {
        "names": results.names,
        "evaluated": results.evaluated,
        "aggregate": results.aggregate,
        "questions": {question.id: row for question, row in zip(questions, results.questions, strict=True)},
    }
