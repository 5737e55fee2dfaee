"""Conversations in a baked project: the demo's later turns are gated per turn (`turn:N`
slices, the `turn:2` floor), and a team retriever written before conversations, which gets
each question alone, fails the follow-ups, naming them; the shipped retriever with `[retriever]
history = false` fails them the same way."""

from __future__ import annotations

import json
import re
from pathlib import Path

from conftest import bake, nox, output, package_of

# Appended to the team's retriever.py: the shipped retriever behind a `search` that takes no
# history, as a team's wrapper written before conversations would be.
BLIND = """

class _WrittenBeforeConversations:
    def __init__(self, inner: Retriever) -> None:
        self.inner = inner

    def search(self, question: str, depth: int) -> list[Hit]:
        return self.inner.search(question, depth)


_shipped = build_retriever


def build_retriever(documents: list[Document], tokenize: Tokenizer, options: dict[str, Any]) -> Retriever:
    return _WrittenBeforeConversations(_shipped(documents, tokenize, options))
"""

FOLLOW_UPS_LOST = ("c1-2", "c5-2", "c6-2")  # second turns only their conversation finds


def failed_on_the_follow_ups(stdout: str) -> None:
    assert "GATE FAILED" in stdout
    assert "[floor] hit@5 = 0.500 on tag 'turn:2' (6 questions) is below its slice floor 0.800" in stdout
    for ident in FOLLOW_UPS_LOST:
        assert re.search(rf"(?m)^\s+{ident}  1\.000 -> 0\.000 \(-1\.000\)  \"", stdout), ident


def test_the_demo_gates_each_turn_and_a_history_blind_retriever_fails_the_follow_ups(tmp_path: Path) -> None:
    project = bake(tmp_path)
    passed = nox(project, "gate")
    assert passed.returncode == 0, output(passed)
    report = json.loads((project / "build" / "report.json").read_text(encoding="utf-8"))
    slices = report["slices"]
    assert (slices["turn:1"]["questions"], slices["turn:2"]["questions"], slices["turn:3"]["questions"]) == (
        66,
        6,
        2,
    )
    assert slices["turn:2"]["metrics"]["hit@5"] == 1.0
    # each later turn is recorded as it was asked, the assistant's turns as the system wrote them
    follow_up = next(row for row in report["questions"] if row["id"] == "c1-2")
    first = next(row for row in report["questions"] if row["id"] == "c1-1")
    assert follow_up["history"] == [
        {"role": "user", "content": first["question"]},
        {"role": "assistant", "content": first["answer"]["text"]},
    ]

    retriever = project / "src" / package_of(project) / "retriever.py"
    shipped = retriever.read_text(encoding="utf-8")
    retriever.write_text(shipped + BLIND, encoding="utf-8")
    blind = nox(project, "gate")
    assert blind.returncode == 3, output(blind)
    failed_on_the_follow_ups(blind.stdout)
    assert re.search(r"^  turn:1 +57 +\+0\.000 ", blind.stdout, re.M)  # the first turns are untouched

    retriever.write_text(shipped, encoding="utf-8")
    config = project / "eval.toml"
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace("[retriever]\n", "[retriever]\nhistory = false\n", 1), encoding="utf-8")
    alone = nox(project, "gate")
    assert alone.returncode == 3, output(alone)
    failed_on_the_follow_ups(alone.stdout)
