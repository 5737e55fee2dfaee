"""Ask the retriever every golden question and check each answer against the contract.

A retriever that breaks the contract (see `api.Retriever`), raises, exits or runs past the
[run] timeout (every call goes through calling/calls.py) stops the run with EvalInputError naming the
question and its golden-set line: exit 2, never a traceback and never a number computed from
a broken ranking.

A retriever that stops short of [retrieval] depth on most questions at the same count, while
the corpus holds more documents, has a limit of its own (a top-k option, a service's page
size): that is a warning on stderr (`depth_warning`), since every metric that looks deeper
counts what it cut as not retrieved.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from ..api import Document, Hit, Retriever
from ..calling.asking import with_histories, with_history
from ..calling.caller import Caller
from ..calling.calls import failure
from ..calling.remote import call_everywhere
from ..errors import EvalInputError
from ..execution import Raised
from ..inputs.data import Question
from .passages import collect
from .ranking import RetrieverOutputError, search_many_of


def _search_many(
    retriever: Retriever, questions: list[Question], depth: int, golden: Path, caller: Caller
) -> list[object] | None:
    """All questions in one call to the retriever's optional `search_many` (see api.py; found
    as ranking.search_all finds it); None when it has none. Each answer is then checked like
    one from `search`. No question at all (every one cached): no call."""
    many = search_many_of(retriever)
    if many is None:
        return None
    if not questions:
        return []
    fix = "fix search_many() in retriever.py, or remove it to have search() called per question"
    try:
        turns = [question.asked for question in questions]
        answered: object = caller.call(with_histories(many, turns), [turn.text for turn in turns], depth)
    except Exception as error:  # a crash, exit or hang of the team's own retriever: exit 2
        raise EvalInputError(golden, f"search_many {failure(error)}", fix) from error
    if not isinstance(answered, list | tuple) or len(answered) != len(questions):
        got = f"{len(answered)} lists" if isinstance(answered, list | tuple) else type(answered).__name__
        raise EvalInputError(
            golden,
            f"search_many must return one list of hits per question ({len(questions)}), got {got}",
            fix,
        )
    return list(answered)


# A limit shows as many questions stopping at one count: at least this many questions, half of
# them at that count, and a count of at least MIN_LIMIT hits (a short ranking of a few
# documents is what a lexical retriever returns for a rare word, not a limit).
MIN_QUESTIONS, MIN_LIMIT = 5, 10


def depth_warning(hits: Sequence[Sequence[Hit]], depth: int, documents: int) -> str | None:
    """The warning for rankings that stop short of `depth` at one count on at least half of
    the questions while the corpus has more `documents`; None when there is nothing to say."""
    reachable = min(depth, documents)
    short = Counter(len(found) for found in hits if len(found) < reachable)
    if len(hits) < MIN_QUESTIONS or not short:
        return None
    limit, times = short.most_common(1)[0]
    if limit < MIN_LIMIT or 2 * times < len(hits):
        return None
    return (
        f"warning: {times} of {len(hits)} questions got exactly {limit} hits, fewer than "
        f"[retrieval] depth = {depth}, though the corpus has {documents} documents: the retriever "
        f"seems to stop at {limit} (an option of its own, or the service behind it), so every metric "
        f"that looks deeper counts what it cut as not retrieved; raise that limit to at least "
        f"{reachable}, or lower [retrieval] depth"
    )


def retrieve_all(
    retriever: Retriever,
    questions: list[Question],
    corpus: dict[str, Document],
    depth: int,
    golden: Path,
    chunks: list[list[Hit]] | None = None,
    caller: Caller | None = None,
    what: str = "searching",
) -> list[list[Hit]]:
    """Every question's checked hits, in golden-set order. `golden` names the file in errors;
    `caller` calls the retriever (calling/caller.py: concurrency, retries, rate limit, the output
    cache; by default one call after another, uncached) and shows progress labelled `what`.

    A retriever that returns chunks gets its document ranking back (passages.py: each
    document at its first chunk); `chunks`, when given, receives each question's chunk
    ranking as returned (the same hits when there are no chunks), for passage metrics.

    A ranking from the output cache is checked exactly as a fresh one; a fresh one is
    cached only once it passed."""
    caller = caller or Caller()
    cache = caller.cache
    cached = [cache.hits_for(q.asked.key, depth) if cache else None for q in questions]
    todo = [question for question, hits in zip(questions, cached, strict=True) if hits is None]
    many = _search_many(retriever, todo, depth, golden, caller)  # None: no search_many
    if many is None:  # on a cluster's workers when the run has one (calling/remote.py), else below
        many = call_everywhere(retriever, "search", [q.asked for q in todo], (depth,), caller)
        method = "search()"
    else:
        method = "search_many()"  # the one to fix
    batch = iter(many or [])
    found_by: list[object | None] = [
        hits if hits is not None or many is None else next(batch) for hits in cached
    ]

    def one(item: tuple[Question, object | None, bool]) -> tuple[list[Hit], list[Hit]]:
        question, found, from_cache = item
        try:
            if found is None:  # no search_many, and not cached
                turn = question.asked
                found = caller.call(with_history(retriever.search, turn), turn.text, depth)
            elif isinstance(found, Raised):  # what search() raised on a cluster's worker
                raise found.error
            hits, chunked = collect(found, depth, corpus)
        except RetrieverOutputError as error:
            raise EvalInputError(
                golden,
                f"question {question.id!r}: bad retriever output: {error}",
                f"fix {method} in retriever.py (see the rules in its docstring)",
                question.line,
            ) from None
        except Exception as error:  # a crash, exit or hang of the team's own retriever: name the question
            raise EvalInputError(
                golden,
                f"question {question.id!r}: the retriever {failure(error)}",
                "fix search() in retriever.py; this question reproduces it",
                question.line,
            ) from error
        if cache is not None and not from_cache:
            cache.put_hits(question.asked.key, depth, chunked)
        return hits, chunked

    items = [(q, found, hits is not None) for q, found, hits in zip(questions, found_by, cached, strict=True)]
    results = caller.map(one, items, what)
    if chunks is not None:
        chunks.extend(chunked for _, chunked in results)
    ranked = [hits for hits, _ in results]
    if what != "determinism" and (warning := depth_warning(ranked, depth, len(corpus))):
        print(warning, file=sys.stderr)  # the evaluated run's; a determinism check repeats it
    return ranked
