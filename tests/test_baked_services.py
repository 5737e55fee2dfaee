"""A team's real system on day one: a bake with the `http` retriever and the `openai` generator,
run against a search service and an OpenAI-compatible LLM that this test starts on 127.0.0.1.

The search service is crude on purpose (word overlap, as a team's first service may be); the
LLM answers with the first passage it is given and cites it, or says "I don't know." when the
question shares too little with it. Then the same bake is handed hostile code: each way of
ending the process early, or after a failing gate, must end in a non-zero exit in nox, tox
and pytest.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import (
    BAKE_ENV,
    JsonHandler,
    bake,
    chat_completion,
    gate_the_judge,
    output,
    package_of,
    run,
    serving,
    venv_bin,
)

TOKEN = "search-token-for-tests"
KEY = "llm-key-for-tests"
WORD = re.compile(r"\w+")
STOP = {"the", "a", "an", "is", "are", "do", "does", "i", "my", "can", "how", "what", "to", "of", "in", "for"}


def words(text: str) -> set[str]:
    return {w for w in WORD.findall(text.lower()) if w not in STOP}


class Services:
    """The two servers' shared state: what they received, and the LLM's one change."""

    def __init__(self, corpus: list[dict[str, str]]):
        self.corpus = corpus
        self.change: tuple[str, str] | None = None  # (old, new) in every answer
        self.auth: set[str] = set()

    def search(self, query: str, size: int) -> list[dict[str, Any]]:
        asked = words(query)
        scored = [
            (len(asked & words(f"{d['title']} {d['text']}")) / (1 + len(asked)), d["id"]) for d in self.corpus
        ]
        ranked = sorted((s for s in scored if s[0] > 0), key=lambda s: (-s[0], s[1]))
        return [{"doc": {"key": doc_id}, "relevance": round(score, 6)} for score, doc_id in ranked[:size]]

    def complete(self, prompt: str) -> str:
        question = prompt.rpartition("Question:")[2].split("\n")[0].strip()
        passage = re.search(r"^\[1\][^\n]*\n(.+?)(?:\n\n|\Z)", prompt, re.S | re.M)
        if passage is None or len(words(question) & words(passage.group(1))) < 2:
            return "I don't know."
        text = " ".join(passage.group(1).split())
        if self.change:
            text = text.replace(*self.change)
        return f"{text} [1]"


def handler(services: Services) -> type[JsonHandler]:
    class Handler(JsonHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            services.auth.add(self.headers.get("Authorization", ""))
            if self.path == "/search":
                if self.headers.get("Authorization") != f"Bearer {TOKEN}":
                    return self.send_json(401, {"error": "unauthorized"})
                return self.send_json(200, {"result": {"items": services.search(body["q"], int(body["n"]))}})
            if self.path == "/v1/chat/completions":
                prompt = body["messages"][-1]["content"]
                content = services.complete(prompt)
                return self.send_json(200, chat_completion(content))
            return self.send_json(404, {"error": "no such path"})

    return Handler


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Services, dict[str, str]]]:
    """The bake, its two services running, and the environment its commands run with."""
    project = bake(tmp_path_factory.mktemp("services"), "retriever=http", "generator=openai")
    corpus = [
        json.loads(line) for line in (project / "evals" / "corpus.jsonl").read_text("utf-8").splitlines()
    ]
    services = Services(corpus)
    with serving(handler(services)) as server:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        settings = project / "eval.toml"
        text = settings.read_text(encoding="utf-8")
        # The team's service speaks its own JSON: the request and reply fields are set to match.
        text = text.replace('url = "http://127.0.0.1:9200/search"', f'url = "{url}/search"')
        text = text.replace(
            'request = { query = "{question}", size = "{depth}" }',
            'request = { q = "{question}", n = "{depth}" }',
        )
        text = text.replace('hits = "hits"', 'hits = "result.items"')
        text = text.replace('id = "id"', 'id = "doc.key"').replace('score = "score"', 'score = "relevance"')
        text = text.replace('base_url = "http://127.0.0.1:8000/v1"', f'base_url = "{url}/v1"')
        settings.write_text(text, encoding="utf-8")
        yield project, services, {**BAKE_ENV, "SEARCH_API_TOKEN": TOKEN, "OPENAI_API_KEY": KEY}


def test_the_services_bake_is_green_and_a_changed_number_fails_naming_the_question(
    served: tuple[Path, Services, dict[str, str]],
) -> None:
    project, services, env = served
    assert not (project / "evals" / "baseline.json").exists(), (
        "no baseline can ship for a team's own services"
    )
    gate_the_judge(project)  # the changed number is the judge's to find: let its checks gate
    made = run(project, sys.executable, "-m", "nox", "-s", "baseline", "--", "--fit-floors", env=env)
    assert made.returncode == 0, output(made)
    green = run(project, sys.executable, "-m", "nox", "-s", "tests", "gate", env=env)
    assert green.returncode == 0, output(green)
    assert {f"Bearer {TOKEN}", f"Bearer {KEY}"} <= services.auth, "both tokens came from their variables"

    report = json.loads((project / "build" / "report.json").read_text(encoding="utf-8"))
    said_30 = [r["id"] for r in report["questions"] if r["answer"] and "30 days" in r["answer"]["text"]]
    assert said_30, "some answer quotes a passage's 30 days"
    services.change = ("30 days", "60 days")
    try:
        failed = run(project, sys.executable, "-m", "nox", "-s", "gate", env=env)
    finally:
        services.change = None
    assert failed.returncode == 3, output(failed)
    # Each question the change broke is named, with the sentence and why; only those.
    named = set(re.findall(r"\[newly failing answer\] (q\d+) ", failed.stdout))
    assert named and named <= set(said_30), output(failed)
    assert "is not what the context says (it says '30 days')" in failed.stdout, output(failed)


HOSTILE_RETRIEVER = '''"""The shipped http retriever, with the act named in act.txt."""

import atexit
import os
from pathlib import Path

from rag_regress.adapters import http

ACT = Path(__file__).resolve().parents[2].joinpath("act.txt").read_text().strip()


class Retriever:
    def __init__(self, inner):
        self.inner = inner

    def search(self, question, depth):
        if ACT == "search":
            os._exit(0)
        return self.inner.search(question, depth)


def build_retriever(documents, tokenize, options):
    if ACT == "build_retriever":
        os._exit(0)
    if ACT == "atexit":
        atexit.register(os._exit, 0)
    return Retriever(http.build(documents, tokenize, options))
'''

HOSTILE_GENERATOR = '''"""The shipped openai generator, ending the process in answer() when act.txt asks."""

import os
from pathlib import Path

from rag_regress.adapters import openai

ACT = Path(__file__).resolve().parents[2].joinpath("act.txt").read_text().strip()


class Generator:
    def __init__(self, inner):
        self.inner = inner

    def answer(self, question):
        if ACT == "answer":
            os._exit(0)
        return self.inner.answer(question)


def build_generator(retriever, documents, options):
    return Generator(openai.build(retriever, documents, options))
'''

ACTS = ["search", "answer", "build_retriever", "atexit"]


def test_no_team_code_passes_the_gate_in_nox_tox_or_pytest(
    served: tuple[Path, Services, dict[str, str]],
) -> None:
    project, services, env = served
    package = project / "src" / package_of(project)
    (package / "retriever.py").write_text(HOSTILE_RETRIEVER, encoding="utf-8")
    (package / "generator.py").write_text(HOSTILE_GENERATOR, encoding="utf-8")
    act = project / "act.txt"
    if not (project / "evals" / "baseline.json").exists():
        act.write_text("none", encoding="utf-8")
        made = run(project, sys.executable, "-m", "nox", "-s", "baseline", "--", "--fit-floors", env=env)
        assert made.returncode == 0, output(made)
    act.write_text("none", encoding="utf-8")
    assert run(project, sys.executable, "-m", "nox", "-s", "tests", env=env).returncode == 0
    pytest_gate = [
        str(venv_bin(project, "tests") / "python"),
        "-m",
        "pytest",
        "-m",
        "gate",
        "-q",
        "-p",
        "no:cacheprovider",
    ]
    runners = {
        "nox": [sys.executable, "-m", "nox", "-s", "gate"],
        "tox": [sys.executable, "-m", "tox", "-e", "gate"],
        "pytest": pytest_gate,
    }
    for name, command in runners.items():
        act.write_text("none", encoding="utf-8")
        assert run(project, *command, env=env).returncode == 0, f"{name}: the unharmed system passes"
        for what in ACTS:
            act.write_text(what, encoding="utf-8")
            services.change = (
                ("30 days", "60 days") if what == "atexit" else None
            )  # a failing gate, then exit 0
            try:
                done = run(project, *command, env=env)
            finally:
                services.change = None
            assert done.returncode != 0, f"{name} passed with os._exit(0) in {what}\n{output(done)}"
