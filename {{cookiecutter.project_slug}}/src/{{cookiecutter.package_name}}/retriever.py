{%- import "retrievers/" ~ cookiecutter.retriever ~ ".jinja" as part -%}
"""YOUR FILE: the retriever under test. eval.toml's [system] names `build_retriever`.

`build_retriever(documents, tokenize, options)` returns any object with

    search(question: str, depth: int) -> list[Hit]     # Hit(doc_id, score), best first

and, optionally, `search_many(questions, depth)` to answer every question in one call. The
engine checks each result (exit 2, naming the question, if broken): at most `depth` hits,
ids from the corpus, each at most once, finite scores that do not increase down the list.

`documents` is the corpus in file order, `tokenize` follows [tokenizer], and `options` is
the [retriever] table of eval.toml, handed over untouched: put your own settings there. The
shipped retriever checks its own options; yours reads what it likes. For example (the
complete version, with a request template, field mapping, auth and retries, is
rag_regress.adapters.http):

    import requests

    class MyRetriever:
        def __init__(self, url: str):
            self.session = requests.Session()
            self.url = url

        def search(self, question: str, depth: int) -> list[Hit]:
            found = self.session.post(self.url, json={"q": question, "k": depth}, timeout=30)
            return [Hit(row["id"], row["score"]) for row in found.json()["hits"]]

    def build_retriever(documents, tokenize, options):
        return MyRetriever(options["url"])

A later turn of a conversation (a golden item with `history`) reaches `search` with its
turns when it declares them, `search(question, depth, history=())`, a tuple of
Message(role, content), oldest first (`search_many`: `histories`). Without the parameter,
`search` gets the question alone; the `turn:N` slices show what that costs. The shipped
retrievers add the user's earlier turns to the query ([retriever] history = false: not).

With `[run] concurrency` above 1, `search` is called from several threads at once: make it
thread-safe (a client per thread, or one that allows concurrent use).
"""

from __future__ import annotations

from typing import Any

from rag_regress import Document, Hit, Retriever, Tokenizer
from rag_regress.parts import retriever

__all__ = ["Hit", "build_retriever"]


def build_retriever(documents: list[Document], tokenize: Tokenizer, options: dict[str, Any]) -> Retriever:
{{- part.docstring() }}
    return retriever("{{ cookiecutter.retriever }}").build(documents, tokenize, options)
