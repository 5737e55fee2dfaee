"""Rankings: checking what a retriever returned, trec_eval's order, and top-k selection."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from ..api import Hit, Retriever


def search_many_of(retriever: Retriever) -> Callable[[list[str], int], list[list[Hit]]] | None:
    """The retriever's optional `search_many(questions, depth)` (see api.Retriever), or None
    when it has none. What it returns is unchecked: search.retrieve_all checks it."""
    many = getattr(retriever, "search_many", None)
    return many if callable(many) else None


def search_all(retriever: Retriever, questions: list[str], depth: int) -> list[list[Hit]]:
    """Every question's hits, unchecked: one `search_many` call when the retriever has one,
    otherwise `search` per question. The evaluator asks through search.retrieve_all, which
    asks the same way and checks every answer."""
    many = search_many_of(retriever)
    return many(questions, depth) if many is not None else [retriever.search(q, depth) for q in questions]


class Remembered:
    """`retriever`, answering questions it has already answered from memory.

    The generator gets this: it sees exactly the hits that were evaluated, and a slow
    retriever (an embedding model, a remote service) is not run twice per question. A
    question it has not seen, or a deeper search, goes to the retriever itself; so does any
    other attribute.
    """

    def __init__(self, retriever: Retriever, known: dict[str, list[Hit]], depth: int):
        self.retriever, self.known, self.depth = retriever, known, depth

    def search(self, question: str, depth: int) -> list[Hit]:
        hits = self.known.get(question)
        if hits is None or depth > self.depth:
            return self.retriever.search(question, depth)
        return hits[:depth]

    def __getattr__(self, name: str) -> object:
        return getattr(self.retriever, name)


class RetrieverOutputError(Exception):
    """The retriever returned something that cannot be a ranking."""


def trec_order(hits: Iterable[Hit]) -> list[Hit]:
    """Hits in the order trec_eval ranks them: score descending, then document id descending.

    trec_eval ignores a run's rank column and sorts by score, breaking ties by comparing
    document ids (descending); every scored run we read or write is ordered by this rule.
    """
    return sorted(hits, key=lambda hit: (hit.score, hit.doc_id), reverse=True)


def top_hits(
    scores: np.ndarray,
    doc_ids: Sequence[str],
    tiebreak: np.ndarray,
    depth: int,
    *,
    positive_only: bool = True,
) -> list[Hit]:
    """The `depth` best documents with a positive score (any score, for `positive_only=False`:
    a similarity such as a cosine can be negative), best first.

    Ties are broken as `trec_order` breaks them (document id, descending), so an exported
    run ranks the same in trec_eval as here; this is its vectorised form for whole corpora.
    `tiebreak[i]` is document i's position in ascending id order, from `ascending_id_rank`.
    """
    candidates = np.flatnonzero(scores > 0) if positive_only else np.arange(len(scores))
    if len(candidates) > depth:
        # Keep everything that scores at least the depth-th best score, ties included.
        threshold = np.partition(scores[candidates], len(candidates) - depth)[len(candidates) - depth]
        candidates = candidates[scores[candidates] >= threshold]
    order = candidates[np.lexsort((-tiebreak[candidates], -scores[candidates]))][:depth]
    return [Hit(doc_ids[i], float(scores[i])) for i in order]


def found_and_missing(
    ranking: Sequence[str], qrels: Mapping[str, int], k: int
) -> tuple[list[str], list[str]]:
    """The relevant documents (grade >= 1) in the top k of `ranking`, best first, and those
    not in it, highest grade first, then by id: the ids a reader checks for one question."""
    relevant = {doc_id: grade for doc_id, grade in qrels.items() if grade >= 1}
    top = ranking[:k]
    found = [doc_id for doc_id in top if doc_id in relevant]
    missing = sorted(set(relevant) - set(top), key=lambda doc_id: (-relevant[doc_id], doc_id))
    return found, missing


def ascending_id_rank(doc_ids: Sequence[str]) -> np.ndarray:
    """Each document's position in ascending id order (`top_hits` breaks ties with it)."""
    positions = np.empty(len(doc_ids), dtype=np.int64)
    positions[np.argsort(np.array(doc_ids, dtype=object), kind="stable")] = np.arange(len(doc_ids))
    return positions


def check_hits(hits: object, depth: int, known_ids: set[str] | dict[str, Any]) -> list[Hit]:
    """Validate what a retriever returned; raise RetrieverOutputError saying what is wrong."""
    if not isinstance(hits, list | tuple):
        raise RetrieverOutputError(
            f"search() must return a list of Hit(doc_id, score), got {type(hits).__name__}"
        )
    if len(hits) > depth:
        raise RetrieverOutputError(f"asked for at most {depth} hits, got {len(hits)}")
    checked: list[Hit] = []
    seen: set[str] = set()
    previous = math.inf
    for position, hit in enumerate(hits, start=1):
        try:
            doc_id, score = hit
            score = float(score)
        except (TypeError, ValueError):
            raise RetrieverOutputError(f"hit {position} is not a (doc_id, score) pair: {hit!r}") from None
        if not isinstance(doc_id, str) or doc_id not in known_ids:
            raise RetrieverOutputError(f"hit {position}: document {doc_id!r} is not in the corpus")
        if doc_id in seen:
            raise RetrieverOutputError(f"hit {position}: document {doc_id!r} appears twice")
        if not math.isfinite(score):
            raise RetrieverOutputError(f"hit {position}: score of {doc_id!r} is {score}, not a finite number")
        if score > previous:
            raise RetrieverOutputError(
                f"hit {position}: scores must not increase down the ranking ({previous} then {score})"
            )
        seen.add(doc_id)
        previous = score
        checked.append(Hit(doc_id, score))
    return checked
