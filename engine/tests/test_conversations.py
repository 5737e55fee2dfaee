"""Conversations: a golden item's `history`, read and checked at its line; each later turn asked
with its conversation (to a `search`, `search_many` or `answer` that declares it, the question
alone otherwise), the assistant turns the golden set leaves blank written by the system first,
every cache keyed by the turn; and the `turn:N` slices the gate floors."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from conftest import SHIPPED, TINY_CONFIG, TINY_GOLDEN, evaluate_shipped, run_cli, write_project
from rag_regress import run
from rag_regress.answers import stand_in
from rag_regress.api import Answer, Document, Hit, Message, Retriever, System
from rag_regress.errors import EvalInputError
from rag_regress.inputs.conversation import Turn
from rag_regress.inputs.data import load_corpus, load_golden
from rag_regress.settings.config import load_config

# "how long?" shares no word with the corpus: only its conversation ("Passwords") finds the
# document that answers it. "and with an app?" follows the 2FA question.
FIRST = {"id": "p1", "question": "Passwords", "relevant": {"password-policy": 3}, "must_include": ["twelve"]}
FOLLOW_UP = {
    "id": "p2",
    "question": "how long?",
    "relevant": {"password-policy": 3},
    "must_include": ["twelve characters"],
    "history": [{"role": "user", "content": "Passwords"}, {"role": "assistant"}],
}
GIVEN = {
    "id": "p3",
    "question": "how long?",
    "relevant": {"password-policy": 3},
    "history": [
        {"role": "user", "content": "Passwords"},
        {"role": "assistant", "content": "They need twelve characters."},
    ],
}
THIRD = {
    "id": "p4",
    "question": "and is it required?",
    "relevant": {"sso-setup": 3},
    "history": [
        {"role": "user", "content": "Passwords"},
        {"role": "assistant"},
        {"role": "user", "content": "SSO"},
        {"role": "assistant"},
    ],
}
CONVERSATIONS = [*TINY_GOLDEN, FIRST, FOLLOW_UP, GIVEN, THIRD]


def conversation_project(
    root: Path, golden: list[dict[str, Any]] = CONVERSATIONS, config: str = TINY_CONFIG
) -> Path:
    return write_project(root, config, golden=golden)


class Recording:
    """A retriever that records what it was asked; `declares` picks its signature."""

    def __init__(self, inner: Retriever) -> None:
        self.inner = inner
        self.asked: list[tuple[str, tuple[Message, ...] | None]] = []
        self.lock = threading.Lock()

    def record(self, question: str, history: tuple[Message, ...] | None) -> None:
        with self.lock:
            self.asked.append((question, history))


class Aware(Recording):
    def search(self, question: str, depth: int, history: tuple[Message, ...] = ()) -> list[Hit]:
        self.record(question, history)
        return self.inner.search(question, depth, history=history)  # type: ignore[call-arg]


class Blind(Recording):
    def search(self, question: str, depth: int) -> list[Hit]:
        self.record(question, None)
        return self.inner.search(question, depth)


def system_with(kind: type[Recording], generator: Any = stand_in.build) -> tuple[System, list[Recording]]:
    built: list[Recording] = []

    def build(documents: list[Document], tokenize: Any, options: dict[str, Any]) -> Retriever:
        retriever = kind(SHIPPED.build_retriever(documents, tokenize, options))
        built.append(retriever)
        return retriever

    return System(build, generator), built


def row(report: dict[str, Any], ident: str) -> dict[str, Any]:
    return next(r for r in report["questions"] if r["id"] == ident)


# -- the golden set --


def test_history_is_read_and_every_item_carries_its_turn(project: Path) -> None:
    config = conversation_project(project.parent)
    corpus = load_corpus(config.parent / "corpus.jsonl")
    questions = {q.id: q for q in load_golden(config.parent / "golden.jsonl", corpus)}
    assert questions["p2"].history == (("user", "Passwords"), ("assistant", None))
    assert [t for t in questions["p4"].tags if t.startswith("turn:")] == ["turn:3"]
    assert "turn:2" in questions["p2"].tags and "turn:1" in questions["q1"].tags
    # a blank assistant turn is left out of what is asked until the system has written it
    assert questions["p2"].asked == Turn("how long?", (Message("user", "Passwords"),))
    plain = load_golden(write_project(project.parent / "plain").parent / "golden.jsonl", corpus)
    assert all(not t.startswith("turn:") for q in plain for t in q.tags)  # no conversation: no turn tags


@pytest.mark.parametrize(
    ("history", "problem", "fix"),
    [
        ([{"role": "assistant", "content": "Hi"}], "history turn 1 must be", "the user's first"),
        ([{"role": "user", "content": "Passwords"}], "ends with a user turn", "end the history"),
        (
            [{"role": "user", "content": " "}, {"role": "assistant"}],
            "'content' must be a non-empty",
            "history",
        ),
        (
            [{"role": "user"}, {"role": "assistant"}],
            "'content' must be a non-empty string, got None",
            "history",
        ),
        ("Passwords", "'history' must be a list of turns", "history"),
        (
            [{"role": "user", "content": "x", "name": "ana"}, {"role": "assistant"}],
            "history turn 1",
            "history",
        ),
    ],
)
def test_a_malformed_history_is_refused_at_its_line_with_the_fix(
    project: Path, history: object, problem: str, fix: str
) -> None:
    broken = {**FOLLOW_UP, "history": history}
    config = conversation_project(project.parent, [*TINY_GOLDEN, broken])
    with pytest.raises(EvalInputError) as raised:
        load_golden(config.parent / "golden.jsonl", load_corpus(config.parent / "corpus.jsonl"))
    assert raised.value.line == len(TINY_GOLDEN) + 1
    assert problem in str(raised.value) and fix in str(raised.value)


def test_a_turn_tag_is_the_engines_own(project: Path) -> None:
    config = conversation_project(project.parent, [*TINY_GOLDEN, {**FIRST, "tags": ["turn:2"]}])
    with pytest.raises(EvalInputError, match=r"(?s)'turn:2' is set by the engine.*rename the tag") as raised:
        load_golden(config.parent / "golden.jsonl", load_corpus(config.parent / "corpus.jsonl"))
    assert raised.value.line == len(TINY_GOLDEN) + 1


# -- asking the system --


def test_a_retriever_that_declares_history_searches_each_turn_in_its_conversation(project: Path) -> None:
    system, built = system_with(Aware)
    report = evaluate_shipped(load_config(conversation_project(project.parent)), system=system)
    (retriever,) = built
    asked = retriever.asked
    assert ("SSO", ()) in asked  # a first turn: no history
    # p2's blank assistant turn holds what the system answered to "Passwords" (the stand-in
    # quotes its best passage); p3's is the golden set's own
    written = row(report, "p1")["answer"]["text"]
    assert ("how long?", (Message("user", "Passwords"), Message("assistant", written))) in asked
    given = (Message("user", "Passwords"), Message("assistant", "They need twelve characters."))
    assert ("how long?", given) in asked
    assert row(report, "p2")["history"] == [
        {"role": "user", "content": "Passwords"},
        {"role": "assistant", "content": written},
    ]
    # the conversation finds what the words alone cannot
    assert row(report, "p2")["metrics"]["hit@5"] == 1.0 and row(report, "p3")["metrics"]["hit@5"] == 1.0
    assert report["slices"]["turn:2"]["questions"] == 2 and report["slices"]["turn:3"]["questions"] == 1


def test_a_retriever_written_before_conversations_is_asked_the_question_alone_and_loses_on_later_turns(
    project: Path,
) -> None:
    system, built = system_with(Blind)
    report = evaluate_shipped(load_config(conversation_project(project.parent)), system=system)
    assert all(history is None for _, history in built[0].asked)
    assert row(report, "p2")["metrics"]["hit@5"] == 0.0  # "how long?" alone finds nothing
    assert report["slices"]["turn:2"]["metrics"]["hit@5"] == 0.0
    assert report["slices"]["turn:1"]["metrics"]["hit@5"] > 0.5


def test_the_blank_assistant_turns_are_written_once_per_conversation_prefix(project: Path) -> None:
    asked: list[tuple[str, tuple[Message, ...]]] = []

    class Generator:
        def __init__(self, retriever: Retriever) -> None:
            self.retriever = retriever

        def answer(self, question: str, history: tuple[Message, ...] = ()) -> Answer:
            asked.append((question, history))
            return Answer(f"answer {len(history) // 2 + 1} to {question}")

    system = System(SHIPPED.build_retriever, lambda retriever, documents, options: Generator(retriever))
    report = evaluate_shipped(load_config(conversation_project(project.parent)), system=system)
    blanks = asked[:2]  # written before anything is evaluated, earlier turns first
    # "Passwords" is a blank's question twice (p2, p4) but asked once; "SSO" once, after it
    assert blanks == [
        ("Passwords", ()),
        ("SSO", (Message("user", "Passwords"), Message("assistant", "answer 1 to Passwords"))),
    ]
    assert row(report, "p4")["history"][3] == {
        "role": "assistant",
        "content": "answer 2 to SSO",
    }
    assert (
        "how long?",
        (Message("user", "Passwords"), Message("assistant", "answer 1 to Passwords")),
    ) in asked
    assert report["run"]["system"]["generator_calls"] == len(CONVERSATIONS) + 2


def test_a_generator_that_does_not_pass_the_history_on_still_gets_the_turns_evaluated_hits(
    project: Path,
) -> None:
    """A wrapper written before conversations (answer(question) only) around the stand-in:
    the retriever the engine hands the generator answers the turn's search in its
    conversation, so the answer rests on the hits the metrics were computed on."""
    seen: dict[str, list[str]] = {}

    class Wrapper:
        def __init__(self, retriever: Retriever) -> None:
            self.retriever = retriever

        def answer(self, question: str) -> Answer:
            seen[question] = [hit.doc_id for hit in self.retriever.search(question, 3)]
            return Answer(question)

    system = System(SHIPPED.build_retriever, lambda retriever, documents, options: Wrapper(retriever))
    report = evaluate_shipped(
        load_config(conversation_project(project.parent, [*TINY_GOLDEN, FIRST, FOLLOW_UP])), system=system
    )
    assert seen["how long?"][:1] == ["password-policy"]
    assert [d for d, _ in row(report, "p2")["retrieved"]][:1] == ["password-policy"]


def test_search_many_receives_the_histories_when_it_declares_them(project: Path) -> None:
    got: list[list[tuple[Message, ...]]] = []

    class Many:
        def __init__(self, inner: Retriever) -> None:
            self.inner = inner

        def search(self, question: str, depth: int) -> list[Hit]:  # the generator's searches
            return self.inner.search(question, depth)

        def search_many(
            self, questions: list[str], depth: int, histories: list[tuple[Message, ...]]
        ) -> list[list[Hit]]:
            got.append(histories)
            return self.inner.search_many(questions, depth, histories)  # type: ignore[attr-defined]

    system = System(lambda d, t, o: Many(SHIPPED.build_retriever(d, t, o)), stand_in.build)
    report = evaluate_shipped(load_config(conversation_project(project.parent)), system=system)
    evaluated = got[-1]
    assert len(evaluated) == len(CONVERSATIONS) and evaluated[0] == ()
    assert evaluated[len(TINY_GOLDEN) + 2][1] == Message("assistant", "They need twelve characters.")
    assert row(report, "p2")["metrics"]["hit@5"] == 1.0


def test_the_output_cache_keys_each_turn_by_its_conversation(project: Path) -> None:
    """p2 and p3 ask the same words after different assistant turns: two entries, and a run
    served from the cache reports what the first run measured."""
    config = conversation_project(project.parent, config=TINY_CONFIG + '\n[run]\noutput_cache = "code"\n')
    system = System(SHIPPED.build_retriever, stand_in.build, code="test-system")
    first = evaluate_shipped(load_config(config), system=system)
    second = evaluate_shipped(load_config(config), system=system)
    assert second["run"]["system"]["generator_calls"] == 0 and second["run"]["system"]["calls"] == 0
    for ident in ("p2", "p3", "p4"):
        assert row(second, ident)["history"] == row(first, ident)["history"]
        assert row(second, ident)["answer"] == row(first, ident)["answer"]
    assert Turn("how long?", (Message("user", "a"),)).key != Turn("how long?", (Message("user", "b"),)).key
    assert Turn("how long?").key == "how long?"  # caches written before conversations stay valid


def test_a_dry_run_counts_the_turns_the_system_writes(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = conversation_project(project.parent)
    assert run_cli(["--config", str(config), "eval", "--dry-run"]) == 0
    # every question, and the two blank prefixes ("Passwords"; "Passwords" + "SSO")
    assert f"generator: {len(CONVERSATIONS) + 2} calls" in capsys.readouterr().out


def test_the_gate_floors_a_turn_slice_and_names_the_later_turns_that_broke(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    floors = TINY_CONFIG + '\n[gate.slices."turn:2"]\n"hit@5" = 0.9\n'
    config = conversation_project(project.parent, config=floors)
    aware, _ = system_with(Aware)
    assert run_cli(["--config", str(config), "baseline"], aware) == 0
    blind, _ = system_with(Blind)
    capsys.readouterr()
    assert run_cli(["--config", str(config), "gate"], blind) == 3
    out = capsys.readouterr().out
    assert "[floor] hit@5 = 0.000 on tag 'turn:2' (2 questions) is below its slice floor 0.900" in out
    assert 'p2  1.000 -> 0.000 (-1.000)  "how long?"' in out
    report = json.loads((config.parent / "build" / "report.json").read_text(encoding="utf-8"))
    assert set(report["slices"]) >= {"turn:1", "turn:2", "turn:3"}


def test_a_crash_writing_an_earlier_turn_names_the_item_that_needed_it(project: Path) -> None:
    class Crashing:
        def answer(self, question: str) -> Answer:
            raise RuntimeError("model down")

    system = System(SHIPPED.build_retriever, lambda retriever, documents, options: Crashing())
    config = conversation_project(project.parent, [*TINY_GOLDEN, FOLLOW_UP])
    with pytest.raises(EvalInputError) as raised:
        run.evaluate(load_config(config), system)
    assert "'p2'" in str(raised.value) and raised.value.line == len(TINY_GOLDEN) + 1
    assert "model down" in str(raised.value)


class SearchOnly:
    """A retriever without `search_many` that declares `history` (and can be sent to a
    cluster's workers): each turn's search runs on a worker, with its conversation."""

    def __init__(self, inner: Retriever) -> None:
        self.inner = inner

    def search(self, question: str, depth: int, history: tuple[Message, ...] = ()) -> list[Hit]:
        return self.inner.search(question, depth, history=history)  # type: ignore[call-arg]


def build_search_only(documents: list[Document], tokenize: Any, options: dict[str, Any]) -> SearchOnly:
    return SearchOnly(SHIPPED.build_retriever(documents, tokenize, options))


def test_a_run_on_a_cluster_asks_each_turn_with_its_conversation(project: Path, dask_cluster: str) -> None:
    config = conversation_project(project.parent)
    system = System(build_search_only, stand_in.build)

    def report() -> dict[str, Any]:
        data: dict[str, Any] = json.loads(
            (config.parent / "build" / "report.json").read_text(encoding="utf-8")
        )
        data["receipt"]["sha256"].pop("config")  # eval.toml gains an [executor] table
        return data

    assert run_cli(["--config", str(config), "eval", "--quiet"], system) == 0
    here = report()
    assert row(here, "p2")["metrics"]["hit@5"] == 1.0
    executor = f'\n[executor]\nbackend = "dask"\naddress = "{dask_cluster}"\n'
    config.write_text(config.read_text(encoding="utf-8") + executor, encoding="utf-8")
    assert run_cli(["--config", str(config), "eval", "--quiet"], system) == 0
    assert report() == here  # every ranking, answer and history, as asked locally
