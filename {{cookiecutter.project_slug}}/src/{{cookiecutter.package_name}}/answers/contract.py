"""What a generator must return: checked once per question, before anything is judged."""

from __future__ import annotations

from typing import Any

from ..api import Answer, Context


class AnswerOutputError(Exception):
    """The generator returned something that is not an Answer built from the corpus."""


def check_answer(answer: object, known_ids: set[str] | dict[str, Any]) -> Answer:
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
