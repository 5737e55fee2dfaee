"""Ask the retriever every golden question and check each answer against the contract.

A retriever that breaks the contract (see `api.Retriever`), raises, exits or runs past the
[run] timeout (every call goes through calls.py) stops the run with EvalInputError naming the
question and its golden-set line: exit 2, never a traceback and never a number computed from
a broken ranking.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from ..api import Document, Hit, Retriever
from ..errors import EvalInputError
from ..inputs.data import Question
from .calls import call, failure
from .passages import collect
from .ranking import RetrieverOutputError, search_many_of


def _search_many(
    retriever: Retriever, questions: list[Question], depth: int, golden: Path
) -> list[object] | None:
    """All questions in one call to the retriever's optional `search_many` (see api.py; found
    as ranking.search_all finds it); None when it has none. Each answer is then checked like
    one from `search`."""
    many = search_many_of(retriever)
    if many is None:
        return None
    fix = "fix search_many() in retriever.py, or remove it to have search() called per question"
    try:
        answered: object = call(many, [question.question for question in questions], depth)
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


def retrieve_all(
    retriever: Retriever,
    questions: list[Question],
    corpus: dict[str, Document],
    depth: int,
    golden: Path,
    track: Callable[[list[Question]], Iterable[Question]] = iter,
    chunks: list[list[Hit]] | None = None,
) -> list[list[Hit]]:
    """Every question's checked hits, in golden-set order. `golden` names the file in errors;
    `track` wraps the loop over questions (the orchestrator's progress bar).

    A retriever that returns chunks gets its document ranking back (passages.py: each
    document at its first chunk); `chunks`, when given, receives each question's chunk
    ranking as returned (the same hits when there are no chunks), for passage metrics."""
    answered = _search_many(retriever, questions, depth, golden)  # None: no search_many
    method = "search()" if answered is None else "search_many()"  # the one to fix
    ranked = []
    for i, question in enumerate(track(questions)):
        try:
            found = answered[i] if answered is not None else call(retriever.search, question.question, depth)
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
        ranked.append(hits)
        if chunks is not None:
            chunks.append(chunked)
    return ranked
