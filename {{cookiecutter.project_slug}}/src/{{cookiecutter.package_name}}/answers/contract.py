"""What a generator must return: checked once per question, before anything is judged.

The judge checks an answer against its contexts, so a context must be what the corpus says:
a generator that reports an invented sentence as the text of a real document would vouch
for itself. A context's text must therefore be found in its document (title or text) after
both are normalised the same way (`normalised`): Unicode compatibility forms, curly quotes
and dashes made plain, HTML tags and markdown emphasis removed, runs of whitespace made one
space, case folded. A chunk, a sentence or the whole document all pass; a paraphrase does
not: hand the generator's passages to the judge as the corpus has them.
"""

from __future__ import annotations

import functools
import re
import unicodedata

from ..api import Answer, Context, Document


class AnswerOutputError(Exception):
    """The generator returned something that is not an Answer built from the corpus."""


_PLAIN = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201b": "'",
        "\u2032": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u2033": '"',
        "\u00ab": '"',
        "\u00bb": '"',
        "\u2010": "-",
        "\u2011": "-",
        "\u2012": "-",
        "\u2013": "-",
        "\u2014": "-",
        "\u2212": "-",
        "\u00ad": None,  # soft hyphen: invisible, so never a difference
        "*": None,  # markdown emphasis and bullets
        "_": None,
        "`": None,
        "#": None,
    }
)
_TAG = re.compile(r"<[^<>]{0,200}>")
_SPACE = re.compile(r"\s+")


@functools.lru_cache(maxsize=1 << 12)  # the same documents back many answers
def normalised(text: str) -> str:
    """`text` as contexts and documents are compared: NFKC, plain quotes and dashes, no HTML
    tags or markdown emphasis characters, single spaces, case folded, trimmed."""
    text = unicodedata.normalize("NFKC", text).translate(_PLAIN)
    return _SPACE.sub(" ", _TAG.sub(" ", text)).strip().casefold()


def found_in(context: str, document: Document) -> bool:
    """Whether `context` is text of `document` (its title or its text), after normalising."""
    wanted = normalised(context)
    return wanted in normalised(document.text) or wanted in normalised(document.title)


def _short(text: str, limit: int = 80) -> str:
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


def check_answer(answer: object, corpus: dict[str, Document]) -> Answer:
    """Validate what a generator returned; raise AnswerOutputError saying what is wrong:
    not an Answer; text not a string; `abstained` not a bool (the string "false" would read
    as true); contexts not a list of Context; a context whose document is not in the corpus
    or whose text is not text of that document; an empty answer not marked abstained."""
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
    if not answer.abstained and not answer.text.strip():
        raise AnswerOutputError("an empty answer must be marked abstained=True")
    return answer
