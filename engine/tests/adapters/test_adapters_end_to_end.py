"""The adapters as a team uses them: `eval` on a copy of the demo project whose system is the
http retriever, pointed at a search service on 127.0.0.1 serving the engine's own BM25 over
the demo corpus, and the openai generator, pointed at a chat server on 127.0.0.1. Both
services fail once; [run] retries them, with several questions in flight at once."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from adapter_fakes import TOKEN, bm25_of, chat_server, passages, searching, writing

from conftest import PROJECT_ROOT, SHIPPED, run_cli
from fake_http import Reply, Server, serving
from rag_regress.adapters import http, openai
from rag_regress.api import Document, System
from rag_regress.inputs.data import load_corpus
from rag_regress.settings.config import load_config

__all__ = ["chat_server"]  # the fixture, imported for the test below

RUN = """
[run]
concurrency = 4
retries = 2
backoff = 0.01
retry_on = ["ConnectionError"]
"""


@pytest.fixture
def demo_search(monkeypatch: pytest.MonkeyPatch) -> Iterator[Server]:
    """A search service ranking the demo corpus with BM25 and the demo's [tokenizer]."""
    config = load_config(PROJECT_ROOT / "eval.toml")
    documents = [Document(d.id, d.text, d.title) for d in load_corpus(config.corpus).values()]
    monkeypatch.setenv("SEARCH_TOKEN", TOKEN)
    retriever = bm25_of(documents, config.tokenizer)
    with serving(monkeypatch, Server(default=searching(retriever, TOKEN)), "/search") as fake:
        yield fake


def demo_copy(root: Path, edit: Callable[[str], str] = lambda text: text) -> Path:
    """The demo project in `root` (lexical judge), its eval.toml passed through `edit`."""
    config = load_config(PROJECT_ROOT / "eval.toml")
    for path in (config.corpus, config.golden):
        target = root / path.relative_to(PROJECT_ROOT)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    text = (PROJECT_ROOT / "eval.toml").read_text(encoding="utf-8")
    path = root / "eval.toml"
    path.write_text(edit(re.sub(r'(?m)^backend = "\w+"', 'backend = "lexical"', text)), encoding="utf-8")
    return path


def for_adapters(search: Server, chat: Server) -> Callable[[str], str]:
    """[retriever] and [generation] set for the adapters, and [run] retrying ConnectionError."""

    def edit(text: str) -> str:
        text = re.sub(r"(?m)^min_score = .*\n", "", text)  # the stand-in's option
        retriever = f'[retriever]\nurl = "{search.url}"\nauth_env = "SEARCH_TOKEN"\ntimeout = 5\n'
        # the conversation too, so that the service ranks a later turn as the shipped BM25 does
        retriever += 'request = { query = "{question}", top_k = "{depth}", history = "{history}" }\n'
        generation = f'[generation]\nbase_url = "{chat.url}"\nmodel = "answer-model"\ncitations = true\n'
        text = text.replace("[retriever]\n", retriever, 1).replace("[generation]\n", generation, 1)
        return text + RUN

    return edit


def report_of(config: Path) -> dict[str, Any]:
    return dict(json.loads((config.parent / "build" / "report.json").read_text(encoding="utf-8")))


def test_eval_of_the_demo_through_both_adapters(
    tmp_path: Path, demo_search: Server, chat_server: Server
) -> None:
    chat_server.default = writing(cite=True)
    demo_search.script = [Reply(500, b"warming up")]
    chat_server.script = [Reply(429, {"error": {"message": "slow down"}})]
    config = demo_copy(tmp_path / "adapters", for_adapters(demo_search, chat_server))
    assert run_cli(["--config", str(config), "eval"], System(http.build, openai.build)) == 0
    report = report_of(config)

    # The service ranks with the shipped BM25: the metrics are the shipped system's, exactly.
    shipped_config = demo_copy(tmp_path / "shipped")
    assert run_cli(["--config", str(shipped_config), "eval"], SHIPPED) == 0
    shipped = report_of(shipped_config)
    metrics = ["precision@5", "recall@5", "hit@5", "mrr", "ndcg@5", "map", "rprec"]  # the demo's
    assert {m: report["aggregate"][m] for m in metrics} == {m: shipped["aggregate"][m] for m in metrics}
    assert [row["retrieved"] for row in report["questions"]] == [
        row["retrieved"] for row in shipped["questions"]
    ]

    # Every question was answered by the model, from passages it cited, and judged.
    assert len(report["questions"]) == len(shipped["questions"]) == 74
    for row in report["questions"]:
        answer = row["answer"]
        assert answer["text"].endswith("[1]") and not answer["abstained"]  # the engine reads the marker
        assert answer["contexts"] == [hit[0] for hit in row["retrieved"][:3]]  # every passage given
        assert answer["citation_precision"] == answer["citation_recall"] == 1.0  # it cites its passage
    assert report["aggregate"]["faithfulness"] == 1.0  # each answer quotes its passage
    assert {"abstention", "key_facts"} <= set(report["aggregate"])
    # One request per question and per assistant turn the golden set leaves to the system
    # (7 conversation prefixes), plus the retried one, each holding at most 3 passages.
    assert len(chat_server.received) == 74 + 7 + 1 and len(demo_search.received) >= 82
    assert all(len(passages(request.user)) <= 3 for request in chat_server.received)
    assert report["run"]["system"]["retries"] == 2
