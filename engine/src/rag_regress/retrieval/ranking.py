"""Rankings: checking what a retriever returned, trec_eval's order, and top-k selection.

trec_eval's order (`trec_order`): score descending, then document id descending, with
scores compared as trec_eval holds them, in single precision (float32): 12.5 and
12.500000001 are the same float32, so they tie and the larger id ranks first. Which order
the metrics are computed on is the `[retrieval] ties` setting (`Ties`; docs/metrics.md).
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal

import numpy as np

from ..api import History, Hit, Retriever
from ..calling.asking import being_answered, with_history
from ..inputs.conversation import Turn


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

    The generator gets this: it sees exactly the hits the retriever returned for the
    evaluated run, in the retriever's own order (the metrics may read tied scores in
    trec_eval's: `[retrieval] ties`), and a slow retriever (an embedding model, a remote
    service) is not run twice per question. A
    question it has not seen, or a deeper search, goes to the retriever itself; so does any
    other attribute. While `fresh` is a dict (the determinism check sets one), what the
    retriever itself answered is kept in it, by Turn.key, to compare with the run's hits.
    """

    def __init__(self, retriever: Retriever, known: dict[str, list[Hit]], depth: int):
        self.retriever, self.known, self.depth = retriever, known, depth  # known: by Turn.key
        self.fresh: dict[str, list[Hit]] | None = None  # kept only while asked for: not in a run

    def search(self, question: str, depth: int, history: History | None = None) -> list[Hit]:
        """The evaluated hits of `question` (in its conversation: `history`, or, when the
        generator does not pass it on, the turn it is answering: asking.being_answered)."""
        turn = Turn(question, being_answered(question) if history is None else history)
        hits = self.known.get(turn.key)
        if hits is None or depth > self.depth:
            hits = with_history(self.retriever.search, turn)(question, depth)
            if self.fresh is not None:
                self.fresh[turn.key] = hits
            return hits
        return hits[:depth]

    def __getattr__(self, name: str) -> object:
        if name.startswith("__") or name == "retriever":  # unpickling (a cluster's worker) looks
            raise AttributeError(name)  # these up before __init__ ran: no retriever to ask yet
        return getattr(self.retriever, name)


class RetrieverOutputError(Exception):
    """The retriever returned something that cannot be a ranking."""


# `[retrieval] ties`: which order of a retriever's hits the metrics are computed on.
#   "trec_eval"  trec_order: the order trec_eval gives the same scores (the default), so an
#                exported run scores the same there;
#   "retriever"  the order the retriever returned, tied scores included.
Ties = Literal["trec_eval", "retriever"]


def as_float32(scores: np.ndarray) -> np.ndarray:
    """`scores` in single precision, as trec_eval stores a run's scores: the nearest float32
    (round to nearest, ties to even, as C's cast); beyond float32's range, +-inf, which ties
    with any other score that far out, as in trec_eval."""
    with np.errstate(over="ignore"):
        return np.asarray(scores, dtype=np.float64).astype(np.float32)


def trec_order(hits: Iterable[Hit]) -> list[Hit]:
    """Hits in the order trec_eval ranks them: score descending, then document id descending,
    scores compared in float32 (`as_float32`); the hits keep their own (double) scores.

    trec_eval ignores a run's rank column and sorts by its float32 scores, breaking ties by
    comparing document ids byte by byte, larger first (Python's string order is the same for
    UTF-8 text); every scored run we read or write is ordered by this rule. A list already in
    that order is returned itself, not copied (the hits of a large run are millions).
    """
    listed = hits if isinstance(hits, list) else list(hits)
    if not listed:
        return listed
    doc_ids, given = zip(*listed, strict=True)  # a hit is a pair, whatever its chunk
    scores = as_float32(np.array(given, dtype=np.float64))
    falls = scores[1:] < scores[:-1]
    if bool(np.all(falls)):  # already strictly decreasing: no tie to break
        return listed
    if _ties_broken_by_id(scores, falls, doc_ids):
        return listed
    keys = list(zip(scores.tolist(), doc_ids, strict=True))
    order = sorted(range(len(listed)), key=keys.__getitem__, reverse=True)
    return [listed[i] for i in order]


def _ties_broken_by_id(scores: np.ndarray, falls: np.ndarray, doc_ids: Sequence[str]) -> bool:
    """Whether float32 `scores` never rise and every tie among them is in descending id
    order: a list already in trec_order. `falls[i]` says score i + 1 is below score i; only
    the ties are compared in Python (a large corpus copied has a tie at most ranks)."""
    ties = scores[1:] == scores[:-1]
    if not bool(np.all(falls | ties)):
        return False
    return all(doc_ids[i] > doc_ids[i + 1] for i in np.flatnonzero(ties).tolist())


def evaluated_order(ranked: Sequence[Sequence[Hit]], ties: Ties) -> list[list[Hit]]:
    """Each question's hits in the order its metrics are computed on (`Ties`)."""
    if ties == "retriever":
        return [list(hits) for hits in ranked]
    return [trec_order(hits) for hits in ranked]


def tie_warning(
    ids: Sequence[str], ranked: Sequence[Sequence[Hit]], in_order: Sequence[Sequence[Hit]], shown: int = 5
) -> str | None:
    """The warning printed when the metrics follow trec_eval's order but the retriever put
    tied scores in another: how many questions, the first `shown` ids, and the setting that
    evaluates the retriever's own order. None when there is nothing to say.

    `ranked` holds each question's hits as the retriever returned them, `in_order` the same
    hits as `evaluated_order` gave them: the two differ only under trec_eval's rule, and only
    where tied scores (`check_hits` refuses any other rise) were not ordered by id, descending.
    """
    otherwise = [
        qid
        for qid, given, used in zip(ids, ranked, in_order, strict=True)
        if given is not used and [hit[0] for hit in given] != [hit[0] for hit in used]
    ]
    if not otherwise:
        return None
    more = f" and {len(otherwise) - shown} more" if len(otherwise) > shown else ""
    return (
        f"warning: {len(otherwise)} question(s) have tied scores (equal as float32) that the retriever "
        f"ordered otherwise than trec_eval (document id, descending): {', '.join(otherwise[:shown])}{more}. "
        'Their metrics follow trec_eval\'s order; set [retrieval] ties = "retriever" in eval.toml to '
        "evaluate the retriever's own order (docs/metrics.md)"
    )


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

    Ranked exactly as `trec_order` ranks them (float32 scores, then document id descending),
    so the shipped retrievers never order tied scores otherwise than trec_eval; this is its
    vectorised form for whole corpora. The hits keep their double scores, which may rise
    within a float32 tie (`check_hits` compares in float32). `tiebreak[i]` is document i's
    position in ascending id order, from `ascending_id_rank`.
    """
    order = best_positions(scores, tiebreak, depth, positive_only=positive_only)
    return whole_document_hits([doc_ids[i] for i in order.tolist()], scores[order].tolist())


def best_positions(
    scores: np.ndarray, tiebreak: np.ndarray, depth: int, *, positive_only: bool = True
) -> np.ndarray:
    """The positions of the `depth` best scores, best first, as `top_hits` ranks them (float32
    scores descending, then `tiebreak` descending); positive scores only, unless
    `positive_only` is False."""
    candidates = _above_sampled_bound(scores, depth) if positive_only else None
    if candidates is None:
        candidates = np.flatnonzero(scores > 0) if positive_only else np.arange(len(scores))
    tied = as_float32(scores[candidates])
    if len(candidates) > depth:
        # Keep everything that scores at least the depth-th best score, ties included.
        threshold = np.partition(tied, len(candidates) - depth)[len(candidates) - depth]
        keep = tied >= threshold
        candidates, tied = candidates[keep], tied[keep]
    order: np.ndarray = candidates[np.lexsort((-tiebreak[candidates], -tied))][:depth]
    return order


# One score in this many is read to find a bound below the depth-th best (`_above_sampled_bound`).
SAMPLE_STRIDE = 16


def _above_sampled_bound(scores: np.ndarray, depth: int) -> np.ndarray | None:
    """The positions of the positive scores that may be among the `depth` best in float32, a
    few times `depth` of them rather than every positive one: a large index ranks these
    instead of all its candidates, in about two thirds of the time, with the same result.
    None when the sample gives no usable bound (few scores, or too few positive ones).

    Why nothing is lost: if `depth` scores of a sample are at least v, so are `depth` scores
    of the whole, and the depth-th best float32 score is at least float32(v). A score below
    the float32 just under float32(v) rounds below float32(v) (rounding is monotonic), so
    every score that ties with or beats the depth-th best, in float32, is kept; and so are
    the `depth` best themselves, so the depth-th best of those kept is the same value."""
    sample = scores[::SAMPLE_STRIDE]
    if depth < 1 or len(sample) < depth:
        return None
    best = np.partition(sample, len(sample) - depth)[len(sample) - depth :]
    if np.isnan(best).any():  # NaN sorts above every number: no bound on the positive scores
        return None
    below = float(np.nextafter(as_float32(best[:1])[0], np.float32(-np.inf)))
    if not below > 0:  # too few positive scores sampled (or a bound that rounds to 0)
        return None
    return np.flatnonzero(scores >= below)


# `hit.chunk` without the property's call (a chunk is a non-empty tuple, else None): where
# every hit of a ranking is read, as in the checks of each answer.
chunk_of: Callable[[Hit], tuple[int | None, int | None, str | None] | None] = operator.attrgetter("_chunk")

# Hit(doc_id, score) for a whole document is the bare pair: built by tuple's own constructor,
# skipping Hit's Python-level one, since a ranking of a large corpus makes many of them.
_pair_as_hit = functools.partial(tuple.__new__, Hit)


def whole_document_hits(doc_ids: Sequence[str], scores: Sequence[float]) -> list[Hit]:
    """`[Hit(doc_id, score) for doc_id, score in zip(doc_ids, scores)]`, made faster."""
    hits: list[Hit] = list(map(_pair_as_hit, zip(doc_ids, scores, strict=True)))
    return hits


def found_and_missing(
    ranking: Sequence[str], qrels: Mapping[str, int], k: int, relevance_level: int = 1
) -> tuple[list[str], list[str]]:
    """The relevant documents (grade >= `relevance_level`) in the top k of `ranking`, best
    first, and those not in it, highest grade first, then by id: the ids a reader checks for
    one question."""
    relevant = {doc_id: grade for doc_id, grade in qrels.items() if grade >= relevance_level}
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
    """Validate what a retriever returned; raise RetrieverOutputError saying what is wrong.

    Scores must not increase down the ranking, compared as trec_eval compares them (float32):
    within scores equal in float32 any order passes, and `[retrieval] ties` says which order
    is evaluated."""
    if not isinstance(hits, list | tuple):
        raise RetrieverOutputError(
            f"search() must return a list of Hit(doc_id, score), got {type(hits).__name__}"
        )
    if len(hits) > depth:
        raise RetrieverOutputError(f"asked for at most {depth} hits, got {len(hits)}")
    fast = _well_formed(hits, known_ids)
    if fast is not None:
        return require_non_increasing(*fast)
    checked: list[Hit] = []
    seen: set[str] = set()
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
        seen.add(doc_id)
        checked.append(_pair_as_hit((doc_id, score)))  # Hit(doc_id, score), without its slow __new__
    return require_non_increasing(checked)


def _well_formed(
    hits: list[Any] | tuple[Any, ...], known_ids: set[str] | dict[str, Any]
) -> tuple[list[Hit], list[float]] | None:
    """The checked hits and their scores when every rule of check_hits holds, found with
    whole-list operations that run in C (a large run checks millions of hits); None when any
    rule may be broken, so that check_hits walks the hits one by one and names the first
    broken rule."""
    kinds = set(map(type, hits))
    if not kinds <= {Hit, tuple} or (tuple in kinds and set(map(len, hits)) != {2}):
        return None  # a Hit is always a pair
    if not hits:
        return [], []
    doc_ids, given = zip(*hits, strict=True)
    try:
        scores = list(map(float, given))
    except (TypeError, ValueError):
        return None
    if set(map(type, doc_ids)) != {str} or len(set(doc_ids)) != len(doc_ids):
        return None
    if not all(map(known_ids.__contains__, doc_ids)) or not all(map(math.isfinite, scores)):
        return None
    if kinds == {Hit} and set(map(type, given)) == {float} and not any(map(chunk_of, hits)):
        return list(hits), scores  # already the hits it would make (as the shipped retrievers give)
    return whole_document_hits(doc_ids, scores), scores


def require_non_increasing(checked: list[Hit], scores: Sequence[float] | None = None) -> list[Hit]:
    """`checked` itself when its scores (`scores`, when the caller has them as a list
    already) never increase down the list, compared in float32 as trec_eval reads them;
    RetrieverOutputError naming the first rise otherwise."""
    # All scores at once, in float32: one conversion per ranking, not one per hit.
    given = [hit.score for hit in checked] if scores is None else scores
    tied = as_float32(np.array(given, dtype=np.float64))
    rises = np.flatnonzero(tied[1:] > tied[:-1])
    if len(rises):
        i = int(rises[0]) + 1
        raise RetrieverOutputError(
            f"hit {i + 1}: scores must not increase down the ranking "
            f"({checked[i - 1].score} then {checked[i].score})"
        )
    return checked
