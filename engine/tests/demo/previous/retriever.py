"""YOUR FILE (team-owned): the retriever under test. Edit it to evaluate your own retriever.

The template's engine never imports this file; the command line hands `build_retriever` to
it. `cruft update` never touches it, and the engine's tests do not depend on what is here.

`build_retriever` returns any object with

    search(question: str, depth: int) -> list[Hit]     # Hit(doc_id, score), best first

and, optionally, `search_many(questions: list[str], depth: int) -> list[list[Hit]]` to
answer every question in one call (batched encoding, a bulk API); the evaluator then uses it.

Rules the evaluator checks (and stops with a clear error, exit code 2, if broken):
at most `depth` hits; document ids from evals/corpus.jsonl; each id at most once; finite
scores that do not increase down the list. An empty list is fine: it scores zero.

To plug in your own system, replace the body of `build_retriever`, for example:

    class MyRetriever:
        def __init__(self, client):
            self.client = client

        def search(self, question: str, depth: int) -> list[Hit]:
            results = self.client.query(question, top_k=depth)   # your vector DB, API, ...
            return [Hit(r.id, r.score) for r in results]

    def build_retriever(documents, tokenize, options):
        return MyRetriever(make_client(**options))

`documents` is the corpus in file order, `tokenize` follows the [tokenizer] settings and
`options` is the [retriever] table of eval.toml: put your own settings there.

Threads: with `[run] concurrency` above 1 (a retriever that is a service: README, "A system
that is a service"), `search` is called from several threads at once on the one object
`build_retriever` returned, so it must be thread-safe: no shared mutable state without a
lock, and a client that allows concurrent use or is made per thread (threading.local).
`build_retriever` itself is called once, from one thread.
"""

from __future__ import annotations

from typing import Any

from .api import Document, Hit, Retriever, Tokenizer
from .retrieval.retrievers import bm25

__all__ = ["Hit", "Retriever", "build_retriever"]


def build_retriever(documents: list[Document], tokenize: Tokenizer, options: dict[str, Any]) -> Retriever:
    """Return the retriever to evaluate. Shipped: `retrieval/retrievers/bm25.py`."""
    return bm25.build(documents, tokenize, options)
