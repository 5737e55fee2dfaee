"""What a generator must return: checked once per question, before anything is judged.

The judge checks an answer against its contexts, so a context must be what the corpus says:
a generator that reports an invented sentence as the text of a real document would vouch
for itself. A context's text must therefore be found in its document (title or text): its words, in
order (`normalised`: Unicode compatibility forms, case folded; quotes, dashes, markup and
whitespace fall away), must be a run of the document's words, compared as written and again
without HTML tags. A chunk, a sentence or the whole document all pass; a paraphrase does
not: hand the generator's passages to the judge as the corpus has them.
"""

from __future__ import annotations

import functools
import re
import unicodedata

from ..api import Answer, Context, Document


class AnswerOutputError(Exception):
    """The generator returned something that is not an Answer built from the corpus."""


_TAG = re.compile(r"<[^<>]{0,200}>")
_WORD = re.compile(r"[^\W_]+")  # letters and digits of any script


@functools.lru_cache(maxsize=1 << 12)  # the same documents back many answers
def normalised(text: str) -> str:
    """The words of `text`, case folded and in Unicode compatibility form, one space apart:
    quotes, dashes, markup characters and runs of whitespace all fall away, so a passage
    matches its document however either is punctuated."""
    return " ".join(_WORD.findall(unicodedata.normalize("NFKC", text).casefold()))


@functools.lru_cache(maxsize=1 << 12)
def _untagged(text: str) -> str:
    """`normalised` after HTML tags are removed, for a context with markup its corpus text
    lacks, or the other way round."""
    return normalised(_TAG.sub(" ", text))


def found_in(context: str, document: Document) -> bool:
    """Whether `context` is text of `document` (its title or its text): its words, in order,
    are a run of the document's words (the first and last may be cut, as a chunk cut at
    character offsets is). Compared once as written (a chunk cut inside a tag keeps part of
    it) and once without HTML tags (markup on one side only)."""
    for words in (normalised, _untagged):
        wanted = words(context)
        if wanted in words(document.text) or wanted in words(document.title):
            return True
    return False


def _short(text: str, limit: int = 80) -> str:
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


def check_answer(answer: object, corpus: dict[str, Document]) -> Answer:
    """Validate what a generator returned; raise AnswerOutputError saying what is wrong:
    not an Answer; text not a string; `abstained` not a bool (the string "false" would read
    as true); contexts not a list of Context; a context whose document is not in the corpus
    or whose text is not text of that document; `citations` not a bool; `notes` not strings;
    `usage` not None or a dict of token counts (api.py).
    What the text says is never refused: an empty answer, a wrong citation, a leaked template
    token are the model's output, measured (answers/defects.py, checks.py)."""
    if not isinstance(answer, Answer):
        raise AnswerOutputError(f"answer() must return an Answer, got {type(answer).__name__}")
    if not isinstance(answer.text, str):
        raise AnswerOutputError(f"Answer.text must be a string, got {answer.text!r}")
    if not isinstance(answer.abstained, bool):
        raise AnswerOutputError(f"Answer.abstained must be True or False, got {answer.abstained!r}")
    if not isinstance(answer.contexts, (list, tuple)):
        raise AnswerOutputError(
            f"Answer.contexts must be a list of Context, got {type(answer.contexts).__name__}"
        )
    for context in answer.contexts:
        if not isinstance(context, Context) or not isinstance(context.doc_id, str):
            raise AnswerOutputError(f"context {context!r} is not a Context(doc_id, text)")
        if context.doc_id not in corpus:
            raise AnswerOutputError(f"context {context.doc_id!r} is not a document in the corpus")
        if not isinstance(context.text, str):
            raise AnswerOutputError(
                f"the text of context {context.doc_id!r} must be a string, got {context.text!r}"
            )
        if not found_in(context.text, corpus[context.doc_id]):
            raise AnswerOutputError(
                f"the text of context {context.doc_id!r} is not in that document: {_short(context.text)}; "
                "a context must be the document's own text (or a passage of it), as the corpus has it"
            )
    if not isinstance(answer.citations, bool):
        raise AnswerOutputError(f"Answer.citations must be True or False, got {answer.citations!r}")
    if not isinstance(answer.notes, (list, tuple)) or not all(isinstance(n, str) for n in answer.notes):
        raise AnswerOutputError(f"Answer.notes must be a tuple of strings, got {answer.notes!r}")
    if answer.usage is not None and (problem := _usage_problem(answer.usage)):
        raise AnswerOutputError(f"Answer.usage {problem}, got {answer.usage!r}")
    return answer


def _usage_problem(usage: object) -> str | None:
    """What is wrong with an Answer.usage (api.py), or None: a dict whose token counts are
    whole numbers of at least 0 and whose model is a string."""
    if not isinstance(usage, dict) or not all(isinstance(key, str) for key in usage):
        return "must be a dict with string keys (or None)"
    for name in ("prompt_tokens", "completion_tokens", "prompt_characters"):
        value = usage.get(name, 0)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            return f"{name} must be a whole number of at least 0"
    if not isinstance(usage.get("model", ""), str):
        return "model must be the model's name, a string"
    return None
