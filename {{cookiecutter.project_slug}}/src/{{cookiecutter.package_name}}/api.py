"""The plug-in API: the types a team's `retriever.py` and `generator.py` use and return.

This module imports nothing from the package, and everything may import it: it is the one
contract between the team's system and the template's engine.

- A retriever is anything with `search(question, depth) -> list[Hit]`, best first.
- A generator is anything with `answer(question) -> Answer`.
- `build_retriever(documents, tokenize, options)` and `build_generator(retriever, documents,
  options)` make them; the command line hands both factories to the engine as a `System`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

Tokenizer = Callable[[str], list[str]]
"""Text in, its tokens out, in order, repeats kept (built from the [tokenizer] settings)."""


@dataclass(frozen=True)
class Document:
    """One corpus document (a line of evals/corpus.jsonl)."""

    id: str
    text: str
    title: str = ""


class Hit(NamedTuple):
    """One retrieved document and its score; a ranking is a list of hits, best first."""

    doc_id: str
    score: float


class Retriever(Protocol):
    def search(self, question: str, depth: int) -> list[Hit]:
        """Return at most `depth` hits, best first, each document at most once.

        Return only documents you would actually show the generator: an empty list is a
        valid answer (and scores zero on every metric).

        Optional: a method `search_many(questions: list[str], depth: int) -> list[list[Hit]]`
        answering many questions in one call (an embedding model encodes them in batches,
        a service takes them in one request). The evaluator then calls it once instead of
        `search` per question; it must return one list of hits per question, in order.
        """
        ...


@dataclass(frozen=True)
class Context:
    doc_id: str  # an id from evals/corpus.jsonl
    text: str  # the passage text the generator was given


@dataclass(frozen=True)
class Answer:
    text: str
    contexts: list[Context] = field(default_factory=list)
    abstained: bool = False  # True when the system declined to answer ("I don't know")


class Generator(Protocol):
    def answer(self, question: str) -> Answer:
        """Answer the question from retrieved passages, or abstain."""
        ...


ABSTENTION = "I don't know: the documents do not answer this question."

_REFUSAL = re.compile(
    r"\b(i don't know|i do not know|(?:not|isn't) (?:covered|mentioned|answered) (?:in|by) the "
    r"(?:available )?(?:documents|context)|cannot answer)\b",
    re.IGNORECASE,
)


def looks_like_abstention(text: str) -> bool:
    """A helper for LLM generators that refuse in words: does `text` read as a refusal?"""
    return bool(_REFUSAL.search(text))


RetrieverFactory = Callable[[list[Document], Tokenizer, dict[str, Any]], Retriever]
GeneratorFactory = Callable[[Retriever, list[Document], dict[str, Any]], Generator]


@dataclass(frozen=True)
class System:
    """The system under test: how to build its retriever and its generator.

    The command line makes one from the team's `retriever.py` and `generator.py`; tests
    make their own. The engine only ever receives it: it never imports the team's files.
    """

    build_retriever: RetrieverFactory
    build_generator: GeneratorFactory
