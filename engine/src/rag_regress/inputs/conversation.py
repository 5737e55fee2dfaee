"""Conversations in the golden set: a later turn's `history`, and the turn as it is asked.

golden.jsonl: {"id": "c1-2", "question": "And on the annual plan?", "relevant": {...},
               "history": [{"role": "user", "content": "How much is the Team plan?"},
                           {"role": "assistant"}]}

`history` lists the turns before the question, oldest first, alternating user and assistant
and ending with the assistant's: the question is the user's next turn. A user turn has its
`content`; an assistant turn may leave it out, and the system under test then writes it (its
own answer to the user turn before, given the conversation up to there: run.py asks it
before anything else), which is what a user of the system would have read. A question with
history is turn N of its conversation, N counting the user turns; once any item of a golden
set has history, every item carries the tag `turn:N` (N = 1 without history), so each turn
is a slice the reports show and [gate.slices] may floor.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..api import History, Message
from ..errors import EvalInputError

Said = tuple[str, str | None]
"""One turn of a golden item's history: (role, content); content None: the system writes it."""

TURN_TAG = "turn:"

_EXAMPLE = (
    'write e.g. "history": [{"role": "user", "content": "How much is the Team plan?"}, '
    '{"role": "assistant"}] (an assistant turn without content is written by your system)'
)


def read_history(path: Path, number: int, item: dict[str, Any]) -> tuple[Said, ...]:
    """The item's `history` (module doc), checked: EvalInputError at its line otherwise."""
    value = item.get("history", [])
    if not isinstance(value, list):
        raise EvalInputError(path, f"'history' must be a list of turns, got {value!r:.60}", _EXAMPLE, number)
    turns: list[Said] = []
    for index, entry in enumerate(value, start=1):
        role = "user" if index % 2 else "assistant"
        where = f"history turn {index}"
        if not isinstance(entry, dict) or set(entry) - {"role", "content"} or entry.get("role") != role:
            raise EvalInputError(
                path,
                f'{where} must be {{"role": "{role}", "content": ...}} (turns alternate, the user\'s '
                f"first), got {entry!r:.80}",
                _EXAMPLE,
                number,
            )
        content = entry.get("content")
        blank = content is None and role == "assistant"
        if not blank and (not isinstance(content, str) or not content.strip()):
            left_out = ", or left out for your system to write" if role == "assistant" else ""
            what = f"a non-empty string{left_out}"
            problem = f"{where}: 'content' must be {what}, got {content!r:.60}"
            raise EvalInputError(path, problem, _EXAMPLE, number)
        turns.append((role, content))
    if len(turns) % 2:
        raise EvalInputError(
            path,
            f"'history' ends with a user turn ({len(turns)} turns): the question is the user's next turn",
            "end the history with the assistant's turn (its content may be left out), and put the "
            "user's last words in 'question'",
            number,
        )
    return tuple(turns)


def turn_number(history: tuple[Said, ...]) -> int:
    """Which turn of its conversation a question with this history is: 1 + the user turns."""
    return 1 + sum(1 for role, _ in history if role == "user")


def check_tags(path: Path, number: int, tags: list[str]) -> None:
    """`turn:N` tags are the engine's own (module doc): a golden item may not set one."""
    for tag in tags:
        if tag.startswith(TURN_TAG):
            raise EvalInputError(
                path,
                f"the tag {tag!r} is set by the engine from 'history' (each item's turn)",
                f"rename the tag (one not starting with {TURN_TAG!r})",
                number,
            )


@dataclass(frozen=True)
class Turn:
    """A question as the team's code is asked it: its text and the turns before it."""

    text: str
    history: History = ()

    @property
    def key(self) -> str:
        """What the output cache and the run's maps key this turn on: the text alone for a
        question without history (so caches written before conversations stay valid)."""
        if not self.history:
            return self.text
        said = [[message.role, message.content] for message in self.history]
        return json.dumps({"history": said, "question": self.text}, ensure_ascii=False)


def as_asked(text: str, history: tuple[Said, ...]) -> Turn:
    """The turn the team's code is asked: assistant turns still blank (not yet written by
    the system, as in a retrieval-only sweep) are left out."""
    return Turn(text, tuple(Message(role, content) for role, content in history if content is not None))
