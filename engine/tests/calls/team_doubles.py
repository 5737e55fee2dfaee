# Engine test helper (the template's: `cruft update` keeps it current). It wraps the shipped
# retriever and the stand-in generator, never your retriever.py or generator.py.
"""A team system that counts its calls and misbehaves on demand, for the tests of [run]
concurrency, retries and the output cache."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conftest import SHIPPED
from rag_regress.api import Answer, System

Behaviour = Callable[[str, int], None]  # (question, how many times it was asked before): may sleep or raise


def calm(question: str, asked: int) -> None:
    pass


@dataclass
class Log:
    """Every call the system received, from any thread."""

    searches: list[str] = field(default_factory=list)
    answers: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def note(self, calls: list[str], question: str) -> int:
        with self.lock:
            asked = calls.count(question)
            calls.append(question)
            return asked

    @property
    def calls(self) -> int:
        return len(self.searches) + len(self.answers)


class Retriever:
    def __init__(self, inner: Any, log: Log, behave: Behaviour):
        self.inner, self.log, self.behave = inner, log, behave

    def search(self, question: str, depth: int) -> Any:
        self.behave(question, self.log.note(self.log.searches, question))
        return self.inner.search(question, depth)


class Generator:
    def __init__(self, inner: Any, log: Log, behave: Behaviour):
        self.inner, self.log, self.behave = inner, log, behave

    def answer(self, question: str) -> Answer:
        self.behave(question, self.log.note(self.log.answers, question))
        answer: Answer = self.inner.answer(question)
        return answer


def shipped(options: dict[str, Any]) -> dict[str, Any]:
    """The options without `team_option`, an option of this system's own (the shipped parts
    would refuse it): changing it changes the settings and nothing else."""
    return {key: value for key, value in options.items() if key != "team_option"}


def counting(search: Behaviour = calm, answer: Behaviour = calm, code: str = "code-v1") -> tuple[System, Log]:
    """The shipped system with every search and answer logged (and behaving as told), whose
    code the output cache knows as `code`."""
    log = Log()

    def build_retriever(documents: Any, tokenize: Any, options: dict[str, Any]) -> Retriever:
        return Retriever(SHIPPED.build_retriever(documents, tokenize, shipped(options)), log, search)

    def build_generator(retriever: Any, documents: Any, options: dict[str, Any]) -> Generator:
        return Generator(SHIPPED.build_generator(retriever, documents, shipped(options)), log, answer)

    return System(build_retriever, build_generator, code), log


def with_run(config: Path, *lines: str) -> Path:
    """Append a [run] table holding `lines` to eval.toml."""
    text = config.read_text(encoding="utf-8")
    config.write_text(text + "\n[run]\n" + "".join(f"{line}\n" for line in lines), encoding="utf-8")
    return config
