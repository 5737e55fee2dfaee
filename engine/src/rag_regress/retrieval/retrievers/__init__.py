"""Retrievers that ship with the engine, each a part registered under the entry-point group
`rag_regress.retrievers` (parts.py): `[system] retriever = "bm25"`, or the team's
`retriever.py` builds one.

Each module here declares `VERSION`, `Settings` (its [retriever] options: options.py) and
`build(documents, tokenize, options) -> Retriever`, where `options` is the `[retriever]`
table of eval.toml, validated by `Settings`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

from pydantic import Field, StrictBool, StrictInt

from ...api import History
from ...options import OptionsError, options_table

__all__ = [
    "ChunkOverlap",
    "ChunkSize",
    "OptionsError",
    "UseHistory",
    "all_in_context",
    "in_context",
    "options_table",
]

# The options every shipped retriever shares, declared once.
ChunkSize = Annotated[
    StrictInt, Field(ge=0, description="words per chunk; 0: whole documents (retrieval/chunks.py)")
]
ChunkOverlap = Annotated[
    StrictInt, Field(ge=0, description="words shared by consecutive chunks, less than chunk_size")
]
UseHistory = Annotated[
    StrictBool,
    Field(description="search a later turn with the user's earlier turns; false: the question alone"),
]


def in_context(question: str, history: History, use: bool) -> str:
    """What a shipped retriever searches for a question that follows earlier turns: the
    user's earlier turns, then the question, one text (the conversational-search baseline of
    TREC CAsT, "all previous utterances": a follow-up like "and on the annual plan?" keeps
    the words of what it follows). The assistant's turns are left out: an answer's words are
    the system's own, and would pull retrieval towards what it already said. `use` false
    ([retriever] history = false): the question alone, blind to the conversation."""
    if not use or not history:
        return question
    return "\n".join([*(message.content for message in history if message.role == "user"), question])


def all_in_context(questions: Sequence[str], histories: Sequence[History] | None, use: bool) -> list[str]:
    """`in_context` for each question of a `search_many` call (no histories: the questions)."""
    if histories is None:
        return list(questions)
    return [in_context(q, h, use) for q, h in zip(questions, histories, strict=True)]
