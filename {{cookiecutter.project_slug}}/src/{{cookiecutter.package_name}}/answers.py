"""The answer interface: a question in, the answer text and the contexts it used out."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Protocol


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


class AnswerOutputError(Exception):
    """The generator returned something that is not an Answer built from the corpus."""


def check_answer(answer: object, known_ids: set[str] | dict) -> Answer:
    """Validate what a generator returned; raise AnswerOutputError saying what is wrong."""
    if not isinstance(answer, Answer):
        raise AnswerOutputError(f"answer() must return an Answer, got {type(answer).__name__}")
    if not isinstance(answer.text, str):
        raise AnswerOutputError(f"Answer.text must be a string, got {answer.text!r}")
    for context in answer.contexts:
        if not isinstance(context, Context) or context.doc_id not in known_ids:
            raise AnswerOutputError(f"context {context!r} is not a Context of a document in the corpus")
    if not answer.abstained and not answer.text.strip():
        raise AnswerOutputError("an empty answer must be marked abstained=True")
    return answer
