"""The hidden holdout: a second golden file that only the gate evaluates (run.py does).

Tune the retriever on the dev split ([data] golden, what `eval` shows); the gate also runs
the holdout ([data] holdout) and reports the dev - holdout gap of every gated metric. A dev
score that keeps climbing while the holdout stays put is overfitting to the dev questions.

A question in both splits (same id, or the same text up to case and spacing after the same
conversation) would leak the holdout into tuning, so it is an error naming the holdout file
and line.
"""

from __future__ import annotations

from ..errors import EvalInputError
from ..inputs.data import Question
from ..settings.config import Config


def _text_key(question: Question) -> str:
    """The question's words, and its conversation's: "how long?" after two different
    conversations is two questions."""
    said = [question.question, *(content or "" for _, content in question.history)]
    return "\n".join(" ".join(text.casefold().split()) for text in said)


def check_disjoint(dev: list[Question], holdout: list[Question], config: Config) -> None:
    """Raise EvalInputError at the first holdout question that is also in the dev split."""
    ids = {question.id: question for question in dev}
    texts = {_text_key(question): question for question in dev}
    for question in holdout:
        twin = ids.get(question.id)
        same = "id" if twin is not None else "question text"
        twin = twin or texts.get(_text_key(question))
        if twin is not None:
            raise EvalInputError(
                config.holdout or config.golden,
                f"question {question.id!r} has the same {same} as {twin.id!r} on line {twin.line} "
                f"of {config.golden.name}: a holdout question must not be in the dev split",
                "remove it from one of the two files (rename the id if the questions differ)",
                question.line,
            )
