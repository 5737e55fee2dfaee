"""The assistant turns a golden set leaves for the system to write (inputs/conversation.py).

Before a run searches or answers anything, each blank assistant turn of a history gets the
system's own answer to the user turn before it, asked with the conversation up to there:
what a user of the system would have read before asking the next question. Earlier turns
first, in rounds (turn 1's answers, then turn 2's ...), each round's distinct questions
asked through the run's caller, so concurrency, retries, the output cache and the cost
count them as any answer; the same conversation prefix is asked once for every item that
shares it. A broken answer stops the run naming the item whose history needed it.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path

from ..api import Document, Generator
from ..calling.caller import Caller
from ..inputs.conversation import Said
from ..inputs.data import Question
from .checks import checked_answer


def _first_blank(history: tuple[Said, ...]) -> int | None:
    return next((i for i, (_, content) in enumerate(history) if content is None), None)


def _earlier(question: Question, blank: int) -> Question:
    """The user turn before the blank at `blank`, asked with what precedes it (the history is
    validated to alternate, so a blank assistant turn follows a user turn)."""
    return dataclasses.replace(
        question, question=question.history[blank - 1][1] or "", history=question.history[: blank - 1]
    )


def written(
    questions: list[Question],
    generator: Generator,
    corpus: dict[str, Document],
    golden: Path,
    caller: Caller,
) -> list[Question]:
    """`questions` with every blank assistant turn of their histories written by `generator`
    (module doc); the same list when no history has a blank."""
    questions = list(questions)
    while True:
        # Each question's next blank: the user turn before it, asked with what precedes that.
        wanted: dict[str, Question] = {}
        blanks: list[tuple[int, int, str]] = []  # (question's index, blank's index, key asked)
        for index, question in enumerate(questions):
            blank = _first_blank(question.history)
            if blank is None:
                continue
            earlier = _earlier(question, blank)
            key = earlier.asked.key
            wanted.setdefault(key, earlier)
            blanks.append((index, blank, key))
        if not blanks:
            return questions
        asked = list(wanted.values())
        answers = caller.map(
            lambda earlier: checked_answer(generator, earlier, corpus, golden, caller), asked, "conversations"
        )
        said = {earlier.asked.key: answer.text for earlier, answer in zip(asked, answers, strict=True)}
        for index, blank, key in blanks:
            history = list(questions[index].history)
            history[blank] = ("assistant", said[key])
            questions[index] = dataclasses.replace(questions[index], history=tuple(history))


def written_from(questions: list[Question], answer_of: Callable[[str], str | None]) -> list[Question]:
    """`questions` with each blank assistant turn `answer_of` knows (by the earlier turn's
    Turn.key: the output cache, peeked) written, in order, up to the first it does not."""
    done = []
    for question in questions:
        while (blank := _first_blank(question.history)) is not None:
            said = answer_of(_earlier(question, blank).asked.key)
            if said is None:
                break
            history = list(question.history)
            history[blank] = ("assistant", said)
            question = dataclasses.replace(question, history=tuple(history))
        done.append(question)
    return done


def to_write(questions: list[Question]) -> list[Question]:
    """The earlier turns `written` asks the generator, one per distinct conversation prefix
    (as questions whose history keeps its blanks: what --dry-run counts, estimate.py)."""
    wanted: dict[str, Question] = {}
    for question in questions:
        for index, (_, content) in enumerate(question.history):
            if content is None:
                earlier = _earlier(question, index)
                wanted.setdefault(json.dumps([earlier.question, earlier.history]), earlier)
    return list(wanted.values())
