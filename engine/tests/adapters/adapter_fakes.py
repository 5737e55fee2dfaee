"""The services the adapters' tests talk to, served on 127.0.0.1 by fake_http: a JSON search
service ranking a corpus with the engine's own BM25, and an OpenAI-compatible chat server
that writes its answers from the passages of the prompt it receives."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

import pytest

import fake_http
from conftest import TINY_CORPUS
from fake_http import Received, Reply, Server, serving
from rag_regress.api import Document, Message, Retriever
from rag_regress.retrieval.retrievers import bm25
from rag_regress.retrieval.tokens import TokenizerSettings, make_tokenizer

TOKEN = "s3cr3t-search-token-4711"
DOCUMENTS = [Document(row["id"], row["text"], row["title"]) for row in TINY_CORPUS]


def bm25_of(documents: list[Document], tokenizer: TokenizerSettings | None = None) -> Retriever:
    """The engine's shipped BM25 over `documents`."""
    return bm25.build(documents, make_tokenizer(tokenizer or TokenizerSettings()), {})


def searching(retriever: Retriever, token: str | None = None) -> Callable[[Received], Reply]:
    """A search service over `retriever`: POST {"query", "top_k"[, "history"]} or GET
    ?query=&top_k=, answering {"hits": [{"id", "score"}]}; with `token`, a request without
    "Authorization: Bearer <token>" gets 401."""

    def reply(request: Received) -> Reply:
        if token is not None and request.headers.get("Authorization") != f"Bearer {token}":
            return Reply(401, {"error": "missing or wrong token"})
        if request.method == "GET":
            query, top_k = request.query["query"][0], int(request.query["top_k"][0])
            said = []
        else:
            query, top_k = request.body["query"], request.body["top_k"]
            said = request.body.get("history", [])  # sent when the request names {history}
        history = tuple(Message(turn["role"], turn["content"]) for turn in said)
        hits = retriever.search(query, top_k, history=history) if history else retriever.search(query, top_k)
        return Reply(body={"hits": [{"id": hit.doc_id, "score": hit.score} for hit in hits]})

    return reply


@pytest.fixture
def search_service(monkeypatch: pytest.MonkeyPatch) -> Iterator[Server]:
    """The search service over the tiny corpus, wanting TOKEN (from $SEARCH_TOKEN)."""
    monkeypatch.setenv("SEARCH_TOKEN", TOKEN)
    with serving(monkeypatch, Server(default=searching(bm25_of(DOCUMENTS), TOKEN)), "/search") as fake:
        yield fake


# -- the chat server ------------------------------------------------------------------------------

_PASSAGE = re.compile(r"(?m)^\[(\d+)\][^\n]*\n(.*)$")


def passages(prompt: str) -> dict[int, str]:
    """The numbered passages of a prompt the openai adapter wrote: number -> text."""
    return {int(number): text for number, text in _PASSAGE.findall(prompt)}


def first_sentence(text: str) -> str:
    return re.split(r"(?<=[.!?])\s", text.strip(), maxsplit=1)[0]


def chat(content: str) -> Reply:
    """A chat completion whose message content is `content`."""
    return fake_http.chat(
        content, "answer-model", {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60}
    )


def writing(cite: bool = False) -> Callable[[Received], Reply]:
    """A model that answers with the first sentence of passage [1], followed by " [1]" when
    `cite`."""

    def reply(request: Received) -> Reply:
        found = passages(request.user)
        answer = first_sentence(found[1]) if found else "I don't know."
        return chat(f"{answer} [1]" if cite and found else answer)

    return reply


@pytest.fixture
def chat_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[Server]:
    """The OpenAI-compatible server at `url` (up to /v1), answering from passage [1]."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with serving(monkeypatch, Server(default=writing()), "/v1") as fake:
        yield fake
